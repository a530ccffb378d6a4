// Progress lines on stderr: a bar with step/total, steps/s, ETA, loss and the latest accuracies.
#include "progress.h"

#include "common.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <sys/ioctl.h>
#include <unistd.h>

namespace ndrcli {

namespace {

int terminalColumns() {
    winsize ws{};
    if (ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
        return ws.ws_col;
    return 100;
}

std::string padRight(std::string s, size_t width) {
    if (s.size() < width)
        s += std::string(width - s.size(), ' ');
    return s;
}

std::string accuracies(double train, double valid, double test) {
    // NaN marks a split the task does not have.
    std::string s = "train " + fixed(train, 3);
    if (!std::isnan(valid))
        s += " valid " + fixed(valid, 3);
    return s + " test " + fixed(test, 3);
}

void writeErr(const std::string& s) {
    std::fwrite(s.data(), 1, s.size(), stderr);
    std::fflush(stderr);
}

} // namespace

ProgressBoard::ProgressBoard(const std::vector<std::string>& modelNames, bool quiet)
    : tty_(isatty(STDERR_FILENO) != 0), quiet_(quiet) {
    for (const auto& n : modelNames) {
        Line l;
        l.name = n;
        lines_.push_back(l);
        nameWidth_ = std::max(nameWidth_, n.size());
    }
}

void ProgressBoard::update(int model, const ndr::TrainProgress& p) {
    std::lock_guard lock(mutex_);
    Line& l = lines_[model];
    l.step = p.step;
    l.total = p.totalSteps;
    l.evaluating = p.evaluating;
    if (p.evaluating >= 0)
        return; // the last step's loss and speed stay as shown
    l.loss = p.loss;
    l.stepsPerSecond = p.stepsPerSecond;
    l.eta = p.etaSeconds;
    if (p.eval) {
        l.hasEval = true;
        l.trainAcc = p.eval->trainAccuracy;
        l.validAcc = p.eval->validAccuracy;
        l.testAcc = p.eval->testAccuracy;
        if (!tty_ && !quiet_)
            pending_.push_back(padRight(l.name, nameWidth_) + "  step " + std::to_string(l.step) + "/" +
                               std::to_string(l.total) + "  loss " + fixed(p.eval->trainLoss, 4) + "  " +
                               accuracies(l.trainAcc, l.validAcc, l.testAcc) + "  " +
                               fixed(l.stepsPerSecond, 1) + " steps/s  ETA " + duration(l.eta));
    }
}

void ProgressBoard::finish(int model, const ndr::ModelStatus& status, double wallSeconds) {
    {
        std::lock_guard lock(mutex_);
        Line& l = lines_[model];
        l.done = true;
        l.status = ndr::statusText(status);
        l.wallSeconds = wallSeconds;
        if (!tty_ && !quiet_)
            pending_.push_back(padRight(l.name, nameWidth_) + "  " + l.status + " at step " +
                               std::to_string(l.step) + " after " + duration(wallSeconds));
    }
    changed_.notify_all();
}

bool ProgressBoard::waitAndDraw(double seconds) {
    std::vector<Line> lines;
    std::vector<std::string> pending;
    bool allDone = false;
    {
        std::unique_lock lock(mutex_);
        auto everyoneDone = [&] {
            for (const auto& l : lines_)
                if (!l.done)
                    return false;
            return true;
        };
        changed_.wait_for(lock, std::chrono::duration<double>(seconds), everyoneDone);
        allDone = everyoneDone();
        lines = lines_;
        pending.swap(pending_);
    }
    if (quiet_)
        return allDone;
    if (tty_) {
        drawBoard(lines);
    } else {
        std::string out;
        for (const auto& p : pending)
            out += p + "\n";
        if (!out.empty())
            writeErr(out);
    }
    return allDone;
}

void ProgressBoard::note(const std::string& text) {
    if (quiet_)
        return;
    std::string out;
    if (tty_ && drawn_ > 0)
        out += "\x1b[" + std::to_string(drawn_) + "A\r\x1b[J";
    drawn_ = 0;
    writeErr(out + text + "\n");
}

std::string ProgressBoard::format(const Line& l, int barWidth) const {
    std::string s = padRight(l.name, nameWidth_) + " ";
    if (barWidth > 0) {
        const double frac = l.total > 0 ? double(l.step) / l.total : 0;
        const int filled = std::clamp(int(frac * barWidth + 0.5), 0, barWidth);
        s += '[';
        s.append(size_t(filled), '#').append(size_t(barWidth - filled), '.');
        s += "] ";
    }
    s += std::to_string(l.step) + "/" + std::to_string(l.total);
    if (l.done) {
        s += "  " + l.status + " in " + duration(l.wallSeconds);
    } else if (l.evaluating >= 0) {
        s += "  evaluating " + std::to_string(int(l.evaluating * 100)) + "%";
    } else if (l.step > 0) {
        s += "  " + fixed(l.stepsPerSecond, 1) + " steps/s  ETA " + duration(l.eta) + "  loss " +
             fixed(l.loss, 3);
    } else {
        s += "  starting";
    }
    if (l.hasEval)
        s += "  " + accuracies(l.trainAcc, l.validAcc, l.testAcc);
    return s;
}

void ProgressBoard::drawBoard(const std::vector<Line>& lines) {
    // Lines longer than the terminal would wrap and break the cursor-up arithmetic.
    const size_t columns = size_t(std::max(20, terminalColumns() - 1));
    std::string out;
    if (drawn_ > 0)
        out += "\x1b[" + std::to_string(drawn_) + "A";
    for (const auto& l : lines) {
        // On a narrow terminal the bar goes before the numbers do.
        std::string s = format(l, 20);
        if (s.size() > columns)
            s = format(l, 0);
        if (s.size() > columns)
            s.resize(columns);
        out += "\r\x1b[2K" + s + "\n";
    }
    drawn_ = int(lines.size());
    writeErr(out);
}

} // namespace ndrcli
