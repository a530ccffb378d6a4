// Summary, run buttons and per-model progress bars (see runcontrols.h).
#include "ui/panel/run_controls.h"

#include "ui/common/palette.h"

#include <QAction>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QStyle>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>

namespace ndrui {

namespace {

QString formatEta(double seconds) {
    if (!std::isfinite(seconds) || seconds < 0)
        return QStringLiteral("-");
    const long long t = std::llround(seconds);
    const long long h = t / 3600, m = t % 3600 / 60, s = t % 60;
    if (h > 0)
        return QString("%1:%2:%3").arg(h).arg(m, 2, 10, QChar('0')).arg(s, 2, 10, QChar('0'));
    return QString("%1:%2").arg(m).arg(s, 2, 10, QChar('0'));
}

// QProgressBar's format expands %p, %v and %m and has no escape for '%' (Qt 6.4); a status such as
// "diverged: ..." is free text, so the bar shows a plain string instead.
class TextProgressBar : public QProgressBar {
public:
    void setPlainText(const QString& text) {
        text_ = text;
        update();
    }
    QString text() const override { return text_; }

private:
    QString text_;
};

} // namespace

RunControls::RunControls(QWidget* parent) : QWidget(parent) {
    auto* v = new QVBoxLayout(this);
    v->setContentsMargins(2, 0, 2, 0);
    v->setSpacing(4);
    summary_ = new QLabel;
    summary_->setObjectName("summary");
    summary_->setWordWrap(true);
    summary_->setTextFormat(Qt::PlainText);
    v->addWidget(summary_);

    auto* buttons = new QHBoxLayout;
    start_ = new QPushButton(style()->standardIcon(QStyle::SP_MediaPlay), tr("Start"));
    start_->setObjectName("start");
    start_->setToolTip(tr("Train every model at once, each on its own thread (Ctrl+Return)."));
    pauseResume_ = new QPushButton;
    pauseResume_->setObjectName("pauseResume");
    stop_ = new QPushButton(style()->standardIcon(QStyle::SP_MediaStop), tr("Stop"));
    stop_->setObjectName("stop");
    stop_->setToolTip(tr("Stop training; what was trained so far is kept (Ctrl+.)."));
    for (QPushButton* b : {start_, pauseResume_, stop_})
        buttons->addWidget(b);
    v->addLayout(buttons);
    connect(start_, &QPushButton::clicked, this, &RunControls::startClicked);
    connect(pauseResume_, &QPushButton::clicked, this, &RunControls::pauseResumeClicked);
    connect(stop_, &QPushButton::clicked, this, &RunControls::stopClicked);
    startAction_ = new QAction(start_->icon(), tr("&Start"), this);
    startAction_->setObjectName("startAction");
    startAction_->setShortcut(QKeySequence(tr("Ctrl+Return")));
    pauseResumeAction_ = new QAction(this);
    pauseResumeAction_->setObjectName("pauseResumeAction");
    pauseResumeAction_->setShortcut(QKeySequence(tr("Ctrl+P")));
    stopAction_ = new QAction(stop_->icon(), tr("S&top"), this);
    stopAction_->setObjectName("stopAction");
    stopAction_->setShortcut(QKeySequence(tr("Ctrl+.")));
    connect(startAction_, &QAction::triggered, this, &RunControls::startClicked);
    connect(pauseResumeAction_, &QAction::triggered, this, &RunControls::pauseResumeClicked);
    connect(stopAction_, &QAction::triggered, this, &RunControls::stopClicked);

    barsLayout_ = new QVBoxLayout;
    barsLayout_->setSpacing(3);
    v->addLayout(barsLayout_);
    setButtons(false, false, false);
}

void RunControls::setSummary(const QString& text, bool isProblem) {
    summary_->setText(text);
    QPalette p = palette();
    if (isProblem)
        p.setColor(QPalette::WindowText, isDark(p) ? QColor(255, 120, 110) : QColor(190, 25, 25));
    summary_->setPalette(p);
}

void RunControls::setButtons(bool running, bool paused, bool startable) {
    start_->setEnabled(!running && startable);
    pauseResume_->setEnabled(running);
    pauseResume_->setText(paused ? tr("Resume") : tr("Pause"));
    pauseResume_->setIcon(style()->standardIcon(paused ? QStyle::SP_MediaPlay : QStyle::SP_MediaPause));
    pauseResume_->setToolTip(paused ? tr("Continue training from where it paused (Ctrl+P).")
                                    : tr("Pause training; Resume continues where it paused (Ctrl+P)."));
    stop_->setEnabled(running);
    startAction_->setEnabled(start_->isEnabled());
    pauseResumeAction_->setEnabled(running);
    pauseResumeAction_->setText(paused ? tr("&Resume") : tr("&Pause"));
    pauseResumeAction_->setIcon(pauseResume_->icon());
    stopAction_->setEnabled(running);
}

QList<QAction*> RunControls::runActions() const {
    return {startAction_, pauseResumeAction_, stopAction_};
}

void RunControls::focusStart() {
    if (start_->isEnabled() && isVisible())
        start_->setFocus(Qt::OtherFocusReason);
}

void RunControls::setModels(const QStringList& names, int steps) {
    names_ = names;
    steps_ = steps;
    if (int(bars_.size()) != names.size()) {
        for (QProgressBar* b : bars_)
            delete b;
        bars_.clear();
        progress_.assign(size_t(names.size()), Progress{});
        for (int i = 0; i < names.size(); ++i) {
            auto* bar = new TextProgressBar;
            bar->setObjectName(QString("progress[%1]").arg(i));
            bar->setTextVisible(true);
            bar->setAlignment(Qt::AlignCenter);
            QPalette p = bar->palette();
            p.setColor(QPalette::Highlight, modelColor(i));
            p.setColor(QPalette::HighlightedText, Qt::white);
            bar->setPalette(p);
            barsLayout_->addWidget(bar);
            bars_.push_back(bar);
        }
    }
    for (int i = 0; i < int(bars_.size()); ++i)
        render(i);
}

void RunControls::setModelProgress(int model, int step, int totalSteps, double stepsPerSecond,
                                   double etaSeconds, const ndr::ModelStatus& status, double evaluating) {
    if (model < 0 || model >= int(progress_.size()))
        return;
    progress_[size_t(model)] =
        Progress{step, totalSteps, stepsPerSecond, etaSeconds, status, evaluating, true};
    render(model);
}

void RunControls::render(int model) {
    const Progress& p = progress_[size_t(model)];
    const QString name = model < names_.size() ? names_[model] : tr("model %1").arg(model + 1);
    const int total = p.reported ? p.total : steps_;
    const int step = p.reported ? p.step : 0;
    QString text = QString("%1  %2/%3").arg(name).arg(step).arg(total);
    if (p.reported && p.status.state != ndr::ModelState::Training)
        text += "  " + QString::fromStdString(ndr::statusText(p.status));
    else if (p.reported && p.evaluating >= 0)
        text += tr("  evaluating %1%").arg(int(p.evaluating * 100));
    else if (p.reported && p.stepsPerSecond > 0)
        text += QString("  %1 steps/s  ETA %2")
                    .arg(p.stepsPerSecond, 0, 'f', p.stepsPerSecond < 10 ? 1 : 0)
                    .arg(formatEta(p.etaSeconds));
    auto* bar = static_cast<TextProgressBar*>(bars_[size_t(model)]);
    bar->setRange(0, std::max(1, total));
    bar->setValue(std::clamp(step, 0, std::max(1, total)));
    bar->setPlainText(text);
    bar->setToolTip(text);
}

} // namespace ndrui
