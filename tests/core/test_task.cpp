// Tests of the CTL task (docs/design.md §1): tables, ground truth in both orders, text round trips, parser
// errors, balanced training batches that never touch held-out examples, and deterministic evaluation sets.
#include "core/config/task_kinds.h"
#include "core/task/ctl_task.h"
#include "testutil.h"

#include <map>
#include <set>
#include <stdexcept>

using namespace ndr;

namespace {

TaskConfig smallConfig(Order order) {
    TaskConfig c;
    c.symbols = 4;
    c.functions = 3;
    c.trainMinDepth = 1, c.trainMaxDepth = 3;
    c.validMinDepth = 4, c.validMaxDepth = 4;
    c.testMinDepth = 5, c.testMaxDepth = 6;
    c.order = order;
    c.evalExamplesPerDepth = 100;
    return c;
}

// Hand-written tables for smallConfig: a(x) = x+1 mod 4, b(x) = 3-x, c swaps 1 and 2.
std::vector<std::vector<int>> handTables() {
    return {{1, 2, 3, 0}, {3, 2, 1, 0}, {0, 2, 1, 3}};
}

std::string keyOf(const Example& e) {
    std::string k = std::to_string(e.symbol) + ":";
    for (int f : e.functions)
        k += std::to_string(f) + ",";
    return k;
}

// Checks that parsing fails with the given token index and byte range and that the message mentions
// every string in `mentions`. Returns a description of what went wrong, empty on success.
std::string checkParseError(const CtlTask& task, const std::string& text, int maxDepth, int tokenIndex,
                            int charBegin, int charEnd, const std::vector<std::string>& mentions) {
    ParseResult r = task.parse(text, maxDepth);
    std::string where = "parse(\"" + text + "\"): ";
    if (r.example)
        return where + "expected an error, got an example";
    if (r.error.empty())
        return where + "no error message";
    if (r.tokenIndex != tokenIndex || r.charBegin != charBegin || r.charEnd != charEnd)
        return where + "token " + std::to_string(r.tokenIndex) + " bytes [" + std::to_string(r.charBegin) +
               ", " + std::to_string(r.charEnd) + "), want token " + std::to_string(tokenIndex) + " bytes [" +
               std::to_string(charBegin) + ", " + std::to_string(charEnd) + "); message: " + r.error;
    for (const std::string& m : mentions)
        if (r.error.find(m) == std::string::npos)
            return where + "message lacks \"" + m + "\": " + r.error;
    return {};
}

std::string constructorError(const TaskConfig& c) {
    try {
        CtlTask task(c);
    } catch (const std::invalid_argument& e) {
        return e.what();
    }
    return {};
}

} // namespace

class TestTask : public QObject {
    Q_OBJECT

private slots:
    // Each task kind's row says what its task does: the depths it accepts, whether it has tables and
    // whether its depths are sizes.
    void everyTaskKindHasItsRow() {
        std::set<std::string> names;
        for (const TaskKindFacts& f : taskKinds()) {
            QVERIFY2(names.insert(f.name).second, f.name);
            QCOMPARE(factsOf(f.kind).name, f.name);
            TaskConfig c;
            c.kind = f.kind;
            c.trainMinDepth = c.trainMaxDepth = f.minDepth;
            c.validMinDepth = 1, c.validMaxDepth = 0;
            c.testMinDepth = c.testMaxDepth = f.maxDepth;
            c.evalExamplesPerDepth = 4;
            const auto problems = validate(c);
            QVERIFY2(problems.empty(), problems.empty() ? "" : problems.front().text().c_str());
            const auto task = makeTask(c);
            QVERIFY(task->kind() == f.kind);
            QCOMPARE(depthsAreSizes(c), f.depthsAreSizes);
            QCOMPARE(!task->savedTables().empty(), f.tables);

            auto fields = [](const TaskConfig& bad) {
                std::set<std::string> out;
                for (const Problem& p : validate(bad))
                    out.insert(p.field);
                return out;
            };
            TaskConfig shallow = c, deep = c;
            shallow.trainMinDepth = f.minDepth - 1;
            deep.testMaxDepth = f.maxDepth + 1;
            QVERIFY2(fields(shallow).count("task.trainMinDepth"), f.name);
            QVERIFY2(fields(deep).count("task.testMaxDepth"), f.name);
            // Only the kind with operations takes a subset of them.
            TaskConfig fewer = c;
            fewer.operations = {"MIN"};
            QCOMPARE(fields(fewer).count("task.operations") == 0, f.operations);
        }
    }

    void tablesAreBijections() {
        for (auto [s, f] : std::vector<std::pair<int, int>>{{8, 9}, {4, 4}, {2, 1}, {5, 26}, {64, 3}}) {
            TaskConfig c;
            c.symbols = s, c.functions = f, c.evalExamplesPerDepth = 10;
            CtlTask task(c);
            QCOMPARE(int(task.tables().size()), f);
            for (const auto& table : task.tables()) {
                QCOMPARE(int(table.size()), s);
                std::vector<int> sorted = table;
                std::sort(sorted.begin(), sorted.end());
                for (int x = 0; x < s; ++x)
                    QCOMPARE(sorted[x], x);
            }
        }
    }

    void seedDeterminesTables() {
        TaskConfig c;
        CtlTask a(c), b(c);
        QVERIFY(a.tables() == b.tables());
        c.seed = 2;
        CtlTask other(c);
        QVERIFY(a.tables() != other.tables());
        // Independent permutations: with 9 random permutations of 8 symbols, some two differ.
        std::set<std::vector<int>> distinct(a.tables().begin(), a.tables().end());
        QVERIFY(distinct.size() > 1);
    }

    void names() {
        TaskConfig c;
        CtlTask s8(c);
        QCOMPARE(s8.symbolName(0), std::string("000"));
        QCOMPARE(s8.symbolName(5), std::string("101"));
        QCOMPARE(s8.symbolName(7), std::string("111"));
        QCOMPARE(s8.functionName(0), std::string("a"));
        QCOMPARE(s8.functionName(8), std::string("i"));
        QCOMPARE(s8.tokenName(s8.functionToken(1)), std::string("b"));
        QCOMPARE(s8.tokenName(s8.beginToken()), std::string("[B]"));
        QCOMPARE(s8.tokenName(s8.endToken()), std::string("[E]"));
        QCOMPARE(s8.tokenName(s8.padToken()), std::string("[PAD]"));
        QCOMPARE(s8.vocabSize(), 8 + 9 + 3);
        c.symbols = 4;
        QCOMPARE(CtlTask(c).symbolNames(), (std::vector<std::string>{"00", "01", "10", "11"}));
        c.symbols = 2;
        QCOMPARE(CtlTask(c).symbolNames(), (std::vector<std::string>{"0", "1"}));
        c.symbols = 5;
        QCOMPARE(CtlTask(c).symbolNames(), (std::vector<std::string>{"0", "1", "2", "3", "4"}));
    }

    void handWorkedForward() {
        CtlTask task(smallConfig(Order::Forward));
        task.setTables(handTables());
        // c(b(a(01))): a(1)=2, b(2)=1, c(1)=2
        Example e{.symbol = 1, .functions = {0, 1, 2}, .tokens = {}, .treeDepth = 0};
        QCOMPARE(task.answer(e), 2);
        // [B]=7, symbols 0..3, a=4 b=5 c=6, [E]=8
        QCOMPARE(task.tokens(e), (std::vector<int>{7, 1, 4, 5, 6, 8}));
        QCOMPARE(task.intermediates(e), (std::vector<int>{-1, 1, 2, 1, 2, 2}));
        QCOMPARE(task.format(e), std::string("01 a b c"));
    }

    void handWorkedBackward() {
        CtlTask task(smallConfig(Order::Backward));
        task.setTables(handTables());
        Example e{.symbol = 1, .functions = {0, 1, 2}, .tokens = {}, .treeDepth = 0};
        QCOMPARE(task.answer(e), 2);
        QCOMPARE(task.tokens(e), (std::vector<int>{7, 6, 5, 4, 1, 8}));
        // Position of c holds c(b(a(x))) = 2, of b holds b(a(x)) = 1, of a holds a(x) = 2, then x.
        QCOMPARE(task.intermediates(e), (std::vector<int>{-1, 2, 1, 2, 1, 2}));
        QCOMPARE(task.format(e), std::string("c b a 01"));
        Example e2{.symbol = 3, .functions = {1}, .tokens = {}, .treeDepth = 0}; // b(11) = 00
        QCOMPARE(task.answer(e2), 0);
        QCOMPARE(task.intermediates(e2), (std::vector<int>{-1, 0, 3, 0}));
    }

    void setTablesRejectsNonBijections() {
        CtlTask task(smallConfig(Order::Forward));
        auto message = [&](const std::vector<std::vector<int>>& t) {
            try {
                task.setTables(t);
            } catch (const std::invalid_argument& e) {
                return std::string(e.what());
            }
            return std::string();
        };
        auto t = handTables();
        t.pop_back();
        QVERIFY(message(t).find("expected 3") != std::string::npos);
        t = handTables();
        t[1] = {3, 2, 1};
        QVERIFY(message(t).find("'b'") != std::string::npos);
        t = handTables();
        t[2] = {0, 2, 2, 3};
        std::string m = message(t);
        QVERIFY2(m.find("'c'") != std::string::npos && m.find("bijection") != std::string::npos, m.c_str());
        t = handTables();
        t[0] = {0, 1, 2, 4};
        QVERIFY(message(t).find("'a'") != std::string::npos);
        QVERIFY(task.tables() != handTables()); // rejected tables leave the task unchanged
    }

    void formatParseRoundTrip() {
        for (Order order : {Order::Forward, Order::Backward}) {
            for (int s : {8, 5}) {
                TaskConfig c;
                c.symbols = s;
                c.order = order;
                c.evalExamplesPerDepth = 10;
                CtlTask task(c);
                std::mt19937_64 rng(7);
                for (int i = 0; i < 200; ++i) {
                    Example e = task.sample(1 + i % 12, rng);
                    ParseResult r = task.parse(task.format(e));
                    QVERIFY2(r.example.has_value(), r.error.c_str());
                    QVERIFY(*r.example == e);
                }
            }
        }
        TaskConfig c;
        CtlTask forward(c);
        c.order = Order::Backward;
        CtlTask backward(c);
        // The example of docs/design.md §1: `101 b d h` forward and `h d b 101` backward are the same
        // expression.
        Example e{.symbol = 5, .functions = {1, 3, 7}, .tokens = {}, .treeDepth = 0};
        QCOMPARE(forward.format(e), std::string("101 b d h"));
        QCOMPARE(backward.format(e), std::string("h d b 101"));
        QVERIFY(*forward.parse("101 b d h").example == e);
        QVERIFY(*backward.parse("h d b 101").example == e);
        // Runs of spaces, tabs and newlines are separators; leading and trailing ones are ignored.
        QVERIFY(*forward.parse("  101 \t b\n\nd   h \r\n").example == e);
        QVERIFY(*backward.parse("\th  d\tb 101  ").example == e);
        QVERIFY(forward.parse("101 b d h", 3).example.has_value());
    }

    void parseErrors() {
        TaskConfig c;
        CtlTask fwd(c);
        c.order = Order::Backward;
        CtlTask bwd(c);
        std::string r;
#define EXPECT_PARSE_ERROR(task, text, maxDepth, index, begin, end, ...)                                     \
    r = checkParseError(task, text, maxDepth, index, begin, end, __VA_ARGS__);                               \
    QVERIFY2(r.empty(), r.c_str())

        EXPECT_PARSE_ERROR(fwd, "", -1, -1, -1, -1, {"empty", "`101 b d h`"});
        EXPECT_PARSE_ERROR(fwd, " \t\n ", -1, -1, -1, -1, {"empty", "`101 b d h`"});
        EXPECT_PARSE_ERROR(bwd, "", -1, -1, -1, -1, {"empty", "`h d b 101`"});
        // Unknown tokens: named, 1-based position, and the kind expected there with its valid names.
        EXPECT_PARSE_ERROR(fwd, "101 b xyz", -1, 2, 6, 9, {"'xyz'", "position 3", "function", "a..i"});
        EXPECT_PARSE_ERROR(fwd, "5 b", -1, 0, 0, 1, {"'5'", "position 1", "symbol", "000..111"});
        EXPECT_PARSE_ERROR(bwd, "b d 1010", -1, 2, 4, 8, {"'1010'", "position 3", "symbol", "000..111"});
        EXPECT_PARSE_ERROR(fwd, "101 B", -1, 1, 4, 5, {"'B'", "a..i"});
        // Non-ASCII: "ö" is two UTF-8 bytes, reported as an unknown token with its byte range.
        EXPECT_PARSE_ERROR(fwd, "101 \xc3\xb6 b", -1, 1, 4, 6, {"'\xc3\xb6'", "position 2", "function"});
        EXPECT_PARSE_ERROR(fwd,
                           "101 b\xc2\xa0"
                           "d",
                           -1, 1, 4, 8, {"position 2"}); // no-break space
        // Wrong order for this run; the hint is the same expression in the run's order.
        EXPECT_PARSE_ERROR(fwd, "b d 101", -1, 0, 0, 1,
                           {"'b'", "position 1", "function", "forward", "`101 d b`"});
        EXPECT_PARSE_ERROR(bwd, "101 b d", -1, 0, 0, 3,
                           {"'101'", "position 1", "symbol", "backward", "`d b 101`"});
        EXPECT_PARSE_ERROR(fwd, "b 101 d", -1, 0, 0, 1, {"'b'", "forward", "`101 b d`"});
        EXPECT_PARSE_ERROR(bwd, "b 101 d", -1, 1, 2, 5, {"'101'", "position 2", "backward", "`b d 101`"});
        // Unknown tokens come before order problems: the hint could not include them.
        EXPECT_PARSE_ERROR(bwd, "101 b xyz", -1, 2, 6, 9, {"'xyz'", "position 3", "symbol"});
        EXPECT_PARSE_ERROR(bwd, "101 \xc3\xb6 b", -1, 1, 4, 6, {"'\xc3\xb6'", "position 2", "function"});
        // No symbol at all.
        EXPECT_PARSE_ERROR(fwd, "b d", -1, 0, 0, 1, {"'b'", "no symbol", "000..111"});
        EXPECT_PARSE_ERROR(bwd, "b d", -1, 1, 2, 3, {"'d'", "no symbol", "`b d 101`"});
        EXPECT_PARSE_ERROR(bwd, "b", -1, 0, 0, 1, {"'b'", "symbol", "`b 101`"});
        // Symbol only.
        EXPECT_PARSE_ERROR(fwd, "101", -1, 0, 0, 3, {"'101'", "at least one function", "after"});
        EXPECT_PARSE_ERROR(bwd, " 101 ", -1, 0, 1, 4, {"'101'", "at least one function", "before"});
        // Two symbols.
        EXPECT_PARSE_ERROR(fwd, "101 b 011", -1, 2, 6, 9,
                           {"more than one symbol", "'011'", "'101'", "position 3"});
        EXPECT_PARSE_ERROR(bwd, "101 011", -1, 0, 0, 3, {"more than one symbol", "'101'", "'011'"});
        // Too deep: the first function past the limit in application order.
        EXPECT_PARSE_ERROR(fwd, "101 b d h a", 3, 4, 10, 11,
                           {"depth 4", "at most 3 functions", "'a'", "position 5"});
        EXPECT_PARSE_ERROR(bwd, "a h d b 101", 3, 0, 0, 1, {"depth 4", "at most 3", "'a'", "position 1"});
        // A pasted paragraph is cut in the message but its whole range is reported.
        std::string longToken(500, 'x');
        EXPECT_PARSE_ERROR(fwd, "101 " + longToken, -1, 1, 4, 504, {"unknown token 'xxxx"});
        QVERIFY(fwd.parse("101 " + longToken).error.size() < 200);
#undef EXPECT_PARSE_ERROR

        // Names of another run's size: S = 5 uses decimal symbols, F = 3 letters a..c.
        TaskConfig small;
        small.symbols = 5, small.functions = 3, small.evalExamplesPerDepth = 10;
        CtlTask s5(small);
        r = checkParseError(s5, "2 d", -1, 1, 2, 3, {"'d'", "a..c"});
        QVERIFY2(r.empty(), r.c_str());
        r = checkParseError(s5, "", -1, -1, -1, -1, {"`4 b`"});
        QVERIFY2(r.empty(), r.c_str());
        // Arbitrary bytes never crash.
        std::mt19937_64 rng(3);
        for (int i = 0; i < 500; ++i) {
            std::string junk(rng() % 12, '\0');
            for (char& ch : junk)
                ch = char(rng() % 256);
            ParseResult p = fwd.parse(junk, int(rng() % 4) - 1);
            QVERIFY(p.example.has_value() != !p.error.empty());
            if (p.tokenIndex >= 0)
                QVERIFY(p.charBegin >= 0 && p.charEnd <= int(junk.size()) && p.charBegin < p.charEnd);
        }
    }

    void questionsOfEveryDepthTheRunAnswers() {
        // One step per function and one more to carry the result to [E].
        QCOMPARE(routingSteps(1), 2);
        QCOMPARE(routingSteps(9), 10);
        QVERIFY(!stepsBelowDepth(5, 6));
        QVERIFY(stepsBelowDepth(6, 6));
        QVERIFY(stepsBelowDepth(9, 6)); // the paper's 6-step Transformer on a test depth

        TaskConfig c; // test depths 9 and 10
        const CtlTask fwd(c);
        QCOMPARE(fwd.maxAskedDepth(), 20);
        std::string deep = "101";
        for (int i = 0; i < 20; ++i)
            deep += " a";
        QVERIFY(fwd.parseQuestion(deep).example.has_value());
        deep += " a";
        const ParseResult r = fwd.parseQuestion(deep);
        QVERIFY(!r.example);
        QVERIFY2(
            r.error.find("depth 21 is too deep: at most 20 functions this run answers (twice its deepest "
                         "test depth)") == 0,
            r.error.c_str());
        QCOMPARE(r.tokenIndex, 21);
        // The backward run's test depth that a 6-step model cannot route parses all the same.
        c.order = Order::Backward;
        const CtlTask bwd(c);
        const ParseResult nine = bwd.parseQuestion("a b c d e f g h i 000");
        QVERIFY2(nine.example && nine.example->depth() == 9, nine.error.c_str());
    }

    void constructorRejectsBadConfigs() {
        auto expect = [&](TaskConfig c, const std::string& field) {
            std::string m = constructorError(c);
            QVERIFY2(m.find(field) != std::string::npos, (field + " not named in: \"" + m + "\"").c_str());
        };
        TaskConfig c;
        c.symbols = 1;
        expect(c, "task.symbols");
        QVERIFY(constructorError(c).find("got 1") != std::string::npos);
        c = {}, c.symbols = 65;
        expect(c, "task.symbols");
        c = {}, c.functions = 0;
        expect(c, "task.functions");
        c = {}, c.functions = 27;
        expect(c, "task.functions");
        c = {}, c.trainMinDepth = 0;
        expect(c, "task.trainMinDepth");
        c = {}, c.trainMinDepth = 4, c.trainMaxDepth = 3;
        expect(c, "task.trainMaxDepth");
        c = {}, c.testMinDepth = 11, c.testMaxDepth = 10;
        expect(c, "task.testMaxDepth");
        c = {}, c.validMinDepth = 0, c.validMaxDepth = 2;
        expect(c, "task.validMinDepth");
        c = {}, c.validMinDepth = 5, c.validMaxDepth = 8; // overlaps train 1..5
        expect(c, "task.validMinDepth");
        c = {}, c.testMinDepth = 8; // overlaps validation 6..8
        expect(c, "task.testMinDepth");
        c = {}, c.validMinDepth = 1, c.validMaxDepth = 0, c.testMinDepth = 3; // overlaps train
        expect(c, "task.testMinDepth");
        c = {}, c.evalExamplesPerDepth = 0;
        expect(c, "task.evalExamplesPerDepth");
        c = {}, c.evalExamplesPerDepth = 100001;
        expect(c, "task.evalExamplesPerDepth");
        // An empty validation range means no validation split.
        c = {}, c.validMinDepth = 1, c.validMaxDepth = 0, c.testMinDepth = 6;
        QVERIFY(constructorError(c).empty());
        CtlTask noValid(c);
        QVERIFY(noValid.depths(Split::Valid).empty());
        QCOMPARE(noValid.allDepths(), (std::vector<int>{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}));
        QVERIFY(noValid.splitOf(7) == Split::Test);
        QVERIFY(noValid.splitOf(11) == Split::None);
        QVERIFY(noValid.evalSet(11).empty());
    }

    void caseCountsSaturate() {
        TaskConfig c;
        CtlTask task(c);
        QCOMPARE(task.caseCount(1), int64_t(72));
        QCOMPARE(task.caseCount(5), int64_t(8 * 9 * 9 * 9 * 9 * 9));
        c.symbols = 64, c.functions = 26, c.evalExamplesPerDepth = 1;
        CtlTask big(c);
        QCOMPARE(big.caseCount(100), std::numeric_limits<int64_t>::max());
        QCOMPARE(big.caseCount(12), int64_t(64) * 95428956661682176LL); // 26^12
        QCOMPARE(big.caseCount(13), std::numeric_limits<int64_t>::max());
    }

    void evalSetSizes() {
        TaskConfig c; // S=8, F=9, 1000 per depth
        CtlTask task(c);
        for (int d : task.allDepths()) {
            const auto& set = task.evalSet(d);
            std::set<std::string> keys;
            for (const Example& e : set) {
                QCOMPARE(e.depth(), d);
                keys.insert(keyOf(e));
            }
            QCOMPARE(keys.size(), set.size()); // distinct
            const int64_t want = std::min<int64_t>(task.caseCount(d), 1000);
            QCOMPARE(int64_t(set.size()), want);
        }
        // Enumerated depths hold every case: S*F^d distinct examples of depth d.
        QCOMPARE(int(task.evalSet(1).size()), 72);
        QCOMPARE(int(task.evalSet(2).size()), 648);
        QVERIFY(task.evalSet(0).empty());
        QVERIFY(task.evalSet(-3).empty());
        QVERIFY(task.evalSet(99).empty());
    }

    void heldOutRule() {
        TaskConfig c;
        CtlTask task(c);
        // Depths 1 and 2 (72, 648 cases) are enumerated by training anyway; depth 3 has 5832 >= 5*1000.
        QVERIFY(!task.evalSetHeldOut(1));
        QVERIFY(!task.evalSetHeldOut(2));
        QVERIFY(task.evalSetHeldOut(3));
        for (int d = 3; d <= 10; ++d)
            QVERIFY(task.evalSetHeldOut(d));
        for (int d = 1; d <= 10; ++d)
            for (const Example& e : task.evalSet(d))
                QCOMPARE(task.isHeldOut(e), task.evalSetHeldOut(d));
        // Small enough that every validation and test depth is enumerated: still held out.
        CtlTask small(smallConfig(Order::Forward));
        QVERIFY(small.evalSetHeldOut(4) && small.evalSetHeldOut(6));
        QVERIFY(!small.evalSetHeldOut(3)); // 108 cases < 5*100
        QCOMPARE(int(small.evalSet(3).size()), 100);
    }

    void trainBatchesBalanced() {
        TaskConfig c;
        CtlTask task(c);
        std::mt19937_64 rng(11);
        for (int round = 0; round < 20; ++round) {
            Batch b = task.trainBatch(100, rng);
            QCOMPARE(b.batch, 100);
            std::map<int, int> counts;
            for (int d : b.depths)
                ++counts[d];
            QCOMPARE(int(counts.size()), 5);
            for (auto [d, n] : counts)
                QCOMPARE(n, 20);
            Batch odd = task.trainBatch(7, rng); // 5 depths: two of them twice
            std::map<int, int> oddCounts;
            for (int d : odd.depths)
                ++oddCounts[d];
            QCOMPARE(int(oddCounts.size()), 5);
            for (auto [d, n] : oddCounts)
                QVERIFY(n == 1 || n == 2);
        }
    }

    void trainBatchLayout() {
        CtlTask task(smallConfig(Order::Backward));
        task.setTables(handTables());
        Batch b = task.makeBatch({Example{.symbol = 1, .functions = {0, 1, 2}, .tokens = {}, .treeDepth = 0},
                                  Example{.symbol = 3, .functions = {1}, .tokens = {}, .treeDepth = 0}});
        QCOMPARE(b.batch, 2);
        QCOMPARE(b.positions, 6);
        QCOMPARE(b.lengths, (std::vector<int>{6, 4}));
        QCOMPARE(b.targets, (std::vector<int>{2, 0}));
        QCOMPARE(b.depths, (std::vector<int>{3, 1}));
        const int pad = task.padToken();
        QCOMPARE(b.tokens, (std::vector<int>{7, 6, 5, 4, 1, 8, /**/ 7, 5, 3, 8, pad, pad}));
        // Every row of a training batch is its example's tokens, padded, with the answer as target.
        std::mt19937_64 rng(5);
        Batch t = task.trainBatch(16, rng);
        for (int i = 0; i < t.batch; ++i) {
            const int* row = t.tokens.data() + i * t.positions;
            QCOMPARE(t.lengths[i], t.depths[i] + 3);
            QCOMPARE(row[0], task.beginToken());
            QCOMPARE(row[t.lengths[i] - 1], task.endToken());
            for (int p = t.lengths[i]; p < t.positions; ++p)
                QCOMPARE(row[p], pad);
        }
    }

    void trainBatchesAvoidHeldOut() {
        TaskConfig c;
        CtlTask task(c);
        std::set<std::string> heldOut;
        for (int d : task.allDepths())
            if (task.evalSetHeldOut(d))
                for (const Example& e : task.evalSet(d))
                    heldOut.insert(task.format(e));
        std::set<int> trainDepths;
        for (int d : task.depths(Split::Train))
            trainDepths.insert(d);
        for (int d : task.depths(Split::Valid))
            QVERIFY(!trainDepths.count(d));
        for (int d : task.depths(Split::Test))
            QVERIFY(!trainDepths.count(d));

        std::mt19937_64 rng(123);
        int seenDepth3 = 0;
        for (int round = 0; round < 150; ++round) {
            Batch b = task.trainBatch(128, rng);
            for (int i = 0; i < b.batch; ++i) {
                QVERIFY(trainDepths.count(b.depths[i]));
                // Rebuild the example from its tokens and compare against the held-out sets directly.
                const int* row = b.tokens.data() + i * b.positions;
                std::string text;
                for (int p = 1; p < b.lengths[i] - 1; ++p) {
                    if (p > 1)
                        text += ' ';
                    text += task.tokenName(row[p]);
                }
                ParseResult parsed = task.parse(text);
                QVERIFY2(parsed.example.has_value(), parsed.error.c_str());
                QVERIFY(!task.isHeldOut(*parsed.example));
                QVERIFY2(!heldOut.count(text), text.c_str());
                QCOMPARE(b.targets[i], task.answer(*parsed.example));
                seenDepth3 += b.depths[i] == 3;
            }
        }
        QVERIFY(seenDepth3 > 3000); // the held-out depth 3 is still trained on, just not its eval set
    }

    void determinism() {
        TaskConfig c;
        CtlTask a(c), b(c);
        for (int d : a.allDepths())
            QVERIFY(a.evalSet(d) == b.evalSet(d));
        std::mt19937_64 r1(9), r2(9);
        for (int i = 0; i < 5; ++i) {
            Batch x = a.trainBatch(32, r1), y = b.trainBatch(32, r2);
            QVERIFY(x.tokens == y.tokens && x.targets == y.targets && x.depths == y.depths);
        }
        c.seed = 2;
        CtlTask other(c);
        QVERIFY(a.evalSet(1) == other.evalSet(1)); // enumerated: a fixed order
        QVERIFY(a.evalSet(6) != other.evalSet(6)); // sampled: depends on the seed
        // Replacing the tables changes answers, not which examples are held out.
        CtlTask replaced(TaskConfig{});
        replaced.setTables(other.tables());
        QVERIFY(replaced.evalSet(6) == a.evalSet(6));
        // The evaluation set of a depth does not depend on which other depths exist.
        TaskConfig shifted;
        shifted.testMaxDepth = 12;
        CtlTask longer(shifted);
        QVERIFY(longer.evalSet(9) == a.evalSet(9));
    }

    // An independent sample draws as training draws, held-out examples included; table lookup has no
    // fixed training set.
    void independentSamples() {
        TaskConfig c;
        c.symbols = 4;
        c.functions = 4;
        c.evalExamplesPerDepth = 128; // an eighth of the 4 x 4^4 = 1024 problems of depth 4, held out
        const CtlTask task(c);
        QVERIFY(!task.fixedTrainingExamples(1).has_value());
        const int depth = 4;
        QCOMPARE(task.caseCount(depth), int64_t(1024));
        QVERIFY(task.evalSetHeldOut(depth));
        const std::vector<Example> sample = task.independentSample(depth, 400, 1);
        QCOMPARE(sample.size(), size_t(400));
        int heldOut = 0;
        for (const Example& e : sample) {
            QCOMPARE(e.depth(), depth);
            heldOut += task.isHeldOut(e);
        }
        QVERIFY2(heldOut > 25 && heldOut < 80, qPrintable(QString::number(heldOut))); // about 50
        QCOMPARE(task.independentSample(depth, 30, 5), task.independentSample(depth, 30, 5));
        QVERIFY(task.independentSample(depth, 30, 5) != task.independentSample(depth, 30, 6));
    }
};

QTEST_APPLESS_MAIN(TestTask)
#include "test_task.moc"
