// Figures of one model over training (chosen in the view, among the run's models that have them):
// head routing's share of each head and routing entropy (HeadUsageView), gate halting's mean steps run
// per depth with the compute saved (StepsUsedView), and the accuracy per operation at the root of the
// expressions of tasks that have operations (OperationAccuracyView).
#pragma once

#include "core/config/config.h"
#include "core/records/records.h"
#include "ui/plots/plot_view.h"

#include <QStringList>
#include <span>
#include <vector>

class QComboBox;

namespace ndrui {

class ModelHistoryView : public PlotView {
    Q_OBJECT

public:
    // Every model of the run (index = model); the view offers those whose histories have its figures.
    // The view keeps what it draws of `history` and appends what is new at the next call.
    void setModel(int model, const ndr::ModelConfig& config, std::span<const ndr::EvalRecord> history);
    void clear();
    // Whether any model has the view's figures.
    bool hasData() const;
    // The run's index of the model shown, or -1.
    int currentModel() const;
    void setCurrentModel(int model);

    QString toolTipAt(const QPoint& pos) const override;

protected:
    ModelHistoryView(const QString& title, const QString& yLabel, QWidget* parent);
    // Whether an evaluation holds this view's figures.
    virtual bool hasFigures(const ndr::EvalRecord& e) const = 0;
    // Draws the shown model's history (plottables and items; the base clears them).
    virtual void draw(const ndr::ModelConfig& config, const std::vector<ndr::EvalRecord>& history) = 0;
    // The tooltip of point `index` of graph `graph` of the shown model.
    virtual QString pointText(int graph, int index) const = 0;
    void fitRanges() override;
    void applyPalette() override;
    void rebuild();
    const std::vector<ndr::EvalRecord>& shownHistory() const;

    double yMax_ = 1.04;

private:
    struct Entry {
        ndr::ModelConfig config;
        std::vector<ndr::EvalRecord> history;
    };
    void refreshChoices();

    std::vector<Entry> models_;
    QComboBox* model_;
};

class HeadUsageView final : public ModelHistoryView {
    Q_OBJECT
public:
    explicit HeadUsageView(QWidget* parent = nullptr);
    // Whether an evaluation holds the view's figures (the heads' shares).
    static bool figuresIn(const ndr::EvalRecord& e) { return !e.headShare.empty(); }

protected:
    bool hasFigures(const ndr::EvalRecord& e) const override { return figuresIn(e); }
    void draw(const ndr::ModelConfig& config, const std::vector<ndr::EvalRecord>& history) override;
    QString pointText(int graph, int index) const override;
};

class StepsUsedView final : public ModelHistoryView {
    Q_OBJECT
public:
    explicit StepsUsedView(QWidget* parent = nullptr);
    // The compute saved at the shown model's latest evaluation, 1 - mean steps run / steps (NaN when
    // there is none), as the title states it.
    double computeSaved() const;
    // At the same evaluation, the largest accuracy drop from running every step to halting over the
    // depths (NaN when the evaluation has no every-step accuracy), as the title states it.
    double haltingCost() const;
    // The run's task, which names its depths in the legend ("depth 3", or a problem size "2+2").
    void setTask(const ndr::TaskConfig& task) { task_ = task; }
    // Whether an evaluation holds the view's figures (the steps run before halting).
    static bool figuresIn(const ndr::EvalRecord& e) { return !e.haltCounts.empty(); }

protected:
    bool hasFigures(const ndr::EvalRecord& e) const override { return figuresIn(e); }
    void draw(const ndr::ModelConfig& config, const std::vector<ndr::EvalRecord>& history) override;
    QString pointText(int graph, int index) const override;

private:
    int steps_ = 0;
    double saved_ = 0;
    double cost_ = 0;
    ndr::TaskConfig task_;
};

// One line per operation at the root of the evaluation examples (arithmetic's + and *, ListOps' MAX,
// MED, MIN and SM): the mean over the test depths (solid) and over the training depths (dashed) of the
// accuracy on the examples that operation roots, so that an operation a model has not learnt stays
// at chance while the others rise.
class OperationAccuracyView final : public ModelHistoryView {
    Q_OBJECT
public:
    explicit OperationAccuracyView(QWidget* parent = nullptr);
    // The run's task: which depths are training and test depths.
    void setTask(const ndr::TaskConfig& task) { task_ = task; }
    // The chance accuracy, drawn as a line named in the legend.
    void setChance(double chance) { chance_ = chance; }
    // Whether an evaluation holds the view's figures (the counts per operation).
    static bool figuresIn(const ndr::EvalRecord& e) { return !e.operations.empty(); }

protected:
    bool hasFigures(const ndr::EvalRecord& e) const override { return figuresIn(e); }
    void draw(const ndr::ModelConfig& config, const std::vector<ndr::EvalRecord>& history) override;
    QString pointText(int graph, int index) const override;

private:
    // Per graph: its operation and split.
    struct Line {
        std::string operation;
        ndr::Split split;
    };
    std::vector<Line> lines_;
    ndr::TaskConfig task_;
    double chance_ = 0;
};

} // namespace ndrui
