// CSV tables of a run's history (see run_csv.h).
#include "core/io/run_csv.h"

#include <cmath>
#include <cstdio>

namespace ndr {

namespace {

// A number as a CSV cell: shortest round-trip form, empty when not a number.
std::string cell(double x) {
    if (!std::isfinite(x))
        return "";
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.9g", x);
    return buf;
}

// A name as a CSV cell: quoted, with quotes doubled, when it holds a comma, quote or line break.
std::string text(const std::string& s) {
    if (s.find_first_of(",\"\n\r") == std::string::npos)
        return s;
    std::string q = "\"";
    for (char c : s)
        q += c == '"' ? std::string("\"\"") : std::string(1, c);
    return q + "\"";
}

const char* splitName(const TaskConfig& t, int depth) {
    if (depth >= t.trainMinDepth && depth <= t.trainMaxDepth)
        return "train";
    if (depth >= t.validMinDepth && depth <= t.validMaxDepth)
        return "valid";
    if (depth >= t.testMinDepth && depth <= t.testMaxDepth)
        return "test";
    return "";
}

} // namespace

std::string evaluationsCsv(const RunRecord& record) {
    std::string out = "model,step,train_loss,iid,validation,longer,steps_per_second\n";
    for (const auto& m : record.models)
        for (const auto& e : m.history)
            out += text(m.config.name) + "," + std::to_string(e.step) + "," + cell(e.trainLoss) + "," +
                   cell(e.trainAccuracy) + "," + cell(e.validAccuracy) + "," + cell(e.testAccuracy) + "," +
                   cell(e.stepsPerSecond) + "\n";
    return out;
}

std::string depthAccuracyCsv(const RunRecord& record) {
    std::string out = "model,step,depth,split,accuracy,loss,most_common_answer\n";
    for (const auto& m : record.models)
        for (const auto& e : m.history)
            for (size_t i = 0; i < e.depths.size(); ++i)
                out += text(m.config.name) + "," + std::to_string(e.step) + "," +
                       std::to_string(e.depths[i]) + "," + splitName(record.config.task, e.depths[i]) + "," +
                       cell(i < e.accuracy.size() ? e.accuracy[i] : NAN) + "," +
                       cell(i < e.loss.size() ? e.loss[i] : NAN) + "," +
                       cell(i < e.baseline.size() ? e.baseline[i] : NAN) + "\n";
    return out;
}

std::string operationAccuracyCsv(const RunRecord& record) {
    std::string out = "model,step,depth,split,operation,examples,right,accuracy\n";
    for (const auto& m : record.models)
        for (const auto& e : m.history)
            for (size_t i = 0; i < e.depths.size() && i < e.operationExamples.size(); ++i)
                for (size_t o = 0; o < e.operations.size(); ++o)
                    out += text(m.config.name) + "," + std::to_string(e.step) + "," +
                           std::to_string(e.depths[i]) + "," + splitName(record.config.task, e.depths[i]) +
                           "," + text(e.operations[o]) + "," + std::to_string(e.operationExamples[i][o]) +
                           "," + std::to_string(e.operationCorrect[i][o]) + "," +
                           cell(e.operationAccuracy(i, o)) + "\n";
    return out;
}

bool hasOperationCounts(const RunRecord& record) {
    for (const auto& m : record.models)
        for (const auto& e : m.history)
            if (!e.operations.empty())
                return true;
    return false;
}

std::string lossCsv(const RunRecord& record) {
    std::string out = "model,step,loss\n";
    for (const auto& m : record.models)
        for (size_t i = 0; i < m.lossLog.steps.size() && i < m.lossLog.loss.size(); ++i)
            out += text(m.config.name) + "," + std::to_string(m.lossLog.steps[i]) + "," +
                   cell(m.lossLog.loss[i]) + "\n";
    return out;
}

} // namespace ndr
