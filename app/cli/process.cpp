// Running other programs: finding them on PATH, capturing their output, quoting for a shell.
#include "process.h"

#include <array>
#include <cstdlib>
#include <filesystem>
#include <spawn.h>
#include <sstream>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace ndrcli {

namespace fs = std::filesystem;

// The program named `name` on PATH, or "".
std::string findOnPath(const std::string& name) {
    const char* path = std::getenv("PATH");
    std::stringstream dirs(path ? path : "");
    for (std::string d; std::getline(dirs, d, ':');) {
        const fs::path candidate = fs::path(d.empty() ? "." : d) / name;
        if (::access(candidate.c_str(), X_OK) == 0)
            return candidate.string();
    }
    return "";
}

// Runs a command and returns its standard output; nullopt when it cannot run or exits non-zero
// (its standard error is kept in *error).
std::optional<std::string> capture(const std::vector<std::string>& argv, std::string* error) {
    int out[2], err[2];
    if (::pipe(out) != 0 || ::pipe(err) != 0)
        return std::nullopt;
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, out[1], 1);
    posix_spawn_file_actions_adddup2(&actions, err[1], 2);
    posix_spawn_file_actions_addclose(&actions, out[0]);
    posix_spawn_file_actions_addclose(&actions, err[0]);
    std::vector<char*> args;
    for (const auto& a : argv)
        args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    pid_t pid = 0;
    const int rc = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    ::close(out[1]);
    ::close(err[1]);
    std::string text, errText;
    auto drain = [](int fd, std::string& into) {
        std::array<char, 4096> buf;
        for (ssize_t n; (n = ::read(fd, buf.data(), buf.size())) > 0;)
            into.append(buf.data(), size_t(n));
        ::close(fd);
    };
    drain(out[0], text);
    drain(err[0], errText);
    if (rc != 0) {
        if (error)
            *error = argv[0] + ": cannot run it";
        return std::nullopt;
    }
    int status = 0;
    ::waitpid(pid, &status, 0);
    if (error)
        *error = errText;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        return std::nullopt;
    return text;
}

std::string quoteShell(const std::string& s) {
    std::string q = "'";
    for (char c : s)
        q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return q + "'";
}

std::string selfExe() {
    std::error_code ec;
    const fs::path p = fs::read_symlink("/proc/self/exe", ec);
    return ec ? std::string("ndr") : p.string();
}

} // namespace ndrcli
