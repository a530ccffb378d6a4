// Reading run files and sweep folders into what the Compare view shows (see compare_data.h).
#include "ui/compare/compare_data.h"

#include "core/io/files.h"
#include "core/io/sweep_plan.h"
#include "core/task/task.h"
#include "core/train/sweep.h"
#include "core/train/table_one.h"

#include <QDateTime>
#include <QFileInfo>
#include <QLocale>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <set>

namespace ndrui {

namespace {

CompareStats statsOf(const std::vector<double>& xs, const std::vector<uint64_t>& seeds = {}) {
    const ndr::Spread spread = ndr::spreadOf(xs);
    CompareStats s;
    s.runs = spread.n;
    s.mean = spread.mean;
    s.std = spread.std;
    s.reached = spread.reached;
    s.values = xs;
    if (seeds.size() == xs.size())
        s.seeds = seeds;
    return s;
}

QString cell(const CompareStats& s, int decimals = 3) {
    if (s.runs == 0 || std::isnan(s.mean))
        return QStringLiteral("-");
    // One seed has no spread to show: its value alone.
    if (s.runs == 1)
        return QString::number(s.mean, 'f', decimals);
    return QStringLiteral("%1 ± %2").arg(s.mean, 0, 'f', decimals).arg(s.std, 0, 'f', decimals);
}

// An accuracy cell with how many runs solved it: "0.999 ± 0.002 5/5".
QString accuracyCell(const CompareStats& s) {
    if (s.runs < 2 || std::isnan(s.mean))
        return cell(s);
    return cell(s) + QStringLiteral(" %1/%2").arg(s.reached).arg(s.runs);
}

// Per run of a model that halts, the mean over the test depths of the steps it ran before halting
// (nothing for a model that does not halt).
std::vector<double> testStepsRun(const ndr::ModelSummary& ms, const ndr::TaskConfig& task) {
    std::vector<double> out;
    const size_t runs = ms.haltSteps.empty() ? 0 : ms.haltSteps.front().size();
    for (size_t r = 0; r < runs; ++r) {
        std::vector<int> depths;
        std::vector<double> values;
        for (size_t d = 0; d < ms.depths.size() && d < ms.haltSteps.size(); ++d)
            if (r < ms.haltSteps[d].size()) {
                depths.push_back(ms.depths[d]);
                values.push_back(ms.haltSteps[d][r]);
            }
        if (const double mean = ndr::splitMean(task, depths, values, ndr::Split::Test); !std::isnan(mean))
            out.push_back(mean);
    }
    return out;
}

QString paperCell(double value) {
    return std::isnan(value) ? QStringLiteral("-") : QString::number(value, 'f', 2);
}

// "<name>: trained by pid 1234 on host, last save 10:42" when another process holds `runFile`'s lock;
// empty otherwise. Cheap: the lock file and the run file's time, never the run itself.
QString trainedBy(const QString& name, const std::filesystem::path& runFile) {
    const ndr::RunFileHolder holder = ndr::runFileHolder(runFile);
    if (!holder.held)
        return {};
    const QString who =
        holder.pid > 0
            ? QStringLiteral("pid %1 on %2").arg(holder.pid).arg(QString::fromStdString(holder.host))
            : QString::fromStdString(holder.line);
    QString text = QStringLiteral("%1: trained by %2").arg(name, who);
    const QFileInfo info(QString::fromStdString(runFile.string()));
    if (info.exists())
        text += QStringLiteral(", last save %1").arg(QLocale().toString(info.lastModified().time(), "HH:mm"));
    return text;
}

struct Group {
    QString source;
    ndr::GroupSummary summary;
    std::vector<ndr::RunRecord> finished; // for the curves
};

} // namespace

CompareData loadCompareData(const std::vector<CompareSource>& sources) {
    CompareData data;
    std::vector<Group> groups;
    for (const CompareSource& src : sources) {
        const QString name = QString::fromStdString(src.kind == CompareSource::Kind::Sweep
                                                        ? src.path.filename().string()
                                                        : src.path.parent_path().filename().string());
        try {
            if (src.kind == CompareSource::Kind::Sweep) {
                const ndr::SweepPlan plan = ndr::loadSweepPlan(src.path);
                for (const ndr::SweepEntry& e : plan.runs) {
                    const std::filesystem::path runFile = src.path / e.dir / "run.json";
                    if (QString t = trainedBy(name + "/" + QString::fromStdString(e.name), runFile);
                        !t.isEmpty()) {
                        data.training << t;
                        data.trainingFiles.push_back(runFile);
                    }
                }
                for (ndr::GroupSummary& g : ndr::summariseSweep(src.path, plan)) {
                    Group group{name, std::move(g), {}};
                    for (const ndr::SweepEntry& e : plan.runs)
                        if (e.group == group.summary.group &&
                            ndr::runProgress(src.path, e).state == ndr::RunState::Done)
                            group.finished.push_back(ndr::loadRunRecord(src.path / e.dir / "run.json",
                                                                        ndr::RunFileParts::WithoutTraces));
                    groups.push_back(std::move(group));
                }
            } else {
                if (QString t = trainedBy(name, src.path); !t.isEmpty()) {
                    data.training << t;
                    data.trainingFiles.push_back(src.path);
                }
                ndr::RunRecord record = ndr::loadRunRecord(src.path, ndr::RunFileParts::WithoutTraces);
                Group group{name, ndr::summariseRuns(name.toStdString(), {record}), {}};
                group.finished.push_back(std::move(record));
                groups.push_back(std::move(group));
            }
        } catch (const std::exception& e) {
            data.problems << QString::fromStdString(e.what());
        }
    }
    data.longerBaseline = NAN;
    if (!groups.empty()) {
        const ndr::TaskConfig& task = groups.front().summary.config.task;
        data.chance = ndr::chanceAccuracyOf(task);
        std::vector<double> baselines;
        bool sameTask = true;
        for (const Group& g : groups) {
            const ndr::TaskConfig& t = g.summary.config.task;
            if (ndr::chanceAccuracyOf(t) != data.chance)
                data.chance = 0; // the sources' chances differ: no one line stands for them all
            // The same questions and answers, whatever the seed or the order (a Table 1 sweep has both).
            sameTask = sameTask && t.kind == task.kind && t.symbols == task.symbols &&
                       t.functions == task.functions && t.operations == task.operations &&
                       ndr::allDepthsOf(t) == ndr::allDepthsOf(task) &&
                       ndr::depthsOf(t, ndr::Split::Test) == ndr::depthsOf(task, ndr::Split::Test);
            baselines.insert(baselines.end(), g.summary.baseline.test.begin(), g.summary.baseline.test.end());
        }
        if (sameTask && !baselines.empty())
            data.longerBaseline =
                std::accumulate(baselines.begin(), baselines.end(), 0.0) / double(baselines.size());
    }

    data.tableOne = !groups.empty();
    for (const Group& g : groups)
        data.tableOne =
            data.tableOne && g.summary.models.size() == 1 && ndr::parseTableOneGroup(g.summary.group);

    for (size_t gi = 0; gi < groups.size(); ++gi) {
        const Group& g = groups[gi];
        data.finished += int(g.summary.seeds.size());
        data.planned += g.summary.planned;
        const auto t1 = ndr::parseTableOneGroup(g.summary.group);
        for (size_t m = 0; m < g.summary.models.size(); ++m) {
            const ndr::ModelSummary& ms = g.summary.models[m];
            CompareData::Category c;
            if (data.tableOne) {
                c.label =
                    QString::fromStdString(t1->first->label) +
                    (t1->second == ndr::Order::Forward ? QStringLiteral(" · fwd") : QStringLiteral(" · bwd"));
            } else {
                c.label = (g.summary.group.empty() ? g.source : QString::fromStdString(g.summary.group)) +
                          " · " + QString::fromStdString(ms.name);
            }
            c.iid = statsOf(ms.iid, ms.seeds);
            c.longer = statsOf(ms.test, ms.seeds);
            const bool forward = t1 && t1->second == ndr::Order::Forward;
            c.paperIid = t1 ? (forward ? t1->first->iidForward : t1->first->iidBackward) : NAN;
            c.paperLonger = t1 ? (forward ? t1->first->longerForward : t1->first->longerBackward) : NAN;
            const int color = int(data.categories.size());
            for (const ndr::RunRecord& r : g.finished) {
                if (m >= r.models.size())
                    continue;
                CompareData::Curve curve;
                curve.label = c.label + QStringLiteral(" · seed %1").arg(r.config.train.seed);
                curve.colorIndex = color;
                for (const ndr::EvalRecord& e : r.models[m].history) {
                    curve.steps.push_back(e.step);
                    curve.test.push_back(e.testAccuracy);
                    curve.iid.push_back(e.trainAccuracy);
                }
                data.curves.push_back(std::move(curve));
            }
            data.categories.push_back(c);
        }
    }

    if (data.tableOne) {
        // The paper's layout: one row per Table 1 row, in the paper's order.
        data.header = {"model", "IID forward", "IID backward", "Longer forward", "Longer backward", "runs"};
        for (const ndr::PaperTableOneRow& row : ndr::paperTableOne()) {
            const CompareData::Category* fwd = nullptr;
            const CompareData::Category* bwd = nullptr;
            for (size_t i = 0; i < data.categories.size(); ++i) {
                if (data.categories[i].label == QString::fromStdString(row.label) + " · fwd")
                    fwd = &data.categories[i];
                if (data.categories[i].label == QString::fromStdString(row.label) + " · bwd")
                    bwd = &data.categories[i];
            }
            if (!fwd && !bwd)
                continue;
            auto both = [](const CompareData::Category* c, bool longer) {
                if (!c)
                    return QStringLiteral("-");
                return accuracyCell(longer ? c->longer : c->iid) + " (" +
                       paperCell(longer ? c->paperLonger : c->paperIid) + ")";
            };
            const int runs = (fwd ? fwd->longer.runs : 0) + (bwd ? bwd->longer.runs : 0);
            data.rows.push_back({QString::fromStdString(row.label), both(fwd, false), both(bwd, false),
                                 both(fwd, true), both(bwd, true), QString::number(runs)});
        }
    } else {
        data.header = {"source", "group", "model", "runs", "IID", "Longer"};
        // Tasks with operations: a column of Longer, then of IID, per operation at the root (any
        // source's), so that an operation learnt on the training depths but not beyond shows as such.
        std::set<std::string> operations;
        for (const Group& g : groups)
            for (const ndr::ModelSummary& ms : g.summary.models)
                operations.insert(ms.operations.begin(), ms.operations.end());
        for (const char* split : {"Longer", "IID"})
            for (const std::string& op : operations)
                data.header << QStringLiteral("%1 %2").arg(QLatin1String(split), QString::fromStdString(op));
        // Tasks whose depths are problem sizes (multi-digit arithmetic): a column per size, as the
        // sizes' accuracies lie far apart within IID and Longer.
        std::set<int> sizes;
        const ndr::TaskConfig* sized = nullptr;
        for (const Group& g : groups)
            if (ndr::depthsAreSizes(g.summary.config.task)) {
                sized = &g.summary.config.task;
                for (const ndr::ModelSummary& ms : g.summary.models)
                    sizes.insert(ms.depths.begin(), ms.depths.end());
            }
        for (int size : sizes)
            data.header << QString::fromStdString(ndr::depthLabel(*sized, size));
        // Models that halt at evaluation: the steps they run on the test depths.
        const bool halting = std::any_of(groups.begin(), groups.end(), [](const Group& g) {
            return std::any_of(g.summary.models.begin(), g.summary.models.end(),
                               [](const ndr::ModelSummary& ms) { return !ms.haltSteps.empty(); });
        });
        if (halting)
            data.header << QStringLiteral("Steps run (Longer)");
        size_t ci = 0;
        for (const Group& g : groups)
            for (const ndr::ModelSummary& ms : g.summary.models) {
                const CompareData::Category& c = data.categories[ci++];
                QStringList row = {g.source,
                                   QString::fromStdString(g.summary.group),
                                   QString::fromStdString(ms.name),
                                   QStringLiteral("%1/%2").arg(c.longer.runs).arg(g.summary.planned),
                                   accuracyCell(c.iid),
                                   accuracyCell(c.longer)};
                for (const auto* perOperation : {&ms.operationTest, &ms.operationIid})
                    for (const std::string& op : operations) {
                        const auto at = std::find(ms.operations.begin(), ms.operations.end(), op);
                        row << (at == ms.operations.end()
                                    ? QStringLiteral("-")
                                    : cell(statsOf((*perOperation)[size_t(at - ms.operations.begin())])));
                    }
                for (int size : sizes) {
                    const auto at = std::find(ms.depths.begin(), ms.depths.end(), size);
                    const bool known = ndr::depthsAreSizes(g.summary.config.task) && at != ms.depths.end() &&
                                       size_t(at - ms.depths.begin()) < ms.perDepth.size();
                    row << (known ? cell(statsOf(ms.perDepth[size_t(at - ms.depths.begin())]))
                                  : QStringLiteral("-"));
                }
                if (halting)
                    row << cell(statsOf(testStepsRun(ms, g.summary.config.task)), 2);
                data.rows.push_back(row);
            }
    }
    return data;
}

std::string compareCsv(const CompareData& data) {
    auto quote = [](const QString& s) {
        QString q = s;
        if (q.contains(',') || q.contains('"') || q.contains('\n'))
            q = '"' + q.replace('"', QStringLiteral("\"\"")) + '"';
        return q;
    };
    QString out;
    QStringList header;
    for (const QString& h : data.header)
        header << quote(h);
    out += header.join(',') + "\n";
    for (const QStringList& row : data.rows) {
        QStringList cells;
        for (const QString& c : row)
            cells << quote(c);
        out += cells.join(',') + "\n";
    }
    return out.toStdString();
}

} // namespace ndrui
