// Column layout of Table.
#include "table.h"

#include <algorithm>

namespace ndrcli {

namespace {

// Display width of UTF-8 text: counts code points, not bytes, so "±" takes one column.
size_t displayWidth(const std::string& s) {
    size_t n = 0;
    for (unsigned char c : s)
        if ((c & 0xC0) != 0x80)
            ++n;
    return n;
}

} // namespace

Table::Table(std::vector<std::string> header, std::string align)
    : header_(std::move(header)), align_(std::move(align)) {}

void Table::addRow(std::vector<std::string> cells) {
    cells.resize(std::max(cells.size(), header_.size()));
    rows_.push_back(std::move(cells));
}

void Table::addRule() {
    rows_.emplace_back();
}

void Table::print(std::ostream& os) const {
    std::vector<size_t> width(header_.size(), 0);
    auto measure = [&](const std::vector<std::string>& row) {
        if (row.size() > width.size())
            width.resize(row.size(), 0);
        for (size_t c = 0; c < row.size(); ++c)
            width[c] = std::max(width[c], displayWidth(row[c]));
    };
    measure(header_);
    for (const auto& r : rows_)
        measure(r);
    size_t total = 0;
    for (size_t w : width)
        total += w + 2;
    auto line = [&](const std::vector<std::string>& row) {
        std::string out;
        for (size_t c = 0; c < width.size(); ++c) {
            const std::string cell = c < row.size() ? row[c] : "";
            const std::string pad(width[c] - displayWidth(cell), ' ');
            const bool left = c < align_.size() && align_[c] == 'l';
            out += (c ? "  " : "") + (left ? cell + pad : pad + cell);
        }
        while (!out.empty() && out.back() == ' ')
            out.pop_back();
        os << out << '\n';
    };
    line(header_);
    os << std::string(total > 2 ? total - 2 : 0, '-') << '\n';
    for (const auto& r : rows_) {
        if (r.empty()) {
            os << std::string(total > 2 ? total - 2 : 0, '-') << '\n';
        } else {
            line(r);
        }
    }
}

} // namespace ndrcli
