// The live training display on stderr: training threads report into shared state under a mutex, and
// the main thread redraws a few times per second outside the lock, so drawing never slows training.
#pragma once

#include "core/train/trainer.h"

#include <condition_variable>
#include <mutex>
#include <string>
#include <vector>

namespace ndrcli {

class ProgressBoard {
public:
    // One line per model. On a terminal the lines are redrawn in place; otherwise (CI logs) one plain
    // line is printed per model per evaluation. `quiet` prints nothing.
    ProgressBoard(const std::vector<std::string>& modelNames, bool quiet);

    // Training threads.
    void update(int model, const ndr::TrainProgress& p);
    void finish(int model, const ndr::ModelStatus& status, double wallSeconds);

    // Main thread. Waits up to `seconds` (less if every model finishes), then redraws; returns true once
    // every model has finished.
    bool waitAndDraw(double seconds);
    // A message printed above the board without breaking the redraw.
    void note(const std::string& text);

private:
    struct Line {
        std::string name;
        int step = 0, total = 0;
        double loss = 0, stepsPerSecond = 0, eta = 0;
        double evaluating = -1; // part of an evaluation under way done, or -1
        bool hasEval = false;
        double trainAcc = 0, validAcc = 0, testAcc = 0;
        bool done = false;
        std::string status; // statusText of the final status
        double wallSeconds = 0;
    };
    std::string format(const Line& l, int barWidth) const; // barWidth 0: no bar
    void drawBoard(const std::vector<Line>& lines);

    std::mutex mutex_;
    std::condition_variable changed_;
    std::vector<Line> lines_;
    std::vector<std::string> pending_; // plain mode: lines waiting to be printed
    bool tty_ = false, quiet_ = false;
    int drawn_ = 0; // lines of the board currently on screen
    size_t nameWidth_ = 0;
};

} // namespace ndrcli
