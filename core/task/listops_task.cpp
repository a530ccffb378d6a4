// ListOps (paper §3.3, docs/design.md §1): the authors' generator with its dependency depth, the
// evaluator and the reading of typed text.
#include "core/task/expression_task.h"

#include "core/task/text.h"

#include <algorithm>
#include <limits>
#include <numeric>

namespace ndr {

namespace {

enum Word { Close, Min, Max, Med, Sum, Digit0 };
constexpr int kMaxArgs = 5;

} // namespace

ListOpsTask::ListOpsTask(const TaskConfig& config)
    : ExpressionTask(config,
                     {"]", "[MIN", "[MAX", "[MED", "[SM", "0", "1", "2", "3", "4", "5", "6", "7", "8", "9"},
                     Digit0, " ") {
    if (config.kind != TaskKind::ListOps)
        throw std::invalid_argument("ListOpsTask: the configuration names another task");
    // The drawn operations in the vocabulary's order, whatever the configuration's: all four draw
    // exactly as the authors' generator does.
    const std::vector<std::string>& names = listOpsOperationNames();
    for (size_t k = 0; k < names.size(); ++k)
        if (std::find(config.operations.begin(), config.operations.end(), names[k]) !=
            config.operations.end())
            drawn_.push_back(Min + int(k));
    if (drawn_.empty())
        throw std::invalid_argument("ListOpsTask: task.operations lists none of MIN, MAX, MED, SM");
    buildEvalSets();
}

Evaluation ListOpsTask::evaluate(const std::vector<int>& toks) const {
    Evaluation ev;
    ev.values.assign(toks.size(), -1);
    struct Value {
        int value, dependency, length;
    };
    struct Parser {
        const std::vector<int>& t;
        ParseErrors errors;
        int i = 0;
        bool fail(int at, const std::string& message) { return errors.fail(at, message); }
        bool expr(Value& out) {
            if (i >= int(t.size()))
                return fail(-1, "the expression ends early: expected a digit or an operation ([MIN, [MAX, "
                                "[MED, [SM)");
            const int w = t[i];
            if (w >= Digit0) {
                out = {w - Digit0, 1, 1};
                errors.ev.values[i++] = out.value;
                return true;
            }
            if (w == Close)
                return fail(i, "expected a digit or an operation ([MIN, [MAX, [MED, [SM)");
            const int open = i++;
            std::vector<Value> args;
            while (i < int(t.size()) && t[i] != Close) {
                Value a{};
                if (!expr(a))
                    return false;
                args.push_back(a);
            }
            if (i >= int(t.size()))
                return fail(open, "is not closed: expected ']' after its arguments");
            if (args.size() < 2)
                return fail(i, "closes an operation with " + std::to_string(args.size()) +
                                   " argument(s); an operation takes at least 2");
            int length = 2; // tokens: the operation, its arguments and the closing bracket
            for (const Value& a : args)
                length += a.length;
            const int n = int(args.size());
            auto dependencyOf = [&](std::initializer_list<int> chosen) {
                int d = 0;
                for (int c : chosen)
                    d = std::max(d, args[c].dependency);
                return d + 1;
            };
            if (w == Min || w == Max) {
                int best = 0; // the first extreme argument, as Python's min/max pick it
                for (int k = 1; k < n; ++k)
                    if (w == Min ? args[k].value < args[best].value : args[k].value > args[best].value)
                        best = k;
                out = {args[best].value, dependencyOf({best}), length};
            } else if (w == Med) {
                std::vector<int> order(n);
                std::iota(order.begin(), order.end(), 0);
                std::stable_sort(order.begin(), order.end(),
                                 [&](int a, int b) { return args[a].value < args[b].value; });
                if (n % 2 == 1) {
                    out = {args[order[n / 2]].value, dependencyOf({order[n / 2]}), length};
                } else {
                    const int a = order[n / 2 - 1], b = order[n / 2];
                    out = {(args[a].value + args[b].value) / 2, dependencyOf({a, b}), length};
                }
            } else {
                int sum = 0, d = 0;
                for (const Value& a : args) {
                    sum += a.value;
                    d = std::max(d, a.dependency);
                }
                out = {sum % 10, d + 1, length};
            }
            errors.ev.values[i++] = out.value;
            return true;
        }
    } parser{toks, {ev}};
    Value v{};
    if (!parser.expr(v))
        return ev;
    if (parser.i < int(toks.size())) {
        parser.fail(parser.i, "the expression is complete before here: wrap it in an operation");
        return ev;
    }
    ev.answer = v.value;
    ev.depth = v.dependency;
    ev.length = v.length;
    return ev;
}

std::string ListOpsTask::rootOperation(const Example& e) const {
    if (e.tokens.empty() || e.tokens[0] < Min || e.tokens[0] > Sum)
        return {};
    return tokenName(e.tokens[0]).substr(1); // "[SM" -> "SM"
}

int64_t ListOpsTask::caseCount(int) const {
    // Already at dependency depth 2, [MIN a b] alone has 4 x 10^2 .. 10^5 shapes and any argument
    // not chosen may be a whole subtree: beyond any evaluation set.
    return std::numeric_limits<int64_t>::max();
}

std::vector<int> ListOpsTask::generate(int lo, int hi, double p, std::mt19937_64& rng) const {
    // The tokens are written in place, in order: an operation's word is drawn after its arguments (as
    // the authors' generator draws it), so its slot is held and filled afterwards. Every node drawn
    // ends up in the expression, so the length measure (1 per digit, 3 per operation) is known while
    // drawing: past kMaxLength the draw is abandoned (the caller rejects an empty one) and nothing more
    // is drawn from rng.
    std::vector<int> out;
    out.reserve(2 * kMaxLength);
    int length = 0;
    auto over = [&] { return length > kMaxLength; };
    // get_subtree of the authors' generator, appended to `to`: a leaf at the depth limit or with
    // probability 1 - p. Returns the subtree's depth, or 0 once abandoned.
    auto subtree = [&](auto& self, std::vector<int>& to, int maxDepth) -> int {
        if (over())
            return 0;
        if (maxDepth == 1 || uniformUnit(rng) > p) {
            ++length;
            to.push_back(Digit0 + int(uniformBelow(rng, 10)));
            return 1;
        }
        const int n = 2 + int(uniformBelow(rng, kMaxArgs - 1)); // 2..kMaxArgs
        const size_t slot = to.size();
        to.push_back(Close); // the operation's word, drawn below
        int depth = 0;
        for (int k = 0; k < n && !over(); ++k)
            depth = std::max(depth, self(self, to, maxDepth - 1));
        if (over())
            return 0;
        to[slot] = drawn_[uniformBelow(rng, drawn_.size())];
        to.push_back(Close);
        length += 2;
        return depth + 1;
    };
    int depth = subtree(subtree, out, hi);
    // Too shallow: a new operation with one argument fewer gets the old tree as an extra argument, at
    // any position but the last (as the authors' generator inserts it).
    std::vector<int> args, grown;
    std::vector<size_t> ends;
    while (!over() && depth < lo) {
        const int n = 2 + int(uniformBelow(rng, kMaxArgs - 2)); // 2..kMaxArgs-1
        args.clear();
        ends.clear();
        int argDepth = 0;
        for (int k = 0; k < n && !over(); ++k) {
            argDepth = std::max(argDepth, subtree(subtree, args, hi - 1));
            ends.push_back(args.size());
        }
        if (over())
            break;
        const size_t at = uniformBelow(rng, uint64_t(n)), split = at == 0 ? 0 : ends[at - 1];
        grown.clear();
        grown.push_back(drawn_[uniformBelow(rng, drawn_.size())]);
        grown.insert(grown.end(), args.begin(), args.begin() + std::ptrdiff_t(split));
        grown.insert(grown.end(), out.begin(), out.end());
        grown.insert(grown.end(), args.begin() + std::ptrdiff_t(split), args.end());
        grown.push_back(Close);
        length += 2;
        out.swap(grown);
        depth = std::max(depth, argDepth) + 1;
    }
    if (over())
        return {};
    return out;
}

std::vector<std::pair<int, int>> ListOpsTask::splitWords(const std::string& text) const {
    // Words are separated by spaces; a ']' is a word of its own even when written against another.
    std::vector<std::pair<int, int>> out;
    for (int i = 0; i < int(text.size());) {
        if (isAsciiSpace(text[i])) {
            ++i;
            continue;
        }
        if (text[i] == ']') {
            out.push_back({i, i + 1});
            ++i;
            continue;
        }
        int j = i;
        while (j < int(text.size()) && !isAsciiSpace(text[j]) && text[j] != ']')
            ++j;
        out.push_back({i, j});
        i = j;
    }
    return out;
}

} // namespace ndr
