// ThoughtNet's arithmetic (docs/design.md §1): `0023+0123` -> `000000146`. Two numbers zero-padded to
// four digits around `+` or `*` (nine tokens, no [B] or [E]); the answer is the result as nine digits,
// one readout per input position. A depth is a problem kind (1+1 .. 2×3 digits); training draws from
// a fixed set with the write-up's mix, drawn once from the task seed.
#pragma once

#include "core/task/task.h"

namespace ndr {

class MultiDigitTask : public Task {
public:
    static constexpr int kWidth = 4;                  // digits per operand
    static constexpr int kPositions = 2 * kWidth + 1; // tokens, and answer digits
    static constexpr int kPlus = 10, kTimes = 11, kPad = 12;

    // A problem kind: the operation, the operands' digit counts, whether the two orders of unequal
    // counts are both drawn (1×2 and 2×1), and how many examples of it the training set holds.
    struct Kind {
        bool times;
        int digitsA, digitsB;
        bool bothOrders;
        int trainCount;
        const char* label; // "1+1", "1×2"
    };
    // Depths 1..8: 1+1, 2+2, 3+3, 1×1, 1×2, 2×2 (the write-up's training mix), 4+4, 2×3.
    static const Kind& kindOf(int depth);
    static int kindCount();

    explicit MultiDigitTask(const TaskConfig& config);

    int vocabSize() const override { return kPad + 1; }
    int padToken() const override { return kPad; }
    std::string tokenName(int token) const override;
    int answerCount() const override { return 10; }
    // A readout digit (0..9), or the number a whole answer spells.
    std::string symbolName(int answer) const override { return std::to_string(answer); }
    int readouts() const override { return kPositions; }

    int answer(const Example& e) const override;
    std::vector<int> targets(const Example& e) const override;
    std::vector<int> tokens(const Example& e) const override { return e.tokens; }
    // The answer digit each position must give.
    std::vector<int> intermediates(const Example& e) const override { return targets(e); }
    std::string format(const Example& e) const override;
    // "23+123", "0029*0066", spaces allowed; each number at most four digits.
    ParseResult parseQuestion(const std::string& text) const override;
    std::string hint() const override { return "29*66"; }
    std::vector<std::string> completions(bool) const override { return {}; }

    Example sample(int depth, std::mt19937_64& rng) const override;
    int64_t caseCount(int depth) const override;
    // Uniform draws (with replacement) from the fixed training set.
    Batch trainBatch(int batchSize, std::mt19937_64& rng) const override;
    const std::vector<Example>& trainingSet() const { return train_; }
    std::optional<std::vector<Example>> fixedTrainingExamples(int depth) const override;

    // The example of `a op b`, its depth the kind whose digit counts it has (0 if none).
    static Example make(int a, bool times, int b);

protected:
    std::vector<Example> enumerate(int depth) const override;
    std::string key(const Example& e) const override { return format(e); }

private:
    std::vector<Example> train_;
};

} // namespace ndr
