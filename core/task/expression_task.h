// The paper's tree-structured tasks (docs/design.md §1): simple arithmetic `((3*4)+7)` and ListOps
// `[MAX 2 [MIN 4 7 ] 0 ]`, both answered by one digit at [E]. ExpressionTask holds what they share
// (vocabulary layout, ground truth from one evaluator, rejection sampling by depth, parsing of typed
// questions); each task brings its words, its generator and its grammar.
#pragma once

#include "core/task/task.h"

namespace ndr {

// A parsed expression: per token the value computed there (-1 where none), the answer and the depth
// the task's splits count; or an error naming the token.
struct Evaluation {
    std::vector<int> values;
    int answer = -1;
    int depth = 0;
    int length = 0; // the generator's length measure (ExpressionTask::kMaxLength bounds it)
    std::string error;
    int errorToken = -1; // index into the tokens, or -1 for the end of the expression
};

// Records the first error of a recursive-descent parse over tokens (evaluate()).
struct ParseErrors {
    Evaluation& ev;
    bool fail(int at, const std::string& message) {
        if (ev.error.empty()) {
            ev.error = message;
            ev.errorToken = at;
        }
        return false;
    }
};

class ExpressionTask : public Task {
public:
    // Generated expressions are at most this long (characters for arithmetic, the generator's token
    // measure for ListOps); typed questions may be twice as long.
    static constexpr int kMaxLength = 50;

    // Vocabulary: the task's words 0..W-1, then [B], [E], [PAD].
    int vocabSize() const override { return int(words_.size()) + 3; }
    int beginToken() const { return int(words_.size()); }
    int endToken() const { return beginToken() + 1; }
    int padToken() const override { return beginToken() + 2; }
    std::string tokenName(int token) const override;
    int answerCount() const override { return 10; }
    std::string symbolName(int answer) const override;
    int digitToken(int digit) const { return digitBase_ + digit; }

    int answer(const Example& e) const override;
    std::vector<int> tokens(const Example& e) const override;
    // Each digit holds its value and each closing token the value of the operation it closes.
    std::vector<int> intermediates(const Example& e) const override;
    std::string format(const Example& e) const override;
    ParseResult parseQuestion(const std::string& text) const override;
    std::string hint() const override;
    // The operations' names (ListOps); arithmetic's one-character words need no completing.
    std::vector<std::string> completions(bool firstWord) const override;

    // Draws from the generator of the depth's split (its depth range and subtree probability) until an
    // expression of exactly this depth and at most kMaxLength long comes out.
    Example sample(int depth, std::mt19937_64& rng) const override;

    // The evaluator, also for generated expressions: parses the tokens (without [B] and [E]).
    virtual Evaluation evaluate(const std::vector<int>& tokens) const = 0;

protected:
    // A generated subtree: its tokens and tree depth.
    struct Drawn {
        std::vector<int> toks;
        int depth = 1;
    };

    ExpressionTask(const TaskConfig& config, std::vector<std::string> words, int digitBase,
                   std::string separator);
    // One expression from the authors' generator with tree depths lo..hi and subtree probability p;
    // empty when the generator abandons it as too long.
    virtual std::vector<int> generate(int lo, int hi, double p, std::mt19937_64& rng) const = 0;
    // The subtree probability of a depth's split.
    virtual double subtreeProbability(Split split) const = 0;
    // The generator's tree depths for an example of `depth`: its split's range (just `depth` outside
    // every split).
    virtual std::pair<int, int> treeRange(int depth) const;
    // Splits typed text into words with their character ranges.
    virtual std::vector<std::pair<int, int>> splitWords(const std::string& text) const = 0;
    // What the message says a token should have been.
    virtual std::string expectedWords() const = 0;
    std::string key(const Example& e) const override;

private:
    // evaluate() of a well-formed example; throws std::invalid_argument otherwise.
    Evaluation evaluateExample(const Example& e) const;

    std::vector<std::string> words_;
    int digitBase_;
    std::string separator_; // between words in format()
};

// Simple arithmetic (paper §3.2): E := digit | "(" E op E ")", op in {+, *}, values mod 10, one
// character per token. Depth: a digit 1, an operation 1 + its deeper operand.
class ArithTask : public ExpressionTask {
public:
    explicit ArithTask(const TaskConfig& config);
    Evaluation evaluate(const std::vector<int>& tokens) const override;
    // The operator between the outermost parentheses.
    std::string rootOperation(const Example& e) const override;
    int64_t caseCount(int depth) const override;
    // Depth 2 uniformly from its 200 cases; deeper ones as ExpressionTask::sample.
    Example sample(int depth, std::mt19937_64& rng) const override;

protected:
    std::vector<int> generate(int lo, int hi, double p, std::mt19937_64& rng) const override;
    double subtreeProbability(Split split) const override { return split == Split::Train ? 0.2 : 0.3; }
    std::vector<std::pair<int, int>> splitWords(const std::string& text) const override;
    std::string expectedWords() const override { return "a digit, '(', ')', '+' or '*'"; }
    // The authors draw depth 2 from its full set and generate from depth 3 up.
    std::pair<int, int> treeRange(int depth) const override;
    // Depth 2: all 200 `(a+b)` and `(a*b)`, the set the authors add to training.
    std::vector<Example> enumerate(int depth) const override;
};

// ListOps (paper §3.3): `[MAX a b ... ]`, `[MIN ...]`, `[MED ...]`, `[SM ...]` over digits. The depth
// the splits count is the dependency depth: a leaf 1; MIN/MAX the chosen argument's + 1; MED the
// chosen middle argument(s)' + 1; SM 1 + the deepest argument.
class ListOpsTask : public ExpressionTask {
public:
    explicit ListOpsTask(const TaskConfig& config);
    Evaluation evaluate(const std::vector<int>& tokens) const override;
    // The first token's operation, without its bracket.
    std::string rootOperation(const Example& e) const override;
    // More than any evaluation set at every depth: reported as INT64_MAX.
    int64_t caseCount(int depth) const override;

protected:
    std::vector<int> generate(int lo, int hi, double p, std::mt19937_64& rng) const override;
    double subtreeProbability(Split) const override { return 0.3; }
    std::vector<std::pair<int, int>> splitWords(const std::string& text) const override;
    std::string expectedWords() const override { return "a digit, [MIN, [MAX, [MED, [SM or ]"; }
    std::vector<Example> enumerate(int) const override { return {}; }

private:
    std::vector<int> drawn_; // the words of the operations the generator draws from
};

} // namespace ndr
