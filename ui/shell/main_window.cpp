// Main window wiring (see main_window.h).
#include "ui/shell/main_window.h"

#include "core/io/serialize.h"
#include "ui/compare/compare_view.h"
#include "ui/dashboard/dashboard.h"
#include "ui/export/exporter.h"
#include "ui/inspector/expression_input.h"
#include "ui/inspector/inspector.h"
#include "ui/panel/experiment_panel.h"
#include "ui/plots/figure.h"

#include <QAction>
#include <QApplication>
#include <QDir>
#include <QDockWidget>
#include <QFileInfo>
#include <QGuiApplication>
#include <QLabel>
#include <QLocale>
#include <QMenuBar>
#include <QMessageBox>
#include <QScreen>
#include <QScrollArea>
#include <QSettings>
#include <QSignalBlocker>
#include <QStatusBar>
#include <QTabWidget>

namespace ndrui {

namespace {
constexpr int kRedrawMs = 250; // the dashboard redraws at most four times a second

QString stateText(TrainingSession::State s) {
    switch (s) {
    case TrainingSession::State::Empty:
        return QObject::tr("No run");
    case TrainingSession::State::Ready:
        return QObject::tr("Ready");
    case TrainingSession::State::Training:
        return QObject::tr("Training");
    case TrainingSession::State::Paused:
        return QObject::tr("Paused");
    }
    return {};
}
} // namespace

MainWindow::MainWindow(bool persistent, QWidget* parent)
    : QMainWindow(parent), persistent_(persistent), recent_(persistent) {
    setObjectName("mainWindow");
    setAcceptDrops(true);

    panel_ = new ExperimentPanel(this, persistent);
    panelDock_ = new QDockWidget(tr("Experiment"), this);
    panelDock_->setObjectName("experimentDock");
    panelDock_->setWidget(panel_);
    panelDock_->setFeatures(QDockWidget::DockWidgetMovable | QDockWidget::DockWidgetFloatable |
                            QDockWidget::DockWidgetClosable);
    addDockWidget(Qt::LeftDockWidgetArea, panelDock_);

    dashboard_ = new Dashboard(this);
    tabs_ = new QTabWidget(this);
    tabs_->setObjectName("mainTabs");
    tabs_->addTab(dashboard_, tr("Dashboard"));
    inspector_ = new Inspector(session_, this);
    tabs_->addTab(inspector_, tr("Inspector"));
    compare_ = new CompareView(this);
    tabs_->addTab(compare_, tr("Compare"));
    setCentralWidget(tabs_);

    statusState_ = new QLabel(stateText(TrainingSession::State::Empty), this);
    statusBar()->addPermanentWidget(statusState_);

    redrawTimer_.setSingleShot(true);
    redrawTimer_.setInterval(kRedrawMs);
    connect(&redrawTimer_, &QTimer::timeout, this, &MainWindow::redrawNow);

    connect(panel_, &ExperimentPanel::startRequested, this, &MainWindow::onStartRequested);
    connect(panel_, &ExperimentPanel::pauseRequested, &session_, &TrainingSession::pause);
    connect(panel_, &ExperimentPanel::resumeRequested, &session_, &TrainingSession::resume);
    connect(panel_, &ExperimentPanel::stopRequested, &session_, &TrainingSession::stop);
    connect(&session_, &TrainingSession::progressed, this, &MainWindow::onProgress);
    connect(&session_, &TrainingSession::stateChanged, this, &MainWindow::onStateChanged);
    connect(&session_, &TrainingSession::runChanged, this, &MainWindow::onRunChanged);
    connect(&session_, &TrainingSession::followChanged, this, &MainWindow::onFollowChanged);
    connect(&session_, &TrainingSession::saved, this, [this](const QString& file) {
        statusBar()->showMessage(tr("Saved %1").arg(QDir::toNativeSeparators(file)), 5000);
        addRecent(file);
        updateTitle();
        if (closeAfterSave_) {
            closeConfirmed_ = true;
            close();
            return;
        }
        if (auto then = std::exchange(afterSave_, nullptr))
            then();
    });
    connect(&session_, &TrainingSession::saveFailed, this, [this](const QString& message) {
        closeAfterSave_ = false;
        afterSave_ = nullptr;
        showError(tr("Could not save the run"), message);
    });

    createMenus();
    // 1400x900, or what the screen has room for on a smaller one (a 1280x800 laptop).
    QSize size(1400, 900);
    if (const QScreen* screen = QGuiApplication::primaryScreen())
        size = size.boundedTo(screen->availableSize());
    resize(size);
    resizeDocks({panelDock_}, {430}, Qt::Horizontal);
    exportChoice_.scheme = colourScheme();
    connect(compare_, &CompareView::openRunRequested, this, [this](const QString& file) {
        afterSaveOrDiscard(tr("opening another run"), [this, file] {
            if (openRun(file))
                showDashboard();
        });
    });
    connect(compare_, &CompareView::exportChosen, this, [this](const ExportChoice& choice) {
        if (persistent_)
            choice.remember("files/compareExportDir");
    });
    if (persistent_) {
        QSettings settings;
        restoreGeometry(settings.value("window/geometry").toByteArray());
        restoreState(settings.value("window/state").toByteArray());
        ColourScheme scheme = ColourScheme::Standard;
        if (schemeNamed(settings.value("view/colours").toString(), &scheme))
            setColourScheme(scheme);
        compare_->setExportChoice(ExportChoice::remembered("files/compareExportDir", colourScheme()));
    }
    updateTitle();
}

void MainWindow::setColourScheme(ColourScheme scheme) {
    {
        const QSignalBlocker block(colourBlindAction_);
        colourBlindAction_->setChecked(scheme == ColourScheme::ColourBlindSafe);
    }
    if (persistent_)
        QSettings().setValue("view/colours", schemeName(scheme));
    if (scheme == colourScheme())
        return;
    ndrui::setColourScheme(scheme);
    exportChoice_.scheme = scheme;
    recolour(this);
}

MainWindow::~MainWindow() = default;

void MainWindow::createMenus() {
    QMenu* file = menuBar()->addMenu(tr("&File"));
    QAction* newAction = file->addAction(tr("&New run"), this, &MainWindow::newRun);
    newAction->setShortcut(QKeySequence::New);
    QAction* open = file->addAction(tr("&Open run…"), this, &MainWindow::openDialog);
    open->setShortcut(QKeySequence::Open);
    recentMenu_ = file->addMenu(tr("Open &recent"));
    rebuildRecentMenu();
    file->addSeparator();
    saveAction_ = file->addAction(tr("&Save run"), this, [this] { saveRun(session_.runFile()); });
    saveAction_->setShortcut(QKeySequence::Save);
    saveAsAction_ = file->addAction(tr("Save run &as…"), this, [this] { saveRun(); });
    saveAsAction_->setShortcut(QKeySequence::SaveAs);
    exportAction_ = file->addAction(tr("&Export…"), this, &MainWindow::exportDialog);
    exportAction_->setShortcut(QKeySequence(tr("Ctrl+E")));
    file->addSeparator();
    QAction* quit = file->addAction(tr("&Quit"), this, &QWidget::close);
    quit->setShortcut(QKeySequence::Quit);

    QMenu* training = menuBar()->addMenu(tr("&Training"));
    training->addActions(panel_->runActions());

    QMenu* view = menuBar()->addMenu(tr("&View"));
    QAction* toggle = panelDock_->toggleViewAction();
    toggle->setText(tr("&Experiment panel"));
    toggle->setShortcut(QKeySequence(tr("Ctrl+1")));
    view->addAction(toggle);
    view->addAction(tr("&Dashboard"), QKeySequence(tr("Ctrl+2")), this, &MainWindow::showDashboard);
    view->addAction(tr("&Inspector"), QKeySequence(tr("Ctrl+3")), this, &MainWindow::showInspector);
    view->addAction(tr("&Compare"), QKeySequence(tr("Ctrl+4")), this, &MainWindow::showCompare);
    view->addSeparator();
    colourBlindAction_ = view->addAction(tr("Colour-&blind-safe colours"));
    colourBlindAction_->setObjectName("view.colourBlind");
    colourBlindAction_->setCheckable(true);
    colourBlindAction_->setToolTip(tr("Okabe-Ito colours for models and splits, cividis for heatmaps"));
    connect(colourBlindAction_, &QAction::toggled, this, [this](bool on) {
        setColourScheme(on ? ColourScheme::ColourBlindSafe : ColourScheme::Standard);
    });
    view->addAction(tr("&Redraw now"), QKeySequence(tr("F5")), this, &MainWindow::redrawNow);

    QMenu* help = menuBar()->addMenu(tr("&Help"));
    help->addAction(tr("&About NDR Studio"), this, &MainWindow::about);
    help->addAction(tr("About &Qt"), qApp, &QApplication::aboutQt);

    for (QAction* a : {saveAction_, saveAsAction_, exportAction_})
        a->setEnabled(false);
}

void MainWindow::startTraining(const ndr::RunConfig& config) {
    QString error;
    if (!session_.startOrContinue(config, &error))
        showError(tr("Could not start training"), error);
}

void MainWindow::startTraining() {
    startTraining(panel_->config());
}

void MainWindow::showConfig(const ndr::RunConfig& config) {
    panel_->setConfig(config);
}

void MainWindow::showDashboard() {
    tabs_->setCurrentWidget(dashboard_);
}

void MainWindow::showInspector() {
    tabs_->setCurrentWidget(inspector_);
}

void MainWindow::showCompare() {
    tabs_->setCurrentWidget(compare_);
}

QString MainWindow::inspectExpression(const QString& text) {
    inspector_->input()->setText(text);
    return inspector_->input()->problem();
}

QString MainWindow::inspectRandom(int depth) {
    inspector_->input()->randomExample(depth);
    return inspector_->input()->problem();
}

void MainWindow::setInspectorStep(int step) {
    inspector_->setStep(step);
}

bool MainWindow::screenshot(const QString& file) {
    redrawNow();
    QApplication::processEvents();
    return grab().save(file);
}

void MainWindow::showModelProgress(int model) {
    const auto& m = session_.models()[size_t(model)];
    const auto& p = session_.progress(size_t(model));
    panel_->setModelProgress(model, m.stepsDone, p.totalSteps, p.stepsPerSecond, p.etaSeconds, m.status,
                             p.evaluating);
}

void MainWindow::onProgress(const SnapshotPtr& s) {
    showModelProgress(s->model);
    const auto& m = session_.models()[size_t(s->model)];
    if (s->done && m.status.state == ndr::ModelState::Diverged)
        statusBar()->showMessage(
            tr("%1 stopped: %2").arg(modelName(m), QString::fromStdString(ndr::statusText(m.status))));
    scheduleRedraw();
}

QString MainWindow::followedText() const {
    if (!session_.isFollowing())
        return {};
    const ndr::RunFileHolder holder = session_.followedHolder();
    const QString who = holder.pid > 0
                            ? tr("pid %1 on %2").arg(holder.pid).arg(QString::fromStdString(holder.host))
                            : QString::fromStdString(holder.line);
    return tr("trained by %1, last save %2")
        .arg(who, QLocale().toString(session_.followedSave().time(), "HH:mm"));
}

void MainWindow::onFollowChanged() {
    const bool following = session_.isFollowing();
    if (following != wasFollowing_ && !following && session_.hasRun())
        statusBar()->showMessage(tr("The process that trained this run has ended: it is an ordinary run now"),
                                 8000);
    wasFollowing_ = following;
    onStateChanged(session_.state());
}

void MainWindow::onStateChanged(TrainingSession::State state) {
    statusState_->setText(session_.isFollowing() ? tr("Read-only: %1").arg(followedText())
                                                 : stateText(state));
    // Continuing a run changes its steps to go before the first progress report comes.
    for (size_t i = 0; i < session_.models().size(); ++i)
        showModelProgress(int(i));
    switch (state) {
    case TrainingSession::State::Training:
        panel_->setState(ExperimentPanel::RunState::Training);
        break;
    case TrainingSession::State::Paused:
        panel_->setState(ExperimentPanel::RunState::Paused);
        break;
    default:
        panel_->setState(ExperimentPanel::RunState::Idle);
        break;
    }
    const bool hasRun = session_.hasRun();
    // A followed run is saved by the process that trains it.
    saveAction_->setEnabled(hasRun && !session_.isFollowing());
    saveAsAction_->setEnabled(hasRun && !session_.isFollowing());
    exportAction_->setEnabled(hasRun);
    updateTitle();
}

void MainWindow::onRunChanged() {
    dashboard_->selectEvaluation(-1); // another run: the history slider follows it live
    onStateChanged(session_.state()); // and the progress bars
    redrawNow();
}

void MainWindow::scheduleRedraw() {
    if (!redrawTimer_.isActive())
        redrawTimer_.start();
}

void MainWindow::redrawNow() {
    redrawTimer_.stop();
    setWindowModified(session_.isModified());
    if (session_.hasRun()) {
        dashboard_->showRecord(session_.record());
    } else {
        dashboard_->clear();
    }
}

void MainWindow::updateTitle() {
    QString title = tr("NDR Studio");
    if (session_.isFollowing())
        title = QFileInfo(session_.runFile()).dir().dirName() + " (" + followedText() + ") — " + title;
    else if (!session_.runFile().isEmpty())
        title = QFileInfo(session_.runFile()).dir().dirName() + " — " + title;
    else if (session_.hasRun())
        title = QString::fromStdString(session_.config().preset) + " — " + title;
    setWindowTitle(title + "[*]");
    setWindowModified(session_.isModified());
}

void MainWindow::showError(const QString& title, const QString& message) {
    statusBar()->showMessage(title, 5000);
    // Window-modal and not exec(): the event loop (and training) goes on while it is shown.
    auto* box = new QMessageBox(QMessageBox::Warning, title, message, QMessageBox::Ok, this);
    box->setObjectName("errorBox");
    box->setAttribute(Qt::WA_DeleteOnClose);
    box->open();
}

void MainWindow::about() {
    QMessageBox::about(
        this, tr("About NDR Studio"),
        tr("<h3>NDR Studio %1</h3>"
           "<p>Trains a Neural Data Router and a vanilla Transformer side by side on compositional "
           "table lookup, shows the training live, and lets you watch the routing step by step.</p>"
           "<p>Róbert Csordás, Kazuki Irie, Jürgen Schmidhuber. <i>The Neural Data Router: Adaptive "
           "Control Flow in Transformers Improves Systematic Generalization.</i> ICLR 2022. "
           "arXiv:2110.07732.</p>")
            .arg(QApplication::applicationVersion()));
}

} // namespace ndrui
