// The steps-needed table (see stepsneeded.h).
#include "ui/inspector/steps_needed.h"

#include "ui/common/palette.h"
#include "ui/common/split_name.h"
#include "ui/training/training_session.h"

#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QSpinBox>
#include <QTableWidget>
#include <QVBoxLayout>

namespace ndrui {

StepsNeededPanel::StepsNeededPanel(TrainingSession& session, QWidget* parent)
    : QWidget(parent), session_(session) {
    count_ = new QSpinBox(this);
    count_->setObjectName("inspector.stepsNeeded.count");
    count_->setRange(1, 200);
    count_->setValue(10);
    count_->setSuffix(tr(" per depth"));
    measure_ = new QPushButton(tr("Measure"), this);
    measure_->setObjectName("inspector.stepsNeeded.measure");
    measure_->setToolTip(
        tr("Trace random examples of every depth and count the steps until the gates close (or the "
           "columns stand still)"));
    note_ = new QLabel(this);
    note_->setWordWrap(true);
    table_ = new QTableWidget(this);
    table_->setObjectName("inspector.stepsNeeded");
    table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
    table_->setSelectionMode(QAbstractItemView::NoSelection);
    table_->verticalHeader()->hide();
    table_->verticalHeader()->setDefaultSectionSize(fontMetrics().height() + 6);
    table_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);

    auto* row = new QHBoxLayout;
    row->addWidget(count_, 1);
    row->addWidget(measure_);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addLayout(row);
    layout->addWidget(note_);
    layout->addWidget(table_, 1);

    connect(measure_, &QPushButton::clicked, this, &StepsNeededPanel::measure);
    connect(&session_, &TrainingSession::traced, this, &StepsNeededPanel::onTraced);
    reset();
}

void StepsNeededPanel::reset() {
    pending_.clear();
    traces_.clear();
    errors_ = 0;
    if (const ndr::Task* task = session_.task())
        rng_.seed(task->config().seed * 104729 + 3); // the same run measures the same examples
    measure_->setEnabled(session_.hasRun());
    note_->setText(tr("Steps until every gate stays below the threshold, or no step moves a column "
                      "(halting), over random examples."));
    fill();
}

void StepsNeededPanel::setSteps(int steps) {
    steps_ = steps;
}

void StepsNeededPanel::setRule(const ndr::HaltingRule& rule) {
    rule_ = rule;
    fill();
}

void StepsNeededPanel::measure() {
    const ndr::Task* task = session_.task();
    if (!task)
        return;
    pending_.clear(); // answers to an earlier measurement are dropped when they arrive
    traces_.clear();
    errors_ = 0;
    for (int d : task->allDepths())
        for (int i = 0; i < count_->value(); ++i)
            pending_.insert(session_.requestTrace(task->sample(d, rng_), steps_), Pending{d, 0});
    note_->setText(tr("Tracing %n example(s)…", nullptr, int(pending_.size())));
    fill();
}

void StepsNeededPanel::onTraced(const TraceResultPtr& r) {
    auto it = pending_.find(r->id);
    if (it == pending_.end())
        return;
    if (r->error.isEmpty())
        traces_[{it->depth, r->model}].push_back(r->trace);
    else
        ++errors_;
    if (++it->answers >= int(session_.models().size()))
        pending_.erase(it);
    fill();
    if (pending_.isEmpty())
        emit finished();
}

ndr::HaltingSummary StepsNeededPanel::summary(int depth, int model) const {
    auto it = traces_.find({depth, model});
    if (it == traces_.end())
        return {};
    std::vector<const ndr::Trace*> list;
    for (const ndr::Trace& t : it->second)
        list.push_back(&t);
    const auto& models = session_.models();
    return ndr::summariseHalting(
        list, model < int(models.size()) ? ndr::haltingRuleOf(models[size_t(model)].config, rule_) : rule_);
}

void StepsNeededPanel::fill() {
    const ndr::Task* task = session_.task();
    const auto& models = session_.models();
    table_->clear();
    if (!task) {
        table_->setRowCount(0);
        table_->setColumnCount(0);
        return;
    }
    const std::vector<int> depths = task->allDepths();
    const bool sizes = ndr::depthsAreSizes(task->config());
    count_->setSuffix(sizes ? tr(" per size") : tr(" per depth"));
    // Per model: halts (only a model with the signal halting reads: gates, or the change per step that
    // every model but the LSTM records), settles, right; firstColumn[m] is its first.
    const bool byGates = rule_.signal == ndr::HaltSignal::Gates;
    // A model with learned halting (UT + ACT) halts by its own rule whatever the signal chosen.
    auto learned = [this](const ndr::ModelConfig& mc) { return ndr::haltingRuleOf(mc, rule_).learned; };
    auto halts = [this, learned](const ndr::ModelConfig& mc) {
        return learned(mc) || ndr::hasHaltSignal(mc, rule_.signal);
    };
    // The headers name the measures; the first row names each model once over its columns (a
    // spanning cell), so a long name does not widen one column and push the table past the side
    // panel. Every header's tooltip names its model.
    QStringList headers{sizes ? tr("size") : tr("depth")},
        headerTips{sizes ? tr("Each size is shaded by its split as on the dashboard: green train, yellow "
                              "valid, red test")
                         : tr("Each depth is shaded by its split as on the dashboard: green train, yellow "
                              "valid, red test")};
    std::vector<int> firstColumn, columnCount;
    const QString haltsHeader =
        (byGates ? tr("halts: the mean first step after which every gate stays below the threshold (%1)")
                 : tr("halts: the mean first step after which no step moves a position's state by %1 of "
                      "its length or more"))
            .arg(double(rule_.threshold), 0, 'g', 3);
    const QString settlesHeader = tr("settles: the mean first step from which the answer stays right");
    const QString rightHeader = tr("right: the examples answered right at the halting step (at the last step "
                                   "without gates)");
    for (const auto& m : models) {
        firstColumn.push_back(int(headers.size()));
        QStringList measures, tips;
        if (halts(m.config)) {
            measures << tr("halts");
            tips << (learned(m.config)
                         ? tr("halts: the mean step after which every position has halted by the model's own "
                              "rule (%1)")
                               .arg(QString::fromStdString(ndr::factsOf(m.config).learnedHalting))
                         : haltsHeader);
        }
        measures << tr("settles") << tr("right");
        tips << settlesHeader << rightHeader;
        columnCount.push_back(int(measures.size()));
        for (int k = 0; k < measures.size(); ++k) {
            headers << measures[k];
            headerTips << tr("%1, %2").arg(modelName(m), tips[k]);
        }
    }
    table_->setColumnCount(int(headers.size()));
    table_->setHorizontalHeaderLabels(headers);
    for (int k = 0; k < headers.size(); ++k)
        table_->horizontalHeaderItem(k)->setToolTip(headerTips[k]);
    for (size_t m = 0; m < models.size(); ++m)
        if (!halts(models[m].config))
            table_->horizontalHeaderItem(firstColumn[m] + 1)
                ->setToolTip((byGates
                                  ? tr("%1 has no gates to halt on: right is its answer after the last step")
                                  : tr("%1 records no change per step to halt on: right is its answer "
                                       "after the last step"))
                                 .arg(modelName(models[m])));
    table_->clearSpans();
    table_->setRowCount(int(depths.size()) + 1);
    for (size_t m = 0; m < models.size(); ++m) {
        auto* name = new QTableWidgetItem(modelName(models[m]));
        name->setTextAlignment(Qt::AlignCenter);
        name->setForeground(modelColor(int(m)));
        QFont bold = name->font();
        bold.setBold(true);
        name->setFont(bold);
        table_->setItem(0, firstColumn[m], name);
        if (columnCount[m] > 1)
            table_->setSpan(0, firstColumn[m], 1, columnCount[m]);
    }
    // A cell shows the mean step (or the one step every example shares) and a star where some examples
    // are left out of it or never halt; its tooltip gives the range and counts the star. Short cells
    // keep every model's columns within the side panel.
    auto cellText = [](double mean, int lo, int hi) {
        return lo == hi ? QString::number(lo) : QString::number(mean, 'f', 1);
    };
    auto rangeText = [this](double mean, int lo, int hi, int n) {
        return tr("mean %1, from %2 to %3, over %n example(s)", nullptr, n)
            .arg(mean, 0, 'f', 1)
            .arg(lo)
            .arg(hi);
    };
    for (int r = 1; r <= int(depths.size()); ++r) {
        const int d = depths[size_t(r - 1)];
        // The split is the cell's shade, as the dashboard shades its depth bands, and its tooltip: the
        // words "(train)" beside every depth would widen the column past the side panel.
        const ndr::Split split = task->splitOf(d);
        auto* depthItem = new QTableWidgetItem(QString::fromStdString(ndr::depthLabel(task->config(), d)));
        depthItem->setBackground(splitShade(split, palette()));
        depthItem->setToolTip(
            (sizes ? tr("%1: %2 size") : tr("%1: %2 depth")).arg(depthItem->text(), splitName(split)));
        table_->setItem(r, 0, depthItem);
        for (int m = 0; m < int(models.size()); ++m) {
            const ndr::HaltingSummary s = summary(d, m);
            const bool halting = halts(models[size_t(m)].config);
            QString steps, right, settles, stepsTip, settlesTip, rightTip;
            if (s.examples > 0) {
                // From which step the answer is right and stays right: read from the answers, so it
                // means the same for every model.
                settlesTip = tr("the step from which the answer is right after every later step");
                if (s.settled == 0) {
                    settles = tr("never");
                    settlesTip += tr(": every example is wrong at the end");
                } else {
                    settles = cellText(s.meanSettled, s.minSettled, s.maxSettled);
                    settlesTip += ": " + rangeText(s.meanSettled, s.minSettled, s.maxSettled, s.settled);
                    if (s.settled < s.examples) {
                        settles += "*";
                        settlesTip += tr("\n* %1 of the %2 examples are wrong at the end and left out")
                                          .arg(s.examples - s.settled)
                                          .arg(s.examples);
                    }
                }
                right = QString("%1/%2").arg(s.correctAtHalt).arg(s.examples);
                if (halting) {
                    // Examples that never halt count their full run in the mean; all of them: "never".
                    stepsTip = tr("the halting step");
                    if (s.halted == 0) {
                        steps = tr("never");
                        stepsTip += byGates ? tr(": gates still open at the last step in every example")
                                            : tr(": the last step still moves a position in every example");
                    } else {
                        steps = cellText(s.meanStep, s.minStep, s.maxStep);
                        stepsTip += ": " + rangeText(s.meanStep, s.minStep, s.maxStep, s.examples);
                        if (s.halted < s.examples) {
                            steps += "*";
                            stepsTip += (byGates ? tr("\n* %1 of the %2 examples never halt (gates still "
                                                      "open at the last step) and count their full run")
                                                 : tr("\n* %1 of the %2 examples never halt (the last step "
                                                      "still moves a position) and count their full run"))
                                            .arg(s.examples - s.halted)
                                            .arg(s.examples);
                        }
                    }
                    rightTip = tr("right: the answer read at the halting step");
                } else {
                    rightTip =
                        byGates ? tr("right: the answer after the last step (a residual or recurrent model "
                                     "has no gates to halt on)")
                                : tr("right: the answer after the last step (a recurrent model records no "
                                     "change to halt on)");
                }
            }
            int column = firstColumn[size_t(m)];
            if (halting) {
                auto* a = new QTableWidgetItem(steps);
                a->setToolTip(stepsTip);
                table_->setItem(r, column++, a);
            }
            auto* c = new QTableWidgetItem(settles);
            c->setToolTip(settlesTip);
            table_->setItem(r, column++, c);
            auto* b = new QTableWidgetItem(right);
            b->setToolTip(rightTip);
            table_->setItem(r, column, b);
        }
    }
    if (!pending_.isEmpty())
        note_->setText(tr("Tracing… %n request(s) to go", nullptr, int(pending_.size())));
    else if (!traces_.empty())
        note_->setText(
            errors_ > 0 ? tr("Done; %n trace(s) failed (a model could not run these steps)", nullptr, errors_)
                        : tr("Done, %1; a header's tooltip says what its column counts.")
                              .arg(steps_ > 0 ? tr("every model run for %1 steps").arg(steps_)
                                              : tr("each model run for its own steps")));
}

} // namespace ndrui
