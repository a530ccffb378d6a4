// Tests of the paper's arithmetic and ListOps tasks (docs/design.md §1): hand-worked values, depths and
// intermediate values; generated examples of the asked depth and length; balanced batches that never
// touch held-out examples; deterministic evaluation sets; and parser errors that name the bad token.
#include "core/task/expression_task.h"
#include "testutil.h"

#include <atomic>
#include <chrono>
#include <map>
#include <set>
#include <thread>

using namespace ndr;

namespace {

TaskConfig arithConfig() {
    TaskConfig c;
    c.kind = TaskKind::Arith;
    c.trainMinDepth = 2, c.trainMaxDepth = 6;
    c.validMinDepth = 7, c.validMaxDepth = 7;
    c.testMinDepth = 8, c.testMaxDepth = 9;
    c.evalExamplesPerDepth = 200;
    return c;
}

TaskConfig listOpsConfig() {
    TaskConfig c = arithConfig();
    c.kind = TaskKind::ListOps;
    return c;
}

// ListOps up to depth 5 with small held-out sets: quick to build with any operations (without SM, deep
// dependency chains are rare draws).
TaskConfig shallowListOpsConfig(int examplesPerDepth) {
    TaskConfig c = listOpsConfig();
    c.trainMinDepth = 2, c.trainMaxDepth = 3;
    c.validMinDepth = 4, c.validMaxDepth = 4;
    c.testMinDepth = 5, c.testMaxDepth = 5;
    c.evalExamplesPerDepth = examplesPerDepth;
    return c;
}

Example parsed(const Task& task, const std::string& text) {
    const ParseResult r = task.parseQuestion(text);
    if (!r.example)
        throw std::runtime_error("'" + text + "' does not parse: " + r.error);
    return *r.example;
}

// Parsing fails at the given token (-1: none) and the message mentions `mention`; empty on success.
std::string checkError(const Task& task, const std::string& text, int tokenIndex,
                       const std::string& mention) {
    const ParseResult r = task.parseQuestion(text);
    if (r.example)
        return "'" + text + "' parsed";
    if (r.tokenIndex != tokenIndex)
        return "'" + text + "': token " + std::to_string(r.tokenIndex) + ", expected " +
               std::to_string(tokenIndex) + " (" + r.error + ")";
    if (r.error.find(mention) == std::string::npos)
        return "'" + text + "': message '" + r.error + "' does not mention '" + mention + "'";
    return {};
}

// The ListOps generator written plainly, one vector per node: the oracle of the task's in-place one.
// ops are the words drawn from (1..4: [MIN, [MAX, [MED, [SM); ']' is word 0 and digit d word 5 + d.
struct Drawn {
    std::vector<int> toks;
    int depth = 1;
};
std::vector<int> plainListOps(int lo, int hi, double p, std::mt19937_64& rng, const std::vector<int>& ops) {
    constexpr int kClose = 0, kDigit0 = 5, kMaxArgs = 5;
    int length = 0;
    auto over = [&] { return length > ExpressionTask::kMaxLength; };
    auto operation = [&](std::vector<Drawn>& args) {
        Drawn s;
        s.toks.push_back(ops[uniformBelow(rng, ops.size())]);
        s.depth = 0;
        for (const Drawn& a : args) {
            s.toks.insert(s.toks.end(), a.toks.begin(), a.toks.end());
            s.depth = std::max(s.depth, a.depth);
        }
        s.toks.push_back(kClose);
        ++s.depth;
        length += 2;
        return s;
    };
    auto subtree = [&](auto& self, int maxDepth) -> Drawn {
        if (over())
            return {};
        if (maxDepth == 1 || uniformUnit(rng) > p) {
            ++length;
            return Drawn{{kDigit0 + int(uniformBelow(rng, 10))}, 1};
        }
        const int n = 2 + int(uniformBelow(rng, kMaxArgs - 1));
        std::vector<Drawn> args;
        for (int k = 0; k < n && !over(); ++k)
            args.push_back(self(self, maxDepth - 1));
        return over() ? Drawn{} : operation(args);
    };
    Drawn s = subtree(subtree, hi);
    while (!over() && s.depth < lo) {
        const int n = 2 + int(uniformBelow(rng, kMaxArgs - 2));
        std::vector<Drawn> args;
        for (int k = 0; k < n && !over(); ++k)
            args.push_back(subtree(subtree, hi - 1));
        if (over())
            break;
        args.insert(args.begin() + int(uniformBelow(rng, uint64_t(n))), std::move(s));
        s = operation(args);
    }
    if (over())
        return {};
    return std::move(s.toks);
}

// The task's generator, reachable from the test.
class OpenListOps : public ListOpsTask {
public:
    using ListOpsTask::generate;
    using ListOpsTask::ListOpsTask;
};

} // namespace

class TestExpressionTasks : public QObject {
    Q_OBJECT

private slots:
    void arithValues() {
        const ArithTask task(arithConfig());
        QCOMPARE(task.vocabSize(), 17);
        const Example e = parsed(task, "((3*4)+7)");
        QCOMPARE(e.depth(), 3);
        QCOMPARE(task.answer(e), 9); // 3*4 = 12 -> 2, 2+7 = 9
        // [B] ( ( 3 * 4 ) + 7 ) [E]: digits hold themselves, each ')' its operation's value.
        QCOMPARE(task.intermediates(e), (std::vector<int>{-1, -1, -1, 3, -1, 4, 2, -1, 7, 9, 9}));
        QCOMPARE(task.format(e), std::string("((3*4)+7)"));
        QCOMPARE(task.format(parsed(task, " ( (3 * 4) + 7 ) ")), std::string("((3*4)+7)"));
        QCOMPARE(task.answer(parsed(task, "(9*9)")), 1);
        QCOMPARE(parsed(task, "(9*9)").depth(), 2);
        QCOMPARE(task.answer(parsed(task, "((1+2)*(3+4))")), 1);
        QCOMPARE(parsed(task, "(1+((2*3)*4))").depth(), 4);
        QCOMPARE(task.answer(parsed(task, "(1+((2*3)*4))")), 5); // 6*4 = 24 -> 4, 1+4
    }

    void listOpsValues() {
        const ListOpsTask task(listOpsConfig());
        QCOMPARE(task.vocabSize(), 18);
        const Example e = parsed(task, "[MAX 2 [MIN 4 7 ] 0 ]");
        QCOMPARE(task.answer(e), 4);
        QCOMPARE(e.depth(), 3); // MAX chooses MIN's value, which chose a leaf
        QCOMPARE(task.intermediates(e), (std::vector<int>{-1, -1, 2, -1, 4, 7, 4, 0, 4, 4}));
        QCOMPARE(task.format(parsed(task, "[MAX 2 [MIN 4 7] 0]")), std::string("[MAX 2 [MIN 4 7 ] 0 ]"));
        QCOMPARE(task.answer(parsed(task, "[MED 1 5 3 9 ]")), 4); // even: int of the mean of 3 and 5
        QCOMPARE(task.answer(parsed(task, "[MED 3 1 2 ]")), 2);
        QCOMPARE(task.answer(parsed(task, "[MED 1 2 ]")), 1); // int(1.5)
        QCOMPARE(task.answer(parsed(task, "[SM 7 8 9 ]")), 4);
        // The dependency depth follows the chosen argument, not the deepest one.
        const Example chosenLeaf = parsed(task, "[MAX 5 [SM 1 1 ] ]");
        QCOMPARE(task.answer(chosenLeaf), 5);
        QCOMPARE(chosenLeaf.depth(), 2);
        QCOMPARE(parsed(task, "[SM 5 [SM 1 1 ] ]").depth(), 3); // SM depends on every argument
        QCOMPARE(parsed(task, "[MED 1 [MIN 2 3 ] 9 ]").depth(), 3);
        QCOMPARE(parsed(task, "[MED 1 [MIN 2 3 ] 9 8 ]").depth(), 3); // middle pair: 2 (MIN) and 8
        QCOMPARE(parsed(task, "[MED 1 [MIN 0 3 ] 9 8 ]").depth(), 2); // middle pair: 1 and 8
    }

    // The operation at the root of the tree, which `ndr eval --by-operation` groups by.
    void rootOperations() {
        const ArithTask arith(arithConfig());
        QCOMPARE(arith.rootOperation(parsed(arith, "((3*4)+7)")), std::string("+"));
        QCOMPARE(arith.rootOperation(parsed(arith, "(9*9)")), std::string("*"));
        QCOMPARE(arith.rootOperation(parsed(arith, "((1+2)*(3+4))")), std::string("*"));
        QCOMPARE(arith.rootOperation(parsed(arith, "(1+((2*3)*4))")), std::string("+"));
        QCOMPARE(arith.rootOperation(parsed(arith, "7")), std::string());
        const ListOpsTask listOps(listOpsConfig());
        QCOMPARE(listOps.rootOperation(parsed(listOps, "[MAX 2 [MIN 4 7 ] 0 ]")), std::string("MAX"));
        QCOMPARE(listOps.rootOperation(parsed(listOps, "[SM 5 [SM 1 1 ] ]")), std::string("SM"));
        QCOMPARE(listOps.rootOperation(parsed(listOps, "[MED 1 [MIN 2 3 ] 9 ]")), std::string("MED"));
        QCOMPARE(listOps.rootOperation(parsed(listOps, "[MIN 4 7 ]")), std::string("MIN"));
        // Generated examples all have one.
        const ListOpsTask shallow(shallowListOpsConfig(16));
        for (const Example& e : shallow.evalSet(3))
            QVERIFY(!shallow.rootOperation(e).empty());
    }

    // The majority baseline counts whole answers and breaks ties towards the smallest.
    void majorityBaselineOfHandWrittenSets() {
        const ArithTask task(arithConfig());
        // Answers 2, 2 and 5: the most common is 2, held by two of three.
        const std::vector<Example> set = {parsed(task, "(3*4)"), parsed(task, "(1+1)"),
                                          parsed(task, "(2+3)")};
        MajorityBaseline b = majorityBaseline(task, set);
        QCOMPARE(b.targets, std::vector<int>{2});
        QCOMPARE(b.accuracy, 2.0 / 3.0);
        // Answers 7 and 1 once each: the tie goes to 1.
        b = majorityBaseline(task, {parsed(task, "(3+4)"), parsed(task, "(9*9)")});
        QCOMPARE(b.targets, std::vector<int>{1});
        QCOMPARE(b.accuracy, 0.5);
        b = majorityBaseline(task, {});
        QVERIFY(b.targets.empty());
        QCOMPARE(b.accuracy, 0.0);
        // Products mod 10 favour 0: every depth's most common answer is 0, well above chance (0.1).
        for (int d : task.allDepths()) {
            b = majorityBaseline(task, task.evalSet(d));
            QCOMPARE(b.targets, std::vector<int>{0});
            QVERIFY2(b.accuracy > 0.15 && b.accuracy < 0.4, std::to_string(b.accuracy).c_str());
        }
    }

    void generatedExamplesHaveTheirDepth() {
        const ArithTask arith(arithConfig());
        const ListOpsTask listOps(listOpsConfig());
        for (const ExpressionTask* task :
             {static_cast<const ExpressionTask*>(&arith), static_cast<const ExpressionTask*>(&listOps)}) {
            std::mt19937_64 rng(5);
            std::set<int> answers;
            for (int d : task->allDepths())
                for (int i = 0; i < 30; ++i) {
                    const Example e = task->sample(d, rng);
                    const Evaluation ev = task->evaluate(e.tokens);
                    QVERIFY2(ev.error.empty(), ev.error.c_str());
                    QCOMPARE(ev.depth, d);
                    QCOMPARE(e.depth(), d);
                    QVERIFY(ev.length <= ExpressionTask::kMaxLength);
                    answers.insert(ev.answer);
                    // What is generated reads back as a typed question.
                    QVERIFY(parsed(*task, task->format(e)) == e);
                }
            QCOMPARE(answers.size(), size_t(10));
        }
    }

    void arithDepthTwoIsEnumerated() {
        const ArithTask task(arithConfig());
        const auto& set = task.evalSet(2);
        QCOMPARE(set.size(), size_t(200));
        std::set<std::vector<int>> unique;
        for (const Example& e : set)
            unique.insert(e.tokens);
        QCOMPARE(unique.size(), size_t(200));
        QVERIFY(!task.evalSetHeldOut(2)); // training draws from all 200
        QCOMPARE(task.caseCount(2), int64_t(200));
        QCOMPARE(task.caseCount(3), int64_t(88000)); // 10 + 2 * 210^2 - 210
        QVERIFY(task.evalSetHeldOut(3));
    }

    void batchesAreBalancedAndNeverHeldOut() {
        for (const TaskConfig& c : {arithConfig(), listOpsConfig()}) {
            const auto task = makeTask(c);
            std::set<std::string> heldOut;
            for (int d : task->allDepths())
                if (task->evalSetHeldOut(d))
                    for (const Example& e : task->evalSet(d))
                        heldOut.insert(task->format(e));
            QVERIFY(heldOut.size() >= 6 * 200);
            std::mt19937_64 rng(3);
            std::map<int, int> perDepth;
            for (int b = 0; b < 10; ++b) {
                const Batch batch = task->trainBatch(50, rng);
                QCOMPARE(batch.batch, 50);
                for (int i = 0; i < batch.batch; ++i) {
                    ++perDepth[batch.depths[i]];
                    // [E] holds the target and the row reads back as an expression of that depth.
                    const int* row = batch.tokens.data() + size_t(i) * batch.positions;
                    std::vector<int> inner(row + 1, row + batch.lengths[i] - 1);
                    Example e;
                    e.tokens = inner;
                    e.treeDepth = batch.depths[i];
                    QCOMPARE(task->answer(e), batch.targets[i]);
                    QVERIFY(!heldOut.count(task->format(e)));
                }
            }
            QCOMPARE(perDepth.size(), size_t(5));
            for (const auto& [depth, count] : perDepth)
                QCOMPARE(count, 100); // 50 per batch over 5 depths
        }
    }

    void evaluationSetsAreDeterministicAndDisjoint() {
        const auto a = makeTask(listOpsConfig()), b = makeTask(listOpsConfig());
        TaskConfig other = listOpsConfig();
        other.seed = 2;
        const auto c = makeTask(other);
        std::set<std::string> seen;
        for (int d : a->allDepths()) {
            QVERIFY(a->evalSet(d) == b->evalSet(d));
            QVERIFY(a->evalSet(d) != c->evalSet(d));
            QCOMPARE(a->evalSet(d).size(), size_t(200));
            for (const Example& e : a->evalSet(d))
                QVERIFY(seen.insert(a->format(e)).second); // no example twice, within or across depths
        }
    }

    // Drawing a held-out set gives way to a stop: a stop raised before or during the draw returns no
    // set, and the next call goes on to the same set as a task that was never stopped.
    void drawingAHeldOutSetGivesWayToStop() {
        std::atomic<bool> stop{true};
        const auto stopped = makeTask(shallowListOpsConfig(50)), fresh = makeTask(shallowListOpsConfig(50));
        QVERIFY(stopped->evalSetUnless(5, &stop) == nullptr);
        QVERIFY(stopped->evalSetUnless(2, &stop) != nullptr); // a training depth's set is drawn already
        stop = false;
        const std::vector<Example>* drawn = stopped->evalSetUnless(5, &stop);
        QVERIFY(drawn != nullptr);
        QVERIFY(*drawn == fresh->evalSet(5));
        QCOMPARE(drawn->size(), size_t(50));

        // Without SM deep dependency chains are rare draws: 100 examples of depth 8 take about 0.4 s
        // on a 2-core EPYC, so the stop raised after 20 ms comes in the middle of the draw.
        TaskConfig deep = listOpsConfig();
        deep.operations = {"MIN", "MAX", "MED"};
        deep.evalExamplesPerDepth = 100;
        const auto interrupted = makeTask(deep), whole = makeTask(deep);
        stop = false;
        std::thread raise([&] {
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
            stop = true;
        });
        const std::vector<Example>* none = interrupted->evalSetUnless(8, &stop);
        raise.join();
        QVERIFY(none == nullptr);
        const std::vector<Example>& continued = interrupted->evalSet(8);
        QCOMPARE(continued.size(), size_t(100));
        QVERIFY(continued == whole->evalSet(8));
        for (const Example& e : continued)
            QVERIFY(interrupted->isHeldOut(e));
    }

    // A subset of ListOps' operations: only those are drawn, at every depth, for training and the
    // held-out sets; the order they are listed in does not change the draws; typed questions may still
    // use all four.
    void listOpsOperationSubset() {
        const TaskConfig shallow = shallowListOpsConfig(50);
        TaskConfig selection = shallow;
        selection.operations = {"MAX", "MIN", "MED"};
        const ListOpsTask task(selection);
        std::mt19937_64 rng(11);
        std::set<std::string> used;
        auto collect = [&](const Example& e) {
            for (int t : e.tokens)
                if (task.tokenName(t)[0] == '[')
                    used.insert(task.tokenName(t));
        };
        for (int d : task.allDepths()) {
            for (const Example& e : task.evalSet(d))
                collect(e);
            for (int i = 0; i < 20; ++i) {
                const Example e = task.sample(d, rng);
                QCOMPARE(task.evaluate(e.tokens).depth, d);
                collect(e);
            }
        }
        QCOMPARE(used, (std::set<std::string>{"[MAX", "[MIN", "[MED"}));
        QCOMPARE(task.answer(parsed(task, "[SM 7 8 9 ]")), 4);

        TaskConfig reordered = shallow;
        reordered.operations = {"SM", "MED", "MAX", "MIN"};
        const ListOpsTask all(shallow), same(reordered);
        for (int d : all.allDepths())
            QVERIFY(all.evalSet(d) == same.evalSet(d));
        TaskConfig none = shallow;
        none.operations = {};
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, ListOpsTask{none});
    }

    // The in-place generator draws what the plain one draws, token for token, and leaves the random
    // stream where the plain one leaves it (abandoned draws included), for all four operations and a
    // subset.
    void listOpsGeneratorMatchesThePlainOne() {
        TaskConfig c = shallowListOpsConfig(20);
        const OpenListOps all(c);
        c.operations = {"MED", "MIN"};
        const OpenListOps some(c);
        int abandoned = 0;
        for (const auto& [task, ops] :
             {std::pair{&all, std::vector<int>{1, 2, 3, 4}}, std::pair{&some, std::vector<int>{1, 3}}})
            for (const auto& [lo, hi, p] :
                 {std::tuple{2, 2, 0.3}, std::tuple{6, 6, 0.3}, std::tuple{8, 9, 0.3}, std::tuple{2, 6, 0.7},
                  std::tuple{4, 10, 0.5}}) {
                std::mt19937_64 a(lo * 100 + hi), b(lo * 100 + hi);
                for (int i = 0; i < 400; ++i) {
                    const std::vector<int> got = task->generate(lo, hi, p, a);
                    QCOMPARE(got, plainListOps(lo, hi, p, b, ops));
                    QCOMPARE(a(), b());
                    abandoned += got.empty();
                }
            }
        QVERIFY(abandoned > 100); // the comparison covers abandoned draws too
    }

    void arithParseErrors() {
        const ArithTask task(arithConfig());
        const std::vector<std::string> problems = {
            checkError(task, "", -1, "empty expression"),
            checkError(task, "((3*4)+7", -1, "ends early: expected ')'"),
            checkError(task, "(3x4)", 2, "unknown token 'x' at position 3"),
            checkError(task, "(12+3)", 2, "'2' at position 3: expected '+' or '*'"),
            checkError(task, "3+4", 1, "complete before here"),
            checkError(task, ")", 0, "expected a digit or '('"),
            checkError(task, "(3+4]", 4, "unknown token ']'"),
            checkError(task, "(3+4))", 5, "complete before here"),
        };
        for (const std::string& p : problems)
            QVERIFY2(p.empty(), p.c_str());
        const ParseResult r = task.parseQuestion("(3 x 4)");
        QCOMPARE(r.charBegin, 3);
        QCOMPARE(r.charEnd, 4);
        // Deeper than twice the deepest test depth.
        std::string deep = "1";
        for (int i = 0; i < 17; ++i)
            deep = "(1+" + deep + ")";
        QVERIFY(task.parseQuestion(deep).example);
        QVERIFY2(checkError(task, "(1+" + deep + ")", -1, "depth 19 is too deep").empty(), "too deep");
    }

    void listOpsParseErrors() {
        const ListOpsTask task(listOpsConfig());
        const std::vector<std::string> problems = {
            checkError(task, "[MAX 2 [MIN 4 7 ] 0", 0, "is not closed"),
            checkError(task, "[MAX 2 ]", 2, "an operation takes at least 2"),
            checkError(task, "[FOO 1 2 ]", 0, "unknown token '[FOO' at position 1"),
            checkError(task, "[MAX 12 3 ]", 1, "unknown token '12'"),
            checkError(task, "[MAX 2 3 ] 4", 4, "complete before here"),
            checkError(task, "] 4", 0, "expected a digit or an operation"),
            checkError(task, "[MAX 2", 0, "is not closed"),
        };
        for (const std::string& p : problems)
            QVERIFY2(p.empty(), p.c_str());
        const ParseResult r = task.parseQuestion("[MAX 2 [FOO 4 7 ] 0 ]");
        QCOMPARE(r.charBegin, 7);
        QCOMPARE(r.charEnd, 11);
    }

    void badConfigurations() {
        TaskConfig c = arithConfig();
        c.trainMinDepth = 1;
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, makeTask(c));
        c = listOpsConfig();
        c.testMaxDepth = 11;
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, makeTask(c));
        // A table lookup example is no expression.
        const ArithTask task(arithConfig());
        Example e;
        e.functions = {1, 2};
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, task.answer(e));
        e = {};
        e.tokens = {0, 1};
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, task.answer(e));
    }
};

QTEST_APPLESS_MAIN(TestExpressionTasks)
#include "test_expression_tasks.moc"
