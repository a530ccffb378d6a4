// What the arithmetic and ListOps tasks share: names, ground truth through the task's evaluator,
// rejection sampling by depth, and typed questions (docs/design.md §1).
#include "core/task/expression_task.h"

#include "core/task/text.h"

#include <stdexcept>

namespace ndr {

namespace {

// Draws per example before giving up: far beyond what any depth the configuration allows needs.
constexpr int kMaxDraws = 20'000'000;

} // namespace

ExpressionTask::ExpressionTask(const TaskConfig& config, std::vector<std::string> words, int digitBase,
                               std::string separator)
    : Task(config), words_(std::move(words)), digitBase_(digitBase), separator_(std::move(separator)) {}

std::string ExpressionTask::tokenName(int token) const {
    if (token >= 0 && token < int(words_.size()))
        return words_[token];
    if (std::string special = specialTokenName(token, beginToken()); !special.empty())
        return special;
    throw std::invalid_argument("token " + std::to_string(token) + " out of range");
}

std::string ExpressionTask::symbolName(int answer) const {
    if (answer < 0 || answer >= answerCount())
        throw std::invalid_argument("answer " + std::to_string(answer) + " out of range");
    return std::to_string(answer);
}

namespace {

Evaluation checked(const Evaluation& ev) {
    if (!ev.error.empty())
        throw std::invalid_argument("malformed expression: " + ev.error);
    return ev;
}

} // namespace

Evaluation ExpressionTask::evaluateExample(const Example& e) const {
    if (!e.functions.empty())
        throw std::invalid_argument("example of table lookup given to an expression task");
    if (e.tokens.size() > size_t(2 * kMaxLength)) // the parser recurses once per nesting level
        throw std::invalid_argument("example of " + std::to_string(e.tokens.size()) + " tokens, more than " +
                                    std::to_string(2 * kMaxLength));
    for (int t : e.tokens)
        if (t < 0 || t >= int(words_.size()))
            throw std::invalid_argument("example token " + std::to_string(t) + " out of range");
    return checked(evaluate(e.tokens));
}

int ExpressionTask::answer(const Example& e) const {
    return evaluateExample(e).answer;
}

std::vector<int> ExpressionTask::tokens(const Example& e) const {
    std::vector<int> out;
    out.reserve(e.tokens.size() + 2);
    out.push_back(beginToken());
    for (int t : e.tokens) {
        if (t < 0 || t >= int(words_.size()))
            throw std::invalid_argument("example token " + std::to_string(t) + " out of range");
        out.push_back(t);
    }
    out.push_back(endToken());
    return out;
}

std::vector<int> ExpressionTask::intermediates(const Example& e) const {
    const Evaluation ev = evaluateExample(e);
    std::vector<int> out;
    out.reserve(e.tokens.size() + 2);
    out.push_back(-1);
    out.insert(out.end(), ev.values.begin(), ev.values.end());
    out.push_back(ev.answer);
    return out;
}

std::string ExpressionTask::format(const Example& e) const {
    std::string out;
    for (size_t i = 0; i < e.tokens.size(); ++i)
        out += (i ? separator_ : "") + tokenName(e.tokens[i]);
    return out;
}

std::string ExpressionTask::key(const Example& e) const {
    // Fewer than 256 words: one byte per token.
    return std::string(e.tokens.begin(), e.tokens.end());
}

std::pair<int, int> ExpressionTask::treeRange(int depth) const {
    const Split split = splitOf(depth);
    if (split == Split::None)
        return {depth, depth};
    const std::vector<int> d = depths(split);
    return {d.front(), d.back()};
}

Example ExpressionTask::sample(int depth, std::mt19937_64& rng) const {
    if (depth < 2)
        throw std::invalid_argument("sample: depth must be at least 2, got " + std::to_string(depth));
    const auto [lo, hi] = treeRange(depth);
    const double p = subtreeProbability(splitOf(depth));
    for (int draw = 0; draw < kMaxDraws; ++draw) {
        std::vector<int> toks = generate(lo, hi, p, rng);
        if (toks.empty())
            continue; // abandoned: too long
        const Evaluation ev = checked(evaluate(toks));
        if (ev.depth == depth && ev.length <= kMaxLength) {
            Example e;
            e.tokens = std::move(toks);
            e.treeDepth = depth;
            return e;
        }
    }
    throw std::runtime_error("sample: no expression of depth " + std::to_string(depth) + " within " +
                             std::to_string(kMaxLength) + " in " + std::to_string(kMaxDraws) + " draws");
}

std::string ExpressionTask::hint() const {
    return kind() == TaskKind::Arith ? "((3*4)+7)" : "[MAX 2 [MIN 4 7 ] 0 ]";
}

std::vector<std::string> ExpressionTask::completions(bool) const {
    std::vector<std::string> out;
    for (const std::string& w : words_)
        if (w.size() > 1)
            out.push_back(w);
    return out;
}

ParseResult ExpressionTask::parseQuestion(const std::string& text) const {
    ParseResult result;
    const std::vector<std::pair<int, int>> ranges = splitWords(text);
    auto fail = [&](int index, const std::string& message) {
        result.error = message;
        result.tokenIndex = index;
        if (index >= 0 && index < int(ranges.size())) {
            result.charBegin = ranges[index].first;
            result.charEnd = ranges[index].second;
        }
        return result;
    };
    auto word = [&](int i) { return text.substr(ranges[i].first, ranges[i].second - ranges[i].first); };
    if (ranges.empty())
        return fail(-1, "empty expression: type one, e.g. `" + hint() + "`");
    std::vector<int> toks;
    for (int i = 0; i < int(ranges.size()); ++i) {
        const std::string w = word(i);
        int id = -1;
        for (int k = 0; k < int(words_.size()) && id < 0; ++k)
            if (words_[k] == w)
                id = k;
        if (id < 0)
            return fail(i, "unknown token " + quoted(w) + " at position " + std::to_string(i + 1) +
                               ": expected " + expectedWords());
        toks.push_back(id);
    }
    // Checked before parsing: the parser recurses once per nesting level.
    const int maxTokens = 2 * kMaxLength;
    if (int(toks.size()) > maxTokens)
        return fail(maxTokens, "too long: " + std::to_string(toks.size()) +
                                   " tokens; this run answers at most " + std::to_string(maxTokens) +
                                   " (twice its longest training expression)");
    const Evaluation ev = evaluate(toks);
    if (!ev.error.empty()) {
        if (ev.errorToken < 0)
            return fail(-1, ev.error);
        return fail(ev.errorToken, quoted(word(ev.errorToken)) + " at position " +
                                       std::to_string(ev.errorToken + 1) + ": " + ev.error);
    }
    if (ev.depth > maxAskedDepth())
        return fail(-1, "depth " + std::to_string(ev.depth) +
                            " is too deep: this run answers at most depth " +
                            std::to_string(maxAskedDepth()) + " (twice its deepest test depth)");
    Example e;
    e.tokens = std::move(toks);
    e.treeDepth = ev.depth;
    result.example = std::move(e);
    return result;
}

} // namespace ndr
