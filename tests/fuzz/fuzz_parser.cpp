// libFuzzer target: the expression parsers, on any bytes: table lookup in both presentation orders and
// alphabets of every naming style, arithmetic, ListOps and multi-digit arithmetic. An error must point
// inside the text and stay short; an accepted expression must respect the depth limit and format back
// to text that parses to the same example.
#include "core/task/ctl_task.h"
#include "core/task/expression_task.h"
#include "core/task/multidigit_task.h"
#include "fuzz_check.h"

#include <string>
#include <utility>
#include <vector>

namespace {

ndr::CtlTask makeTask(int symbols, int functions, ndr::Order order) {
    ndr::TaskConfig c;
    c.symbols = symbols;
    c.functions = functions;
    c.order = order;
    // The parser does not look at the splits: the smallest that validate keep construction instant.
    c.trainMinDepth = 1, c.trainMaxDepth = 1;
    c.validMinDepth = 1, c.validMaxDepth = 0;
    c.testMinDepth = 2, c.testMaxDepth = 2;
    c.evalExamplesPerDepth = 1;
    return ndr::CtlTask(c);
}

// Bit-string symbols (8, 2, 64) and decimal ones (5, 10); 1 to 26 functions; both orders.
std::vector<ndr::CtlTask> makeTasks() {
    std::vector<ndr::CtlTask> tasks;
    tasks.push_back(makeTask(8, 9, ndr::Order::Forward));
    tasks.push_back(makeTask(8, 9, ndr::Order::Backward));
    tasks.push_back(makeTask(10, 26, ndr::Order::Forward));
    tasks.push_back(makeTask(5, 1, ndr::Order::Backward));
    tasks.push_back(makeTask(2, 3, ndr::Order::Forward));
    tasks.push_back(makeTask(64, 26, ndr::Order::Backward));
    return tasks;
}

// Arithmetic and ListOps with the smallest splits that validate (training depth 2 only, test 3), and
// multi-digit arithmetic (training 1+1, test 2+2).
std::vector<std::unique_ptr<ndr::Task>> makeExpressionTasks() {
    std::vector<std::unique_ptr<ndr::Task>> tasks;
    for (ndr::TaskKind kind : {ndr::TaskKind::Arith, ndr::TaskKind::ListOps, ndr::TaskKind::MultiDigit}) {
        const bool multiDigit = kind == ndr::TaskKind::MultiDigit;
        ndr::TaskConfig c;
        c.kind = kind;
        c.trainMinDepth = c.trainMaxDepth = multiDigit ? 1 : 2;
        c.validMinDepth = 1, c.validMaxDepth = 0;
        c.testMinDepth = c.testMaxDepth = multiDigit ? 2 : 3;
        c.evalExamplesPerDepth = 1;
        tasks.push_back(ndr::makeTask(c));
    }
    return tasks;
}

// The depths an accepted question may have: 1 to maxAskedDepth() where depths nest; multi-digit
// arithmetic takes any two numbers of at most four digits, its depth the problem kind (0 for digit
// counts of none of them).
std::pair<int, int> acceptedDepths(const ndr::Task& task) {
    if (task.kind() == ndr::TaskKind::MultiDigit)
        return {0, ndr::MultiDigitTask::kindCount()};
    return {1, task.maxAskedDepth()};
}

// An inline error under an expression field: a pasted paragraph must not make it a paragraph too.
constexpr size_t kMaxMessageBytes = 400;

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    static const std::vector<ndr::CtlTask> tasks = makeTasks(); // built once: the harness is single-threaded
    const std::string text(reinterpret_cast<const char*>(data), size);
    for (const ndr::CtlTask& task : tasks) {
        for (int maxDepth : {-1, 0, 1, 3}) {
            const ndr::ParseResult r = task.parse(text, maxDepth);
            if (r.example.has_value() == !r.error.empty())
                fuzzFail("parse: exactly one of example and error must be set", text);
            if (!r.example) {
                if (r.error.size() > kMaxMessageBytes)
                    fuzzFail("parse: error message of " + std::to_string(r.error.size()) +
                                 " bytes: " + r.error.substr(0, 200) + "...",
                             text);
                if (r.tokenIndex >= 0 &&
                    !(r.charBegin >= 0 && r.charBegin < r.charEnd && size_t(r.charEnd) <= text.size()))
                    fuzzFail("parse: error range " + std::to_string(r.charBegin) + ".." +
                                 std::to_string(r.charEnd) + " outside the text",
                             text);
                continue;
            }
            const ndr::Example& e = *r.example;
            if (e.depth() < 1 || (maxDepth >= 0 && e.depth() > maxDepth))
                fuzzFail("parse: accepted depth " + std::to_string(e.depth()) + " with limit " +
                             std::to_string(maxDepth),
                         text);
            const std::string again = task.format(e); // throws on a symbol or function out of range
            const ndr::ParseResult back = task.parse(again, maxDepth);
            if (!back.example || !(*back.example == e))
                fuzzFail("parse: '" + again + "' does not parse back to the same example", text);
        }
    }
    static const std::vector<std::unique_ptr<ndr::Task>> expressionTasks = makeExpressionTasks();
    for (const auto& task : expressionTasks) {
        const ndr::ParseResult r = task->parseQuestion(text);
        if (r.example.has_value() == !r.error.empty())
            fuzzFail("parseQuestion: exactly one of example and error must be set", text);
        if (!r.example) {
            if (r.error.size() > kMaxMessageBytes)
                fuzzFail("parseQuestion: error message of " + std::to_string(r.error.size()) + " bytes",
                         text);
            if (r.tokenIndex >= 0 &&
                !(r.charBegin >= 0 && r.charBegin < r.charEnd && size_t(r.charEnd) <= text.size()))
                fuzzFail("parseQuestion: error range outside the text", text);
            continue;
        }
        const ndr::Example& e = *r.example;
        const auto [least, most] = acceptedDepths(*task);
        if (e.depth() < least || e.depth() > most)
            fuzzFail("parseQuestion: accepted depth " + std::to_string(e.depth()), text);
        if (task->intermediates(e).size() != task->tokens(e).size())
            fuzzFail("parseQuestion: intermediates and tokens differ in length", text);
        const std::string again = task->format(e);
        const ndr::ParseResult back = task->parseQuestion(again);
        if (!back.example || !(*back.example == e))
            fuzzFail("parseQuestion: '" + again + "' does not parse back to the same example", text);
    }
    return 0;
}
