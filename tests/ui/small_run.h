// A run of two small models on the stub task that trains in a second or two: for the tests of the
// training session and what is built on it.
#pragma once

#include "core/config/config.h"

namespace ndrtest {

inline ndr::RunConfig smallRun(int steps) {
    ndr::RunConfig c = ndr::presetConfig("stub");
    c.task.evalExamplesPerDepth = 32;
    c.models = {ndr::ndrModel(16, 2, 32, 4), ndr::vanillaModel(16, 2, 32, 4)};
    c.train.batchSize = 16;
    c.train.steps = steps;
    c.train.evalInterval = 50;
    c.train.seed = 4;
    return c;
}

} // namespace ndrtest
