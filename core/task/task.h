// A task (docs/design.md §1): its vocabulary, examples by depth, fixed held-out sets per depth, fresh
// balanced training batches, ground truth with the intermediate values the inspector shows, and the
// parsing of typed questions. Compositional table lookup (ctl_task.h) and the paper's arithmetic and
// ListOps (expression_task.h) sit behind this interface; makeTask() builds the one a config names.
#pragma once

#include "core/config/config.h"

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <unordered_set>
#include <vector>

namespace ndr {

// One question. CTL fills `symbol` and `functions` (a symbol x and the functions in application order
// f1..fd, answer fd(..f1(x))); the expression tasks fill `tokens`, the expression's tokens between
// [B] and [E], and `treeDepth`, the depth their splits count.
struct Example {
    int symbol = 0;
    std::vector<int> functions;
    std::vector<int> tokens;
    int treeDepth = 0;
    int depth() const { return tokens.empty() ? int(functions.size()) : treeDepth; }
    bool operator==(const Example&) const = default;
};

// A padded batch of model inputs `[B] tokens [E] [PAD]...`, row-major (B, T).
// With one readout per example (R = 1) the answer is read at [E], position lengths[b]-1, or, when the
// model reads the first column (ModelConfig::readout), at [B], position 0. With R > 1 (ThoughtNet's
// arithmetic: one output digit per input position) readout k is read at position k.
struct Batch {
    int batch = 0;            // B
    int positions = 0;        // T, the longest sequence in the batch
    int readouts = 1;         // R, answers per example
    std::vector<int> tokens;  // (B*T) token ids, padded with padToken()
    std::vector<int> lengths; // (B) real length including [B] and [E]; [E] sits at lengths[b]-1
    std::vector<int> targets; // (B*R) the answer of each readout, example-major
    std::vector<int> depths;  // (B)
    bool readFirst = false;   // R = 1: read at [B] in place of [E] (set by the model that reads)

    // The position readout k of example b is read at.
    int readoutPosition(int b, int k) const {
        return readouts > 1 ? k : readFirst ? 0 : lengths[size_t(b)] - 1;
    }
};

// The answer R readouts spell: their digits in base S, the first readout most significant. With one
// readout, that readout.
inline int spelledAnswer(const int* digits, int readouts, int symbols) {
    int v = 0;
    for (int k = 0; k < readouts; ++k)
        v = v * symbols + digits[k];
    return v;
}

enum class Split { Train, Valid, Test, None };

// Asking a CTL model (docs/design.md §1). A model that applies one function per step needs one step per
// function and one more to carry the result to [E]: depth + 1 steps.
int routingSteps(int depth);
// True when `steps` are fewer than routingSteps(depth). The model answers all the same; the inspector
// and `ndr predict` say beside its answer that it cannot have routed the expression one function per step.
bool stepsBelowDepth(int depth, int steps);

// Depths by split, ascending; allDepthsOf() is every depth in any split, ascending and unique. Functions
// of the configuration alone: no task needs building to know them.
std::vector<int> depthsOf(const TaskConfig& config, Split split);
std::vector<int> allDepthsOf(const TaskConfig& config);

// The number of answers (the readout's outputs) of the task a configuration names: S for table lookup,
// the ten digits otherwise. Chance accuracy is its inverse.
int answerCountOf(const TaskConfig& config);
// The readouts of one example (R): one answer per example, or one per position (multi-digit arithmetic).
int answersPerExample(const TaskConfig& config);
// The accuracy of guessing: 1/S per readout, (1/S)^R for an answer of R readouts.
double chanceAccuracyOf(const TaskConfig& config);
// "S8 F9" for table lookup, "arithmetic", "ListOps" or "multi-digit arithmetic" otherwise.
std::string taskName(const TaskConfig& config);

// What a depth of the task counts: "number of functions", "nesting", "dependency depth" or "problem
// size" (multi-digit arithmetic, whose depths are problem kinds such as 2+2 digits).
std::string depthMeaning(const TaskConfig& config);
// Whether the task's depths are problem sizes known by name ("2+2", "1×2": multi-digit arithmetic)
// rather than numbers; views then speak of sizes, not depths.
bool depthsAreSizes(const TaskConfig& config);
// How a depth is labelled on axes and in tables: the number itself, or the problem kind ("2+2", "1×2")
// of multi-digit arithmetic.
std::string depthLabel(const TaskConfig& config, int depth);
// A depth's column in text tables: "d3", or the ASCII problem kind ("1x2") of multi-digit arithmetic.
std::string depthColumnName(const TaskConfig& config, int depth);

struct ParseResult {
    std::optional<Example> example;   // set on success
    std::string error;                // set on failure: names the offending token and what was expected
    int tokenIndex = -1;              // index of the offending token, -1 if none
    int charBegin = -1, charEnd = -1; // its character range in the input (UTF-8 bytes)
};

class Task {
public:
    virtual ~Task() = default;

    const TaskConfig& config() const { return config_; }
    TaskKind kind() const { return config_.kind; }

    // ---- State beyond the configuration, kept in the run record ----
    // Table lookup's function tables (tables[f][x] = f(x)); none for the expression tasks.
    virtual std::vector<std::vector<int>> savedTables() const { return {}; }
    // Puts back what savedTables gave; std::invalid_argument naming what does not fit (tables for a
    // task without any, a table that is no bijection of the symbols).
    virtual void restoreTables(const std::vector<std::vector<int>>& tables);

    // ---- Vocabulary and answers ----
    virtual int vocabSize() const = 0;
    virtual int padToken() const = 0;
    virtual std::string tokenName(int token) const = 0;
    // Readout outputs (and intermediate values) are 0..answerCount()-1; the readout has one output per
    // value. A task with several readouts per example (readouts() > 1) answers with the number they
    // spell (spelledAnswer), which symbolName() writes out.
    virtual int answerCount() const = 0;
    virtual std::string symbolName(int answer) const = 0;
    virtual int readouts() const { return 1; }
    std::vector<std::string> symbolNames() const;
    // True when the run's questions name the steps a model needs (routingSteps): CTL only.
    virtual bool routesOneStepPerDepth() const { return false; }

    // ---- Ground truth ----
    virtual int answer(const Example& e) const = 0;
    // The value each readout must give (readouts() of them); one readout gives answer(e).
    virtual std::vector<int> targets(const Example& e) const { return {answer(e)}; }
    // Model input `[B] ... [E]` (with several readouts: the question's own tokens).
    virtual std::vector<int> tokens(const Example& e) const = 0;
    // For each position of tokens(e): the value computed up to there (-1 where there is none); [E]
    // holds the answer.
    virtual std::vector<int> intermediates(const Example& e) const = 0;
    // The expression as a user types it.
    virtual std::string format(const Example& e) const = 0;
    // The operation at the root of an expression's tree, as the user types it ("SM" of ListOps' `[SM
    // ...]`, "+" of arithmetic's `((3*4)+7)`); empty for a task without operations (table lookup,
    // multi-digit arithmetic, whose depths are one operation each) and for a lone digit.
    virtual std::string rootOperation(const Example& /*e*/) const { return {}; }
    // Parses user text as a question this run answers (where depths nest, depth at most
    // maxAskedDepth(); multi-digit arithmetic takes any two numbers of at most four digits); the
    // message names the offending token and what was expected there.
    virtual ParseResult parseQuestion(const std::string& text) const = 0;
    // A question to show as an example of what to type.
    virtual std::string hint() const = 0;
    // Words to offer while a user types one (the first word of the question or a later one).
    virtual std::vector<std::string> completions(bool firstWord) const = 0;
    // The deepest question the run answers (the inspector, `ndr predict`): twice its deepest test depth
    // (twice its deepest depth without a test split).
    int maxAskedDepth() const;

    // ---- Splits ----
    std::vector<int> depths(Split split) const { return depthsOf(config_, split); }
    std::vector<int> allDepths() const { return allDepthsOf(config_); }
    Split splitOf(int depth) const { return splitOf(config_, depth); }
    static Split splitOf(const TaskConfig& config, int depth);

    // ---- Examples ----
    // A random example of the given depth, drawn as the task's generator draws them.
    virtual Example sample(int depth, std::mt19937_64& rng) const = 0;
    // Number of distinct examples of a depth, saturating at INT64_MAX.
    virtual int64_t caseCount(int depth) const = 0;
    // A fresh training batch, balanced over the train depths (each depth appears batchSize/nDepths
    // times, the remainder spread from a random offset) and never containing a held-out example.
    // A task with a fixed training set draws from that instead.
    virtual Batch trainBatch(int batchSize, std::mt19937_64& rng) const;
    Batch makeBatch(const std::vector<Example>& examples) const;

    // The fixed evaluation set of a depth (deterministic in the task seed): every case when the depth
    // has at most evalExamplesPerDepth of them, otherwise a sample without repetition of that size.
    // Training depths' sets are built in the constructor; the others on first use (drawing deep ListOps
    // takes seconds), which is safe from several threads.
    const std::vector<Example>& evalSet(int depth) const;
    // evalSet(depth), giving way to `stop` while the set is drawn: nullptr once `stop` is raised before
    // the set is complete. The next call goes on drawing where this one stopped: the same set.
    const std::vector<Example>* evalSetUnless(int depth, const std::atomic<bool>* stop) const;
    // evalSet(depth).front() without building the set.
    Example firstEvalExample(int depth) const;
    // True when `e` belongs to an evaluation set that training must not see: every evaluation set of a
    // validation or test depth, and that of a train depth whose case count is at least 5x the set
    // size (smaller train depths are enumerated by training anyway, so their set is marked as not
    // held out and training is not restricted).
    bool isHeldOut(const Example& e) const;
    bool evalSetHeldOut(int depth) const;
    // The examples training draws from at a depth, each problem once, in the order the training set
    // holds them, for a task with a fixed training set (multi-digit arithmetic); nullopt for a task
    // whose training draws fresh examples every step.
    virtual std::optional<std::vector<Example>> fixedTrainingExamples(int /*depth*/) const {
        return std::nullopt;
    }
    // `count` examples of a depth drawn as sample() draws them, from a generator seeded by `seed` and the
    // depth, with repetition and whether or not an example is held out or in a training set: a test set
    // sampled independently of training, as ThoughtNet's write-up sampled its test sets.
    std::vector<Example> independentSample(int depth, int count, uint64_t seed) const;

protected:
    explicit Task(const TaskConfig& config);
    // Copies only as the derived task: no slicing.
    Task(const Task&) = default;
    Task& operator=(const Task&) = default;
    // Every example of a depth in a fixed order, called when caseCount(depth) <= evalExamplesPerDepth.
    virtual std::vector<Example> enumerate(int depth) const = 0;
    // A string identifying an example among all of the task's examples.
    virtual std::string key(const Example& e) const = 0;
    // Builds the training depths' evaluation sets; the derived constructor calls it once its own state
    // is ready.
    void buildEvalSets();

private:
    // A draw that gave way to a stop: its generator and the keys of the examples drawn so far.
    struct PartialDraw {
        std::mt19937_64 rng;
        std::unordered_set<std::string> seen;
    };
    struct DepthSet {
        bool built = false;
        std::vector<Example> examples;        // complete once built
        std::unordered_set<std::string> keys; // of a held-out set only
        std::optional<PartialDraw> draw;      // while a draw is under way
    };
    // Draws the depth's set into `set`; false, with `set` unbuilt, once `stop` is raised.
    bool build(int depth, DepthSet& set, const std::atomic<bool>* stop = nullptr) const;
    // The depth's set, built under the lock unless it is a training depth's (built before any use);
    // nullptr when `stop` is raised first.
    const DepthSet* depthSetUnless(int depth, const std::atomic<bool>* stop) const;
    const DepthSet& depthSet(int depth) const { return *depthSetUnless(depth, nullptr); }

    TaskConfig config_;
    mutable std::vector<DepthSet> sets_; // indexed by depth; empty for depths in no split
    std::shared_ptr<std::mutex> mutex_ = std::make_shared<std::mutex>(); // guards building sets_
};

// The task `config.kind` names. Throws std::invalid_argument if the configuration is invalid.
std::unique_ptr<Task> makeTask(const TaskConfig& config);

// The mean of values[i] over the depths[i] in `split` (NaN when none is).
double splitMean(const TaskConfig& config, const std::vector<int>& depths, const std::vector<double>& values,
                 Split split);

// The answer most common among `examples` (all its readouts' targets; the smallest such answer on a
// tie) and the share of the examples that have it: the accuracy of a model that gives that answer
// whatever the input. Where answers are not uniform (arithmetic's products mod 10 favour 0) it lies
// well above chance. Zero share and no targets for no examples.
struct MajorityBaseline {
    std::vector<int> targets;
    double accuracy = 0;
};
MajorityBaseline majorityBaseline(const Task& task, const std::vector<Example>& examples);

// Unbiased integer in [0, n) from raw generator output: std::uniform_int_distribution is not specified
// bit-for-bit, and tasks and held-out sets must be the same on every platform for a given seed.
uint64_t uniformBelow(std::mt19937_64& rng, uint64_t n);
// A uniform double in [0, 1) from raw generator output, for the same reason.
double uniformUnit(std::mt19937_64& rng);

} // namespace ndr
