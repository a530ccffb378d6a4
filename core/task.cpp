// Compositional table lookup (SPEC §1): seeded tables, fixed held-out sets, fresh balanced batches,
// and the parser/formatter users type expressions into.
#include "task.h"

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

// "a..i", "000..111", "0 or 1", "a": the valid names of one kind, short enough for an inline error.
std::string compactList(const std::vector<std::string>& names) {
    if (names.size() == 1)
        return names[0];
    if (names.size() == 2)
        return names[0] + " or " + names[1];
    return names.front() + ".." + names.back();
}

// Quotes user text for a message, cut at a UTF-8 boundary so a pasted paragraph stays readable.
std::string quoted(const std::string& token) {
    constexpr size_t kMax = 32;
    if (token.size() <= kMax)
        return "'" + token + "'";
    size_t cut = kMax;
    while (cut > 0 && (static_cast<unsigned char>(token[cut]) & 0xC0) == 0x80)
        --cut;
    return "'" + token.substr(0, cut) + "...'";
}

bool isAsciiSpace(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
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

namespace {
void checkExample(const TaskConfig& c, const Example& e) {
    if (e.symbol < 0 || e.symbol >= c.symbols)
        throw std::invalid_argument("example symbol " + std::to_string(e.symbol) + " out of range");
    for (int f : e.functions)
        if (f < 0 || f >= c.functions)
            throw std::invalid_argument("example function " + std::to_string(f) + " out of range");
}
} // namespace

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

// ---- Text ----

std::string CtlTask::format(const Example& e) const {
    checkExample(config_, e);
    std::vector<std::string> parts;
    parts.push_back(symbolName(e.symbol));
    for (int f : e.functions)
        parts.push_back(functionName(f));
    if (config_.order == Order::Backward)
        std::reverse(parts.begin(), parts.end());
    std::string out;
    for (const std::string& p : parts)
        out += (out.empty() ? "" : " ") + p;
    return out;
}

ParseResult CtlTask::parse(const std::string& text, int maxDepth) const {
    struct Token {
        std::string text;
        int begin, end;
        enum Kind { Symbol, Function, Unknown } kind;
        int value;
    };
    const bool forward = config_.order == Order::Forward;
    const std::vector<std::string> symbols = symbolNames(), functions = functionNames();
    const std::string symbolList = compactList(symbols), functionList = compactList(functions);
    const std::string orderName = forward ? "forward" : "backward";

    std::vector<Token> toks;
    for (size_t i = 0; i < text.size();) {
        if (isAsciiSpace(text[i])) {
            ++i;
            continue;
        }
        size_t j = i;
        while (j < text.size() && !isAsciiSpace(text[j]))
            ++j;
        Token t{text.substr(i, j - i), int(i), int(j), Token::Unknown, -1};
        if (auto s = std::find(symbols.begin(), symbols.end(), t.text); s != symbols.end()) {
            t.kind = Token::Symbol;
            t.value = int(s - symbols.begin());
        } else if (auto f = std::find(functions.begin(), functions.end(), t.text); f != functions.end()) {
            t.kind = Token::Function;
            t.value = int(f - functions.begin());
        }
        toks.push_back(std::move(t));
        i = j;
    }

    // A well-formed expression in this run's order, for "e.g." hints: the user's own functions when
    // there are any, so the hint shows how to fix what they typed.
    auto exampleText = [&](int symbol, std::vector<int> funcs) {
        Example e;
        e.symbol = symbol >= 0 ? symbol : std::min(5, config_.symbols - 1);
        if (funcs.empty())
            for (int f : {1, 3, 7})
                if (f < config_.functions)
                    funcs.push_back(f);
        if (funcs.empty())
            funcs.push_back(0);
        e.functions = funcs;
        return "`" + format(e) + "`";
    };
    auto posText = [](int i) { return "position " + std::to_string(i + 1); };

    ParseResult result;
    auto fail = [&](int index, const std::string& message) {
        result.error = message;
        result.tokenIndex = index;
        if (index >= 0) {
            result.charBegin = toks[index].begin;
            result.charEnd = toks[index].end;
        }
        return result;
    };

    const int n = int(toks.size());
    if (n == 0)
        return fail(-1,
                    "empty expression: type a symbol and at least one function, e.g. " + exampleText(-1, {}));

    int symbolCount = 0;
    for (const Token& t : toks)
        symbolCount += t.kind == Token::Symbol;
    const int symbolPos = forward ? 0 : n - 1;
    // The functions as the user typed them, put into application order for this run.
    auto userFunctions = [&](bool reversed) {
        std::vector<int> funcs;
        for (const Token& t : toks)
            if (t.kind == Token::Function)
                funcs.push_back(t.value);
        if (reversed)
            std::reverse(funcs.begin(), funcs.end());
        return funcs;
    };
    auto userSymbol = [&]() {
        for (const Token& t : toks)
            if (t.kind == Token::Symbol)
                return t.value;
        return -1;
    };
    // The hint for a misplaced symbol. When the lone symbol sits at the other end, the user most likely
    // wrote the other order, so the hint is the same expression rewritten in this run's order.
    auto orderHint = [&]() {
        const int otherEnd = forward ? n - 1 : 0;
        if (symbolCount == 1 && n >= 2 && toks[otherEnd].kind == Token::Symbol) {
            std::string typed;
            for (const Token& t : toks)
                typed += (typed.empty() ? "" : " ") + t.text;
            // Written the other way round, the first function applied sits next to the symbol, so the
            // functions in text order are fd..f1 (forward run) or f1..fd (backward run).
            return "e.g. " + exampleText(userSymbol(), userFunctions(forward)) + ", which is `" + typed +
                   "` written in " + orderName + " order";
        }
        return "e.g. " + exampleText(symbolCount == 1 ? userSymbol() : -1, userFunctions(!forward));
    };
    const std::string symbolEnd =
        forward ? "the expression starts with the symbol" : "the expression ends with the symbol";

    // Unknown tokens first: the structure of an expression cannot be judged (nor a fix suggested)
    // around a token that is neither a symbol nor a function.
    for (int i = 0; i < n; ++i) {
        if (toks[i].kind != Token::Unknown)
            continue;
        std::string expected;
        if (!forward && n == 1)
            expected = "a function (" + functionList + ") or the symbol (" + symbolList + ")";
        else if (i == symbolPos)
            expected = "a symbol (" + symbolList + ")";
        else
            expected = "a function (" + functionList + ")";
        return fail(i,
                    "unknown token " + quoted(toks[i].text) + " at " + posText(i) + ": expected " + expected);
    }
    for (int i = 0; i < n; ++i) {
        const Token& t = toks[i];
        const bool wantSymbol = i == symbolPos;
        if (wantSymbol && t.kind == Token::Function) {
            if (!forward && n == 1)
                return fail(i, quoted(t.text) + " at " + posText(i) + " is a function; " + symbolEnd + " (" +
                                   symbolList + "), e.g. " + exampleText(-1, {t.value}));
            if (symbolCount == 0)
                return fail(i, quoted(t.text) + " at " + posText(i) +
                                   " is a function, but the expression has no " + "symbol: in this run's " +
                                   orderName + " order " + symbolEnd + " (" + symbolList + "), " +
                                   orderHint());
            return fail(i, quoted(t.text) + " at " + posText(i) + " is a function, but this run is in " +
                               orderName + " order: " + symbolEnd + " (" + symbolList + "), " + orderHint());
        }
        if (!wantSymbol && t.kind == Token::Symbol) {
            if (symbolCount >= 2) {
                int other = -1;
                for (int k = 0; k < n && other < 0; ++k)
                    if (k != i && toks[k].kind == Token::Symbol)
                        other = k;
                return fail(i, "more than one symbol: " + quoted(t.text) + " at " + posText(i) + " and " +
                                   quoted(toks[other].text) + " at " + posText(other) +
                                   " are both symbols; an expression has exactly one, " +
                                   (forward ? "at the start" : "at the end") + ", and otherwise functions (" +
                                   functionList + ")");
            }
            return fail(i, quoted(t.text) + " at " + posText(i) + " is a symbol, but this run is in " +
                               orderName + " order: " + symbolEnd + ", " + orderHint());
        }
    }

    if (n == 1)
        return fail(0, "needs at least one function " + std::string(forward ? "after" : "before") +
                           " the symbol " + quoted(toks[0].text) + ", e.g. " +
                           exampleText(toks[0].value, {}));

    Example e;
    e.symbol = toks[symbolPos].value;
    for (const Token& t : toks)
        if (t.kind == Token::Function)
            e.functions.push_back(t.value);
    if (!forward)
        std::reverse(e.functions.begin(), e.functions.end());

    if (maxDepth >= 0 && e.depth() > maxDepth) {
        // Point at the first function past the limit in application order.
        const int index = forward ? maxDepth + 1 : e.depth() - maxDepth - 1;
        return fail(index, "depth " + std::to_string(e.depth()) +
                               " is deeper than this model can route: at most " + std::to_string(maxDepth) +
                               " function" + (maxDepth == 1 ? "" : "s") + "; " + quoted(toks[index].text) +
                               " at " + posText(index) + " is function " + std::to_string(maxDepth + 1) +
                               " in application order");
    }
    result.example = std::move(e);
    return result;
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
