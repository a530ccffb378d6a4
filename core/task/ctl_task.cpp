// Compositional table lookup (docs/design.md §1): seeded tables, names, ground truth and sampling.
// Parsing and formatting of expressions live in ctl_text.cpp.
#include "core/task/ctl_task.h"

#include "core/task/text.h"

#include <algorithm>
#include <limits>
#include <sstream>
#include <stdexcept>

namespace ndr {

CtlTask::CtlTask(const TaskConfig& config) : Task(config) {
    if (config.kind != TaskKind::Ctl)
        throw std::invalid_argument("CtlTask: the configuration names another task");
    std::mt19937_64 rng(config.seed);
    tables_.assign(config.functions, {});
    for (auto& table : tables_) {
        table.resize(config.symbols);
        for (int x = 0; x < config.symbols; ++x)
            table[x] = x;
        for (int i = config.symbols - 1; i > 0; --i)
            std::swap(table[i], table[uniformBelow(rng, uint64_t(i) + 1)]);
    }
    buildEvalSets();
}

// ---- Names ----

std::string CtlTask::symbolName(int symbol) const {
    const int s = config().symbols;
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
    if (function < 0 || function >= config().functions)
        throw std::invalid_argument("function " + std::to_string(function) + " out of range");
    return std::string(1, char('a' + function));
}

std::string CtlTask::tokenName(int token) const {
    if (token >= 0 && token < config().symbols)
        return symbolName(token);
    if (token >= config().symbols && token < beginToken())
        return functionName(token - config().symbols);
    if (std::string special = specialTokenName(token, beginToken()); !special.empty())
        return special;
    throw std::invalid_argument("token " + std::to_string(token) + " out of range");
}

std::vector<std::string> CtlTask::functionNames() const {
    std::vector<std::string> names;
    for (int f = 0; f < config().functions; ++f)
        names.push_back(functionName(f));
    return names;
}

// ---- Tables and ground truth ----

void CtlTask::setTables(const std::vector<std::vector<int>>& tables) {
    const int s = config().symbols;
    if (int(tables.size()) != config().functions)
        throw std::invalid_argument("function tables: expected " + std::to_string(config().functions) +
                                    " (one per function), got " + std::to_string(tables.size()));
    for (int f = 0; f < config().functions; ++f) {
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

// Shared with ctl_text.cpp: refuses an example outside the task's symbols and functions.
void checkExample(const TaskConfig& c, const Example& e) {
    if (!e.tokens.empty())
        throw std::invalid_argument("example of an expression task given to table lookup");
    if (e.symbol < 0 || e.symbol >= c.symbols)
        throw std::invalid_argument("example symbol " + std::to_string(e.symbol) + " out of range");
    for (int f : e.functions)
        if (f < 0 || f >= c.functions)
            throw std::invalid_argument("example function " + std::to_string(f) + " out of range");
}

int CtlTask::answer(const Example& e) const {
    checkExample(config(), e);
    int x = e.symbol;
    for (int f : e.functions)
        x = tables_[f][x];
    return x;
}

std::vector<int> CtlTask::tokens(const Example& e) const {
    checkExample(config(), e);
    std::vector<int> out;
    out.reserve(e.functions.size() + 3);
    out.push_back(beginToken());
    if (config().order == Order::Forward) {
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
    checkExample(config(), e);
    const int d = e.depth();
    std::vector<int> after(d + 1); // after[k]: value after applying f1..fk; after[0] = x
    after[0] = e.symbol;
    for (int k = 0; k < d; ++k)
        after[k + 1] = tables_[e.functions[k]][after[k]];
    std::vector<int> out(d + 3);
    out[0] = -1;
    if (config().order == Order::Forward) {
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

// ---- Examples ----

int64_t CtlTask::caseCount(int depth) const {
    if (depth < 0)
        return 0;
    constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
    int64_t count = config().symbols;
    for (int k = 0; k < depth; ++k) {
        if (count > kMax / config().functions)
            return kMax;
        count *= config().functions;
    }
    return count;
}

Example CtlTask::sample(int depth, std::mt19937_64& rng) const {
    if (depth < 1)
        throw std::invalid_argument("sample: depth must be at least 1, got " + std::to_string(depth));
    Example e;
    e.symbol = int(uniformBelow(rng, uint64_t(config().symbols)));
    e.functions.resize(depth);
    for (int& f : e.functions)
        f = int(uniformBelow(rng, uint64_t(config().functions)));
    return e;
}

std::vector<Example> CtlTask::enumerate(int depth) const {
    // Odometer over (symbol, f1, ..., fd), fd fastest: a fixed order independent of the seed.
    std::vector<Example> set;
    const int64_t count = caseCount(depth);
    Example e;
    e.functions.assign(depth, 0);
    for (int64_t k = 0; k < count; ++k) {
        set.push_back(e);
        int pos = depth - 1;
        while (pos >= 0 && ++e.functions[pos] == config().functions)
            e.functions[pos--] = 0;
        if (pos < 0)
            ++e.symbol;
    }
    return set;
}

std::string CtlTask::key(const Example& e) const {
    // Symbols < 64 and functions < 26 each fit in a byte; the length encodes the depth.
    std::string k(e.functions.size() + 1, '\0');
    k[0] = char(e.symbol);
    for (size_t i = 0; i < e.functions.size(); ++i)
        k[i + 1] = char(e.functions[i]);
    return k;
}

} // namespace ndr
