// Simple arithmetic (paper §3.2, docs/design.md §1): the authors' generator, the evaluator and the
// one-character-per-token reading of typed text.
#include "core/task/expression_task.h"

#include "core/task/text.h"

#include <algorithm>
#include <limits>

namespace ndr {

namespace {

enum Word { Open, Close, Plus, Times, Digit0 };

} // namespace

ArithTask::ArithTask(const TaskConfig& config)
    : ExpressionTask(config, {"(", ")", "+", "*", "0", "1", "2", "3", "4", "5", "6", "7", "8", "9"}, Digit0,
                     "") {
    if (config.kind != TaskKind::Arith)
        throw std::invalid_argument("ArithTask: the configuration names another task");
    buildEvalSets();
}

Evaluation ArithTask::evaluate(const std::vector<int>& toks) const {
    Evaluation ev;
    const int n = int(toks.size());
    ev.values.assign(n, -1);
    ev.length = n;
    // Returns the value and depth of the expression starting at `i`, advancing `i` past it.
    struct Parser {
        const std::vector<int>& t;
        ParseErrors errors;
        int i = 0;
        bool fail(int at, const std::string& message) { return errors.fail(at, message); }
        bool expr(int& value, int& depth) {
            if (i >= int(t.size()))
                return fail(-1, "the expression ends early: expected a digit or '('");
            const int w = t[i];
            if (w >= Digit0 && w < Digit0 + 10) {
                value = errors.ev.values[i] = w - Digit0;
                depth = 1;
                ++i;
                return true;
            }
            if (w != Open)
                return fail(i, "expected a digit or '('");
            ++i;
            int a = 0, da = 0, b = 0, db = 0;
            if (!expr(a, da))
                return false;
            if (i >= int(t.size()))
                return fail(-1, "the expression ends early: expected '+' or '*'");
            if (t[i] != Plus && t[i] != Times)
                return fail(i, "expected '+' or '*' (one digit is one number)");
            const bool plus = t[i] == Plus;
            ++i;
            if (!expr(b, db))
                return false;
            if (i >= int(t.size()))
                return fail(-1, "the expression ends early: expected ')'");
            if (t[i] != Close)
                return fail(i, "expected ')' (each operation has two operands in brackets)");
            value = errors.ev.values[i] = (plus ? a + b : a * b) % 10;
            depth = std::max(da, db) + 1;
            ++i;
            return true;
        }
    } parser{toks, {ev}};
    int value = 0, depth = 0;
    if (!parser.expr(value, depth))
        return ev;
    if (parser.i < n) {
        parser.fail(parser.i, "the expression is complete before here: wrap it in brackets with an operator");
        return ev;
    }
    ev.answer = value;
    ev.depth = depth;
    return ev;
}

std::string ArithTask::rootOperation(const Example& e) const {
    int open = 0;
    for (int w : e.tokens) {
        if (w == Open)
            ++open;
        else if (w == Close)
            --open;
        else if (open == 1 && (w == Plus || w == Times))
            return w == Plus ? "+" : "*";
    }
    return {};
}

int64_t ArithTask::caseCount(int depth) const {
    // n(k): expressions of depth at most k; n(k) = 10 + 2 n(k-1)^2, saturating.
    constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
    auto atMost = [&](int k) {
        int64_t n = 0;
        for (int j = 1; j <= k; ++j) {
            if (n > 2'000'000'000) // 2 n^2 would pass INT64_MAX
                return kMax;
            n = 10 + 2 * n * n;
        }
        return n;
    };
    if (depth < 1)
        return 0;
    const int64_t all = atMost(depth);
    return all == kMax ? kMax : all - atMost(depth - 1);
}

std::vector<Example> ArithTask::enumerate(int depth) const {
    std::vector<Example> out;
    if (depth != 2)
        return out; // deeper depths have more cases than any evaluation set
    for (int op : {Plus, Times})
        for (int a = 0; a < 10; ++a)
            for (int b = 0; b < 10; ++b) {
                Example e;
                e.tokens = {Open, Digit0 + a, op, Digit0 + b, Close};
                e.treeDepth = 2;
                out.push_back(std::move(e));
            }
    return out;
}

Example ArithTask::sample(int depth, std::mt19937_64& rng) const {
    if (depth == 2) {
        Example e;
        const int op = uniformBelow(rng, 2) ? Times : Plus;
        e.tokens = {Open, Digit0 + int(uniformBelow(rng, 10)), op, Digit0 + int(uniformBelow(rng, 10)),
                    Close};
        e.treeDepth = 2;
        return e;
    }
    return ExpressionTask::sample(depth, rng);
}

std::pair<int, int> ArithTask::treeRange(int depth) const {
    auto [lo, hi] = ExpressionTask::treeRange(depth);
    return {std::max(lo, 3), hi};
}

std::vector<int> ArithTask::generate(int lo, int hi, double p, std::mt19937_64& rng) const {
    auto combine = [&](Drawn a, const Drawn& b) {
        Drawn s;
        s.toks.reserve(a.toks.size() + b.toks.size() + 3);
        s.toks.push_back(Open);
        s.toks.insert(s.toks.end(), a.toks.begin(), a.toks.end());
        s.toks.push_back(uniformBelow(rng, 2) ? Times : Plus);
        s.toks.insert(s.toks.end(), b.toks.begin(), b.toks.end());
        s.toks.push_back(Close);
        s.depth = std::max(a.depth, b.depth) + 1;
        return s;
    };
    // get(d) of the authors' generator: a digit at the depth limit or with probability 1 - p.
    auto get = [&](auto& self, int d) -> Drawn {
        if (d >= hi || uniformUnit(rng) > p)
            return Drawn{{Digit0 + int(uniformBelow(rng, 10))}, 1};
        Drawn a = self(self, d + 1);
        Drawn b = self(self, d + 1);
        return combine(std::move(a), b);
    };
    Drawn s = get(get, 1);
    // Too shallow: the old expression becomes the right operand of a new operation.
    while (s.depth < lo) {
        Drawn other = get(get, 2);
        s = combine(std::move(other), s);
    }
    return std::move(s.toks);
}

std::vector<std::pair<int, int>> ArithTask::splitWords(const std::string& text) const {
    std::vector<std::pair<int, int>> out;
    for (int i = 0; i < int(text.size());) {
        if (isAsciiSpace(text[i])) {
            ++i;
            continue;
        }
        int j = i + 1; // one character, a whole UTF-8 sequence for non-ASCII
        while (j < int(text.size()) && (static_cast<unsigned char>(text[j]) & 0xC0) == 0x80)
            ++j;
        out.push_back({i, j});
        i = j;
    }
    return out;
}

} // namespace ndr
