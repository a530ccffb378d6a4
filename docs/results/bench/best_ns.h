// The timing of the micro-benchmarks beside this file: the best of 7 timings of `reps` calls of f, in
// ns per call.
#pragma once

#include <algorithm>
#include <chrono>

template <typename F> double bestNs(F f, int reps) {
    double best = 1e300;
    for (int r = 0; r < 7; ++r) {
        const auto t0 = std::chrono::steady_clock::now();
        for (int i = 0; i < reps; ++i)
            f();
        best = std::min(
            best, std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count());
    }
    return best / reps;
}
