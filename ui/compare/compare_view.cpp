// The Compare tab (see compare_view.h).
#include "ui/compare/compare_view.h"

#include "core/io/files.h"
#include "core/io/sweep_plan.h"
#include "ui/common/tsan_handover.h"
#include "ui/plots/compare_bars_view.h"
#include "ui/plots/figure.h"
#include "ui/plots/overlay_curves_view.h"

#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QMessageBox>
#include <QPushButton>
#include <QSplitter>
#include <QTableWidget>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>
#include <tuple>
#include <vector>

namespace ndrui {

namespace {
constexpr int kPollMs = 5000;
constexpr int kSettleMs = 300; // after a change in a trained run's folder, before it is read
constexpr QSize kExportSize{1400, 700};
} // namespace

CompareView::CompareView(QWidget* parent) : QWidget(parent), data_(std::make_shared<CompareData>()) {
    auto* root = new QVBoxLayout(this);
    auto* buttons = new QHBoxLayout;
    auto* addRuns = new QPushButton(tr("Add runs…"), this);
    auto* addSweep = new QPushButton(tr("Add sweep folder…"), this);
    auto* clear = new QPushButton(tr("Clear"), this);
    auto* exportButton = new QPushButton(tr("Export…"), this);
    auto* openRun = new QPushButton(tr("Open one run…"), this);
    openRun->setObjectName("compareOpenRun");
    openRun->setToolTip(
        tr("Open one run of these (a sweep's run.json) on the dashboard and in the inspector; "
           "a run that is still training there is shown as it trains, read-only"));
    addRuns->setObjectName("compareAddRuns");
    addSweep->setObjectName("compareAddSweep");
    exportButton->setObjectName("compareExport");
    status_ = new QLabel(tr("Add run files (run.json) or sweep folders to compare them."), this);
    status_->setWordWrap(true);
    for (QPushButton* b : {addRuns, addSweep, clear, openRun, exportButton})
        buttons->addWidget(b);
    buttons->addWidget(status_, 1);
    root->addLayout(buttons);

    table_ = new QTableWidget(this);
    table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
    table_->verticalHeader()->setVisible(false);
    table_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    table_->horizontalHeader()->setStretchLastSection(false);
    bars_ = new CompareBarsView(this);
    curves_ = new OverlayCurvesView(this);
    curves_->setSeriesChoice(tr("Curves:"), {tr("Longer (test depths)"), tr("IID (training depths)")});
    connect(curves_, &OverlayCurvesView::seriesChanged, this, [this] { showCurves(); });
    auto* plots = new QSplitter(Qt::Horizontal, this);
    plots->addWidget(bars_);
    plots->addWidget(curves_);
    auto* split = new QSplitter(Qt::Vertical, this);
    split->addWidget(table_);
    split->addWidget(plots);
    split->setStretchFactor(0, 1);
    split->setStretchFactor(1, 3);
    split->setSizes({180, 540});
    plots->setStretchFactor(0, 1);
    plots->setStretchFactor(1, 1);
    plots->setSizes({600, 600});
    root->addWidget(split, 1);

    connect(addRuns, &QPushButton::clicked, this, [this] { addDialog(false); });
    connect(addSweep, &QPushButton::clicked, this, [this] { addDialog(true); });
    connect(clear, &QPushButton::clicked, this, &CompareView::clearSources);
    connect(exportButton, &QPushButton::clicked, this, &CompareView::exportDialog);
    connect(openRun, &QPushButton::clicked, this, [this] {
        // In the first sweep's folder, where its runs are.
        QString dir = lastDir_;
        for (const CompareSource& src : sources_)
            if (src.kind == CompareSource::Kind::Sweep) {
                dir = QString::fromStdString(src.path.string());
                break;
            }
        const QString file =
            QFileDialog::getOpenFileName(this, tr("Open one run"), dir, tr("NDR Studio runs (*.json)"));
        if (!file.isEmpty())
            emit openRunRequested(file);
    });
    poll_.setInterval(kPollMs);
    connect(&poll_, &QTimer::timeout, this, &CompareView::refresh);
    settle_.setSingleShot(true);
    settle_.setInterval(kSettleMs);
    connect(&settle_, &QTimer::timeout, this, &CompareView::refresh);
    connect(&watcher_, &QFileSystemWatcher::directoryChanged, this, [this] { settle_.start(); });
}

CompareView::~CompareView() {
    if (loader_.joinable())
        loader_.join();
}

bool CompareView::addSource(const QString& path, QString* error) {
    const QFileInfo info(path);
    CompareSource src;
    if (info.isDir() && QFileInfo::exists(QDir(path).filePath(ndr::SweepPlan::kFileName))) {
        src.kind = CompareSource::Kind::Sweep;
    } else if (info.isFile() && path.endsWith(".json")) {
        src.kind = CompareSource::Kind::Run;
    } else {
        if (error)
            *error = tr("%1 is neither a run file (run.json) nor a sweep folder (a folder with %2)")
                         .arg(QDir::toNativeSeparators(path), ndr::SweepPlan::kFileName);
        return false;
    }
    src.path = std::filesystem::absolute(path.toStdString());
    if (std::find(sources_.begin(), sources_.end(), src) == sources_.end())
        sources_.push_back(src);
    refresh();
    return true;
}

QString CompareView::statusText() const {
    return status_->text();
}

void CompareView::clearSources() {
    sources_.clear();
    refresh();
}

void CompareView::refresh() {
    if (loading_) {
        again_ = true;
        return;
    }
    if (loader_.joinable())
        loader_.join();
    loading_ = true;
    again_ = false;
    // New sources can take seconds to read (a run file of a long run holds megabytes of traces): say
    // so until they are shown. A poll of the same sources keeps the figures on screen meanwhile.
    if (!sources_.empty() && sources_ != shownSources_)
        status_->setText(sources_.size() == 1 ? tr("Reading 1 source…")
                                              : tr("Reading %1 sources…").arg(sources_.size()));
    loader_ = std::thread([this, sources = sources_] {
        auto data = std::make_shared<const CompareData>(loadCompareData(sources));
        // Queued to this object: the destructor joins this thread first, and Qt drops a queued call
        // whose receiver is gone.
        queueFromThread(this, [this, data, sources] { showData(data, sources); });
    });
}

void CompareView::showData(std::shared_ptr<const CompareData> data, std::vector<CompareSource> sources) {
    loading_ = false;
    data_ = std::move(data);
    shownSources_ = std::move(sources);
    const CompareData& d = *data_;
    table_->clear();
    table_->setColumnCount(int(d.header.size()));
    table_->setHorizontalHeaderLabels(d.header);
    table_->setRowCount(int(d.rows.size()));
    for (int r = 0; r < int(d.rows.size()); ++r)
        for (int c = 0; c < int(d.rows[size_t(r)].size()); ++c)
            table_->setItem(r, c, new QTableWidgetItem(d.rows[size_t(r)][c]));
    // A column no row fills (the group of sweeps without groups) only takes width from the others;
    // the CSV export keeps it.
    for (int c = 0; c < int(d.header.size()); ++c)
        table_->setColumnHidden(c, !d.rows.empty() &&
                                       std::all_of(d.rows.begin(), d.rows.end(), [c](const QStringList& row) {
                                           return c >= row.size() || row[c].isEmpty();
                                       }));

    std::vector<CompareBarsView::Category> categories;
    for (const auto& c : d.categories)
        categories.push_back({c.label, c.iid.mean, c.iid.std, c.longer.mean, c.longer.std, c.paperIid,
                              c.paperLonger, c.longer.runs, c.iid.values, c.longer.values, c.longer.seeds});
    bars_->setCategories(categories);
    bars_->setReference(d.chance, d.longerBaseline);
    showCurves();

    QString text = sources_.empty() ? tr("Add run files (run.json) or sweep folders to compare them.")
                                    : tr("%1 of %2 runs finished").arg(d.finished).arg(d.planned);
    if (d.tableOne)
        text += tr("; the paper's figures in brackets");
    if (!d.training.isEmpty())
        text += " — " + tr("read-only, ") + d.training.join("; ");
    if (!d.problems.isEmpty())
        text += " — " + d.problems.join("; ");
    status_->setText(text);
    // Keep reading while a sweep still has runs to finish or another process trains one.
    const bool incomplete = d.finished < d.planned || !d.training.isEmpty();
    QStringList folders;
    for (const std::filesystem::path& f : d.trainingFiles)
        folders << QString::fromStdString(f.parent_path().string());
    if (const QStringList watched = watcher_.directories(); watched != folders) {
        if (!watched.isEmpty())
            watcher_.removePaths(watched);
        if (!folders.isEmpty())
            watcher_.addPaths(folders);
    }
    if (incomplete && !poll_.isActive())
        poll_.start();
    else if (!incomplete)
        poll_.stop();
    emit loaded();
    if (again_)
        refresh();
}

void CompareView::showCurves() {
    const CompareData& d = *data_;
    const bool iid = curves_->series() == 1; // the second choice
    std::vector<OverlayCurvesView::Curve> curves;
    for (const auto& c : d.curves)
        curves.push_back({c.label, c.colorIndex, c.steps, iid ? c.iid : c.test});
    curves_->setCurves(curves,
                       iid ? tr("IID accuracy (training depths)") : tr("test accuracy (longer depths)"));
    // The majority baseline is the Longer depths'; the IID curves keep chance alone.
    curves_->setReference(d.chance, iid ? 0 : d.longerBaseline);
}

QStringList CompareView::exportFileNames(const QList<FigureFormat>& formats) {
    QStringList names{"compare.csv"};
    for (const char* figure : {"compare-bars", "compare-curves"})
        for (FigureFormat f : formats)
            names << QString::fromLatin1(figure) + "." + formatName(f);
    return names;
}

QStringList CompareView::existingExports(const QString& folder, const QList<FigureFormat>& formats) {
    QStringList existing;
    for (const QString& f : exportFileNames(formats))
        if (QFileInfo::exists(QDir(folder).filePath(f)))
            existing << f;
    return existing;
}

QStringList CompareView::exportTo(const QString& folder, bool overwrite, QString* error) {
    const QDir dir(folder);
    const QList<FigureFormat> formats = exportChoice_.formats;
    if (formats.isEmpty()) {
        *error = tr("no format to export: choose one or more of PNG, PDF and SVG");
        return {};
    }
    // Not into a run's folder while another process trains it: its files are that process's.
    if (const ndr::RunFileHolder holder = ndr::folderHolder(folder.toStdString()); holder.held) {
        *error = tr("%1 is the folder of a run that another process trains (%2): nothing is written there "
                    "while it does; export into another folder")
                     .arg(QDir::toNativeSeparators(folder), QString::fromStdString(holder.line));
        return {};
    }
    if (!dir.exists() && !QDir().mkpath(folder)) {
        *error = tr("cannot create %1").arg(QDir::toNativeSeparators(folder));
        return {};
    }
    const QStringList existing = existingExports(folder, formats);
    if (!overwrite && !existing.isEmpty()) {
        *error = tr("%1 already holds %2").arg(QDir::toNativeSeparators(folder), existing.join(", "));
        return {};
    }
    try {
        ndr::writeFileAtomic(dir.filePath("compare.csv").toStdString(), compareCsv(*data_));
    } catch (const std::exception& e) {
        *error = QString::fromStdString(e.what());
        return {};
    }
    // The bars a double column wide in paper style (Table 1 has seven rows of bars), the curves one.
    const bool paper = exportChoice_.style == FigureStyle::Paper;
    const auto page = [&](PaperColumn column, double inches) {
        FigurePage p{kExportSize};
        if (paper) {
            const int dpi = figureDpi();
            p = {QSize(int(std::lround(columnInches(column) * dpi)), int(std::lround(inches * dpi))),
                 paperScale(), 300.0 / dpi};
        }
        return p;
    };
    const FigureLook look(this, exportChoice_.style, exportChoice_.scheme);
    const std::vector<std::tuple<QString, PlotView*, FigurePage>> figures = {
        {"compare-bars", bars_, page(PaperColumn::Double, 2.8)},
        {"compare-curves", curves_, page(PaperColumn::Single, 2.5)}};
    for (const auto& [name, view, figure] : figures)
        for (FigureFormat f : formats) {
            FigurePage titled = figure;
            titled.title = name;
            PlotView* drawn = view;
            if (!writeFigure(
                    dir.filePath(name + "." + formatName(f)), f, titled,
                    [drawn](QPainter& p, QSize size) { drawn->paint(p, size); }, error))
                return {};
        }
    QStringList written;
    for (const QString& f : exportFileNames(formats))
        written << dir.filePath(f);
    return written;
}

void CompareView::addDialog(bool folder) {
    QStringList paths;
    if (folder) {
        const QString dir = QFileDialog::getExistingDirectory(this, tr("Add a sweep folder"), lastDir_);
        if (!dir.isEmpty()) {
            paths << dir;
            lastDir_ = QFileInfo(dir).absolutePath(); // its parent: the next sweep is likely beside it
        }
    } else {
        paths = QFileDialog::getOpenFileNames(this, tr("Add runs"), lastDir_, tr("NDR Studio runs (*.json)"));
        if (!paths.isEmpty())
            lastDir_ = QFileInfo(paths.front()).absolutePath();
    }
    for (const QString& p : paths) {
        QString error;
        if (!addSource(p, &error))
            QMessageBox::warning(this, tr("Cannot compare this"), error);
    }
}

void CompareView::exportDialog() {
    ExportChoice initial = exportChoice_;
    if (initial.folder.isEmpty())
        initial.folder = lastDir_;
    ExportDialog dialog(tr("Export the comparison"), initial, this);
    if (dialog.exec() != QDialog::Accepted)
        return;
    exportChoice_ = dialog.choice();
    lastDir_ = exportChoice_.folder;
    emit exportChosen(exportChoice_);
    const QString folder = exportChoice_.folder;
    if (const QStringList existing = existingExports(folder, exportChoice_.formats); !existing.isEmpty()) {
        const auto answer =
            QMessageBox::question(this, tr("Replace files?"),
                                  tr("%1 already holds %2. Replace them?")
                                      .arg(QDir::toNativeSeparators(folder), existing.join(", ")));
        if (answer != QMessageBox::Yes)
            return;
    }
    QString error;
    const QStringList written = exportTo(folder, true, &error);
    if (written.isEmpty())
        QMessageBox::warning(this, tr("Export failed"), error);
    else
        status_->setText(
            tr("Exported %1 files to %2").arg(written.size()).arg(QDir::toNativeSeparators(folder)));
}

} // namespace ndrui
