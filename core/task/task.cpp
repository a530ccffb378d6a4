// What every task shares (docs/design.md §1): splits by depth, fixed evaluation sets, held-out
// examples, balanced training batches, and makeTask().
#include "core/task/task.h"

#include "core/config/task_kinds.h"
#include "core/task/ctl_task.h"
#include "core/task/expression_task.h"
#include "core/task/multidigit_task.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>

namespace ndr {

namespace {

// splitmix64 finaliser: turns (seed, depth) into well-separated generator seeds, so each depth's
// evaluation set is its own stream, independent of the tables and of which other depths exist.
uint64_t mixSeed(uint64_t seed, uint64_t depth) {
    uint64_t z = (seed ^ 0x9E3779B97F4A7C15ull) + depth * 0xD1B54A32D192ED03ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

} // namespace

uint64_t uniformBelow(std::mt19937_64& rng, uint64_t n) {
    const uint64_t threshold = (0 - n) % n; // 2^64 mod n: the biased low tail to reject
    for (;;) {
        uint64_t r = rng();
        if (r >= threshold)
            return r % n;
    }
}

double uniformUnit(std::mt19937_64& rng) {
    return double(rng() >> 11) * 0x1.0p-53;
}

int routingSteps(int depth) {
    return depth + 1;
}

bool stepsBelowDepth(int depth, int steps) {
    return steps < routingSteps(depth);
}

Task::Task(const TaskConfig& config) : config_(config) {
    if (const std::vector<Problem> problems = validate(config_); !problems.empty())
        throw std::invalid_argument(problemsText(problems));
}

int answerCountOf(const TaskConfig& config) {
    return config.kind == TaskKind::Ctl ? config.symbols : 10;
}

int answersPerExample(const TaskConfig& config) {
    return config.kind == TaskKind::MultiDigit ? MultiDigitTask::kPositions : 1;
}

double chanceAccuracyOf(const TaskConfig& config) {
    return std::pow(1.0 / answerCountOf(config), answersPerExample(config));
}

std::string taskName(const TaskConfig& config) {
    switch (config.kind) {
    case TaskKind::Ctl:
        return "S" + std::to_string(config.symbols) + " F" + std::to_string(config.functions);
    case TaskKind::Arith:
        return "arithmetic";
    case TaskKind::ListOps:
        return "ListOps";
    case TaskKind::MultiDigit:
        return "multi-digit arithmetic";
    }
    return "unknown task";
}

std::string depthMeaning(const TaskConfig& config) {
    switch (config.kind) {
    case TaskKind::Ctl:
        return "number of functions";
    case TaskKind::Arith:
        return "nesting";
    case TaskKind::ListOps:
        return "dependency depth";
    case TaskKind::MultiDigit:
        return "problem size";
    }
    return "depth";
}

bool depthsAreSizes(const TaskConfig& config) {
    return factsOf(config.kind).depthsAreSizes;
}

std::string depthLabel(const TaskConfig& config, int depth) {
    if (depthsAreSizes(config) && depth >= 1 && depth <= MultiDigitTask::kindCount())
        return MultiDigitTask::kindOf(depth).label;
    return std::to_string(depth);
}

std::string depthColumnName(const TaskConfig& config, int depth) {
    if (!depthsAreSizes(config))
        return "d" + std::to_string(depth);
    std::string label = depthLabel(config, depth);
    const std::string times = "×";
    for (size_t at = label.find(times); at != std::string::npos; at = label.find(times))
        label.replace(at, times.size(), "x");
    return label;
}

std::unique_ptr<Task> makeTask(const TaskConfig& config) {
    switch (config.kind) {
    case TaskKind::Ctl:
        return std::make_unique<CtlTask>(config);
    case TaskKind::Arith:
        return std::make_unique<ArithTask>(config);
    case TaskKind::ListOps:
        return std::make_unique<ListOpsTask>(config);
    case TaskKind::MultiDigit:
        return std::make_unique<MultiDigitTask>(config);
    }
    throw std::invalid_argument("task.kind: unknown task");
}

std::vector<std::string> Task::symbolNames() const {
    std::vector<std::string> names;
    for (int s = 0; s < answerCount(); ++s)
        names.push_back(symbolName(s));
    return names;
}

int Task::maxAskedDepth() const {
    const std::vector<int> tests = depths(Split::Test), all = allDepths();
    const int deepest = !tests.empty() ? tests.back() : (!all.empty() ? all.back() : 1);
    return 2 * deepest;
}

// ---- Splits ----

std::vector<int> depthsOf(const TaskConfig& config_, Split split) {
    int lo = 1, hi = 0;
    switch (split) {
    case Split::Train:
        lo = config_.trainMinDepth, hi = config_.trainMaxDepth;
        break;
    case Split::Valid:
        lo = config_.validMinDepth, hi = config_.validMaxDepth;
        break;
    case Split::Test:
        lo = config_.testMinDepth, hi = config_.testMaxDepth;
        break;
    case Split::None:
        break;
    }
    std::vector<int> out;
    for (int d = lo; d <= hi; ++d)
        out.push_back(d);
    return out;
}

std::vector<int> allDepthsOf(const TaskConfig& config) {
    std::vector<int> out;
    for (Split s : {Split::Train, Split::Valid, Split::Test})
        for (int d : depthsOf(config, s))
            out.push_back(d);
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
}

Split Task::splitOf(const TaskConfig& config_, int depth) {
    if (depth >= config_.trainMinDepth && depth <= config_.trainMaxDepth)
        return Split::Train;
    if (depth >= config_.validMinDepth && depth <= config_.validMaxDepth)
        return Split::Valid;
    if (depth >= config_.testMinDepth && depth <= config_.testMaxDepth)
        return Split::Test;
    return Split::None;
}

// ---- Batches ----

void Task::restoreTables(const std::vector<std::vector<int>>& tables) {
    if (!tables.empty())
        throw std::invalid_argument("function tables: only a table lookup task has them");
}

Batch Task::trainBatch(int batchSize, std::mt19937_64& rng) const {
    if (batchSize < 0)
        throw std::invalid_argument("trainBatch: negative batch size");
    const std::vector<int> train = depths(Split::Train);
    const uint64_t n = train.size();
    const uint64_t offset = uniformBelow(rng, n);
    std::vector<Example> examples;
    examples.reserve(batchSize);
    for (int i = 0; i < batchSize; ++i) {
        const int depth = train[(offset + uint64_t(i)) % n];
        // Terminates quickly: a train depth is held out only when its set is at most 1/5 of its cases.
        Example e = sample(depth, rng);
        while (isHeldOut(e))
            e = sample(depth, rng);
        examples.push_back(std::move(e));
    }
    return makeBatch(examples);
}

Batch Task::makeBatch(const std::vector<Example>& examples) const {
    Batch b;
    b.batch = int(examples.size());
    b.readouts = readouts();
    std::vector<std::vector<int>> rows;
    rows.reserve(examples.size());
    for (const Example& e : examples) {
        rows.push_back(tokens(e));
        b.positions = std::max(b.positions, int(rows.back().size()));
    }
    b.tokens.assign(size_t(b.batch) * b.positions, padToken()); // (B*T)
    for (int i = 0; i < b.batch; ++i) {
        const std::vector<int>& t = rows[i];
        std::copy(t.begin(), t.end(), b.tokens.begin() + size_t(i) * b.positions);
        b.lengths.push_back(int(t.size()));
        const std::vector<int> want = targets(examples[i]);
        b.targets.insert(b.targets.end(), want.begin(), want.end());
        b.depths.push_back(examples[i].depth());
    }
    return b;
}

// ---- Evaluation sets ----

void Task::buildEvalSets() {
    const std::vector<int> all = allDepths();
    sets_.assign(all.empty() ? 0 : all.back() + 1, {});
    for (int depth : depths(Split::Train))
        build(depth, sets_[depth]);
}

bool Task::build(int depth, DepthSet& set, const std::atomic<bool>* stop) const {
    const int64_t want = config_.evalExamplesPerDepth;
    if (caseCount(depth) <= want) {
        set.examples = enumerate(depth);
    } else {
        if (!set.draw) {
            set.draw.emplace(PartialDraw{std::mt19937_64(mixSeed(config_.seed, uint64_t(depth))), {}});
            set.examples.reserve(size_t(want));
        }
        auto& [rng, seen] = *set.draw;
        while (int64_t(set.examples.size()) < want) {
            // A deep ListOps example without SM takes tens of milliseconds to draw, a set of them
            // half a minute: a stop is honoured between examples, and the draw goes on from there.
            if (stop && stop->load(std::memory_order_relaxed))
                return false;
            Example e = sample(depth, rng);
            if (seen.insert(key(e)).second)
                set.examples.push_back(std::move(e));
        }
        set.draw.reset();
    }
    if (evalSetHeldOut(depth))
        for (const Example& e : set.examples)
            set.keys.insert(key(e));
    set.built = true;
    return true;
}

const Task::DepthSet* Task::depthSetUnless(int depth, const std::atomic<bool>* stop) const {
    DepthSet& set = sets_[depth];
    if (splitOf(depth) == Split::Train)
        return &set;
    const std::lock_guard lock(*mutex_);
    if (!set.built && !build(depth, set, stop))
        return nullptr;
    return &set;
}

const std::vector<Example>* Task::evalSetUnless(int depth, const std::atomic<bool>* stop) const {
    static const std::vector<Example> kEmpty;
    if (depth < 0 || depth >= int(sets_.size()) || splitOf(depth) == Split::None)
        return &kEmpty;
    const DepthSet* set = depthSetUnless(depth, stop);
    return set ? &set->examples : nullptr;
}

const std::vector<Example>& Task::evalSet(int depth) const {
    return *evalSetUnless(depth, nullptr);
}

Example Task::firstEvalExample(int depth) const {
    if (depth < 0 || depth >= int(sets_.size()) || splitOf(depth) == Split::None)
        throw std::invalid_argument("no evaluation set of depth " + std::to_string(depth));
    if (caseCount(depth) <= config_.evalExamplesPerDepth)
        return enumerate(depth).front();
    std::mt19937_64 rng(mixSeed(config_.seed, uint64_t(depth)));
    return sample(depth, rng);
}

std::vector<Example> Task::independentSample(int depth, int count, uint64_t seed) const {
    if (count < 0)
        throw std::invalid_argument("independentSample: negative count");
    std::mt19937_64 rng(mixSeed(seed ^ 0x696E646570656E64ull, uint64_t(depth)));
    std::vector<Example> examples;
    examples.reserve(size_t(count));
    for (int i = 0; i < count; ++i)
        examples.push_back(sample(depth, rng));
    return examples;
}

bool Task::evalSetHeldOut(int depth) const {
    switch (splitOf(depth)) {
    case Split::Valid:
    case Split::Test:
        return true;
    case Split::Train:
        return caseCount(depth) / 5 >= config_.evalExamplesPerDepth;
    case Split::None:
        return false;
    }
    return false;
}

bool Task::isHeldOut(const Example& e) const {
    // An example can only be in the set of its own depth.
    const int depth = e.depth();
    if (depth < 0 || depth >= int(sets_.size()) || !evalSetHeldOut(depth))
        return false;
    return depthSet(depth).keys.count(key(e)) > 0;
}

double splitMean(const TaskConfig& config, const std::vector<int>& depths, const std::vector<double>& values,
                 Split split) {
    double sum = 0;
    int n = 0;
    for (size_t i = 0; i < depths.size() && i < values.size(); ++i)
        if (Task::splitOf(config, depths[i]) == split)
            sum += values[i], ++n;
    return n ? sum / n : std::nan("");
}

MajorityBaseline majorityBaseline(const Task& task, const std::vector<Example>& examples) {
    std::map<std::vector<int>, int> counts; // ordered: the first of the most common is the smallest
    for (const Example& e : examples)
        ++counts[task.targets(e)];
    MajorityBaseline best;
    int most = 0;
    for (const auto& [targets, n] : counts)
        if (n > most) {
            most = n;
            best.targets = targets;
        }
    best.accuracy = examples.empty() ? 0.0 : double(most) / double(examples.size());
    return best;
}

} // namespace ndr
