// The main window's file actions (see main_window.h): unsaved-run questions, open, save, export,
// recent runs, dropped files and closing.
#include "ui/shell/main_window.h"

#include "ui/common/export_dialog.h"
#include "ui/export/exporter.h"
#include "ui/inspector/inspector.h"
#include "ui/panel/experiment_panel.h"
#include "ui/plots/figure.h"

#include <QApplication>
#include <QCloseEvent>
#include <QDir>
#include <QDockWidget>
#include <QFileDialog>
#include <QFileInfo>
#include <QLocale>
#include <QMenu>
#include <QMessageBox>
#include <QMimeData>
#include <QPushButton>
#include <QSettings>
#include <QStatusBar>

namespace ndrui {

int MainWindow::askToSave(const QString& action) {
    QMessageBox box(QMessageBox::Question, tr("Save changes?"),
                    tr("The run shown has trained %1 steps that are not saved. Save them before %2?")
                        .arg(session_.stepsDone())
                        .arg(action),
                    QMessageBox::Save | QMessageBox::Discard | QMessageBox::Cancel, this);
    box.setObjectName("unsavedBox");
    box.setDefaultButton(QMessageBox::Save);
    return box.exec();
}

void MainWindow::afterSaveOrDiscard(const QString& action, std::function<void()> then) {
    if (!ask_ || !session_.isModified()) {
        then();
        return;
    }
    const int answer = askToSave(action);
    if (answer == QMessageBox::Discard)
        then();
    else if (answer == QMessageBox::Save && startSave(session_.runFile()))
        afterSave_ = std::move(then);
}

void MainWindow::onStartRequested(const ndr::RunConfig& config) {
    const auto startNew = [this, config] {
        QString error;
        if (!session_.start(config, &error))
            showError(tr("Could not start training"), error);
    };
    if (!ask_) {
        startTraining(config); // nobody to ask: continue when the settings allow it (startOrContinue)
        return;
    }
    if (!session_.hasSameSettings(config) || (session_.hasRun() && !session_.hasWeights())) {
        if (session_.hasRun())
            afterSaveOrDiscard(tr("starting a new run"), startNew);
        else
            startNew();
        return;
    }
    // The run shown has these settings: train it further, or start over from step 0.
    const int done = session_.stepsDone();
    const int target = config.train.steps > done ? config.train.steps : done + config.train.steps;
    QMessageBox box(QMessageBox::Question, tr("Continue this run?"),
                    tr("The run shown has trained %1 steps with these settings. Continue it to %2 steps, "
                       "or start a new run from step 0?")
                        .arg(done)
                        .arg(target),
                    QMessageBox::Cancel, this);
    box.setObjectName("continueBox");
    QPushButton* cont = box.addButton(tr("Continue to %1 steps").arg(target), QMessageBox::AcceptRole);
    cont->setObjectName("continue");
    QPushButton* fresh = box.addButton(tr("New run"), QMessageBox::DestructiveRole);
    fresh->setObjectName("newRun");
    box.setDefaultButton(cont);
    box.exec();
    if (box.clickedButton() == cont)
        session_.continueTraining(target);
    else if (box.clickedButton() == fresh)
        afterSaveOrDiscard(tr("starting a new run"), startNew);
}

void MainWindow::newRun() {
    if (session_.state() == TrainingSession::State::Training ||
        session_.state() == TrainingSession::State::Paused)
        return showError(tr("Training is running"), tr("Stop the training before starting a new run."));
    afterSaveOrDiscard(tr("starting over"), [this] {
        session_.clear();
        panelDock_->show();
        panel_->setFocus();
    });
}

bool MainWindow::openRun(const QString& file) {
    QString error;
    if (!session_.open(file, &error)) {
        showError(tr("Could not open the run"), error);
        return false;
    }
    showOpenedRun(file, false);
    return true;
}

void MainWindow::showOpenedRun(const QString& file, bool recovered) {
    panel_->setConfig(session_.config());
    // The panel rebuilds its progress bars when the run has another number of models.
    for (size_t i = 0; i < session_.models().size(); ++i)
        showModelProgress(int(i));
    if (recovered) {
        statusBar()->showMessage(tr("Recovered the unsaved run; File > Save keeps it"));
        return;
    }
    addRecent(file);
    if (session_.isFollowing())
        statusBar()->showMessage(tr("Opened %1 read-only: another process trains it, and it is shown anew at "
                                    "each of that process's saves")
                                     .arg(QDir::toNativeSeparators(file)),
                                 8000);
    else if (session_.hasWeights())
        statusBar()->showMessage(tr("Opened %1").arg(QDir::toNativeSeparators(file)), 5000);
    else
        statusBar()->showMessage(
            tr("Opened the history of %1; its weights are missing (%2), so Start begins a "
               "new run and the inspector is empty")
                .arg(QDir::toNativeSeparators(file), session_.missingWeights().join(", ")));
}

void MainWindow::setRecoveryFolder(const QString& folder, int intervalMs) {
    recoveryFolder_ = folder;
    session_.setRecoveryFolder(folder, intervalMs);
}

void MainWindow::reportUnhandledError(const QString& what) {
    session_.saveRecoveryCopyNow();
    QString message = tr("NDR Studio met an error it could not handle: %1.\n\nThe window and the training go "
                         "on; what failed was left undone.")
                          .arg(what);
    if (session_.isModified() && !recoveryFolder_.isEmpty())
        message += tr("\n\nThe unsaved run is kept in a recovery copy in %1, and offered again at the next "
                      "start should the app close.")
                       .arg(QDir::toNativeSeparators(recoveryFolder_));
    // One box, however many errors follow one another: a paint that fails would otherwise stack boxes.
    if (auto* open = findChild<QMessageBox*>("unhandledErrorBox")) {
        open->setText(message);
        return;
    }
    statusBar()->showMessage(tr("An error was caught: %1").arg(what), 10000);
    auto* box =
        new QMessageBox(QMessageBox::Warning, tr("An error was caught"), message, QMessageBox::Ok, this);
    box->setObjectName("unhandledErrorBox");
    box->setAttribute(Qt::WA_DeleteOnClose);
    box->open();
}

void MainWindow::offerRecovery() {
    if (recoveryFolder_.isEmpty())
        return;
    for (const QString& file : TrainingSession::recoverableRuns(recoveryFolder_)) {
        // What the run is: its models and steps, from the record without its traces.
        QStringList models;
        try {
            const ndr::RunRecord rec =
                ndr::loadRunRecord(file.toStdString(), ndr::RunFileParts::WithoutTraces);
            for (const auto& m : rec.models)
                models << tr("%1 %2 steps").arg(QString::fromStdString(m.config.name)).arg(m.stepsDone);
        } catch (const std::exception& e) {
            models << tr("unreadable: %1").arg(QString::fromUtf8(e.what()));
        }
        QMessageBox box(QMessageBox::Question, tr("Recover an unsaved run?"),
                        tr("NDR Studio closed while this run was training, before it was saved (%1; last "
                           "kept %2). Open it to look at it and save it, or discard it.")
                            .arg(models.join(", "),
                                 QLocale().toString(QFileInfo(file).lastModified(), QLocale::ShortFormat)),
                        QMessageBox::NoButton, this);
        box.setObjectName("recoveryBox");
        QPushButton* open = box.addButton(tr("Open"), QMessageBox::AcceptRole);
        open->setObjectName("recoverOpen");
        QPushButton* discard = box.addButton(tr("Discard"), QMessageBox::DestructiveRole);
        discard->setObjectName("recoverDiscard");
        QPushButton* later = box.addButton(tr("Later"), QMessageBox::RejectRole);
        later->setObjectName("recoverLater");
        box.setDefaultButton(open);
        box.exec();
        if (box.clickedButton() == discard) {
            TrainingSession::discardRecovered(file);
        } else if (box.clickedButton() == open) {
            QString error;
            if (session_.openRecovered(file, &error))
                showOpenedRun(file, true);
            else
                showError(tr("Could not open the run"), error);
            return; // one run at a time: the others are offered at the next start
        }
    }
}

void MainWindow::saveRun(const QString& file) {
    startSave(file);
}

bool MainWindow::startSave(const QString& file) {
    QString target = file;
    if (target.isEmpty()) {
        const QString dir = persistent_ ? QSettings().value("files/lastDir").toString() : QString();
        target = QFileDialog::getSaveFileName(this, tr("Save run"), QDir(dir).filePath("run.json"),
                                              tr("NDR Studio runs (*.json)"));
        if (target.isEmpty())
            return false;
        if (persistent_)
            QSettings().setValue("files/lastDir", QFileInfo(target).absolutePath());
    }
    session_.save(target);
    statusBar()->showMessage(tr("Saving…"));
    return true;
}

void MainWindow::openDialog() {
    afterSaveOrDiscard(tr("opening another run"), [this] { chooseAndOpen(); });
}

void MainWindow::chooseAndOpen() {
    const QString dir = persistent_ ? QSettings().value("files/lastDir").toString() : QString();
    const QString file =
        QFileDialog::getOpenFileName(this, tr("Open run"), dir, tr("NDR Studio runs (*.json)"));
    if (file.isEmpty())
        return;
    if (persistent_)
        QSettings().setValue("files/lastDir", QFileInfo(file).absolutePath());
    openRun(file);
}

void MainWindow::exportDialog() {
    if (!session_.hasRun())
        return;
    ExportChoice initial = exportChoice_;
    if (persistent_)
        initial = ExportChoice::remembered("files/exportDir", colourScheme());
    ExportDialog dialog(tr("Export the dashboard"), initial, this);
    if (dialog.exec() != QDialog::Accepted)
        return;
    exportChoice_ = dialog.choice();
    if (persistent_)
        exportChoice_.remember("files/exportDir");
    exportTo(exportChoice_.folder, false);
}

bool MainWindow::exportTo(const QString& folder, bool overwrite, QString* why) {
    const auto refuse = [&](const QString& message) {
        if (why)
            *why = message;
        showError(tr("Export failed"), message);
        return false;
    };
    if (const QString locked = lockedFolderProblem(folder); !locked.isEmpty())
        return refuse(locked);
    // A copy: training goes on while the overwrite question is open and while the files are written.
    const ndr::RunRecord record = session_.record();
    ExportOptions options;
    options.overwrite = overwrite;
    options.formats = exportChoice_.formats;
    options.style = exportChoice_.style;
    options.scheme = exportChoice_.scheme;
    ExportPlan plan =
        planExport(record, folder, options, inspector_->tracesComplete() ? inspector_->maxStep() : -1);
    if (const QStringList existing = plan.existing(); !overwrite && !existing.isEmpty()) {
        if (!ask_) {
            if (why)
                *why = tr("%1 already holds %2 of the %3 files to export (%4); nothing was replaced "
                          "(ndr-studio --overwrite replaces them)")
                           .arg(QDir::toNativeSeparators(folder))
                           .arg(existing.size())
                           .arg(plan.files().size())
                           .arg(existing.mid(0, 3).join(", ") + (existing.size() > 3 ? ", …" : ""));
            return false;
        }
        const auto answer = QMessageBox::question(
            this, tr("Replace files?"),
            tr("%1 already holds %2 of the %3 files to export (%4). Replace them?")
                .arg(QDir::toNativeSeparators(folder))
                .arg(existing.size())
                .arg(plan.files().size())
                .arg(existing.mid(0, 3).join(", ") + (existing.size() > 3 ? ", …" : "")));
        if (answer != QMessageBox::Yes)
            return false;
        plan.options.overwrite = true;
    }
    QApplication::setOverrideCursor(Qt::WaitCursor);
    QString error;
    const int count = writeExport(
        record, plan,
        [this](const QString& dir, const ExportOptions& o, QString* e) {
            return inspector_->exportFrames(dir, o, e);
        },
        &error);
    QApplication::restoreOverrideCursor();
    // Views of the window that drew while the export's colours were on take the window's again.
    if (options.scheme != colourScheme())
        recolour(this);
    if (!error.isEmpty())
        return refuse(error);
    statusBar()->showMessage(tr("Exported %1 files to %2").arg(count).arg(QDir::toNativeSeparators(folder)),
                             8000);
    return true;
}

void MainWindow::addRecent(const QString& file) {
    recent_.add(file);
    rebuildRecentMenu();
}

void MainWindow::openRecent(const QString& file) {
    if (!QFileInfo::exists(file)) {
        recent_.remove(file);
        rebuildRecentMenu();
        showError(
            tr("Could not open the run"),
            tr("%1 no longer exists; it is taken off the recent runs.").arg(QDir::toNativeSeparators(file)));
        return;
    }
    afterSaveOrDiscard(tr("opening another run"), [this, file] { openRun(file); });
}

void MainWindow::rebuildRecentMenu() {
    recentMenu_->clear();
    const QStringList files = recent_.files();
    for (const QString& f : files)
        recentMenu_->addAction(QDir::toNativeSeparators(f), this, [this, f] { openRecent(f); });
    recentMenu_->setEnabled(!files.isEmpty());
}

void MainWindow::dragEnterEvent(QDragEnterEvent* event) {
    const auto urls = event->mimeData()->urls();
    if (urls.size() == 1 && urls.front().isLocalFile() && urls.front().toLocalFile().endsWith(".json"))
        event->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent* event) {
    const auto urls = event->mimeData()->urls();
    if (urls.size() != 1 || !urls.front().isLocalFile())
        return;
    event->acceptProposedAction();
    // Opening may show a message box: not from inside the drop handler.
    const QString file = urls.front().toLocalFile();
    QTimer::singleShot(0, this, [this, file] {
        afterSaveOrDiscard(tr("opening another run"), [this, file] { openRun(file); });
    });
}

void MainWindow::closeEvent(QCloseEvent* event) {
    if (session_.isSaving()) {
        // Let the save finish first; the window closes when it is written.
        closeAfterSave_ = true;
        event->ignore();
        return;
    }
    if (ask_ && !closeConfirmed_ && session_.isModified()) {
        const int answer = askToSave(tr("closing"));
        if (answer != QMessageBox::Discard) {
            event->ignore();
            if (answer == QMessageBox::Save) {
                session_.stop(); // what is saved is what there is; the window closes when it is written
                closeAfterSave_ = startSave(session_.runFile());
            }
            return;
        }
    }
    if (persistent_) {
        QSettings settings;
        settings.setValue("window/geometry", saveGeometry());
        settings.setValue("window/state", saveState());
    }
    session_.stop();
    event->accept();
}

} // namespace ndrui
