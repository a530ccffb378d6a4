// Plain-text tables for the commands' summaries: columns sized to their widest cell, numbers right-aligned.
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace ndrcli {

class Table {
public:
    // `align` holds 'l' or 'r' per column; columns past its end are right-aligned.
    Table(std::vector<std::string> header, std::string align);
    void addRow(std::vector<std::string> cells); // missing trailing cells are blank
    void addRule();                              // a dashed line across the table
    void print(std::ostream& os) const;

private:
    std::vector<std::string> header_;
    std::string align_;
    std::vector<std::vector<std::string>> rows_; // an empty row is a rule
};

} // namespace ndrcli
