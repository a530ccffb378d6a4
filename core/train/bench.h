// Speed measurement of training steps per configuration (the `ndr bench` command): steps/s as the
// median of several runs, matrix-product GFLOP/s, and Eigen's own sgemm rate on the same product shapes
// measured in the same run.
#pragma once

#include "core/config/config.h"

#include <string>
#include <vector>

namespace ndr {

struct BenchCase {
    std::string name;
    TaskConfig task;
    ModelConfig model;
    int batchSize = 64;
    int threads = 1;
    bool paddedRows = false; // the plain padded row layout instead of the packed one (Encoder::setPackedRows)
};

struct BenchResult {
    BenchCase config;
    std::vector<double> stepsPerSecond; // one per run
    double medianStepsPerSecond = 0;
    double flopsPerStep = 0;   // matrix-product FLOPs of forward + backward
    double gflops = 0;         // at the median rate
    double gemmGflops = 0;     // Eigen sgemm alone on this step's product shapes (median)
    double fractionOfGemm = 0; // gflops / gemmGflops
    int positions = 0;         // T of the measured batches
    double rows = 0;           // activation rows per step (mean over the measured batches)
};

// The configurations of the issue: the stub NDR and vanilla (one thread), d 128 NDR and vanilla, and
// the paper's NDR (d 256, 1 head, d_ff 512, 14 steps, batch 512, two threads); and the stub NDR in the
// padded row layout, the plain reference of the packed one.
std::vector<BenchCase> defaultBenchCases();

// Trains `runs` times for about `secondsPerRun` each (after one warm-up step) on fresh task batches.
BenchResult runBench(const BenchCase& c, int runs, double secondsPerRun);

} // namespace ndr
