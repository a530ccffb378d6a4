// "Steps needed": traces N random examples of every depth and tabulates, per model, after how many
// steps the gates closed or the columns stood still (halting.h), from which step the answer stayed
// right, and how often the answer read at halting was right.
#pragma once

#include "core/train/halting.h"
#include "ui/training/snapshot.h"

#include <QHash>
#include <QWidget>
#include <map>
#include <random>
#include <vector>

class QLabel;
class QPushButton;
class QSpinBox;
class QTableWidget;

namespace ndrui {

class TrainingSession;

class StepsNeededPanel : public QWidget {
    Q_OBJECT

public:
    explicit StepsNeededPanel(TrainingSession& session, QWidget* parent = nullptr);

    // Forgets every result; call when the run changes.
    void reset();
    // The steps each trace runs (0: as trained) and what halting reads (gates or change) below what.
    void setSteps(int steps);
    void setRule(const ndr::HaltingRule& rule);
    // Requests N examples per depth; the table fills as the traces come back.
    void measure();
    int pending() const { return int(pending_.size()); }
    // The summary of `model` at `depth` over the traces received so far.
    ndr::HaltingSummary summary(int depth, int model) const;

signals:
    void finished(); // every requested trace has come back

private:
    void onTraced(const TraceResultPtr& r);
    void fill();

    TrainingSession& session_;
    int steps_ = 0;
    ndr::HaltingRule rule_;
    std::mt19937_64 rng_{1};
    struct Pending {
        int depth = 0;
        int answers = 0; // one per model
    };
    QHash<quint64, Pending> pending_; // requests not yet answered by every model
    std::map<std::pair<int, int>, std::vector<ndr::Trace>> traces_; // (depth, model) -> traces
    int errors_ = 0;
    QSpinBox* count_;
    QPushButton* measure_;
    QLabel* note_;
    QTableWidget* table_;
};

} // namespace ndrui
