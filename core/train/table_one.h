// The paper's Table 1 (CTL accuracy, mean of 5 seeds): its rows, and the accuracy the paper reports
// for each row in each order, held-out examples of the training depths (IID) and the longer test
// depths (docs/design.md §4).
#pragma once

#include "core/config/config.h"
#include "core/io/sweep_plan.h"

#include <optional>
#include <string>
#include <vector>

namespace ndr {

struct PaperTableOneRow {
    std::string id;    // "transformer", "rel", "rel-gate", "absrel-gate", "geom", "ndr", "lstm"
    std::string label; // as the paper writes it: "Transformer", "+ rel", ...
    double iidForward, iidBackward, longerForward, longerBackward; // the paper's figures
};

// The rows in the paper's order.
const std::vector<PaperTableOneRow>& paperTableOne();
const PaperTableOneRow* paperTableOneRow(const std::string& id);

// A table1 sweep names its groups "<row>/<order>" ("rel-gate/backward").
std::string tableOneGroup(const std::string& row, Order order);
// The row and order of such a group name; nullopt for any other name.
std::optional<std::pair<const PaperTableOneRow*, Order>> parseTableOneGroup(const std::string& group);

// The recipes `ndr table1` trains each row with. Laptop: the task of the paper presets (S8 F9, train
// 1-5, valid 6-8, test 9-10) with models and training sized to take minutes on a laptop core
// (docs/design.md §4); paper: the authors' hyperparameters per row (d 128-256, batch 512, 30k steps,
// LSTM batch 256 and 20k steps), for a cluster.
enum class TableOneRecipe { Laptop, Paper };

// One run per row, order and seed, grouped "<row>/<order>", in folders "<row>/<order>/seed-<s>", seed by
// seed. steps > 0 overrides every run's training steps; `rows` (ids of paperTableOne()) keeps only
// those rows, every row when empty. Throws std::invalid_argument on an unknown row.
SweepPlan tableOnePlan(TableOneRecipe recipe, const std::vector<uint64_t>& seeds, int steps = 0,
                       const std::vector<std::string>& rows = {});

} // namespace ndr
