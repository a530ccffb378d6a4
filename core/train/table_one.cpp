// The paper's Table 1 (see table_one.h).
#include "core/train/table_one.h"

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

} // namespace ndr
