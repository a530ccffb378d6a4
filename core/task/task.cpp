// Compositional table lookup (docs/design.md §1): seeded tables, fixed held-out sets, fresh balanced batches,
// and ground truth. Parsing and formatting of expressions live in task_text.cpp.
#include "core/task/task.h"

#include <algorithm>
#include <limits>
#include <sstream>
#include <stdexcept>

namespace ndr {

namespace {

// Unbiased integer in [0, n) from raw generator output: std::uniform_int_distribution is not specified
// bit-for-bit, and tables and held-out sets must be the same on every platform for a given seed.
uint64_t uniformBelow(std::mt19937_64& rng, uint64_t n) {
    const uint64_t threshold = (0 - n) % n; // 2^64 mod n: the biased low tail to reject
    for (;;) {
        uint64_t r = rng();
        if (r >= threshold)
            return r % n;
    }
}

// splitmix64 finaliser: turns (seed, depth) into well-separated generator seeds, so each depth's
// evaluation set is its own stream, independent of the tables and of which other depths exist.
uint64_t mixSeed(uint64_t seed, uint64_t depth) {
    uint64_t z = (seed ^ 0x9E3779B97F4A7C15ull) + depth * 0xD1B54A32D192ED03ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

} // namespace

CtlTask::CtlTask(const TaskConfig& config) : config_(config) {
    std::vector<std::string> errors = validate(config_);
    if (!errors.empty()) {
        std::string message;
        for (const std::string& e : errors)
            message += (message.empty() ? "" : "\n") + e;
        throw std::invalid_argument(message);
    }
    std::mt19937_64 rng(config_.seed);
    tables_.assign(config_.functions, {});
    for (auto& table : tables_) {
        table.resize(config_.symbols);
        for (int x = 0; x < config_.symbols; ++x)
            table[x] = x;
        for (int i = config_.symbols - 1; i > 0; --i)
            std::swap(table[i], table[uniformBelow(rng, uint64_t(i) + 1)]);
    }
    buildEvalSets();
}

// ---- Names ----

std::string CtlTask::symbolName(int symbol) const {
    const int s = config_.symbols;
    if (symbol < 0 || symbol >= s)
        throw std::invalid_argument("symbol " + std::to_string(symbol) + " out of range");
    if ((s & (s - 1)) != 0)
        return std::to_string(symbol);
    int bits = 0;
    while ((1 << bits) < s)
        ++bits;
    std::string name(bits, '0');
    for (int b = 0; b < bits; ++b)
        if (symbol & (1 << b))
            name[bits - 1 - b] = '1';
    return name;
}

std::string CtlTask::functionName(int function) const {
    if (function < 0 || function >= config_.functions)
        throw std::invalid_argument("function " + std::to_string(function) + " out of range");
    return std::string(1, char('a' + function));
}

std::string CtlTask::tokenName(int token) const {
    if (token >= 0 && token < config_.symbols)
        return symbolName(token);
    if (token >= config_.symbols && token < beginToken())
        return functionName(token - config_.symbols);
    if (token == beginToken())
        return "[B]";
    if (token == endToken())
        return "[E]";
    if (token == padToken())
        return "[PAD]";
    throw std::invalid_argument("token " + std::to_string(token) + " out of range");
}

std::vector<std::string> CtlTask::symbolNames() const {
    std::vector<std::string> names;
    for (int s = 0; s < config_.symbols; ++s)
        names.push_back(symbolName(s));
    return names;
}

std::vector<std::string> CtlTask::functionNames() const {
    std::vector<std::string> names;
    for (int f = 0; f < config_.functions; ++f)
        names.push_back(functionName(f));
    return names;
}

// ---- Tables and ground truth ----

void CtlTask::setTables(const std::vector<std::vector<int>>& tables) {
    const int s = config_.symbols;
    if (int(tables.size()) != config_.functions)
        throw std::invalid_argument("function tables: expected " + std::to_string(config_.functions) +
                                    " (one per function), got " + std::to_string(tables.size()));
    for (int f = 0; f < config_.functions; ++f) {
        const std::vector<int>& t = tables[f];
        const std::string name = "function tables: '" + functionName(f) + "'";
        if (int(t.size()) != s)
            throw std::invalid_argument(name + " has " + std::to_string(t.size()) + " entries, expected " +
                                        std::to_string(s));
        std::vector<int> preimage(s, -1);
        for (int x = 0; x < s; ++x) {
            if (t[x] < 0 || t[x] >= s)
                throw std::invalid_argument(name + " maps " + std::to_string(x) + " to " +
                                            std::to_string(t[x]) + ", outside 0.." + std::to_string(s - 1));
            if (preimage[t[x]] >= 0)
                throw std::invalid_argument(name + " is not a bijection: " + std::to_string(t[x]) +
                                            " is the image of both " + std::to_string(preimage[t[x]]) +
                                            " and " + std::to_string(x));
            preimage[t[x]] = x;
        }
    }
    tables_ = tables;
}

// Shared with task_text.cpp: refuses an example outside the task's symbols and functions.
void checkExample(const TaskConfig& c, const Example& e) {
    if (e.symbol < 0 || e.symbol >= c.symbols)
        throw std::invalid_argument("example symbol " + std::to_string(e.symbol) + " out of range");
    for (int f : e.functions)
        if (f < 0 || f >= c.functions)
            throw std::invalid_argument("example function " + std::to_string(f) + " out of range");
}

int CtlTask::answer(const Example& e) const {
    checkExample(config_, e);
    int x = e.symbol;
    for (int f : e.functions)
        x = tables_[f][x];
    return x;
}

std::vector<int> CtlTask::tokens(const Example& e) const {
    checkExample(config_, e);
    std::vector<int> out;
    out.reserve(e.functions.size() + 3);
    out.push_back(beginToken());
    if (config_.order == Order::Forward) {
        out.push_back(symbolToken(e.symbol));
        for (int f : e.functions)
            out.push_back(functionToken(f));
    } else {
        for (auto it = e.functions.rbegin(); it != e.functions.rend(); ++it)
            out.push_back(functionToken(*it));
        out.push_back(symbolToken(e.symbol));
    }
    out.push_back(endToken());
    return out;
}

std::vector<int> CtlTask::intermediates(const Example& e) const {
    checkExample(config_, e);
    const int d = e.depth();
    std::vector<int> after(d + 1); // after[k]: value after applying f1..fk; after[0] = x
    after[0] = e.symbol;
    for (int k = 0; k < d; ++k)
        after[k + 1] = tables_[e.functions[k]][after[k]];
    std::vector<int> out(d + 3);
    out[0] = -1;
    if (config_.order == Order::Forward) {
        for (int k = 0; k <= d; ++k)
            out[1 + k] = after[k];
    } else {
        // Position 1 holds fd, position d holds f1, position d+1 holds x: the chain reads right to left.
        for (int k = 0; k <= d; ++k)
            out[d + 1 - k] = after[k];
    }
    out[d + 2] = after[d];
    return out;
}

// ---- Splits ----

std::vector<int> CtlTask::depths(Split split) const {
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

std::vector<int> CtlTask::allDepths() const {
    std::vector<int> out;
    for (Split s : {Split::Train, Split::Valid, Split::Test})
        for (int d : depths(s))
            out.push_back(d);
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
}

Split CtlTask::splitOf(int depth) const {
    if (depth >= config_.trainMinDepth && depth <= config_.trainMaxDepth)
        return Split::Train;
    if (depth >= config_.validMinDepth && depth <= config_.validMaxDepth)
        return Split::Valid;
    if (depth >= config_.testMinDepth && depth <= config_.testMaxDepth)
        return Split::Test;
    return Split::None;
}

int64_t CtlTask::caseCount(int depth) const {
    if (depth < 0)
        return 0;
    constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
    int64_t count = config_.symbols;
    for (int k = 0; k < depth; ++k) {
        if (count > kMax / config_.functions)
            return kMax;
        count *= config_.functions;
    }
    return count;
}

// ---- Sampling ----

Example CtlTask::sample(int depth, std::mt19937_64& rng) const {
    if (depth < 1)
        throw std::invalid_argument("sample: depth must be at least 1, got " + std::to_string(depth));
    Example e;
    e.symbol = int(uniformBelow(rng, uint64_t(config_.symbols)));
    e.functions.resize(depth);
    for (int& f : e.functions)
        f = int(uniformBelow(rng, uint64_t(config_.functions)));
    return e;
}

Batch CtlTask::trainBatch(int batchSize, std::mt19937_64& rng) const {
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

Batch CtlTask::makeBatch(const std::vector<Example>& examples) const {
    Batch b;
    b.batch = int(examples.size());
    for (const Example& e : examples)
        b.positions = std::max(b.positions, e.depth() + 3);
    b.tokens.assign(size_t(b.batch) * b.positions, padToken()); // (B*T)
    for (int i = 0; i < b.batch; ++i) {
        const std::vector<int> t = tokens(examples[i]);
        std::copy(t.begin(), t.end(), b.tokens.begin() + size_t(i) * b.positions);
        b.lengths.push_back(int(t.size()));
        b.targets.push_back(answer(examples[i]));
        b.depths.push_back(examples[i].depth());
    }
    return b;
}

// ---- Evaluation sets ----

std::string CtlTask::key(const Example& e) {
    // Symbols < 64 and functions < 26 each fit in a byte; the length encodes the depth.
    std::string k(e.functions.size() + 1, '\0');
    k[0] = char(e.symbol);
    for (size_t i = 0; i < e.functions.size(); ++i)
        k[i + 1] = char(e.functions[i]);
    return k;
}

void CtlTask::buildEvalSets() {
    const std::vector<int> all = allDepths();
    evalSets_.assign(all.empty() ? 0 : all.back() + 1, {});
    heldOutKeys_.clear();
    const int64_t want = config_.evalExamplesPerDepth;
    for (int depth : all) {
        std::vector<Example>& set = evalSets_[depth];
        const int64_t count = caseCount(depth);
        if (count <= want) {
            // Odometer over (symbol, f1, ..., fd), fd fastest: a fixed order independent of the seed.
            Example e;
            e.functions.assign(depth, 0);
            for (int64_t k = 0; k < count; ++k) {
                set.push_back(e);
                int pos = depth - 1;
                while (pos >= 0 && ++e.functions[pos] == config_.functions)
                    e.functions[pos--] = 0;
                if (pos < 0)
                    ++e.symbol;
            }
        } else {
            std::mt19937_64 rng(mixSeed(config_.seed, uint64_t(depth)));
            std::unordered_set<std::string> seen;
            set.reserve(want);
            while (int64_t(set.size()) < want) {
                Example e = sample(depth, rng);
                if (seen.insert(key(e)).second)
                    set.push_back(std::move(e));
            }
        }
        if (evalSetHeldOut(depth))
            for (const Example& e : set)
                heldOutKeys_.insert(key(e));
    }
}

const std::vector<Example>& CtlTask::evalSet(int depth) const {
    static const std::vector<Example> kEmpty;
    if (depth < 0 || depth >= int(evalSets_.size()))
        return kEmpty;
    return evalSets_[depth];
}

bool CtlTask::evalSetHeldOut(int depth) const {
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

bool CtlTask::isHeldOut(const Example& e) const {
    return heldOutKeys_.count(key(e)) > 0;
}

} // namespace ndr
