// ThoughtNet's multi-digit arithmetic (see multidigit_task.h).
#include "core/task/multidigit_task.h"

#include "core/task/text.h"

#include <stdexcept>
#include <unordered_set>

namespace ndr {

namespace {

constexpr MultiDigitTask::Kind kKinds[] = {
    {false, 1, 1, false, 500, "1+1"},  {false, 2, 2, false, 2000, "2+2"}, {false, 3, 3, false, 5000, "3+3"},
    {true, 1, 1, false, 500, "1×1"},   {true, 1, 2, true, 2000, "1×2"},   {true, 2, 2, false, 5000, "2×2"},
    {false, 4, 4, false, 5000, "4+4"}, {true, 2, 3, true, 5000, "2×3"},
};

// Numbers with exactly n digits: 0..9 for one digit, 10^(n-1)..10^n-1 otherwise.
int lowest(int n) {
    int v = 1;
    for (int i = 1; i < n; ++i)
        v *= 10;
    return n == 1 ? 0 : v;
}
int64_t countWith(int n) {
    return n == 1 ? 10 : 9 * int64_t(lowest(n));
}
int digitCount(int v) {
    int n = 1;
    while (v >= 10)
        v /= 10, ++n;
    return n;
}

} // namespace

const MultiDigitTask::Kind& MultiDigitTask::kindOf(int depth) {
    if (depth < 1 || depth > kindCount())
        throw std::invalid_argument("multi-digit arithmetic has no problem kind " + std::to_string(depth));
    return kKinds[depth - 1];
}

int MultiDigitTask::kindCount() {
    return int(std::size(kKinds));
}

MultiDigitTask::MultiDigitTask(const TaskConfig& config) : Task(config) {
    buildEvalSets();
    // The fixed training set, drawn once from its own stream of the task seed.
    std::mt19937_64 rng(config.seed ^ 0x74686F7567687400ull);
    for (int depth : depths(Split::Train))
        for (int i = 0; i < kindOf(depth).trainCount; ++i) {
            Example e = sample(depth, rng);
            while (isHeldOut(e))
                e = sample(depth, rng);
            train_.push_back(std::move(e));
        }
}

std::string MultiDigitTask::tokenName(int token) const {
    if (token >= 0 && token <= 9)
        return std::to_string(token);
    if (token == kPlus)
        return "+";
    if (token == kTimes)
        return "*";
    if (token == kPad)
        return "[PAD]";
    return "?";
}

Example MultiDigitTask::make(int a, bool times, int b) {
    Example e;
    for (int v : {a, b}) {
        int p = 1000;
        for (int i = 0; i < kWidth; ++i, p /= 10)
            e.tokens.push_back(v / p % 10);
        if (e.tokens.size() == size_t(kWidth))
            e.tokens.push_back(times ? kTimes : kPlus);
    }
    const int na = digitCount(a), nb = digitCount(b);
    for (int d = 1; d <= kindCount(); ++d) {
        const Kind& k = kindOf(d);
        if (k.times == times &&
            ((na == k.digitsA && nb == k.digitsB) || (k.bothOrders && na == k.digitsB && nb == k.digitsA)))
            e.treeDepth = d;
    }
    return e;
}

namespace {
// The operands and operation of a well-formed example.
struct Operands {
    int a = 0, b = 0;
    bool times = false;
};
Operands operandsOf(const Example& e) {
    if (e.tokens.size() != size_t(MultiDigitTask::kPositions))
        throw std::invalid_argument("a multi-digit question has 9 tokens");
    Operands o;
    for (int i = 0; i < MultiDigitTask::kWidth; ++i) {
        o.a = o.a * 10 + e.tokens[size_t(i)];
        o.b = o.b * 10 + e.tokens[size_t(MultiDigitTask::kWidth + 1 + i)];
    }
    o.times = e.tokens[MultiDigitTask::kWidth] == MultiDigitTask::kTimes;
    return o;
}
} // namespace

int MultiDigitTask::answer(const Example& e) const {
    const Operands o = operandsOf(e);
    return o.times ? o.a * o.b : o.a + o.b;
}

std::vector<int> MultiDigitTask::targets(const Example& e) const {
    int v = answer(e);
    std::vector<int> digits(kPositions);
    for (int k = kPositions - 1; k >= 0; --k, v /= 10)
        digits[size_t(k)] = v % 10;
    return digits;
}

std::string MultiDigitTask::format(const Example& e) const {
    std::string s;
    for (int t : e.tokens)
        s += tokenName(t);
    return s;
}

Example MultiDigitTask::sample(int depth, std::mt19937_64& rng) const {
    const Kind& k = kindOf(depth);
    int na = k.digitsA, nb = k.digitsB;
    if (k.bothOrders && uniformBelow(rng, 2) == 1)
        std::swap(na, nb);
    const int a = lowest(na) + int(uniformBelow(rng, uint64_t(countWith(na))));
    const int b = lowest(nb) + int(uniformBelow(rng, uint64_t(countWith(nb))));
    return make(a, k.times, b);
}

int64_t MultiDigitTask::caseCount(int depth) const {
    const Kind& k = kindOf(depth);
    const int64_t n = countWith(k.digitsA) * countWith(k.digitsB);
    return k.bothOrders && k.digitsA != k.digitsB ? 2 * n : n;
}

std::vector<Example> MultiDigitTask::enumerate(int depth) const {
    const Kind& k = kindOf(depth);
    std::vector<Example> out;
    const auto all = [&](int na, int nb) {
        for (int a = lowest(na); a < lowest(na) + countWith(na); ++a)
            for (int b = lowest(nb); b < lowest(nb) + countWith(nb); ++b)
                out.push_back(make(a, k.times, b));
    };
    all(k.digitsA, k.digitsB);
    if (k.bothOrders && k.digitsA != k.digitsB)
        all(k.digitsB, k.digitsA);
    return out;
}

std::optional<std::vector<Example>> MultiDigitTask::fixedTrainingExamples(int depth) const {
    std::vector<Example> examples;
    std::unordered_set<std::string> seen;
    for (const Example& e : train_)
        if (e.treeDepth == depth && seen.insert(key(e)).second)
            examples.push_back(e);
    return examples;
}

Batch MultiDigitTask::trainBatch(int batchSize, std::mt19937_64& rng) const {
    if (batchSize < 0)
        throw std::invalid_argument("trainBatch: negative batch size");
    std::vector<Example> examples;
    examples.reserve(size_t(batchSize));
    for (int i = 0; i < batchSize; ++i)
        examples.push_back(train_[size_t(uniformBelow(rng, train_.size()))]);
    return makeBatch(examples);
}

ParseResult MultiDigitTask::parseQuestion(const std::string& text) const {
    ParseResult r;
    const auto fail = [&](int index, int begin, int end, const std::string& message) {
        r.error = message;
        r.tokenIndex = index;
        r.charBegin = begin, r.charEnd = end;
        return r;
    };
    int numbers[2] = {0, 0}, digits[2] = {0, 0}, which = 0, index = 0;
    bool times = false, sawOp = false;
    for (size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (isAsciiSpace(c))
            continue;
        const int at = int(i);
        if (c >= '0' && c <= '9') {
            if (++digits[which] > kWidth)
                return fail(index, at, at + 1,
                            "the " + std::string(which == 0 ? "first" : "second") +
                                " number has more than 4 digits; numbers are 0 to 9999");
            numbers[which] = numbers[which] * 10 + (c - '0');
        } else if (c == '+' || c == '*') {
            if (sawOp)
                return fail(index, at, at + 1, quoted(std::string(1, c)) + ": one operation per question");
            if (digits[0] == 0)
                return fail(index, at, at + 1, quoted(std::string(1, c)) + " needs a number before it");
            sawOp = true, times = c == '*', which = 1;
        } else {
            size_t end = i + 1;
            while (end < text.size() && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80)
                ++end;
            return fail(index, at, int(end),
                        quoted(text.substr(i, end - i)) + " is not a digit, '+' or '*' (type e.g. 29*66)");
        }
        ++index;
    }
    if (index == 0)
        return fail(-1, -1, -1, "type two numbers of at most 4 digits with + or * between them, e.g. 29*66");
    if (!sawOp)
        return fail(-1, int(text.size()), int(text.size()), "expected '+' or '*' and a second number");
    if (digits[1] == 0)
        return fail(-1, int(text.size()), int(text.size()), "expected a number after the operation");
    r.example = make(numbers[0], times, numbers[1]);
    return r;
}

} // namespace ndr
