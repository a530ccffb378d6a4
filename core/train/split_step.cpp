// The split training step (docs/design.md §6, threads).
#include "core/train/split_step.h"

#include <algorithm>
#include <cmath>
#include <exception>
#include <omp.h>

namespace ndr {

Batch examplesOf(const Batch& batch, int b0, int b1) {
    Batch part;
    part.batch = b1 - b0;
    part.readouts = batch.readouts;
    part.readFirst = batch.readFirst;
    part.lengths.assign(batch.lengths.begin() + b0, batch.lengths.begin() + b1);
    part.depths.assign(batch.depths.begin() + b0, batch.depths.begin() + b1);
    const size_t R = size_t(batch.readouts);
    part.targets.assign(batch.targets.begin() + ptrdiff_t(b0 * R), batch.targets.begin() + ptrdiff_t(b1 * R));
    part.positions = part.lengths.empty() ? 0 : *std::max_element(part.lengths.begin(), part.lengths.end());
    const size_t T = size_t(batch.positions), Tp = size_t(part.positions);
    part.tokens.resize(size_t(part.batch) * Tp);
    for (int b = 0; b < part.batch; ++b) {
        const int* row = batch.tokens.data() + size_t(b0 + b) * T;
        std::copy(row, row + Tp, part.tokens.begin() + ptrdiff_t(size_t(b) * Tp));
    }
    return part;
}

std::vector<int> balancedParts(const std::vector<int>& lengths, int parts) {
    const int B = int(lengths.size());
    parts = std::clamp(parts, 1, std::max(1, B));
    long total = 0;
    for (int len : lengths)
        total += len;
    std::vector<int> starts = {0};
    long rows = 0;
    int b = 0;
    for (int k = 1; k < parts; ++k) {
        // Part k - 1 ends once its rows reach k/parts of the total, keeping an example for each part after
        // it.
        const long goal = total * k / parts;
        while (b < B - (parts - k) && (b == starts.back() || rows + lengths[size_t(b)] / 2 < goal))
            rows += lengths[size_t(b++)];
        starts.push_back(b);
    }
    starts.push_back(B);
    return starts;
}

bool SplitStep::applies(const Model<float>& model, int threads) {
    return threads > 1 && model.lossIsExampleMean();
}

SplitStep::SplitStep(const Model<float>& model, int threads)
    : threads_(applies(model, threads) ? threads : 1) {
    for (int k = 1; k < threads_; ++k)
        copies_.push_back(makeModel<float>(model.config(), model.vocabSize(), model.symbols()));
}

float SplitStep::forwardBackward(Model<float>& model, const Batch& batch, int steps, Rng& rng) {
    if (threads_ == 1) {
        const float loss = model.forward(batch, steps, true, rng, true);
        if (std::isfinite(loss))
            model.backward();
        return loss;
    }
    const std::vector<int> starts = balancedParts(batch.lengths, threads_);
    const int parts = int(starts.size()) - 1;
    std::vector<Batch> batches;
    std::vector<Rng> streams;
    for (int k = 0; k < parts; ++k) {
        batches.push_back(examplesOf(batch, starts[size_t(k)], starts[size_t(k) + 1]));
        streams.emplace_back(rng());
    }
    std::vector<Model<float>*> models = {&model};
    const ParamStore<float>& source = model.params();
    for (int k = 1; k < parts; ++k) {
        Model<float>& copy = *copies_[size_t(k) - 1];
        auto& values = copy.params().values();
        std::copy(source.values().begin(), source.values().end(), values.begin());
        copy.params().zeroGrad();
        models.push_back(&copy);
    }
    losses_.assign(size_t(parts), 0.f);
    std::vector<std::exception_ptr> errors(static_cast<size_t>(parts));
    const int outer = omp_get_max_threads();
#pragma omp parallel for num_threads(parts) schedule(static, 1)
    for (int k = 0; k < parts; ++k) {
        // One thread per part: the part's passes and products run on it alone.
        omp_set_num_threads(1);
        try {
            Model<float>& m = *models[size_t(k)];
            losses_[size_t(k)] = m.forward(batches[size_t(k)], steps, true, streams[size_t(k)], true);
            m.backward();
        } catch (...) {
            errors[size_t(k)] = std::current_exception();
        }
    }
    omp_set_num_threads(outer);
    for (const auto& e : errors)
        if (e)
            std::rethrow_exception(e);

    // The whole batch's mean is the parts' means weighted by their share of the examples.
    const size_t n = source.size();
    float loss = 0;
    float* grads = model.params().grads().data();
    for (int k = 0; k < parts; ++k) {
        const float share = float(batches[size_t(k)].batch) / float(batch.batch);
        loss += share * losses_[size_t(k)];
        const float* g = models[size_t(k)]->params().grads().data();
        if (k == 0) {
#pragma omp simd
            for (size_t i = 0; i < n; ++i)
                grads[i] *= share;
        } else {
#pragma omp simd
            for (size_t i = 0; i < n; ++i)
                grads[i] += share * g[i];
        }
    }
    return loss;
}

} // namespace ndr
