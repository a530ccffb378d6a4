// Reading run files whole against without the evaluations' traces (RunFileParts), three rounds over
// the files given; a `listops` sweep's run files are about 11 MB each, most of it traces.
// g++ -std=c++20 -O2 -I. -I/usr/include/eigen3 docs/results/bench/run-file-read.cpp -o run-file-read \
//     -Lbuild/release/lib -lndr-base -Wl,-rpath,$PWD/build/release/lib
// ./run-file-read SWEEP/seed-*/run.json
#include "core/io/files.h"

#include <chrono>
#include <cstdio>

int main(int argc, char** argv) {
    for (int round = 0; round < 3; ++round)
        for (auto parts : {ndr::RunFileParts::All, ndr::RunFileParts::WithoutTraces}) {
            const auto t0 = std::chrono::steady_clock::now();
            size_t models = 0;
            for (int i = 1; i < argc; ++i)
                models += ndr::loadRunRecord(argv[i], parts).models.size();
            const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
            std::printf("%-14s %.3f s (%zu models)\n", parts == ndr::RunFileParts::All ? "whole" : "without traces",
                        s, models);
        }
}
