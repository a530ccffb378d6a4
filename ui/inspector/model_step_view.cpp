// One model's attention and gates at a step (see modelstepview.h).
#include "ui/inspector/model_step_view.h"

#include "ui/common/gate_words.h"
#include "ui/common/palette.h"
#include "ui/plots/figure.h"
#include "ui/plots/heatmap_plot.h"
#include "ui/plots/routing_view.h"

#include <QLabel>
#include <QPainter>
#include <QResizeEvent>
#include <QVBoxLayout>
#include <algorithm>
#include <functional>

namespace ndrui {

std::vector<float> attentionAt(const ndr::Trace& trace, int step, int head) {
    const int T = trace.positions;
    std::vector<float> m(size_t(T) * T, 0.0f);
    if (step < 1 || step > trace.steps || trace.heads <= 0 ||
        trace.attention.size() < size_t(trace.steps) * trace.heads * T * T)
        return m;
    const int h0 = head < 0 ? 0 : std::min(head, trace.heads - 1);
    const int h1 = head < 0 ? trace.heads : h0 + 1;
    for (int h = h0; h < h1; ++h)
        for (int i = 0; i < T; ++i)
            for (int j = 0; j < T; ++j)
                m[size_t(i) * T + j] += trace.att(step - 1, h, i, j);
    if (h1 - h0 > 1)
        for (float& v : m)
            v /= float(h1 - h0);
    return m;
}

namespace {

// Row `step` (1..steps) of a (steps, T) record of the trace; zeros for step 0 or an absent record.
std::vector<float> stepRow(const ndr::Trace& trace, const std::vector<float>& values, int step) {
    const size_t T = size_t(trace.positions);
    if (step < 1 || step > trace.steps || values.size() < size_t(trace.steps) * T)
        return std::vector<float>(T, 0.0f);
    return std::vector<float>(values.begin() + ptrdiff_t(size_t(step - 1) * T),
                              values.begin() + ptrdiff_t(size_t(step) * T));
}

} // namespace

std::vector<float> gatesAt(const ndr::Trace& trace, int step) {
    return stepRow(trace, trace.gates, step);
}

std::vector<float> changeAt(const ndr::Trace& trace, int step) {
    return stepRow(trace, trace.change, step);
}

std::vector<float> routingAt(const ndr::Trace& trace, int step) {
    const int T = trace.positions, H = trace.heads;
    std::vector<float> m(size_t(std::max(H, 0)) * T, 0.0f);
    if (step < 1 || step > trace.steps || H <= 0 || trace.routing.size() < size_t(trace.steps) * T * H)
        return m;
    for (int h = 0; h < H; ++h)
        for (int p = 0; p < T; ++p)
            m[size_t(h) * T + p] = trace.route(step - 1, p, h);
    return m;
}

std::vector<float> selectionAt(const ndr::Trace& trace, int step) {
    const int T = trace.positions, K1 = trace.operators;
    std::vector<float> m(size_t(std::max(K1, 0)) * T, 0.0f);
    if (step < 1 || step > trace.steps || K1 <= 0 || trace.selection.size() < size_t(trace.steps) * T * K1)
        return m;
    for (int op = 0; op < K1; ++op)
        for (int p = 0; p < T; ++p)
            m[size_t(op) * T + p] = trace.select(step - 1, p, op);
    return m;
}

QString ModelStepView::recurrentNote(int step) const {
    return step == 0 ? tr("No attention and no copy gates: an LSTM reads one token per step. At step 0 it "
                          "has read nothing yet.")
                     : tr("No attention and no copy gates: an LSTM reads one token per step. After step %1 "
                          "it has read the tokens up to position %1; the readout table shows its answer "
                          "after each.")
                           .arg(step);
}

ModelStepView::ModelStepView(int model, const QString& name, QWidget* parent)
    : QWidget(parent), model_(model), name_(name) {
    title_ = new QLabel(this);
    title_->setTextFormat(Qt::RichText);
    note_ = new QLabel(this);
    note_->setWordWrap(true);
    note_->setMinimumWidth(220); // wrapped at a word's width, a note would be a dozen lines tall
    note_->hide();
    attention_ = new HeatmapPlot(this);
    attention_->setObjectName(QString("inspector.attention.%1").arg(model));
    attention_->setNames(tr("target"), tr("source"), tr("attention"));
    attention_->setMinimumSize(220, 240);
    gates_ = new HeatmapPlot(this);
    gates_->setObjectName(QString("inspector.gates.%1").arg(model));
    gates_->setNames(QString(), tr("position"), tr("gate"));
    // A strip of one row: enough height for the title, one square row of cells and the axis labels
    // (refresh() adds a row's height for the change under the gates).
    gates_->setFixedHeight(150);
    routeMap_ = new HeatmapPlot(this);
    routeMap_->setObjectName(QString("inspector.headRouting.%1").arg(model));
    routeMap_->setNames(tr("head"), tr("position"), tr("routing weight"));
    operators_ = new HeatmapPlot(this);
    operators_->setObjectName(QString("inspector.operators.%1").arg(model));
    operators_->setNames(tr("operator"), tr("position"), tr("selection weight"));
    operators_->hide();
    routing_ = new RoutingView(this);
    routing_->setObjectName(QString("inspector.routing.%1").arg(model));
    routing_->setMinimumSize(220, 240);
    gateNote_ = new QLabel(this);
    gateNote_->setWordWrap(true);
    gateNote_->setAlignment(Qt::AlignHCenter | Qt::AlignTop);
    gateNote_->setFixedHeight(150);
    gateNote_->setMinimumWidth(220); // wrapped at a word's width, the layout would ask for a tall window

    // Grows and shrinks down to its minimum (the heatmap's): never held at its preferred height.
    setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Expanding);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(2);
    layout->addWidget(title_);
    layout->addWidget(note_);
    layout->addWidget(attention_, 1);
    layout->addWidget(routing_, 1);
    layout->addWidget(gates_);
    layout->addWidget(routeMap_);
    layout->addWidget(operators_);
    layout->addWidget(gateNote_);
    layout->addStretch(0);

    connect(attention_, &HeatmapPlot::cellClicked, this,
            [this](int row, int col, double v) { emit attentionClicked(model_, shownStep(), row, col, v); });
    connect(gates_, &HeatmapPlot::cellClicked, this, [this](int row, int col, double v) {
        if (row == changeRow())
            emit changeClicked(model_, shownStep(), col, v);
        else
            emit gateClicked(model_, shownStep(), col, v);
    });
    refresh();
}

void ModelStepView::setTrace(std::shared_ptr<const ndr::Trace> trace, const QString& note) {
    trace_ = std::move(trace);
    note_->setText(note);
    note_->setVisible(!note.isEmpty());
    refresh();
}

void ModelStepView::setWeightsStep(int step) {
    weightsStep_ = step;
    refresh();
}

void ModelStepView::setStep(int step) {
    step_ = std::max(0, step);
    refresh();
}

void ModelStepView::setHead(int head) {
    head_ = head;
    refresh();
}

void ModelStepView::setPicture(StepPicture picture) {
    picture_ = picture;
    refresh();
}

int ModelStepView::changeRow() const {
    if (!trace_ || trace_->change.empty())
        return -1;
    return trace_->gates.empty() ? 0 : 1;
}

int ModelStepView::shownStep() const {
    return trace_ ? std::min(step_, trace_->steps) : 0;
}

void ModelStepView::refresh() {
    const QString color = modelColor(model_).name();
    QString title = QString("<b style='color:%1'>%2</b>").arg(color, name_.toHtmlEscaped());
    if (!trace_) {
        // Nothing to draw: the note says why, rather than an empty map that looks like data.
        title_->setText(title);
        attention_->setVisible(false);
        routing_->setVisible(false);
        gates_->setVisible(false);
        routeMap_->setVisible(false);
        operators_->setVisible(false);
        gateNote_->setVisible(false);
        routing_->setTrace(nullptr);
        return;
    }
    // A trace without heads is a recurrent model's: no attention to map (docs/design.md §5).
    const bool recurrent = trace_->heads <= 0;
    const bool lines = picture_ != StepPicture::Heatmap;
    attention_->setVisible(!recurrent && !lines);
    routing_->setVisible(!recurrent && lines);
    routing_->setTrace(trace_);
    routing_->setStep(shownStep());
    routing_->setHead(head_);
    routing_->setStacked(picture_ == StepPicture::AllSteps);
    const int T = trace_->positions, s = shownStep();
    QStringList tokens;
    for (const std::string& n : trace_->tokenNames)
        tokens << QString::fromStdString(n);
    const QString heads = head_ < 0 ? tr("mean of %n heads", nullptr, trace_->heads)
                                    : tr("head %1 of %2").arg(head_ + 1).arg(trace_->heads);
    title += tr(" — step %1 of %2").arg(s).arg(trace_->steps);
    if (step_ > trace_->steps)
        title += tr(" (its last)");
    if (weightsStep_ >= 0)
        title += "<br><small>" + tr("weights of training step %1").arg(weightsStep_) + "</small>";
    title_->setText(title);
    // One row per head over the positions: a strip like the gates', taller by a row per head.
    const bool routed = !recurrent && !trace_->routing.empty();
    routeMap_->setVisible(routed);
    if (routed) {
        routeMap_->setFixedHeight(std::min(110 + 24 * trace_->heads, 320));
        QStringList headNames;
        for (int h = 0; h < trace_->heads; ++h)
            headNames << tr("h%1").arg(h + 1);
        routeMap_->setTitle(s == 0 ? tr("head routing: none yet") : tr("head routing"));
        routeMap_->setMatrix(trace_->heads, T, routingAt(*trace_, s), headNames, tokens);
    }
    // ThoughtNet: which operator each token chose at this step, the zero operator (keep the state) first.
    const bool selecting = trace_->operators > 0;
    operators_->setVisible(selecting);
    if (selecting) {
        operators_->setFixedHeight(std::min(110 + 24 * trace_->operators, 320));
        QStringList names{tr("zero")};
        for (int op = 1; op < trace_->operators; ++op)
            names << tr("op %1").arg(op);
        operators_->setTitle(s == 0 ? tr("operators: none chosen yet") : tr("operator chosen per token"));
        operators_->setMatrix(trace_->operators, T, selectionAt(*trace_, s), names, tokens);
    }
    if (recurrent) {
        gates_->setVisible(false);
        gateNote_->setText(recurrentNote(s));
        gateNote_->setVisible(true);
        return;
    }
    gateNote_->setText(tr("No copy gates: a residual layer rewrites every column at every step."));
    attention_->setTitle(s == 0 ? tr("attention: none yet (step 0 is the embeddings)")
                                : tr("attention, %1").arg(heads));
    attention_->setMatrix(T, T, attentionAt(*trace_, s, head_), tokens, tokens);
    const bool gated = !trace_->gates.empty(), changes = changeRow() >= 0;
    // The routing picture fills its token boxes with the gates, so it needs no strip; a trace of an
    // older run file may have neither gates nor change, and a residual model then gets the note.
    gates_->setVisible((gated || changes) && !lines);
    gateNote_->setVisible(!gated && !changes);
    if (gated || changes) {
        std::vector<float> rows;
        QStringList names;
        const GateWords words = gateWords(trace_->gateMeaning);
        const QString& gateName = words.row;
        if (gated) {
            rows = gatesAt(*trace_, s);
            names << gateName;
        }
        if (changes) {
            const std::vector<float> c = changeAt(*trace_, s);
            rows.insert(rows.end(), c.begin(), c.end());
            names << tr("change");
        }
        QString title = tr("change |Δh| / |h| (no copy gates)");
        if (gated)
            title = changes ? tr("%1, change").arg(words.plural) : words.title;
        gates_->setTitle(s == 0 ? (gated ? tr("gates: none yet") : tr("change: none yet")) : title);
        gates_->setNames(QString(), tr("position"),
                         gated && changes ? tr("%1, change").arg(gateName)
                                          : (gated ? gateName : tr("change")));
        gates_->setFixedHeight(150 + (int(names.size()) - 1) * 24);
        gates_->setMatrix(int(names.size()), T, rows, names, tokens);
    }
}

void ModelStepView::changeEvent(QEvent* event) {
    QWidget::changeEvent(event);
    if (event->type() == QEvent::PaletteChange)
        refresh();
}

void ModelStepView::resizeEvent(QResizeEvent* event) {
    QWidget::resizeEvent(event);
    // The heatmap's cells are square, so height beyond about its width stays blank: capped there, the
    // strips under it sit at the same height in every model's column (the columns are equally wide),
    // and the space left over goes below them.
    attention_->setMaximumHeight(std::max(attention_->minimumHeight(), width()));
}

void ModelStepView::paint(QPainter& p, QSize size) {
    p.fillRect(QRect(QPoint(0, 0), size), palette().color(QPalette::Window));
    QFont f = font();
    f.setBold(true);
    p.save();
    p.setFont(f);
    const int titleH = QFontMetrics(f).height() + 8;
    const bool lines = picture_ != StepPicture::Heatmap;
    const int gateH =
        trace_ && trace_->heads > 0 && !lines && (!trace_->gates.empty() || !trace_->change.empty())
            ? std::max(90, size.height() / 5)
            : 0;
    const int routeH =
        trace_ && trace_->heads > 0 && !trace_->routing.empty() ? std::max(120, size.height() / 4) : 0;
    p.setPen(modelColor(model_));
    QString caption = name_;
    if (trace_)
        caption += tr(" — step %1 of %2").arg(shownStep()).arg(trace_->steps);
    p.drawText(QRect(0, 0, size.width(), titleH), Qt::AlignCenter, caption);
    p.restore();
    const QSize attSize(size.width(), size.height() - titleH - gateH - routeH);
    // Each part at its place, drawn by its own view's paint function.
    const auto at = [&p](int y, const std::function<void()>& draw) {
        p.save();
        p.translate(0, y);
        draw();
        p.restore();
    };
    if (trace_ && trace_->heads <= 0) {
        p.setPen(palette().color(QPalette::WindowText));
        p.setFont(font());
        p.drawText(QRect(QPoint(0, titleH), attSize).adjusted(16, 16, -16, -16),
                   Qt::AlignHCenter | Qt::AlignTop | Qt::TextWordWrap, recurrentNote(shownStep()));
    } else if (attSize.height() > 20) {
        at(titleH, [&] {
            if (lines)
                routing_->paint(p, attSize);
            else
                attention_->paint(p, attSize);
        });
    }
    if (gateH > 20)
        at(size.height() - gateH - routeH, [&] { gates_->paint(p, QSize(size.width(), gateH)); });
    if (routeH > 20)
        at(size.height() - routeH, [&] { routeMap_->paint(p, QSize(size.width(), routeH)); });
}

QImage ModelStepView::render(QSize size) {
    return paintImage({size}, [this](QPainter& p, QSize s) { paint(p, s); });
}

} // namespace ndrui
