// The paper's Table 1 (see table_one.h).
#include "core/train/table_one.h"

#include <algorithm>
#include <stdexcept>

namespace ndr {

const std::vector<PaperTableOneRow>& paperTableOne() {
    static const std::vector<PaperTableOneRow> rows = {
        {"lstm", "LSTM", 1.00, 0.59, 1.00, 0.22},
        {"transformer", "Transformer", 1.00, 0.82, 0.13, 0.12},
        {"rel", "+ rel", 1.00, 1.00, 0.23, 0.13},
        {"rel-gate", "+ rel + gate", 1.00, 1.00, 0.99, 0.19},
        {"absrel-gate", "+ abs/rel + gate", 1.00, 1.00, 0.98, 0.98},
        {"geom", "+ geom. att.", 0.96, 0.93, 0.16, 0.15},
        {"ndr", "+ geom. att. + gate (NDR)", 1.00, 1.00, 1.00, 1.00},
    };
    return rows;
}

const PaperTableOneRow* paperTableOneRow(const std::string& id) {
    for (const auto& r : paperTableOne())
        if (r.id == id)
            return &r;
    return nullptr;
}

std::string tableOneGroup(const std::string& row, Order order) {
    return row + (order == Order::Forward ? "/forward" : "/backward");
}

std::optional<std::pair<const PaperTableOneRow*, Order>> parseTableOneGroup(const std::string& group) {
    const auto slash = group.find('/');
    if (slash == std::string::npos)
        return std::nullopt;
    const PaperTableOneRow* row = paperTableOneRow(group.substr(0, slash));
    const std::string order = group.substr(slash + 1);
    if (!row || (order != "forward" && order != "backward"))
        return std::nullopt;
    return std::make_pair(row, order == "forward" ? Order::Forward : Order::Backward);
}

namespace {

// The run of `row` in `order` with the given recipe, seed 1.
RunConfig rowRun(const std::string& row, Order order, TableOneRecipe recipe) {
    RunConfig c = presetConfig(order == Order::Forward ? "paper-forward" : "paper-backward");
    c.preset = "table1-" + row;
    const ModelConfig presetNdr = c.models[0];
    const bool gated = row == "rel-gate" || row == "absrel-gate" || row == "ndr";
    if (recipe == TableOneRecipe::Laptop) {
        // Every run stops early once it fits its training depths and its validation accuracy has
        // stopped rising (docs/design.md §3, §4): the table reports the best-validation evaluation, which
        // the remaining steps would rarely change, and the runs that generalise end far sooner.
        c.train.stopPatience = 5;
        c.train.stopIid = 0.99;
        if (!gated) {
            // The ungated rows (and the LSTM) train as the forward preset's Transformer in both orders:
            // the backward preset's longer schedule serves the NDR's plateau, which they do not have.
            const RunConfig forward = presetConfig("paper-forward");
            c.train.batchSize = forward.train.batchSize;
            c.train.learningRate = forward.train.learningRate;
            c.train.steps = forward.train.steps;
            c.train.evalInterval = forward.train.evalInterval;
        }
        const ModelConfig forwardTransformer = presetConfig("paper-forward").models[1];
        if (row == "lstm") {
            c.models = {lstmModel(200, 16)};
            c.models[0].learningRate = 1e-3;
            c.models[0].weightDecay = 0;
            c.train.batchSize = 256;
        } else if (row == "ndr") {
            c.models = {presetNdr};
            // In backward order NDR crosses its plateau late and unevenly: validation can stall for five
            // evaluations while the longer depths still climb (docs/results/seeds/README.md), so it
            // trains the preset's 32000 steps, all of them, as `paper-backward` does.
            if (order == Order::Backward)
                c.train.stopPatience = 0;
        } else {
            // + abs/rel + gate in backward order learns slowly and unevenly: on seed 1 its validation
            // accuracy was still rising at the preset's 32000 steps (0.84, Longer 0.61), and early
            // stopping ended it at step 35000 after five evaluations below its best (docs/results.md).
            // It trains half as many steps again, all of them.
            if (row == "absrel-gate" && order == Order::Backward) {
                c.train.steps = 48000;
                c.train.stopPatience = 0;
            }
            // The other rows change only the switches of the preset model of their family.
            const ModelConfig& baseModel = gated ? presetNdr : forwardTransformer;
            const EncoderConfig& base = baseModel.as<EncoderConfig>();
            ModelConfig m = tableOneModel(row, base.dModel, base.heads, base.dFF, base.steps);
            EncoderConfig& e = m.as<EncoderConfig>();
            e.evalSteps = base.evalSteps;
            e.dropout = base.dropout;
            e.attentionDropout = base.attentionDropout;
            m.learningRate = baseModel.learningRate;
            c.models = {m};
        }
    } else {
        c.train.batchSize = 512;
        c.train.steps = 30000;
        c.train.evalInterval = 1000;
        c.train.gradClip = 5;
        if (row == "lstm") {
            c.models = {lstmModel(200, 16)};
            c.models[0].weightDecay = 0;
            c.train.learningRate = 1e-3;
            c.train.batchSize = 256;
            c.train.steps = 20000;
        } else if (row == "ndr") {
            c.models = {tableOneModel(row, 256, 1, 512, 14)};
            EncoderConfig& e = c.models[0].as<EncoderConfig>();
            e.dropout = 0.5f;
            e.attentionDropout = 0.1f;
            e.gateDropout = 0.1f;
            c.train.learningRate = 1.5e-4;
            c.train.weightDecay = 0.01;
        } else if (gated) {
            c.models = {tableOneModel(row, 256, 1, 1024, 14)};
            EncoderConfig& e = c.models[0].as<EncoderConfig>();
            e.dropout = 0.5f;
            e.attentionDropout = 0.1f;
            c.train.learningRate = 2e-4;
            c.train.weightDecay = 0.01;
        } else {
            c.models = {tableOneModel(row, 128, 4, 256, 11)};
            EncoderConfig& e = c.models[0].as<EncoderConfig>();
            e.dropout = 0.1f;
            e.attentionDropout = 0;
            c.train.learningRate = 1.5e-4;
            c.train.weightDecay = 0.0025;
        }
    }
    c.models[0].name = paperTableOneRow(row)->label;
    return c;
}

} // namespace

SweepPlan tableOnePlan(TableOneRecipe recipe, const std::vector<uint64_t>& seeds, int steps,
                       const std::vector<std::string>& rows) {
    for (const std::string& id : rows)
        if (!paperTableOneRow(id)) {
            std::string known;
            for (const PaperTableOneRow& r : paperTableOne())
                known += (known.empty() ? "" : ", ") + r.id;
            throw std::invalid_argument("unknown Table 1 row '" + id + "': the rows are " + known);
        }
    SweepPlan plan;
    plan.kind = SweepKind::Table1;
    // Seed by seed, so that a sweep run in order fills every cell with one seed first.
    for (const uint64_t s : seeds)
        for (const PaperTableOneRow& row : paperTableOne()) {
            if (!rows.empty() && std::find(rows.begin(), rows.end(), row.id) == rows.end())
                continue;
            for (Order order : {Order::Forward, Order::Backward}) {
                const RunConfig base = rowRun(row.id, order, recipe);
                SweepEntry e;
                e.group = tableOneGroup(row.id, order);
                e.name = e.dir = e.group + "/seed-" + std::to_string(s);
                e.config = base;
                e.config.task.seed = e.config.train.seed = s;
                if (steps > 0)
                    e.config.train.steps = steps;
                plan.runs.push_back(std::move(e));
            }
        }
    return plan;
}

} // namespace ndr
