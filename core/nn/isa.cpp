// Which level of the engine runs, and NDR_ISA (see isa.h).
#include "core/nn/isa.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <unistd.h>

namespace ndr {

namespace {

const char* const kLevels[] = {"x86-64", "x86-64-v3", "x86-64-v4"};

// The glibc CPU features to mask so that the loader's glibc-hwcaps search stops below a level: each
// level above x86-64 requires AVX2 (v3) or AVX512F (v4) among others.
const char* maskAbove(const std::string& level) {
    if (level == "x86-64")
        return "-AVX2,-AVX512F";
    if (level == "x86-64-v3")
        return "-AVX512F";
    return "";
}

int rank(const std::string& level) {
    for (int i = 0; i < 3; ++i)
        if (level == kLevels[i])
            return i;
    return -1;
}

} // namespace

const char* engineLevel() {
#if defined(NDR_ISA_LEVEL)
    return NDR_ISA_LEVEL;
#elif defined(NDR_NATIVE_BUILD)
    return "native";
#else
    return "x86-64";
#endif
}

bool engineDispatches() {
#if defined(NDR_ISA_LEVEL)
    return true;
#else
    return false;
#endif
}

std::vector<std::string> supportedLevels() {
    std::vector<std::string> levels = {"x86-64"};
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
    if (__builtin_cpu_supports("x86-64-v3"))
        levels.push_back("x86-64-v3");
    if (__builtin_cpu_supports("x86-64-v4"))
        levels.push_back("x86-64-v4");
#endif
    return levels;
}

std::string describeLevel(const std::string& level) {
    if (level == "x86-64")
        return "x86-64 (SSE2)";
    if (level == "x86-64-v3")
        return "x86-64-v3 (AVX2, FMA)";
    if (level == "x86-64-v4")
        return "x86-64-v4 (AVX-512)";
    if (level == "native")
        return "native (-march=native, no dispatch)";
    return level;
}

std::string applyLevelRequest(char** argv) {
    const char* request = std::getenv(kLevelVariable);
    if (!request || !*request)
        return {};
    const std::string wanted = request;
    if (rank(wanted) < 0)
        return std::string(kLevelVariable) + "=" + wanted +
               ": no such level; the levels are x86-64, x86-64-v3 and x86-64-v4";
    if (!engineDispatches())
        return std::string(kLevelVariable) + " is ignored: this build runs one level, " +
               describeLevel(engineLevel());
    if (rank(engineLevel()) <= rank(wanted))
        return {}; // already there (or the CPU cannot go higher)
    // Once only: a loader that ignores the tunable must not make the program run itself forever.
    if (std::getenv("NDR_ISA_APPLIED"))
        return std::string(kLevelVariable) + "=" + wanted + " could not be applied; running " +
               describeLevel(engineLevel());
    std::string tunables = std::string("glibc.cpu.hwcaps=") + maskAbove(wanted);
    if (const char* old = std::getenv("GLIBC_TUNABLES"); old && *old)
        tunables = std::string(old) + ":" + tunables;
    setenv("GLIBC_TUNABLES", tunables.c_str(), 1);
    setenv("NDR_ISA_APPLIED", "1", 1);
    execv("/proc/self/exe", argv);
    return std::string(kLevelVariable) + ": cannot run the program again (" + std::strerror(errno) + ")";
}

} // namespace ndr
