// The main window: wires the experiment panel, the dashboard and the inspector to the training
// session, and holds the menus, the status bar, recent runs and the remembered layout. It owns no
// behaviour of its own beyond that wiring.
#pragma once

#include "ui/common/export_dialog.h"
#include "ui/shell/recent_runs.h"
#include "ui/training/training_session.h"

#include <QMainWindow>
#include <QTimer>
#include <functional>

class QAction;
class QDockWidget;
class QLabel;
class QMenu;
class QTabWidget;

namespace ndrui {

class CompareView;
class Dashboard;
class ExperimentPanel;
class Inspector;

class MainWindow : public QMainWindow {
    Q_OBJECT

public:
    // `persistent`: read and write settings (window layout, last configuration, recent runs).
    explicit MainWindow(bool persistent = true, QWidget* parent = nullptr);
    ~MainWindow() override;

    TrainingSession& session() { return session_; }
    ExperimentPanel& panel() { return *panel_; }
    Dashboard& dashboard() { return *dashboard_; }
    Inspector& inspector() { return *inspector_; }
    CompareView& compare() { return *compare_; }

    // What the panel's Start does (TrainingSession::startOrContinue); on failure shows the message.
    void startTraining(const ndr::RunConfig& config);
    // Start with the configuration the panel shows.
    void startTraining();
    // Fills the experiment panel with `config` (e.g. a preset).
    void showConfig(const ndr::RunConfig& config);
    // Opens a run file; on failure shows the message and leaves the current run as it was. A run
    // that another process trains opens read-only and follows that process's saves; the title and
    // the status bar say who trains it and when it last saved.
    bool openRun(const QString& file);
    // Saves the run to `file` (asks for a file when empty); the answer comes in the status bar.
    void saveRun(const QString& file = {});
    // Exports the dashboard (view PNGs, the whole dashboard, frames and the training GIF) into `folder`,
    // and the inspector's steps (frames and GIF) into folder/inspector when it shows an expression;
    // asks before replacing files unless `overwrite` (without asking, see setAskBeforeDiscarding, it
    // refuses). Says where the files went in the status bar; on failure says why in *error when given.
    // The formats, style and colours are the export choice's (the dialog's last, PNG in the screen's
    // style and the app's colours before it). Nothing is written into a folder whose run another
    // process trains.
    bool exportTo(const QString& folder, bool overwrite, QString* error = nullptr);
    const ExportChoice& exportChoice() const { return exportChoice_; }
    void setExportChoice(const ExportChoice& choice) { exportChoice_ = choice; }
    // The colours of every view (View > Colour-blind-safe colours), remembered when persistent.
    void setColourScheme(ColourScheme scheme);
    // Redraws the dashboard now instead of at the next coalesced redraw (for tests and exports).
    void redrawNow();

    // For scripted use (ndr-studio's options) and tests.
    void showDashboard(); // brings the dashboard tab to the front
    void showInspector(); // brings the inspector tab to the front
    void showCompare();   // brings the Compare tab to the front
    // The inspector on an expression typed in the run's notation, or on a random one of `depth`. Returns
    // what is wrong with it (as shown under the field), empty when it is a valid expression.
    QString inspectExpression(const QString& text);
    QString inspectRandom(int depth);
    void setInspectorStep(int step); // the step the inspector shows
    // Redraws and saves an image of the window to `file`; false when it cannot be written.
    bool screenshot(const QString& file);
    const RecentRuns& recentRuns() const { return recent_; }
    // Whether the window asks before closing or replacing a run with unsaved training ("Save
    // changes?") and whether Start on a run it could continue asks "Continue" or "New run". On by
    // default; ndr-studio's scripted options turn it off.
    void setAskBeforeDiscarding(bool ask) { ask_ = ask; }
    // Where runs with unsaved training are kept while they train (TrainingSession::setRecoveryFolder);
    // ndr-studio uses a "recovery" folder in the user's application data unless --no-settings.
    void setRecoveryFolder(const QString& folder, int intervalMs = 0);
    // For each run left in the recovery folder by a window that closed without saving it (a crash, a
    // kill), asks whether to open it (then Save asks where it goes), discard it or keep it for later.
    void offerRecovery();
    // An error no part of the window could handle (an exception out of an event handler): the
    // unsaved run goes into its recovery copy, and a message that does not block says what happened
    // and where the copy is. The window and the training go on.
    void reportUnhandledError(const QString& what);

protected:
    void closeEvent(QCloseEvent* event) override;
    void dragEnterEvent(QDragEnterEvent* event) override;
    void dropEvent(QDropEvent* event) override;

private:
    void createMenus();
    // Runs `then` once the run shown may be closed or replaced (`action` says by what, for the
    // question): at once when nothing is unsaved or asking is off; after the save when the user picks
    // Save; never on Cancel or when the save fails.
    void afterSaveOrDiscard(const QString& action, std::function<void()> then);
    // "Save changes?" before `action` ("closing"): QMessageBox::Save, Discard or Cancel.
    int askToSave(const QString& action);
    // The panel's Start: continue the run shown or start a new one, asking where both make sense.
    void onStartRequested(const ndr::RunConfig& config);
    void newRun();
    // Starts saving (asking for a file when the run has none); false when no save was started.
    bool startSave(const QString& file);
    void showModelProgress(int model);
    void onProgress(const SnapshotPtr& s);
    void onStateChanged(TrainingSession::State state);
    void onRunChanged();
    void onFollowChanged();
    // "trained by pid 1234 on host, last save 10:42" while the run shown is followed; empty otherwise.
    QString followedText() const;
    void scheduleRedraw();
    void updateTitle();
    void addRecent(const QString& file);
    void openRecent(const QString& file);
    void rebuildRecentMenu();
    void showError(const QString& title, const QString& message);
    void openDialog();
    // The panel, progress bars and status bar after the session opened `file`.
    void showOpenedRun(const QString& file, bool recovered);
    void chooseAndOpen();
    void exportDialog();
    void about();

    bool persistent_;
    QString recoveryFolder_;
    TrainingSession session_;
    RecentRuns recent_;
    ExperimentPanel* panel_ = nullptr;
    Dashboard* dashboard_ = nullptr;
    Inspector* inspector_ = nullptr;
    CompareView* compare_ = nullptr;
    QTabWidget* tabs_ = nullptr;
    QDockWidget* panelDock_ = nullptr;
    QMenu* recentMenu_ = nullptr;
    QAction* saveAction_ = nullptr;
    QAction* saveAsAction_ = nullptr;
    QAction* exportAction_ = nullptr;
    QLabel* statusState_ = nullptr;
    QTimer redrawTimer_;
    bool closeAfterSave_ = false;
    bool closeConfirmed_ = false; // the user chose to close: no second question after the save
    bool ask_ = true;
    std::function<void()> afterSave_; // what the user asked for once the pending save is written
    ExportChoice exportChoice_;
    QAction* colourBlindAction_ = nullptr;
    bool wasFollowing_ = false;
};

} // namespace ndrui
