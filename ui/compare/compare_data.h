// What the Compare view shows, computed from run files and sweep folders without widgets (so it can be
// read on a worker thread): the rows of the comparison table, the bar chart's categories and the
// learning curves of the finished runs.
#pragma once

#include <QString>
#include <QStringList>
#include <cstdint>
#include <filesystem>
#include <vector>

namespace ndrui {

struct CompareSource {
    enum class Kind { Run, Sweep };
    Kind kind = Kind::Run;
    std::filesystem::path path; // a run.json, or a sweep folder
    bool operator==(const CompareSource&) const = default;
};

struct CompareStats {
    double mean = 0, std = 0; // NaN mean: no finished run
    int runs = 0;
    int reached = 0;             // runs at >= ndr::kSolvedAccuracy
    std::vector<double> values;  // (runs) each run's figure
    std::vector<uint64_t> seeds; // (runs) its seed, where known
};

struct CompareData {
    // The table: a header and rows of cells. For a Table 1 sweep: one row per Table 1 row, with IID and
    // Longer in each order and the paper's figure beside each cell; otherwise one row per group and model,
    // IID and Longer, then per operation at the root (arithmetic, ListOps), per problem size
    // (multi-digit arithmetic) and the steps run by models that halt.
    QStringList header;
    std::vector<QStringList> rows;
    bool tableOne = false;

    struct Category {
        QString label;
        CompareStats iid, longer;
        double paperIid = 0, paperLonger = 0; // NaN where the paper has none
    };
    std::vector<Category> categories;

    struct Curve {
        QString label;
        int colorIndex = 0; // the category's
        std::vector<int> steps;
        std::vector<double> test; // Longer: the test depths
        std::vector<double> iid;  // held-out examples of the training depths
    };
    std::vector<Curve> curves;

    double chance = 0; // of the sources' tasks when it is the same for all, else 0 (no line drawn)
    // The mean over every run of its Longer depths' majority baseline, when every source has the first
    // one's task (kind, symbols, functions, operations) and splits (NaN otherwise, or when no run file
    // has the baseline).
    double longerBaseline = 0;
    int finished = 0;     // runs summarised
    int planned = 0;      // runs in the sweeps' plans, plus the single runs
    QStringList problems; // sources that could not be read, each with its message
    // The runs another process trains now (it holds their lock), each as "seed-2: trained by pid 1234
    // on host, last save 10:42"; Compare reads them again at each poll while there are any.
    QStringList training;
    std::vector<std::filesystem::path> trainingFiles; // their run files
};

// Reads every source; a source that cannot be read is listed in `problems`, the others still show.
CompareData loadCompareData(const std::vector<CompareSource>& sources);

// The table as CSV (RFC 4180 quoting).
std::string compareCsv(const CompareData& data);

} // namespace ndrui
