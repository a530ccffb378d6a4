// The inspector tab (see inspector.h): layout, run changes and the session's traces of the expression.
// Stepping lives in inspector_steps.cpp, tables in inspector_tables.cpp, frames in inspector_frames.cpp,
// notes in inspector_notes.cpp, the halting controls in inspector_halting.cpp.
#include "ui/inspector/inspector.h"

#include "core/config/model_kind.h"
#include "core/train/halting.h"
#include "ui/inspector/expression_input.h"
#include "ui/inspector/model_step_view.h"
#include "ui/inspector/step_count_box.h"
#include "ui/inspector/steps_needed.h"
#include "ui/training/training_session.h"

#include <QComboBox>
#include <QEvent>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QScrollArea>
#include <QSlider>
#include <QSpinBox>
#include <QSplitter>
#include <QStackedWidget>
#include <QTableWidget>
#include <QTimer>
#include <QVBoxLayout>

namespace ndrui {

namespace {

QTableWidget* makeTable(const QString& name, QWidget* parent) {
    auto* t = new QTableWidget(parent);
    t->setObjectName(name);
    t->setEditTriggers(QAbstractItemView::NoEditTriggers);
    t->setSelectionMode(QAbstractItemView::NoSelection);
    t->setFocusPolicy(Qt::NoFocus);
    t->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    t->verticalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    return t;
}

} // namespace

Inspector::Inspector(TrainingSession& session, QWidget* parent) : QWidget(parent), session_(session) {
    pages_ = new QStackedWidget(this);
    hint_ = new QLabel(tr("Start or open a run to inspect it."), pages_);
    hint_->setObjectName("inspector.hint");
    hint_->setAlignment(Qt::AlignCenter);
    hint_->setWordWrap(true);
    auto* content = new QWidget(pages_);
    pages_->addWidget(hint_);
    pages_->addWidget(content);
    auto* outer = new QVBoxLayout(this);
    outer->setContentsMargins(0, 0, 0, 0);
    outer->addWidget(pages_);

    input_ = new ExpressionInput(content);
    truth_ = new QLabel(content);
    truth_->setObjectName("inspector.truth");
    truth_->setTextFormat(Qt::RichText);
    status_ = new QLabel(content);
    status_->setObjectName("inspector.status");
    status_->setTextFormat(Qt::RichText);
    status_->setWordWrap(true);
    status_->setMinimumWidth(480); // see cell_ below
    status_->hide();               // shown when there is something to say
    tokens_ = makeTable("inspector.tokens", content);
    tokens_->setToolTip(tr("Each position's token and its true value: the symbol after applying the "
                           "functions up to there"));
    tokens_->setVerticalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    tokens_->horizontalHeader()->hide();
    keepFitted(tokens_);

    // Step controls: slider, play/pause, speed, head, steps to run (halting: makeHaltingRow).
    slider_ = new QSlider(Qt::Horizontal, content);
    slider_->setObjectName("inspector.step");
    slider_->setRange(0, 0);
    slider_->setPageStep(1);
    slider_->setTickPosition(QSlider::TicksBelow);
    stepLabel_ = new QLabel(content);
    stepLabel_->setObjectName("inspector.stepLabel");
    stepLabel_->setMinimumWidth(90);
    play_ = new QPushButton(tr("Play"), content);
    play_->setObjectName("inspector.play");
    speed_ = new QComboBox(content);
    speed_->setObjectName("inspector.speed");
    for (double s : {0.25, 0.5, 1.0, 2.0, 4.0})
        speed_->addItem(QString("%1×").arg(s), s);
    speed_->setCurrentIndex(2);
    speed_->setToolTip(tr("Playback speed (1× is 0.7 s a step)"));
    head_ = new QComboBox(content);
    head_->setObjectName("inspector.head");
    head_->setToolTip(tr("Every head (their mean in heatmaps, each in its colour in routing lines), or one"));
    picture_ = new QComboBox(content);
    picture_->setObjectName("inspector.picture");
    picture_->addItem(tr("heatmaps"), int(StepPicture::Heatmap));
    picture_->addItem(tr("routing lines"), int(StepPicture::Lines));
    picture_->addItem(tr("routing, every step"), int(StepPicture::AllSteps));
    picture_->setToolTip(tr("Attention as target x source heatmaps, or as lines from each source token to "
                            "each target token (opacity = weight) for this step or every step side by side"));
    steps_ = new StepCountBox(content);
    steps_->setObjectName("inspector.steps");
    steps_->setToolTip(tr("Steps to run each model for; more than trained works for shared layers (NDR)"));
    auto* playback = new QHBoxLayout;
    playback->addWidget(new QLabel(tr("Step"), content));
    playback->addWidget(slider_, 1);
    playback->addWidget(stepLabel_);
    playback->addWidget(play_);
    playback->addWidget(speed_);
    auto* controls = new QHBoxLayout;
    controls->addWidget(new QLabel(tr("Show"), content));
    controls->addWidget(picture_);
    controls->addSpacing(12);
    controls->addWidget(new QLabel(tr("Heads"), content));
    controls->addWidget(head_);
    controls->addSpacing(12);
    controls->addWidget(new QLabel(tr("Run"), content));
    controls->addWidget(steps_);
    controls->addStretch(1);

    // One column per model; with more models than the tab is wide, the columns scroll sideways
    // instead of widening the window past the screen.
    auto* views = new QWidget;
    viewsRow_ = new QHBoxLayout(views);
    viewsRow_->setContentsMargins(0, 0, 0, 0);
    auto* viewsScroll = new QScrollArea(content);
    viewsScroll->setObjectName("inspector.viewsScroll");
    viewsScroll->setWidgetResizable(true);
    viewsScroll->setFrameShape(QFrame::NoFrame);
    viewsScroll->setWidget(views);
    cell_ = new QLabel(tr("Click a heatmap, gate or change cell to see what it is."), content);
    cell_->setObjectName("inspector.cell");
    cell_->setTextFormat(Qt::RichText);
    cell_->setWordWrap(true);
    // A wrapped label asks for the height of its text at its minimum width: at a word's width that is a
    // dozen lines, which would make the whole tab too tall for a laptop screen.
    cell_->setMinimumWidth(480);
    readout_ = makeTable("inspector.readout", content);
    readout_->setToolTip(tr("The answer the readout gives if the model stops after each step"));
    readout_->setVerticalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    keepFitted(readout_);

    // The side: answers, distribution, steps needed.
    answers_ = makeTable("inspector.answers", content);
    answers_->setVerticalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    distribution_ = makeTable("inspector.distribution", content);
    distribution_->setToolTip(tr("Each model's probability of every symbol after its last step"));
    distribution_->viewport()->installEventFilter(this); // its columns keep equal widths (eventFilter)
    stepsNeeded_ = new StepsNeededPanel(session_, content);
    auto* side = new QWidget(content);
    auto* sideLayout = new QVBoxLayout(side);
    sideLayout->setContentsMargins(0, 0, 0, 0);
    auto* answersBox = new QGroupBox(tr("Answers"), side);
    auto* answersLayout = new QVBoxLayout(answersBox);
    answersLayout->addLayout(makeHaltingRow(content));
    answersLayout->addWidget(answers_);
    answersLayout->addWidget(distribution_, 1);
    auto* stepsBox = new QGroupBox(tr("Steps needed"), side);
    (new QVBoxLayout(stepsBox))->addWidget(stepsNeeded_);
    sideLayout->addWidget(answersBox, 1);
    sideLayout->addWidget(stepsBox, 1);

    auto* main = new QWidget(content);
    auto* mainLayout = new QVBoxLayout(main);
    mainLayout->setContentsMargins(0, 0, 0, 0);
    mainLayout->addWidget(truth_);
    mainLayout->addWidget(status_);
    mainLayout->addWidget(tokens_);
    mainLayout->addLayout(playback);
    mainLayout->addLayout(controls);
    mainLayout->addWidget(viewsScroll, 1);
    mainLayout->addWidget(cell_);
    mainLayout->addWidget(readout_);

    auto* split = new QSplitter(Qt::Horizontal, content);
    split->addWidget(main);
    split->addWidget(side);
    split->setStretchFactor(0, 1);
    split->setStretchFactor(1, 0);
    split->setSizes({920, 380});
    side->setMinimumWidth(280);

    auto* layout = new QVBoxLayout(content);
    layout->addWidget(input_);
    layout->addWidget(split, 1);

    requestTimer_ = new QTimer(this);
    requestTimer_->setSingleShot(true);
    requestTimer_->setInterval(120); // typing "101 b d h" asks once, not for every valid prefix
    playTimer_ = new QTimer(this);

    connect(input_, &ExpressionInput::exampleChanged, this, &Inspector::onExampleChanged);
    connect(requestTimer_, &QTimer::timeout, this, &Inspector::retrace);
    connect(&session_, &TrainingSession::traced, this, &Inspector::onTraced);
    connect(&session_, &TrainingSession::runChanged, this, &Inspector::resetRun);
    // While training, each evaluation re-traces the expression shown, so the picture follows the
    // weights (the titles name their step).
    connect(&session_, &TrainingSession::progressed, this, [this](const SnapshotPtr& s) {
        if (s && s->eval && example_ && isVisible())
            requestTimer_->start();
    });
    connect(slider_, &QSlider::valueChanged, this, &Inspector::showStep);
    connect(play_, &QPushButton::clicked, this, &Inspector::togglePlay);
    connect(playTimer_, &QTimer::timeout, this, &Inspector::tick);
    connect(speed_, &QComboBox::currentIndexChanged, this,
            [this] { playTimer_->setInterval(int(700 / speed_->currentData().toDouble())); });
    connect(head_, &QComboBox::currentIndexChanged, this, [this] {
        for (auto* v : views_)
            v->setHead(head_->currentData().toInt());
    });
    connect(picture_, &QComboBox::currentIndexChanged, this, [this] {
        for (auto* v : views_)
            v->setPicture(StepPicture(picture_->currentData().toInt()));
        clearCell();
    });
    connect(steps_, &QSpinBox::valueChanged, this, [this](int n) {
        stepsNeeded_->setSteps(n);
        onExampleChanged();
    });
    playTimer_->setInterval(700);
    resetRun();
}

Inspector::~Inspector() = default;

void Inspector::changeEvent(QEvent* event) {
    QWidget::changeEvent(event);
    if (event->type() == QEvent::PaletteChange && distribution_ && !views_.empty()) {
        fillAnswers();
        fillReadout();
        markReadoutStep();
    }
}

void Inspector::showEvent(QShowEvent* event) {
    QWidget::showEvent(event);
    fillTokens();
    fillAnswers();
    fillReadout();
}

void Inspector::setPicture(StepPicture picture) {
    picture_->setCurrentIndex(picture_->findData(int(picture)));
}

StepPicture Inspector::picture() const {
    return StepPicture(picture_->currentData().toInt());
}

void Inspector::resetRun() {
    playTimer_->stop();
    play_->setText(tr("Play"));
    requestTimer_->stop();
    requestId_ = 0; // answers to requests about the previous run are dropped
    results_.clear();
    example_.reset();
    for (auto* v : views_)
        delete v;
    views_.clear();
    clearCell();
    status_->clear();
    const ndr::Task* task = session_.task();
    const bool weights = session_.hasWeights();
    pages_->setCurrentIndex(task && weights ? 1 : 0);
    hint_->setText(
        task && !weights
            ? tr("This run's weights are missing (%1 not found beside the run file), so its models "
                 "cannot be inspected; the dashboard shows its whole history.")
                  .arg(session_.missingWeights().join(", "))
            : tr("Start or open a run to inspect it."));
    if (!task || !weights) {
        input_->setTask(nullptr);
        stepsNeeded_->reset();
        return;
    }
    input_->setTask(task);

    int trained = 1, asTrained = 1, heads = 1;
    const auto& models = session_.models();
    results_.assign(models.size(), nullptr);
    for (int i = 0; i < int(models.size()); ++i) {
        const ndr::ModelFacts facts = ndr::factsOf(models[size_t(i)].config);
        trained = std::max(trained, facts.steps);
        asTrained = std::max(asTrained, facts.evalSteps);
        heads = std::max(heads, facts.heads);
        auto* v = new ModelStepView(i, modelName(models[size_t(i)]), this);
        v->setPicture(StepPicture(picture_->currentData().toInt()));
        connect(v, &ModelStepView::attentionClicked, this, [this](int m, int s, int t, int src, double w) {
            showCell(m, s, t, src, w, CellKind::Attention);
        });
        connect(v, &ModelStepView::gateClicked, this,
                [this](int m, int s, int p, double g) { showCell(m, s, p, -1, g, CellKind::Gate); });
        connect(v, &ModelStepView::changeClicked, this,
                [this](int m, int s, int p, double c) { showCell(m, s, p, -1, c, CellKind::Change); });
        viewsRow_->addWidget(v, 1);
        views_.push_back(v);
    }
    steps_->blockSignals(true);
    steps_->setRange(0, 4 * trained);
    steps_->setTrained(asTrained); // up from "as trained": one step more than the models run
    steps_->setValue(0);
    steps_->blockSignals(false);
    head_->blockSignals(true);
    head_->clear();
    head_->addItem(tr("all"), -1);
    for (int h = 0; h < heads; ++h)
        head_->addItem(tr("head %1").arg(h + 1), h);
    head_->blockSignals(false);
    stepsNeeded_->setSteps(0);
    thresholdChosen_ = false;
    adoptRunHalting();
    suggestThreshold();
    stepsNeeded_->setRule(haltingRule());
    stepsNeeded_->reset();
    showTraces();
}

void Inspector::onExampleChanged() {
    example_ = input_->example();
    if (!example_) {
        // Late answers about the previous expression must not show under a bad one.
        requestTimer_->stop();
        requestId_ = 0;
        std::fill(results_.begin(), results_.end(), nullptr);
        showTraces();
        return;
    }
    requestTimer_->start();
}

void Inspector::retrace() {
    if (!example_ || !session_.hasRun())
        return;
    suggestThreshold(); // a run in training has newer probes
    requestId_ = session_.requestTrace(*example_, steps_->value());
    std::fill(results_.begin(), results_.end(), nullptr);
    status_->setText(tr("Tracing…"));
    fillTokens();
}

void Inspector::onTraced(const TraceResultPtr& r) {
    // Only the latest request counts: an answer to an older expression is stale.
    if (!r || r->id != requestId_ || requestId_ == 0 || r->model < 0 || r->model >= int(results_.size()))
        return;
    results_[size_t(r->model)] = r;
    showTraces();
    if (tracesComplete())
        emit tracesReady();
}

bool Inspector::tracesComplete() const {
    if (requestId_ == 0 || results_.empty())
        return false;
    return std::all_of(results_.begin(), results_.end(),
                       [](const TraceResultPtr& r) { return r != nullptr; });
}

const ndr::Trace* Inspector::trace(int model) const {
    if (model < 0 || model >= int(results_.size()) || !results_[size_t(model)] ||
        !results_[size_t(model)]->error.isEmpty())
        return nullptr;
    return &results_[size_t(model)]->trace;
}

std::shared_ptr<const ndr::Trace> Inspector::sharedTrace(int model) const {
    if (!trace(model))
        return nullptr;
    const TraceResultPtr& r = results_[size_t(model)];
    return std::shared_ptr<const ndr::Trace>(r, &r->trace);
}

ModelStepView* Inspector::modelView(int model) const {
    return model >= 0 && model < int(views_.size()) ? views_[size_t(model)] : nullptr;
}

int Inspector::maxStep() const {
    int n = 0;
    for (int m = 0; m < int(results_.size()); ++m)
        if (const ndr::Trace* t = trace(m))
            n = std::max(n, t->steps);
    return n;
}

void Inspector::showTraces() {
    QStringList errors;
    for (int m = 0; m < int(views_.size()); ++m) {
        const TraceResultPtr& r = results_[size_t(m)];
        QString note;
        if (r && !r->error.isEmpty()) {
            note = tr("Could not trace: %1").arg(r->error);
            errors << QString("%1: %2").arg(modelName(session_.models()[size_t(m)]), r->error);
        } else if (!r && requestId_ != 0) {
            note = tr("Tracing…");
        } else if (!r) {
            note = tr("Type a valid expression, or draw a random one, to see how this model routes it.");
        }
        views_[size_t(m)]->setTrace(sharedTrace(m), note);
        views_[size_t(m)]->setWeightsStep(trace(m) ? r->weightsStep : -1);
    }
    if (!tracesComplete())
        clearCell(); // a cell of the previous expression no longer names anything shown
    const int n = maxStep();
    const bool atEnd = slider_->value() == slider_->maximum();
    slider_->blockSignals(true);
    slider_->setMaximum(n);
    // A new expression starts at the last step (the answer); so does a longer run when it was there.
    if (atEnd || slider_->value() > n)
        slider_->setValue(n);
    slider_->blockSignals(false);
    if (requestId_ != 0 && tracesComplete()) {
        QStringList lines;
        for (const QString& e : errors)
            lines << QString("<span style='color:#d62728'>%1</span>")
                         .arg(e.toHtmlEscaped().replace("\n", "<br>"));
        lines << shortRoutingNote().toHtmlEscaped();
        lines.removeAll(QString());
        status_->setText(lines.join("<br>"));
    } else if (requestId_ == 0)
        status_->clear();
    status_->setVisible(!status_->text().isEmpty() && status_->text() != tr("Tracing…"));
    fillTokens();
    fillAnswers();
    fillReadout();
    showStep();
}

} // namespace ndrui
