// Checks shared by the checkpoint's writer (checkpoint.cpp) and the check that a checkpoint fits a
// model (checkpoint_match.cpp); not part of the io library's interface.
#pragma once

#include "core/io/files.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

namespace ndr::checkpointio {

// Differences between the sizes of a checkpoint's buffers and its layout, one message each.
inline std::vector<std::string> checkpointBufferProblems(const CheckpointData& d) {
    std::vector<std::string> problems;
    uint64_t total = 0;
    for (const TensorInfo& t : d.layout)
        total += uint64_t(std::max(t.rows, 0)) * uint64_t(std::max(t.cols, 0));
    if (d.params.size() != total)
        problems.push_back("it has " + std::to_string(d.params.size()) +
                           " parameters but its layout adds up to " + std::to_string(total));
    const std::pair<const char*, const std::vector<float>*> optional[] = {
        {"bestParams", &d.bestParams}, {"adamM", &d.adamM}, {"adamV", &d.adamV}};
    for (const auto& [name, buffer] : optional)
        if (!buffer->empty() && buffer->size() != d.params.size())
            problems.push_back(std::string(name) + " has " + std::to_string(buffer->size()) +
                               " values, expected 0 or " + std::to_string(d.params.size()));
    return problems;
}

inline std::string joinProblems(const std::vector<std::string>& problems) {
    std::string s;
    for (const std::string& p : problems)
        s += (s.empty() ? "" : "; ") + p;
    return s;
}

} // namespace ndr::checkpointio
