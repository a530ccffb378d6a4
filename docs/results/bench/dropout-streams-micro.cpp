// The dropout draws of core/nn/dropout.h timed alone: 1024 16-bit lanes from one xoshiro256** stepped
// alone (the scalar loop) against DropoutStreams' eight streams stepped side by side, for the figures
// of docs/results.md ("`ndr bench`", 2026-11-28). Compile once per engine level and run each:
//   g++ -std=c++20 -O2 -fopenmp -march=x86-64-v4 -mprefer-vector-width=256 -DNDEBUG \
//       -I/usr/include/eigen3 -I<source tree> dropout-streams-micro.cpp -o micro-v4   # and x86-64-v3, x86-64
// Prints, three times, the best of 7 timings of each in ns per lane, with a checksum.
#include "best_ns.h"
#include "core/nn/dropout.h"

#include <chrono>
#include <cstdio>

using namespace ndr;

int main() {
    constexpr int kWords = 256;
    uint16_t lanes[4 * kWords];
    Rng rng(1), seeds(2);
    DropoutStreams streams(seeds);
    uint64_t check = 0;
    for (int round = 0; round < 3; ++round) {
        const double scalar = bestNs(
            [&] {
                for (int w = 0; w < kWords; ++w) {
                    const uint64_t bits = rng();
                    for (int l = 0; l < 4; ++l)
                        lanes[4 * w + l] = uint16_t(bits >> (16 * l));
                }
                check += lanes[17];
            },
            20000);
        const double vectorised = bestNs(
            [&] {
                streams.fill(lanes, kWords / DropoutStreams::kStreams);
                check += lanes[17];
            },
            20000);
        std::printf("one stream %.3f ns/lane, eight streams %.3f ns/lane (checksum %llu)\n",
                    scalar / (4 * kWords), vectorised / (4 * kWords),
                    static_cast<unsigned long long>(check % 1000));
    }
}
