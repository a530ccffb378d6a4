// The paper's Table 1 (CTL accuracy, mean of 5 seeds): its rows, and the accuracy the paper reports
// for each row in each order, held-out examples of the training depths (IID) and the longer test
// depths (docs/design.md §4).
#pragma once

#include "core/config/config.h"

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

} // namespace ndr
