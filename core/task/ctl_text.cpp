// Expressions as users type them: formatting in the run's order, and a parser whose errors name the
// offending token, where it is and what was expected there.
#include "core/task/ctl_task.h"

#include "core/task/text.h"

#include <algorithm>
#include <sstream>
#include <stdexcept>

namespace ndr {

namespace {

// "a..i", "000..111", "0 or 1", "a": the valid names of one kind, short enough for an inline error.
std::string compactList(const std::vector<std::string>& names) {
    if (names.size() == 1)
        return names[0];
    if (names.size() == 2)
        return names[0] + " or " + names[1];
    return names.front() + ".." + names.back();
}

// Hints show at most this many functions: an example of the fix, not a copy of a pasted paragraph.
constexpr size_t kMaxHintFunctions = 6;

} // namespace

void checkExample(const TaskConfig& c, const Example& e); // ctl_task.cpp

// ---- Text ----

std::string CtlTask::format(const Example& e) const {
    checkExample(config(), e);
    std::vector<std::string> parts;
    parts.push_back(symbolName(e.symbol));
    for (int f : e.functions)
        parts.push_back(functionName(f));
    if (config().order == Order::Backward)
        std::reverse(parts.begin(), parts.end());
    std::string out;
    for (const std::string& p : parts)
        out += (out.empty() ? "" : " ") + p;
    return out;
}

std::string CtlTask::hint() const {
    Example e;
    e.symbol = config().symbols - 1;
    for (int f = 0; f < std::min(3, config().functions); ++f)
        e.functions.push_back((f * 3 + 1) % config().functions);
    return format(e);
}

std::vector<std::string> CtlTask::completions(bool firstWord) const {
    const bool forward = config().order == Order::Forward;
    std::vector<std::string> names;
    if (!forward || firstWord)
        names = symbolNames();
    if (!forward || !firstWord)
        for (const std::string& f : functionNames())
            names.push_back(f);
    return names;
}

ParseResult CtlTask::parse(const std::string& text, int maxDepth) const {
    return parseLimited(text, maxDepth, "");
}

ParseResult CtlTask::parseQuestion(const std::string& text) const {
    const bool hasTest = !depths(Split::Test).empty();
    return parseLimited(text, maxAskedDepth(),
                        std::string("this run answers (twice its deepest ") + (hasTest ? "test " : "") +
                            "depth)");
}

ParseResult CtlTask::parseLimited(const std::string& text, int maxDepth, const std::string& limit) const {
    struct Token {
        std::string text;
        int begin, end;
        enum Kind { Symbol, Function, Unknown } kind;
        int value;
    };
    const bool forward = config().order == Order::Forward;
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
        e.symbol = symbol >= 0 ? symbol : std::min(5, config().symbols - 1);
        if (funcs.empty())
            for (int f : {1, 3, 7})
                if (f < config().functions)
                    funcs.push_back(f);
        if (funcs.empty())
            funcs.push_back(0);
        if (funcs.size() > kMaxHintFunctions)
            funcs.resize(kMaxHintFunctions);
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
        if (symbolCount == 1 && n >= 2 && size_t(n - 1) <= kMaxHintFunctions &&
            toks[otherEnd].kind == Token::Symbol) {
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
        const std::string most =
            std::to_string(maxDepth) + " function" + (maxDepth == 1 ? "" : "s") + (limit.empty() ? "" : " ");
        return fail(index, "depth " + std::to_string(e.depth()) + " is too deep: at most " + most + limit +
                               "; " + quoted(toks[index].text) + " at " + posText(index) + " is function " +
                               std::to_string(maxDepth + 1) + " in application order");
    }
    result.example = std::move(e);
    return result;
}

} // namespace ndr
