// Compositional table lookup (docs/design.md §1): seeded function tables, the symbol-and-functions
// vocabulary, parsing and formatting in either presentation order, and ground truth.
#pragma once

#include "core/task/task.h"

namespace ndr {

class CtlTask : public Task {
public:
    // Throws std::invalid_argument if the configuration is invalid (see validate()).
    explicit CtlTask(const TaskConfig& config);

    // Vocabulary: symbols 0..S-1, functions S..S+F-1, then [B], [E], [PAD].
    int vocabSize() const override { return config().symbols + config().functions + 3; }
    int symbolToken(int symbol) const { return symbol; }
    int functionToken(int function) const { return config().symbols + function; }
    int beginToken() const { return config().symbols + config().functions; }
    int endToken() const { return beginToken() + 1; }
    int padToken() const override { return beginToken() + 2; }
    std::string tokenName(int token) const override; // "101", "b", "[B]", "[E]", "[PAD]"
    int answerCount() const override { return config().symbols; }
    // S a power of two: bit strings (S=8: "000".."111"); else "0".."S-1".
    std::string symbolName(int symbol) const override;
    std::string functionName(int function) const; // "a".."z"
    std::vector<std::string> functionNames() const;
    bool routesOneStepPerDepth() const override { return true; }

    // Function tables: tables()[f][x] = f(x); each a bijection of {0..S-1}.
    const std::vector<std::vector<int>>& tables() const { return tables_; }
    // Replaces the tables (e.g. from a run file); throws std::invalid_argument unless each is a bijection.
    void setTables(const std::vector<std::vector<int>>& tables);
    std::vector<std::vector<int>> savedTables() const override { return tables_; }
    void restoreTables(const std::vector<std::vector<int>>& tables) override { setTables(tables); }

    int answer(const Example& e) const override;
    // Model input `[B] ... [E]` in the configured presentation order.
    std::vector<int> tokens(const Example& e) const override;
    // For each position of tokens(e): the symbol after applying the functions up to that position
    // (the symbol's own position holds x); -1 for [B]; [E] holds the answer.
    std::vector<int> intermediates(const Example& e) const override;
    // "101 b d h" (forward) or "h d b 101" (backward).
    std::string format(const Example& e) const override;
    // Parses user text in the run's order. maxDepth < 0 means no depth limit.
    ParseResult parse(const std::string& text, int maxDepth = -1) const;
    // parse() with maxAskedDepth() as the limit, its message saying why.
    ParseResult parseQuestion(const std::string& text) const override;
    std::string hint() const override;
    // Forward: the first word is the symbol and the rest are functions. Backward: the symbol comes
    // last, which cannot be told while typing, so both kinds are offered.
    std::vector<std::string> completions(bool firstWord) const override;

    // A uniformly random example of the given depth.
    Example sample(int depth, std::mt19937_64& rng) const override;
    // S * F^d.
    int64_t caseCount(int depth) const override;

protected:
    std::vector<Example> enumerate(int depth) const override;
    std::string key(const Example& e) const override;

private:
    std::vector<std::vector<int>> tables_;
    // parse(); `limit` says in the too-deep message where maxDepth comes from (empty: nothing).
    ParseResult parseLimited(const std::string& text, int maxDepth, const std::string& limit) const;
};

} // namespace ndr
