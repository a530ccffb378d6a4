// The instruction-set level the engine's numerics run at (docs/design.md §8): a dispatching build
// carries the engine built for x86-64, x86-64-v3 (AVX2, FMA) and x86-64-v4 (AVX-512), and the dynamic
// loader loads the highest level the CPU supports; NDR_ISA asks for a lower one.
#pragma once

#include <string>
#include <vector>

namespace ndr {

// The level this engine was built for: "x86-64", "x86-64-v3" or "x86-64-v4"; "native" for a build
// tuned to the machine that compiled it (-march=native, no dispatch).
const char* engineLevel();
// Whether this build carries several levels chosen at start-up.
bool engineDispatches();
// The levels of engineLevel()'s kind this CPU can run, lowest first ("x86-64" always).
std::vector<std::string> supportedLevels();
// engineLevel() with what it means, e.g. "x86-64-v4 (AVX-512)".
std::string describeLevel(const std::string& level);

// The environment variable that asks for a level at most this high.
inline constexpr const char* kLevelVariable = "NDR_ISA";

// Honours NDR_ISA for a program about to start: when it names a level below the one the loader chose,
// sets GLIBC_TUNABLES so that the loader skips the higher levels and runs the program again (execv of
// /proc/self/exe with `argv`); returns only when nothing has to change. Returns a message naming the
// problem (an unknown level, a build that does not dispatch), empty when all is well.
std::string applyLevelRequest(char** argv);

} // namespace ndr
