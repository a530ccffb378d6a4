// The inspector's tables (see inspector.h): the token row with true intermediates, each model's answer
// and distribution, and the answer the readout would give after every step.
#include "ui/inspector/inspector.h"

#include "core/config/model_kind.h"
#include "core/train/halting.h"
#include "ui/common/palette.h"
#include "ui/training/training_session.h"

#include <QCheckBox>
#include <QEvent>
#include <QHeaderView>
#include <QLabel>
#include <QPainter>
#include <QScrollBar>
#include <QSlider>
#include <QStyledItemDelegate>
#include <QTableWidget>
#include <algorithm>

namespace ndrui {

namespace {

constexpr int kBarRole = Qt::UserRole; // 0..1, the bar's length
constexpr int kBarColorRole = Qt::UserRole + 1;

// A probability as a bar behind its number: a distribution reads at a glance.
class BarDelegate : public QStyledItemDelegate {
public:
    using QStyledItemDelegate::QStyledItemDelegate;
    void paint(QPainter* p, const QStyleOptionViewItem& option, const QModelIndex& index) const override {
        const QVariant v = index.data(kBarRole);
        if (v.isValid()) {
            QColor c = index.data(kBarColorRole).value<QColor>();
            c.setAlpha(110);
            QRect r = option.rect.adjusted(2, 3, -2, -3);
            r.setWidth(int(r.width() * std::clamp(v.toDouble(), 0.0, 1.0)));
            p->fillRect(r, c);
        }
        QStyledItemDelegate::paint(p, option, index);
    }
};

QColor verdictColor(bool right, bool strong) {
    return right ? QColor(44, 160, 44, strong ? 150 : 55) : QColor(214, 39, 40, strong ? 150 : 55);
}

QTableWidgetItem* item(const QString& text, const QString& tip = {}) {
    auto* i = new QTableWidgetItem(text);
    i->setTextAlignment(Qt::AlignCenter);
    if (!tip.isEmpty())
        i->setToolTip(tip);
    return i;
}

// Fits a table's height to its rows so it never scrolls or leaves a gap.
void fitHeight(QTableWidget* t) {
    // The header counts unless hidden on purpose: a table filled while its tab is in the back is not
    // "visible", yet shows its header once the tab comes to the front.
    t->resizeRowsToContents();
    // Laid out, a header or scroll bar can be taller than its size hint (a bold section label).
    const auto tallest = [](const QWidget* w) { return std::max(w->sizeHint().height(), w->height()); };
    int h = !t->horizontalHeader()->isHidden() ? tallest(t->horizontalHeader()) : 0;
    for (int r = 0; r < t->rowCount(); ++r)
        h += t->verticalHeader()->sectionSize(r);
    h += 2 * t->frameWidth();
    // Measured from the table's own width, not its viewport's: on a resize the table learns its new
    // width before its viewport does.
    const int vertical = t->verticalHeader()->isHidden() ? 0 : t->verticalHeader()->width();
    if (t->horizontalScrollBar()->maximum() > 0 ||
        t->horizontalHeader()->length() > t->width() - 2 * t->frameWidth() - vertical)
        h += tallest(t->horizontalScrollBar());
    t->setFixedHeight(std::max(h, 8));
}

// Every column as wide as the others, so that the bars drawn in them compare across models: the
// table's width shared out equally, or the widest contents' width when that is more (the table then
// scrolls sideways).
void equalColumnWidths(QTableWidget* t) {
    const int n = t->columnCount();
    if (n == 0)
        return;
    QHeaderView* header = t->horizontalHeader();
    header->setStretchLastSection(false);
    header->setSectionResizeMode(QHeaderView::Interactive);
    t->resizeColumnsToContents();
    int widest = 0;
    for (int c = 0; c < n; ++c)
        widest = std::max(widest, header->sectionSize(c));
    const int width = t->viewport()->width();
    for (int c = 0; c < n; ++c)
        header->resizeSection(c, widest * n <= width ? width / n + (c < width % n ? 1 : 0) : widest);
}

} // namespace

void Inspector::keepFitted(QTableWidget* table) {
    // A narrower table, or wider columns, may now need the scroll bar (or no longer): refit its height
    // when the table is resized and when its horizontal scroll range changes.
    table->installEventFilter(this);
    connect(table->horizontalScrollBar(), &QScrollBar::rangeChanged, this, [table] {
        if (table->isVisible())
            fitHeight(table);
    });
}

bool Inspector::eventFilter(QObject* watched, QEvent* event) {
    if (event->type() == QEvent::Resize) {
        for (QTableWidget* t : {tokens_, readout_})
            if (watched == t && t->isVisible())
                fitHeight(t);
        if (distribution_ && watched == distribution_->viewport())
            equalColumnWidths(distribution_);
    }
    return QWidget::eventFilter(watched, event);
}

void Inspector::fillTokens() {
    const ndr::Task* task = session_.task();
    tokens_->clear();
    if (!task || !example_) {
        tokens_->setRowCount(0);
        tokens_->setColumnCount(0);
        truth_->setText(example_ || !task ? QString() : tr("Type an expression or draw a random one."));
        tokens_->hide();
        return;
    }
    const std::vector<int> toks = task->tokens(*example_), values = task->intermediates(*example_);
    tokens_->setRowCount(2);
    tokens_->setColumnCount(int(toks.size()));
    tokens_->setVerticalHeaderLabels({tr("token"), tr("true value")});
    for (int p = 0; p < int(toks.size()); ++p) {
        auto* t = item(QString::fromStdString(task->tokenName(toks[size_t(p)])));
        QFont f = t->font();
        f.setBold(true);
        t->setFont(f);
        tokens_->setItem(0, p, t);
        const int v = values[size_t(p)];
        tokens_->setItem(1, p, item(v >= 0 ? QString::fromStdString(task->symbolName(v)) : QString()));
    }
    tokens_->resizeColumnsToContents();
    tokens_->show();
    fitHeight(tokens_);
    const int depth = example_->depth();
    const bool sizes = ndr::depthsAreSizes(task->config());
    truth_->setText(tr("True answer: <b>%1</b> &nbsp; (%2%3)")
                        .arg(QString::fromStdString(task->symbolName(task->answer(*example_))))
                        .arg(sizes ? (depth > 0 ? tr("size %1").arg(QString::fromStdString(
                                                      ndr::depthLabel(task->config(), depth)))
                                                : tr("a size no split draws"))
                                   : tr("depth %1").arg(depth))
                        .arg(task->splitOf(depth) == ndr::Split::Train  ? tr(", a training depth")
                             : task->splitOf(depth) == ndr::Split::None ? tr(", never evaluated")
                                                                        : tr(", held out")));
}

void Inspector::highlightTokens(int target, int source) {
    for (int p = 0; p < tokens_->columnCount(); ++p)
        for (int r = 0; r < tokens_->rowCount(); ++r)
            if (auto* i = tokens_->item(r, p)) {
                QColor c;
                if (p == target)
                    c = QColor(31, 119, 180, 90);
                else if (p == source)
                    c = QColor(255, 127, 14, 110);
                i->setBackground(c.isValid() ? QBrush(c) : QBrush());
                i->setToolTip(p == target ? tr("target") : p == source ? tr("source") : QString());
            }
}

void Inspector::fillAnswers() {
    const ndr::Task* task = session_.task();
    const auto& models = session_.models();
    const bool halts = halting();
    answers_->clear();
    distribution_->clear();
    if (!dynamic_cast<BarDelegate*>(distribution_->itemDelegate()))
        distribution_->setItemDelegate(new BarDelegate(distribution_));
    if (!task) {
        answers_->setRowCount(0);
        distribution_->setRowCount(0);
        return;
    }
    QStringList columns{tr("answer"), tr("p")};
    if (halts)
        columns << tr("halts after") << tr("then");
    answers_->setColumnCount(int(columns.size()));
    answers_->setHorizontalHeaderLabels(columns);
    answers_->setRowCount(int(models.size()));
    // One row per answer value, or per readout when a task answers with several.
    const int R = task->readouts(), S = R > 1 ? 0 : task->answerCount();
    distribution_->setRowCount(R > 1 ? R : S);
    distribution_->setColumnCount(int(models.size()));
    QStringList names, symbols;
    for (const auto& m : models)
        names << modelName(m);
    for (int s = 0; s < S; ++s)
        symbols << QString::fromStdString(task->symbolName(s));
    if (R > 1) {
        const std::vector<int> want = example_ ? task->targets(*example_) : std::vector<int>(size_t(R), -1);
        for (int k = 0; k < R; ++k)
            symbols << (want[size_t(k)] >= 0 ? tr("digit %1 (%2)").arg(k + 1).arg(want[size_t(k)])
                                             : tr("digit %1").arg(k + 1));
    }
    answers_->setVerticalHeaderLabels(names);
    distribution_->setHorizontalHeaderLabels(names);
    distribution_->setVerticalHeaderLabels(symbols);
    for (int m = 0; m < int(models.size()); ++m) {
        auto* header = answers_->verticalHeaderItem(m);
        header->setForeground(modelColor(m));
        const ndr::Trace* t = trace(m);
        if (!t || t->stepAnswers.empty()) {
            const bool failed = results_.size() > size_t(m) && results_[size_t(m)];
            answers_->setItem(m, 0, item(failed ? tr("error") : example_ ? tr("…") : QString()));
            continue;
        }
        const int last = int(t->stepAnswers.size()) - 1, a = t->stepAnswers[size_t(last)];
        const bool right = a == t->answer;
        auto* ans = item(
            QString::fromStdString(task->symbolName(a)) + (right ? " ✓" : " ✗"),
            right ? tr("right")
                  : tr("wrong: the answer is %1").arg(QString::fromStdString(task->symbolName(t->answer))));
        ans->setBackground(verdictColor(right, false));
        answers_->setItem(m, 0, ans);
        answers_->setItem(m, 1, item(QString::number(t->answerProbability(last), 'f', 3)));
        if (halts) {
            const ndr::HaltingRule rule = haltingRuleOf(m);
            const bool gates = rule.signal == ndr::HaltSignal::Gates;
            const int h = ndr::haltingStep(*t, rule);
            const ndr::ModelFacts config = ndr::factsOf(models[size_t(m)].config);
            if (h < 0) {
                answers_->setItem(m, 2,
                                  gates
                                      ? item(tr("no gates"), tr("A residual or recurrent model has no gates "
                                                                "to halt on"))
                                      : item(tr("no change"), tr("A recurrent model records no change per "
                                                                 "step to halt on")));
            } else {
                const QString still = gates ? tr("Every gate stays below the threshold after step %1")
                                            : tr("No step after step %1 moves a position by the threshold "
                                                 "or more");
                QString tip = h < t->steps ? still.arg(h)
                              : gates      ? tr("A gate is still open at the last step")
                                           : tr("The last step still moves a position");
                if (rule.learned)
                    tip = h < t->steps ? tr("%1 halts by its own rule (%2): every position has halted "
                                            "after step %3")
                                             .arg(modelName(models[size_t(m)]))
                                             .arg(QString::fromStdString(config.learnedHalting))
                                             .arg(h)
                                       : tr("%1 halts by its own rule (%2): a position runs to the last step")
                                             .arg(modelName(models[size_t(m)]))
                                             .arg(QString::fromStdString(config.learnedHalting));
                // A model that halts at evaluation stops as it goes, without looking ahead.
                if (!rule.learned && config.haltThreshold > 0) {
                    const int stop = ndr::stopStep(*t, {config.haltOn, float(config.haltThreshold)});
                    if (stop >= 0)
                        tip += tr("\nAt evaluation (%1 below %2, as it goes) it stops after step %3")
                                   .arg(config.haltOn == ndr::HaltSignal::Gates ? tr("gates") : tr("change"))
                                   .arg(config.haltThreshold, 0, 'f', 2)
                                   .arg(stop);
                }
                answers_->setItem(m, 2,
                                  item(h < t->steps ? QString::number(h) : tr("never (%1)").arg(h), tip));
                const int ah = t->stepAnswers[size_t(h)];
                auto* then = item(QString::fromStdString(task->symbolName(ah)));
                then->setBackground(verdictColor(ah == t->answer, false));
                answers_->setItem(m, 3, then);
            }
        }
        if (t->readouts > 1) {
            // One row per readout: the digit it gives and its probability, against the true digit.
            const std::vector<int> want = task->targets(*example_);
            for (int k = 0; k < t->readouts && k < distribution_->rowCount(); ++k) {
                const int d = t->stepReadouts[size_t(last) * t->readouts + k];
                const double p = t->probsAfter(last, k)[d];
                auto* cell = item(QString("%1  %2").arg(d).arg(p, 0, 'f', 2),
                                  d == want[size_t(k)] ? tr("right") : tr("wrong: %1").arg(want[size_t(k)]));
                cell->setData(kBarRole, p);
                cell->setData(kBarColorRole, modelColor(m));
                cell->setBackground(verdictColor(d == want[size_t(k)], false));
                distribution_->setItem(k, m, cell);
            }
            continue;
        }
        for (int s = 0; s < S && s < t->symbols; ++s) {
            const double p = t->probsAfter(last)[s];
            auto* cell = item(QString::number(p, 'f', 3));
            cell->setData(kBarRole, p);
            cell->setData(kBarColorRole, modelColor(m));
            if (s == t->answer) {
                QFont f = cell->font();
                f.setBold(true);
                cell->setFont(f);
                cell->setToolTip(tr("the true answer"));
            }
            distribution_->setItem(s, m, cell);
        }
    }
    for (int s = 0; s < S; ++s)
        if (example_ && s == task->answer(*example_)) {
            QFont f = distribution_->verticalHeaderItem(s)->font();
            f.setBold(true);
            distribution_->verticalHeaderItem(s)->setFont(f);
            distribution_->verticalHeaderItem(s)->setText(symbols[s] + " ✓");
        }
    answers_->resizeColumnsToContents();
    fitHeight(answers_);
    // Every model's name in full: with more models than the side is wide the table scrolls sideways.
    equalColumnWidths(distribution_);
}

void Inspector::fillReadout() {
    const ndr::Task* task = session_.task();
    const auto& models = session_.models();
    readout_->clear();
    const int n = maxStep();
    const bool none =
        std::none_of(results_.begin(), results_.end(), [](const auto& r) { return r != nullptr; });
    if (!task || (n == 0 && none)) {
        readout_->setRowCount(0);
        readout_->setColumnCount(0);
        readout_->hide();
        return;
    }
    readout_->setRowCount(int(models.size()));
    readout_->setColumnCount(n + 1);
    QStringList names, steps;
    for (const auto& m : models)
        names << tr("%1 after step").arg(modelName(m));
    for (int s = 0; s <= n; ++s)
        steps << QString::number(s);
    readout_->setVerticalHeaderLabels(names);
    readout_->setHorizontalHeaderLabels(steps);
    for (int m = 0; m < int(models.size()); ++m) {
        readout_->verticalHeaderItem(m)->setForeground(modelColor(m));
        const ndr::Trace* t = trace(m);
        if (!t)
            continue;
        const ndr::HaltingRule rule = haltingRuleOf(m);
        const int h = halting() ? ndr::haltingStep(*t, rule) : -1;
        for (int s = 0; s < int(t->stepAnswers.size()) && s <= n; ++s) {
            const int a = t->stepAnswers[size_t(s)];
            const double p = t->answerProbability(s);
            auto* cell = item(QString::fromStdString(task->symbolName(a)),
                              tr("If %1 stopped after step %2 it would answer %3 (p %4)")
                                  .arg(modelName(models[size_t(m)]))
                                  .arg(s)
                                  .arg(QString::fromStdString(task->symbolName(a)))
                                  .arg(p, 0, 'f', 3));
            cell->setData(Qt::UserRole, a == t->answer);
            if (s == h && h < t->steps) {
                cell->setText(cell->text() + tr(" ■"));
                cell->setToolTip(cell->toolTip() +
                                 (rule.learned ? tr("; every position has halted after this step (its own "
                                                    "rule)")
                                  : rule.signal == ndr::HaltSignal::Gates
                                      ? tr("; the gates close after this step (halting)")
                                      : tr("; the columns stand still after this step (halting)")));
            }
            readout_->setItem(m, s, cell);
        }
    }
    readout_->resizeColumnsToContents();
    readout_->show();
    fitHeight(readout_);
    markReadoutStep();
}

void Inspector::markReadoutStep() {
    const int current = slider_->value();
    for (int c = 0; c < readout_->columnCount(); ++c) {
        if (auto* header = readout_->horizontalHeaderItem(c)) {
            QFont f = header->font();
            f.setBold(c == current);
            header->setFont(f);
            header->setText(c == current ? QString("▶%1").arg(c) : QString::number(c));
        }
        for (int r = 0; r < readout_->rowCount(); ++r)
            if (auto* i = readout_->item(r, c)) {
                i->setBackground(verdictColor(i->data(Qt::UserRole).toBool(), c == current));
                QFont f = i->font();
                f.setBold(c == current);
                i->setFont(f);
            }
    }
}

} // namespace ndrui
