// Compositional table lookup (docs/design.md §1): seeded function tables, balanced fresh training
// batches, fixed held-out sets per depth, parsing and formatting in either presentation order, and
// ground truth.
#pragma once

#include "core/config/config.h"

#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <unordered_set>
#include <vector>

namespace ndr {

// One expression: a symbol x and the functions in application order f1..fd (answer fd(..f1(x))).
struct Example {
    int symbol = 0;
    std::vector<int> functions;
    int depth() const { return int(functions.size()); }
    bool operator==(const Example&) const = default;
};

// A padded batch of model inputs `[B] tokens [E] [PAD]...`, row-major (B, T).
struct Batch {
    int batch = 0;            // B
    int positions = 0;        // T, the longest sequence in the batch
    std::vector<int> tokens;  // (B*T) token ids, padded with padToken()
    std::vector<int> lengths; // (B) real length including [B] and [E]; [E] sits at lengths[b]-1
    std::vector<int> targets; // (B) the answer symbol
    std::vector<int> depths;  // (B)
};

enum class Split { Train, Valid, Test, None };

// Asking a model (docs/design.md §1). A model that applies one function per step needs one step per
// function and one more to carry the result to [E]: depth + 1 steps.
int routingSteps(int depth);
// True when `steps` are fewer than routingSteps(depth). The model answers all the same; the inspector
// and `ndr predict` say beside its answer that it cannot have routed the expression one function per step.
bool stepsBelowDepth(int depth, int steps);

struct ParseResult {
    std::optional<Example> example;   // set on success
    std::string error;                // set on failure: names the offending token and what was expected
    int tokenIndex = -1;              // index of the offending whitespace-separated token, -1 if none
    int charBegin = -1, charEnd = -1; // its character range in the input (UTF-8 bytes)
};

class CtlTask {
public:
    // Throws std::invalid_argument if the configuration is invalid (see validate()).
    explicit CtlTask(const TaskConfig& config);

    const TaskConfig& config() const { return config_; }

    // Vocabulary: symbols 0..S-1, functions S..S+F-1, then [B], [E], [PAD].
    int vocabSize() const { return config_.symbols + config_.functions + 3; }
    int symbolToken(int symbol) const { return symbol; }
    int functionToken(int function) const { return config_.symbols + function; }
    int beginToken() const { return config_.symbols + config_.functions; }
    int endToken() const { return beginToken() + 1; }
    int padToken() const { return beginToken() + 2; }
    std::string tokenName(int token) const; // "101", "b", "[B]", "[E]", "[PAD]"
    std::string
    symbolName(int symbol) const; // S a power of two: bit strings (S=8: "000".."111"); else "0".."S-1"
    std::string functionName(int function) const; // "a".."z"
    std::vector<std::string> symbolNames() const;
    std::vector<std::string> functionNames() const;

    // Function tables: tables()[f][x] = f(x); each a bijection of {0..S-1}.
    const std::vector<std::vector<int>>& tables() const { return tables_; }
    // Replaces the tables (e.g. from a run file); throws std::invalid_argument unless each is a bijection.
    void setTables(const std::vector<std::vector<int>>& tables);

    int answer(const Example& e) const;
    // Model input `[B] ... [E]` in the configured presentation order.
    std::vector<int> tokens(const Example& e) const;
    // For each position of tokens(e): the symbol after applying the functions up to that position
    // (the symbol's own position holds x); -1 for [B]; [E] holds the answer.
    std::vector<int> intermediates(const Example& e) const;
    // "101 b d h" (forward) or "h d b 101" (backward).
    std::string format(const Example& e) const;
    // Parses user text in the run's order. maxDepth < 0 means no depth limit.
    ParseResult parse(const std::string& text, int maxDepth = -1) const;
    // The deepest expression the run answers (the inspector, `ndr predict`): twice its deepest test
    // depth (twice its deepest depth without a test split). Far beyond anything the models have seen,
    // and a trace (steps x heads x T x T) outgrows reading long before.
    int maxAskedDepth() const;
    // An expression to answer: parse() with maxAskedDepth() as the limit, its message saying why.
    ParseResult parseQuestion(const std::string& text) const;

    // Depths by split, ascending; allDepths() is every depth in any split, ascending and unique.
    std::vector<int> depths(Split split) const;
    std::vector<int> allDepths() const;
    Split splitOf(int depth) const;

    // A uniformly random example of the given depth.
    Example sample(int depth, std::mt19937_64& rng) const;
    // A fresh training batch, balanced over the train depths (each depth appears batchSize/nDepths
    // times, the remainder spread from a random offset) and never containing a held-out example.
    Batch trainBatch(int batchSize, std::mt19937_64& rng) const;
    Batch makeBatch(const std::vector<Example>& examples) const;

    // The fixed evaluation set of a depth (built in the constructor, deterministic in the task seed):
    // every case when the depth has at most evalExamplesPerDepth of them, otherwise a sample without
    // repetition of that size.
    const std::vector<Example>& evalSet(int depth) const;
    // True when `e` belongs to an evaluation set that training must not see: every evaluation set of a
    // validation or test depth, and that of a train depth whose case count is at least 5x the set
    // size (smaller train depths are enumerated by training anyway, so their set is marked as not
    // held out and training is not restricted).
    bool isHeldOut(const Example& e) const;
    bool evalSetHeldOut(int depth) const;
    // Number of distinct examples of a depth (S * F^d), saturating at INT64_MAX.
    int64_t caseCount(int depth) const;

private:
    TaskConfig config_;
    std::vector<std::vector<int>> tables_;
    std::vector<std::vector<Example>> evalSets_; // indexed by depth; empty for depths in no split
    std::unordered_set<std::string> heldOutKeys_;
    void buildEvalSets();
    static std::string key(const Example& e);
    // parse(); `limit` says in the too-deep message where maxDepth comes from (empty: nothing).
    ParseResult parseLimited(const std::string& text, int maxDepth, const std::string& limit) const;
};

} // namespace ndr
