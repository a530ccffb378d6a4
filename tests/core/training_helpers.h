// Helpers shared by the training test suites: a short run of the stub task and the losses of a
// trainer's next steps.
#pragma once

#include "core/config/config.h"
#include "core/train/run.h"
#include "core/train/trainer.h"

#include <cstdint>
#include <utility>
#include <vector>

namespace ndrtest {

// The stub preset with the given models, made quick: batch 16, 40 steps, an evaluation every 20
// steps on 64 examples per depth.
inline ndr::RunConfig quickStubRun(std::vector<ndr::ModelConfig> models, uint64_t seed) {
    ndr::RunConfig c = ndr::presetConfig("stub");
    c.task.evalExamplesPerDepth = 64;
    c.models = std::move(models);
    c.train.batchSize = 16;
    c.train.seed = seed;
    c.train.steps = 40;
    c.train.evalInterval = 20;
    return c;
}

// The losses of the trainer's next n steps.
inline std::vector<double> nextLosses(ndr::Trainer& t, int n) {
    std::vector<double> out;
    for (int i = 0; i < n; ++i)
        out.push_back(t.trainStep());
    return out;
}

// Two runs of one configuration: every model of `whole` trains 12 steps, every model of `halves` 6
// and is then evaluated (as a save point). Returns each model's losses of whole's steps 7-12, which
// a run opened from halves' save must repeat.
inline std::vector<std::vector<double>> trainWholeAndHalves(ndr::Run& whole, ndr::Run& halves) {
    std::vector<std::vector<double>> expected;
    for (int m = 0; m < whole.modelCount(); ++m) {
        nextLosses(whole.trainer(m), 6);
        expected.push_back(nextLosses(whole.trainer(m), 6));
        nextLosses(halves.trainer(m), 6);
        halves.trainer(m).evaluate();
    }
    return expected;
}

} // namespace ndrtest
