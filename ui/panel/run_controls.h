// The foot of the experiment panel: a summary line, Start / Pause-Resume / Stop, and one progress bar
// per model ("NDR  1200/6000  105 steps/s  ETA 0:46"). It shows what it is told; the panel decides.
#pragma once

#include "core/records/records.h"

#include <QList>
#include <QStringList>
#include <QWidget>
#include <vector>

class QAction;
class QLabel;
class QProgressBar;
class QPushButton;
class QVBoxLayout;

namespace ndrui {

class RunControls : public QWidget {
    Q_OBJECT
public:
    explicit RunControls(QWidget* parent = nullptr);

    void setSummary(const QString& text, bool isProblem);
    // running: a run is going (training or paused); paused: the toggle reads Resume; startable: Start may
    // be clicked when nothing runs.
    void setButtons(bool running, bool paused, bool startable);
    // Puts the keyboard focus on Start (when it can take it).
    void focusStart();
    // Start, Pause/Resume and Stop as actions with keyboard shortcuts (Ctrl+Return, Ctrl+P, Ctrl+.), for
    // a menu: enabled and named as the buttons are, and triggering what they do.
    QList<QAction*> runActions() const;

    // The configured models: names, and the steps a bar shows before progress is reported. Keeps the
    // reported progress while the number of models is unchanged.
    void setModels(const QStringList& names, int steps);
    // While the model trains the bar shows speed and ETA, or how much of an evaluation under way is
    // done (`evaluating` in (0, 1]; -1: none); otherwise its status says why it is not moving.
    void setModelProgress(int model, int step, int totalSteps, double stepsPerSecond, double etaSeconds,
                          const ndr::ModelStatus& status, double evaluating = -1);

signals:
    void startClicked();
    void pauseResumeClicked();
    void stopClicked();

private:
    struct Progress {
        int step = 0, total = 0;
        double stepsPerSecond = 0, etaSeconds = -1;
        ndr::ModelStatus status;
        double evaluating = -1;
        bool reported = false; // false until setModelProgress: the bar shows the configured steps
    };
    void render(int model);

    QLabel* summary_ = nullptr;
    QPushButton* start_ = nullptr;
    QPushButton* pauseResume_ = nullptr;
    QPushButton* stop_ = nullptr;
    QAction* startAction_ = nullptr;
    QAction* pauseResumeAction_ = nullptr;
    QAction* stopAction_ = nullptr;
    QVBoxLayout* barsLayout_ = nullptr;
    std::vector<QProgressBar*> bars_;
    std::vector<Progress> progress_;
    QStringList names_;
    int steps_ = 0;
};

} // namespace ndrui
