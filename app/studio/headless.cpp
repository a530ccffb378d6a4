// The headless fallback of ndr-studio (see headless.h).
#include "headless.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <spawn.h>
#include <string>
#include <sys/wait.h>
#include <vector>

extern char** environ;

namespace {

namespace fs = std::filesystem;

bool set(const char* name) {
    const char* v = std::getenv(name);
    return v && *v;
}

// Runs `args` (args[0] a path) and waits; its output goes to ours. Returns its exit status.
int runTool(const std::vector<std::string>& args) {
    std::vector<char*> argv;
    for (const auto& a : args)
        argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    pid_t pid = 0;
    if (posix_spawn(&pid, argv[0], nullptr, nullptr, argv.data(), environ) != 0) {
        std::fprintf(stderr, "ndr-studio: cannot run %s\n", argv[0]);
        return 1;
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0) {
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

std::string timestamp() {
    const std::time_t now = std::time(nullptr);
    std::tm local{};
    localtime_r(&now, &local);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y%m%d-%H%M%S", &local);
    return buf;
}

} // namespace

std::optional<int> runHeadlessIfNoDisplay(int argc, char** argv) {
    if (set("DISPLAY") || set("WAYLAND_DISPLAY") || set("QT_QPA_PLATFORM"))
        return std::nullopt;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--help" || a == "-h" || a == "--version" || a == "-v") {
            // No window is needed, but QApplication needs a platform: the offscreen one always loads.
            ::setenv("QT_QPA_PLATFORM", "offscreen", 0);
            return std::nullopt;
        }
    }
    std::error_code ec;
    const fs::path self = fs::read_symlink("/proc/self/exe", ec);
    const fs::path tool = (ec ? fs::path(argv[0]).parent_path() : self.parent_path()) / "ndr";
    const fs::path out = fs::path("runs") / ("stub-" + timestamp());
    std::fprintf(
        stderr,
        "ndr-studio: no display here (DISPLAY and WAYLAND_DISPLAY are not set), so the window cannot "
        "open.\nTraining the default preset (stub) headless instead; the run and the dashboard "
        "PNGs and GIF go to %s\n",
        (fs::absolute(out, ec)).string().c_str());
    const int trained = runTool({tool.string(), "train", "--preset", "stub", "--out", out.string()});
    if (trained != 0 && trained != 130)
        return trained;
    const int exported = runTool(
        {tool.string(), "export", (out / "run.json").string(), "--out", (out / "dashboard").string()});
    if (exported != 0)
        return exported;
    std::fprintf(stderr, "ndr-studio: dashboard written to %s\n",
                 fs::absolute(out / "dashboard", ec).string().c_str());
    return trained;
}
