// Benchmarks of whole training steps against the raw sgemm rate of the same product shapes.
#include "core/train/bench.h"

#include "core/config/model_kind.h"
#include "core/nn/gemm_reference.h"
#include "core/nn/model.h"
#include "core/nn/optimizer.h"
#include "core/task/task.h"
#include "core/train/split_step.h"
#include "core/train/trainer.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <malloc.h>
#include <sstream>
#include <sys/resource.h>

namespace ndr {

namespace {

using Clock = std::chrono::steady_clock;

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    return n == 0 ? 0 : (n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]));
}

// The large products of one training step, as the model's kind counts them.
std::vector<GemmShape> stepProducts(const ModelConfig& m, Index rows, int symbols, int batch, int readouts) {
    std::vector<GemmShape> g;
    for (const ProductShape& p : kindOf(m).stepProducts(m, rows, symbols, batch, readouts))
        g.push_back({Index(p.m), Index(p.n), Index(p.k)});
    return g;
}

} // namespace

double peakMemoryMiB() {
    // VmHWM follows resets through /proc/self/clear_refs; ru_maxrss never falls.
    std::ifstream status("/proc/self/status");
    for (std::string line; std::getline(status, line);)
        if (line.rfind("VmHWM:", 0) == 0) {
            std::istringstream in(line.substr(6));
            double kib = 0;
            if (in >> kib)
                return kib / 1024.0;
        }
    rusage usage{};
    if (getrusage(RUSAGE_SELF, &usage) == 0)
        return double(usage.ru_maxrss) / 1024.0;
    return 0;
}

void resetPeakMemory() {
    std::ofstream refs("/proc/self/clear_refs");
    refs << "5"; // resets the peak resident set size to the current one (Linux 4.0 and later)
}

std::vector<BenchCase> defaultBenchCases() {
    std::vector<BenchCase> cases;
    TaskConfig stub;
    stub.symbols = 4;
    stub.functions = 4;
    stub.trainMinDepth = 1;
    stub.trainMaxDepth = 4;
    stub.validMinDepth = 1;
    stub.validMaxDepth = 0;
    stub.testMinDepth = 5;
    stub.testMaxDepth = 7;
    stub.evalExamplesPerDepth = 16;
    TaskConfig paper;
    paper.evalExamplesPerDepth = 16;
    cases.push_back({"stub NDR", stub, ndrModel(48, 4, 96, 8), 64, 1});
    cases.push_back({"stub NDR padded rows", stub, ndrModel(48, 4, 96, 8), 64, 1, true});
    cases.push_back({"stub vanilla", stub, vanillaModel(48, 4, 96, 8), 64, 1});
    // Relative positional attention (Table 1's +abs/rel rows): the relative terms' products and softmax.
    cases.push_back({"stub +abs/rel+gate", stub, tableOneModel("absrel-gate", 48, 4, 96, 8), 64, 1});
    // The stub-routing preset's four models: routing's cost against the same model without it.
    const RunConfig routing = presetConfig("stub-routing");
    for (const ModelConfig& m : routing.models)
        cases.push_back({"stub-routing " + m.name, stub, m, routing.train.batchSize, 1});
    cases.push_back({"d128 NDR", paper, ndrModel(128, 4, 256, 14), 128, 1});
    cases.push_back({"d128 vanilla", paper, vanillaModel(128, 4, 256, 14), 128, 1});
    cases.push_back({"paper NDR (2 threads)", paper, ndrModel(256, 1, 512, 14), 512, 2});
    // NDR at d 128 on the listops task: examples up to 50 tokens, where attention's T^2 work grows.
    const RunConfig listops = presetConfig("listops");
    cases.push_back({"listops NDR", listops.task, ndrModel(128, 4, 256, 10), listops.train.batchSize, 1});
    // The thoughtnet preset's ThoughtNet: K operators, each with its own attention, at every step.
    const RunConfig thoughtnet = presetConfig("thoughtnet");
    cases.push_back(
        {"thoughtnet ThoughtNet", thoughtnet.task, thoughtnet.models[0], thoughtnet.train.batchSize, 1});
    return cases;
}

BenchResult runBench(const BenchCase& c, int runs, double secondsPerRun) {
    runs = std::max(1, runs);
    prepareComputeThread(c.threads);
    // Memory an earlier case freed on other threads stays in their allocator arenas, and would count
    // in this case's peak: it goes back to the system first.
    malloc_trim(0);
    resetPeakMemory();
    BenchResult r;
    r.config = c;
    const std::unique_ptr<Task> taskPtr = makeTask(c.task);
    const Task& task = *taskPtr;
    const std::unique_ptr<Model<float>> modelPtr =
        makeModel<float>(c.model, task.vocabSize(), task.answerCount());
    Model<float>& model = *modelPtr;
    model.init(1);
    model.setPackedRows(!c.paddedRows);
    AdamW adam;
    std::mt19937_64 batchRng(1);
    Rng dropRng(1);
    // As a run trains (Trainer::trainStep): on more than one thread the batch splits over them (the
    // copies are of the packed layout, so a padded case keeps its batch whole).
    const int modelSteps = factsOf(c.model).steps;
    SplitStep pass(model, c.paddedRows ? 1 : c.threads);
    auto step = [&](const Batch& batch) {
        model.params().zeroGrad();
        pass.forwardBackward(model, batch, modelSteps, dropRng);
        clipGradNorm(model.params().grads().data(), model.params().size(), 5.0);
        adam.step(model.params().values().data(), model.params().grads().data(), model.params().size());
    };
    // Batches are drawn before timing so the rate is that of the model alone.
    std::vector<Batch> batches;
    for (int i = 0; i < 16; ++i)
        batches.push_back(task.trainBatch(c.batchSize, batchRng));
    r.positions = batches[0].positions;
    double flops = 0, rows = 0;
    for (const auto& b : batches) {
        flops += model.trainingFlops(b, modelSteps);
        for (int len : b.lengths)
            rows += c.paddedRows ? b.positions : len;
    }
    r.flopsPerStep = flops / double(batches.size());
    r.rows = rows / double(batches.size());
    // The model alone for about a run's time: it reaches the step's peak memory (every later step reuses
    // the same buffers), read before the GEMM reference allocates its own matrices.
    double warmSeconds = 0;
    for (int steps = 0; warmSeconds < secondsPerRun || steps < 2; ++steps) {
        const auto t0 = Clock::now();
        step(batches[steps % batches.size()]);
        warmSeconds += std::chrono::duration<double>(Clock::now() - t0).count();
    }
    r.peakMemoryMiB = peakMemoryMiB();
    // Each training step is followed by one pass of the reference over the step's shapes, and each side
    // is timed on its own: a slower spell of a shared machine then slows both sides of a run's ratio
    // alike, down to the length of a step.
    GemmReference reference(stepProducts(c.model, Index(std::lround(r.rows)), task.answerCount(), c.batchSize,
                                         batches[0].readouts));
    std::vector<double> gemm, fractions;
    int drawn = 0;
    for (int run = 0; run < runs; ++run) {
        int steps = 0;
        double modelSeconds = 0, gemmSeconds = 0;
        while (modelSeconds < secondsPerRun || steps < 2) {
            const auto t0 = Clock::now();
            step(batches[drawn++ % batches.size()]);
            const auto t1 = Clock::now();
            reference.pass();
            const auto t2 = Clock::now();
            modelSeconds += std::chrono::duration<double>(t1 - t0).count();
            gemmSeconds += std::chrono::duration<double>(t2 - t1).count();
            ++steps;
        }
        r.stepsPerSecond.push_back(steps / modelSeconds);
        gemm.push_back(reference.flops() * steps / gemmSeconds / 1e9);
        fractions.push_back(r.flopsPerStep * r.stepsPerSecond.back() / 1e9 / gemm.back());
    }
    r.medianStepsPerSecond = median(r.stepsPerSecond);
    r.gflops = r.flopsPerStep * r.medianStepsPerSecond / 1e9;
    r.gemmGflops = median(gemm);
    r.gemmPerRun = gemm;
    r.fractionPerRun = fractions;
    r.fractionOfGemm = median(fractions);
    return r;
}

std::vector<AccuracyCase> defaultAccuracyCases() {
    return {{"stub", 250, presetConfig("stub").train.steps},
            {"paper-forward", 500, presetConfig("paper-forward").train.steps}};
}

AccuracyResult timeToAccuracy(const AccuracyCase& c, uint64_t seed, double target,
                              const AccuracyProgressFn& onEvaluation) {
    RunConfig config = presetConfig(c.preset);
    config.models.resize(1);
    config.task.seed = seed; // as `ndr train --seed`: the task's tables and the training
    config.train.seed = seed;
    config.train.threads = c.threads;
    config.train.steps = c.maxSteps;
    config.train.evalInterval = c.evalInterval;
    resetPeakMemory();
    AccuracyResult r;
    r.config = c;
    r.seed = seed;
    r.target = target;
    const auto t0 = Clock::now(); // building the evaluation sets counts: a run waits for it too
    const auto task = makeTask(config.task);
    Trainer trainer(config, 0, *task, defaultProbe(*task));
    double evalSeconds = 0;
    while (trainer.step() < c.maxSteps) {
        if (!std::isfinite(trainer.trainStep())) // diverged: the target is not reached
            break;
        if (trainer.step() % c.evalInterval != 0 && trainer.step() < c.maxSteps)
            continue;
        const auto e0 = Clock::now();
        const EvalRecord e = trainer.measure();
        evalSeconds += std::chrono::duration<double>(Clock::now() - e0).count();
        r.step = trainer.step();
        r.testAccuracy = e.testAccuracy;
        r.reached = e.testAccuracy >= target;
        r.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
        r.evalSeconds = evalSeconds;
        r.peakMemoryMiB = peakMemoryMiB();
        if (onEvaluation)
            onEvaluation(r);
        if (r.reached)
            break;
    }
    return r;
}

} // namespace ndr
