// Speed measurement of training steps per configuration (the `ndr bench` command): steps/s as the
// median of several runs, matrix-product GFLOP/s, Eigen's own sgemm rate on the same product shapes
// measured between the steps of each run, and the peak memory; and the time a preset's NDR takes to
// generalise.
#pragma once

#include "core/config/config.h"

#include <cstdint>
#include <functional>
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
    double flopsPerStep = 0;            // matrix-product FLOPs of forward + backward
    double gflops = 0;                  // at the median rate
    double gemmGflops = 0;              // Eigen sgemm alone on this step's product shapes (median)
    std::vector<double> gemmPerRun;     // the sgemm rate of each run's reference passes
    std::vector<double> fractionPerRun; // each run's GFLOP/s over the sgemm rate of the same run
    double fractionOfGemm = 0;          // the median of fractionPerRun
    int positions = 0;                  // T of the measured batches
    double rows = 0;                    // activation rows per step (mean over the measured batches)
    double peakMemoryMiB = 0;           // the process's peak resident memory while the case ran (0: unknown)
};

// The measured configurations: the stub NDR, vanilla and +abs/rel+gate (one thread), the stub NDR in
// the padded row layout (the plain reference of the packed one), the stub-routing preset's models,
// d 128 NDR and vanilla, the paper's NDR (d 256, 1 head, d_ff 512, 14 steps, batch 512, two threads),
// and the listops preset's NDR and the thoughtnet preset's ThoughtNet.
std::vector<BenchCase> defaultBenchCases();

// Trains `runs` (at least one) times for about `secondsPerRun` of training each (after a warm-up run of
// the model alone) on fresh task batches, each step followed by one pass of the sgemm reference over
// the step's product shapes.
BenchResult runBench(const BenchCase& c, int runs, double secondsPerRun);

// Time to accuracy: a preset's first model (its NDR) trained alone on `threads` threads (one unless
// asked) from a seed (of the task and of the training, as `ndr train --seed`), evaluated every
// `evalInterval` steps on every depth as a run evaluates it, until the mean accuracy on the test depths
// first reaches the target or `maxSteps` are done.
struct AccuracyCase {
    std::string preset;
    int evalInterval = 250;
    int maxSteps = 6000;
    int threads = 1;
};

// `stub` (every 250 steps, at most 6000) and `paper-forward` (every 500, at most 12000: the presets'
// own step counts).
std::vector<AccuracyCase> defaultAccuracyCases();

struct AccuracyResult {
    AccuracyCase config;
    uint64_t seed = 1;
    double target = 0.99;
    bool reached = false;
    int step = 0;             // steps done at the evaluation that reached the target (maxSteps if none did)
    double testAccuracy = 0;  // mean over the test depths at that evaluation
    double seconds = 0;       // wall time of training and evaluations until then
    double evalSeconds = 0;   // the evaluations' part of it
    double peakMemoryMiB = 0; // as BenchResult's
};

// Called after each evaluation with the result so far (reached, step, accuracy and times filled in).
using AccuracyProgressFn = std::function<void(const AccuracyResult&)>;

AccuracyResult timeToAccuracy(const AccuracyCase& c, uint64_t seed, double target,
                              const AccuracyProgressFn& onEvaluation = {});

// The process's peak resident memory in MiB since the last resetPeakMemory() (since start-up where the
// kernel cannot reset it), or 0 where it cannot be read.
double peakMemoryMiB();
void resetPeakMemory();

} // namespace ndr
