// Files on disk: atomic saves, bounded reads and the JSON run record, and the low-level helpers of
// core/file_io.h. A loader bounds every size it reads before allocating from it, so a damaged or hostile
// file is refused quickly. The binary checkpoint is in core/checkpoint.cpp.
#include "core/io/files.h"

#include "core/io/file_io.h"
#include "core/io/json_fields.h"
#include "core/io/migrations.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fcntl.h>
#include <map>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

namespace ndr {

std::string fileStem(const std::string& name) {
    std::string s;
    for (unsigned char ch : name) {
        if (std::isalnum(ch)) {
            s += char(std::tolower(ch));
        } else if (!s.empty() && s.back() != '-') {
            s += '-';
        }
    }
    while (!s.empty() && s.back() == '-')
        s.pop_back();
    return s.empty() ? "model" : s;
}

std::vector<std::string> checkpointStems(const std::vector<ModelConfig>& models) {
    std::vector<std::string> names;
    std::map<std::string, int> seen;
    for (const auto& m : models) {
        std::string stem = fileStem(m.name);
        if (const int n = seen[stem]++; n > 0)
            stem += "-" + std::to_string(n + 1);
        names.push_back(stem);
    }
    return names;
}

std::vector<std::string> checkpointStems(const std::vector<ModelConfig>& models,
                                         const std::filesystem::path& runFile) {
    std::vector<std::string> names = checkpointStems(models);
    // Model stems hold no '.', so "<run>." keeps every run file's names apart from the others'.
    const std::string run = runFile.stem().string();
    if (run != "run")
        for (auto& name : names)
            name = run + "." + name;
    return names;
}

using nlohmann::json;
namespace fs = std::filesystem;

namespace fileio {

std::string quote(const fs::path& p) {
    return "'" + p.string() + "'";
}

// "512 MB", "3.2 GB": sizes as a user reads them (binary units, like file managers).
std::string humanSize(uint64_t bytes) {
    const char* units[] = {"bytes", "KB", "MB", "GB", "TB"};
    double value = double(bytes);
    int unit = 0;
    while (value >= 1024 && unit < 4) {
        value /= 1024;
        ++unit;
    }
    char buf[32];
    if (unit == 0 || std::abs(value - std::round(value)) < 0.05)
        std::snprintf(buf, sizeof buf, "%.0f %s", value, units[unit]);
    else
        std::snprintf(buf, sizeof buf, "%.1f %s", value, units[unit]);
    return buf;
}

bool writeAll(int fd, const char* data, size_t n) {
    while (n > 0) {
        const ssize_t w = ::write(fd, data, n);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return false;
        }
        data += w;
        n -= size_t(w);
    }
    return true;
}

ssize_t readUpTo(int fd, char* data, size_t n) {
    size_t got = 0;
    while (got < n) {
        const ssize_t r = ::read(fd, data + got, n - got);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        if (r == 0)
            break;
        got += size_t(r);
    }
    return ssize_t(got);
}

int openForReading(const fs::path& path, struct stat& st) {
    Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    if (fd.get() < 0)
        throw FileError(std::strerror(errno));
    if (::fstat(fd.get(), &st) != 0)
        throw FileError(std::strerror(errno));
    if (S_ISDIR(st.st_mode))
        throw FileError("it is a folder, not a file");
    return fd.release();
}

} // namespace fileio

using fileio::asFileError;
using fileio::Fd;
using fileio::humanSize;
using fileio::openForReading;
using fileio::quote;
using fileio::readUpTo;
using fileio::writeAll;

namespace {

constexpr uint64_t kMaxRunFileBytes = uint64_t(512) << 20;
// Parsed, a JSON value takes 16 bytes or more: 64 M values are about 1 GB of memory.
constexpr size_t kMaxRunValues = size_t(64) << 20;

// Makes temporary names unique between threads of one process; the pid separates processes.
std::atomic<uint64_t> tempCounter{0};

// The whole file, or FileError with a reason that does not repeat the path (callers add it).
// `kind` names the files in the size message ("run files larger than 512 MB are refused").
std::string readBounded(const fs::path& path, uint64_t maxBytes, const std::string& kind) {
    struct stat st {};
    Fd fd(openForReading(path, st));
    const auto tooBig = [&](uint64_t size) {
        return FileError("it is " + humanSize(size) + "; " + kind + " larger than " + humanSize(maxBytes) +
                         " are refused");
    };
    if (S_ISREG(st.st_mode) && uint64_t(st.st_size) > maxBytes)
        throw tooBig(uint64_t(st.st_size));
    // Pipes and growing files have no trustworthy size: read in chunks up to the bound.
    std::string bytes;
    if (S_ISREG(st.st_mode))
        bytes.reserve(size_t(st.st_size));
    char chunk[1 << 16];
    for (;;) {
        const ssize_t r = readUpTo(fd.get(), chunk, sizeof chunk);
        if (r < 0)
            throw FileError(std::strerror(errno));
        if (r == 0)
            break;
        if (bytes.size() + size_t(r) > maxBytes)
            throw tooBig(bytes.size() + size_t(r));
        bytes.append(chunk, size_t(r));
    }
    return bytes;
}

// Indented objects, but arrays of numbers or strings on one line: a trace holds thousands of values
// that would otherwise take a line each.
void appendPretty(std::string& out, const json& j, int depth) {
    const auto plain = [](const json& v) { return v.dump(-1, ' ', false, json::error_handler_t::replace); };
    const bool nested =
        j.is_object() ||
        (j.is_array() && std::any_of(j.begin(), j.end(), [](const json& v) { return v.is_structured(); }));
    if (!nested || j.empty()) {
        out += plain(j);
        return;
    }
    out += j.is_object() ? "{\n" : "[\n";
    size_t i = 0;
    for (auto it = j.begin(); it != j.end(); ++it, ++i) {
        out.append(size_t(depth + 1), ' ');
        if (j.is_object())
            out += plain(json(it.key())) + ": ";
        appendPretty(out, it.value(), depth + 1);
        out += i + 1 < j.size() ? ",\n" : "\n";
    }
    out.append(size_t(depth), ' ');
    out += j.is_object() ? "}" : "]";
}

// `text` with each evaluation's probe trace (the object at "probe" of run.models[m].history[e])
// replaced by `replacement`, in one pass that, like jsonio::checkJsonSize, tells strings from structure and
// reads no number: lexing the traces' numbers is most of the time a parse of a long run's file takes. What is
// not such a trace, malformed text included, is copied as it is, for the parser and the reader to judge.
std::string withEvaluationTraces(std::string_view text, std::string_view replacement) {
    // The key each open container was opened under ("" for an array's element and the root).
    std::array<std::string_view, jsonio::kMaxJsonDepth + 1> openedBy{};
    std::string_view key; // the last key read, until its value starts
    std::string out;
    out.reserve(text.size() / 8);
    size_t depth = 0, copied = 0;
    const auto skipSpace = [&](size_t i) {
        while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i])))
            ++i;
        return i;
    };
    const auto stringEnd = [&](size_t i) { return jsonio::stringEnd(text, i); };
    for (size_t i = 0; i < text.size();) {
        const char c = text[i];
        if (c == '"') {
            const size_t end = stringEnd(i), colon = skipSpace(end);
            if (colon >= text.size() || text[colon] != ':') {
                i = end;
                continue;
            }
            key = text.substr(i + 1, end - i - 2);
            i = colon + 1;
            const bool trace =
                depth == 5 && key == "probe" && openedBy[2] == "models" && openedBy[4] == "history";
            const size_t value = skipSpace(i);
            if (!trace || value >= text.size() || text[value] != '{')
                continue;
            // Skip the trace: to the brace that closes the one it opens with.
            size_t level = 0, j = value;
            while (j < text.size()) {
                const char v = text[j];
                if (v == '"') {
                    j = stringEnd(j);
                    continue;
                }
                if (v == '{' || v == '[')
                    ++level;
                else if ((v == '}' || v == ']') && --level == 0)
                    break;
                ++j;
            }
            if (j >= text.size())
                continue; // cut short: the parser names it
            out.append(text.substr(copied, value - copied));
            out += replacement;
            copied = i = j + 1;
            key = {};
            continue;
        }
        if (c == '{' || c == '[') {
            if (++depth <= jsonio::kMaxJsonDepth)
                openedBy[depth] = key;
        } else if (c == '}' || c == ']') {
            depth -= depth > 0;
        }
        if (c != ' ' && c != '\n' && c != '\t' && c != '\r')
            key = {};
        ++i;
    }
    out.append(text.substr(copied));
    return out;
}

// The run record in `text`; any error, with the field's path, as std::exception.
RunRecord parseRunRecord(std::string_view text, RunFileParts parts) {
    if (text.size() > kMaxRunFileBytes)
        throw FileError("it is " + humanSize(text.size()) + "; run files larger than " +
                        humanSize(kMaxRunFileBytes) + " are refused");
    jsonio::checkJsonSize(text, kMaxRunValues);
    json j;
    if (parts == RunFileParts::WithoutTraces) {
        // Text the parser refuses is parsed whole below, so that its message points into the file.
        static const std::string emptyTrace = json(Trace{}).dump();
        j = json::parse(withEvaluationTraces(text, emptyTrace), nullptr, false);
        if (j.is_discarded())
            parts = RunFileParts::All;
    }
    try {
        if (parts == RunFileParts::All)
            j = json::parse(text);
    } catch (const json::parse_error& e) {
        throw FileError("invalid JSON at byte " + std::to_string(e.byte) + ": " + jsonio::jsonMessage(e) +
                        (e.byte >= text.size() ? " (the file may be cut short)" : ""));
    } catch (const json::exception& e) { // a number too large for a double ("1e400")
        throw FileError("invalid JSON: " + jsonio::jsonMessage(e));
    }
    // What the text pass did not cut (a key spelt with escapes) is cut here: without traces, every
    // evaluation's trace that is an object is an empty one; anything else is left for the reader to name.
    const auto arrayAt = [](json& object, const char* key) -> json* {
        auto it = object.is_object() ? object.find(key) : object.end();
        return it != object.end() && it->is_array() ? &*it : nullptr;
    };
    if (json* models = parts == RunFileParts::WithoutTraces ? arrayAt(j, "models") : nullptr)
        for (json& m : *models)
            if (json* history = arrayAt(m, "history"))
                for (json& e : *history)
                    if (auto probe = e.is_object() ? e.find("probe") : e.end();
                        probe != e.end() && probe->is_object())
                        *probe = Trace{};
    if (const auto version = j.is_object() ? j.find("version") : j.end();
        version != j.end() && version->is_number_integer())
        migrations::upgradeRunFile(j, version->get<int64_t>());
    return j.get<RunRecord>();
}

} // namespace

void writeFileAtomic(const fs::path& path, const std::string& bytes) {
    const fs::path dir = path.has_parent_path() ? path.parent_path() : fs::path(".");
    const fs::path temp =
        path.string() + ".tmp-" + std::to_string(::getpid()) + "-" + std::to_string(tempCounter.fetch_add(1));
    const auto failure = [&](const std::string& step, int err) {
        return FileError("cannot write " + quote(path) + ": " + step + " failed: " + std::strerror(err));
    };

    Fd fd(::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666));
    if (fd.get() < 0)
        throw failure("creating the temporary file " + quote(temp), errno);
    const auto cleanUp = [&](const std::string& step) {
        const int err = errno;
        if (fd.get() >= 0)
            fd.close();
        ::unlink(temp.c_str());
        return failure(step, err);
    };
    // A replaced file keeps its permissions (a private run stays private).
    struct stat existing {};
    if (::stat(path.c_str(), &existing) == 0 && S_ISREG(existing.st_mode) &&
        ::fchmod(fd.get(), existing.st_mode & 07777) != 0)
        throw cleanUp("copying the permissions of the old file");
    if (!writeAll(fd.get(), bytes.data(), bytes.size()))
        throw cleanUp("writing");
    if (::fsync(fd.get()) != 0)
        throw cleanUp("flushing to disk");
    if (fd.close() != 0)
        throw cleanUp("closing");
    if (::rename(temp.c_str(), path.c_str()) != 0)
        throw cleanUp("replacing the file");

    // The rename is durable only once the directory entry is on disk too.
    Fd dirFd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (dirFd.get() < 0)
        throw failure("opening the folder to flush it", errno);
    if (::fsync(dirFd.get()) != 0 && errno != EINVAL) // EINVAL: the filesystem cannot sync folders
        throw failure("flushing the folder to disk", errno);
}

std::string readFileBounded(const fs::path& path, uint64_t maxBytes) {
    try {
        return readBounded(path, maxBytes, "files");
    } catch (const FileError& e) {
        throw FileError("cannot read " + quote(path) + ": " + e.what());
    }
}

std::string runRecordToText(const RunRecord& run) {
    std::string text;
    appendPretty(text, json(run), 0);
    text += "\n";
    return text;
}

void saveRunRecord(const fs::path& path, const RunRecord& run) {
    writeFileAtomic(path, runRecordToText(run));
}

RunRecord loadRunRecord(const fs::path& path, RunFileParts parts) {
    return asFileError("cannot open run file " + quote(path) + ": ", [&] {
        return parseRunRecord(readBounded(path, kMaxRunFileBytes, "run files"), parts);
    });
}

RunRecord runRecordFromText(std::string_view text, RunFileParts parts) {
    return asFileError("", [&] { return parseRunRecord(text, parts); });
}

std::string hostName() {
    char buf[256] = {};
    if (::gethostname(buf, sizeof buf - 1) != 0)
        return "localhost";
    return buf;
}

namespace {

// The first line of what a lock file holds (its holder's "pid N on HOST, since DATE"), read at once:
// a holder still writing it leaves it short or empty.
std::string holderLine(int fd) {
    char buf[256] = {};
    const ssize_t got = ::pread(fd, buf, sizeof buf - 1, 0);
    std::string holder(buf, got > 0 ? size_t(got) : 0);
    holder.erase(std::find(holder.begin(), holder.end(), '\n'), holder.end());
    return holder;
}

} // namespace

fs::path lockFileOf(const fs::path& runFile) {
    return runFile.parent_path() / ("." + runFile.filename().string() + ".lock");
}

RunFileLock::RunFileLock(const fs::path& runFile) {
    const fs::path lockFile = lockFileOf(runFile);
    Fd fd(::open(lockFile.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644));
    if (fd.get() < 0)
        throw FileError("cannot make the lock file " + quote(lockFile) + ": " + std::strerror(errno));
    // A reader that asks who holds the lock (runFileHolder) holds it shared for a moment: a quarter
    // of a second of tries tells that from a holder that trains.
    int tries = 0;
    while (::flock(fd.get(), LOCK_EX | LOCK_NB) != 0) {
        // A file system without locks: the run trains unguarded rather than not at all.
        if (errno != EWOULDBLOCK)
            return;
        if (++tries < 25) {
            ::usleep(10000);
            continue;
        }
        const std::string holder = holderLine(fd.get());
        throw FileError(runFile.string() + " is being trained by another process" +
                        (holder.empty() ? std::string() : " (" + holder + ")") +
                        "; wait for it to end or stop it");
    }
    const std::time_t now = std::time(nullptr);
    std::tm local{};
    localtime_r(&now, &local);
    char since[32];
    std::strftime(since, sizeof since, "%Y-%m-%d %H:%M:%S", &local);
    const std::string who =
        "pid " + std::to_string(::getpid()) + " on " + hostName() + ", since " + since + "\n";
    // Informative only: the lock is the flock, so a failed write changes nothing.
    if (::ftruncate(fd.get(), 0) == 0)
        (void)!::pwrite(fd.get(), who.data(), who.size(), 0);
    fd_ = fd.release();
}

RunFileLock::~RunFileLock() {
    if (fd_ >= 0)
        ::close(fd_); // releases the flock
}

RunFileHolder runFileHolder(const fs::path& runFile) {
    RunFileHolder h;
    // Read-only and never created: no lock file, no holder.
    Fd fd(::open(lockFileOf(runFile).c_str(), O_RDONLY | O_CLOEXEC));
    if (fd.get() < 0)
        return h;
    // A shared lock is refused only while a holder has it exclusively; taken, it goes at once.
    if (::flock(fd.get(), LOCK_SH | LOCK_NB) == 0) {
        ::flock(fd.get(), LOCK_UN);
        return h;
    }
    if (errno != EWOULDBLOCK)
        return h; // a file system without locks: nobody can be told to hold it
    h.held = true;
    h.line = holderLine(fd.get());
    // "pid 1234 on host, since …"
    if (h.line.rfind("pid ", 0) == 0) {
        h.pid = std::strtol(h.line.c_str() + 4, nullptr, 10);
        if (const size_t on = h.line.find(" on "); on != std::string::npos)
            h.host = h.line.substr(on + 4, h.line.find(',', on) - (on + 4));
    }
    return h;
}

RunFileHolder folderHolder(const fs::path& folder) {
    std::error_code ec;
    for (fs::directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec)) {
        const std::string name = it->path().filename().string();
        // ".<run file>.lock"
        if (name.size() > 6 && name[0] == '.' && name.compare(name.size() - 5, 5, ".lock") == 0)
            if (RunFileHolder h = runFileHolder(folder / name.substr(1, name.size() - 6)); h.held)
                return h;
    }
    return {};
}

} // namespace ndr
