// The Compare tab: several runs or sweep folders side by side. A table of IID and Longer accuracy
// (for a Table 1 sweep, the paper's table with its figures beside each cell), a bar chart of the same
// with the paper's values as markers, and the finished runs' learning curves overlaid. Sweep folders
// are read again every few seconds while runs are still missing, so cells fill in as runs finish,
// whatever runs them; a run another process trains is read again at each of its saves too (a watch on
// its folder) and the status line says who trains it. Reading happens on a worker thread; the window
// never waits for it.
#pragma once

#include "ui/common/export_dialog.h"
#include "ui/compare/compare_data.h"

#include <QFileSystemWatcher>
#include <QTimer>
#include <QWidget>
#include <atomic>
#include <memory>
#include <thread>

class QLabel;
class QTableWidget;

namespace ndrui {

class CompareBarsView;
class OverlayCurvesView;

class CompareView : public QWidget {
    Q_OBJECT

public:
    explicit CompareView(QWidget* parent = nullptr);
    ~CompareView() override;

    // Adds a run file or a sweep folder (a folder holding sweep.json); false with a message when it
    // is neither. Reading it happens in the background: loaded() follows.
    bool addSource(const QString& path, QString* error);
    void clearSources();
    const std::vector<CompareSource>& sources() const { return sources_; }
    // Reads every source again now (also done every few seconds while a sweep is incomplete).
    void refresh();

    const CompareData& data() const { return *data_; }
    CompareBarsView* bars() const { return bars_; }
    OverlayCurvesView* curves() const { return curves_; }
    QTableWidget* table() const { return table_; }
    QString statusText() const;

    // Writes compare.csv and the bars and curves (compare-bars.png, compare-curves.pdf, ...) in the
    // export choice's formats, style and colours into `folder`; refuses to replace files unless
    // `overwrite`, and to write into the folder of a run another process trains. Returns the files
    // written, or an empty list with *error set.
    QStringList exportTo(const QString& folder, bool overwrite, QString* error);
    static QStringList exportFileNames(const QList<FigureFormat>& formats = {FigureFormat::Png});
    // The export files `folder` already holds.
    static QStringList existingExports(const QString& folder,
                                       const QList<FigureFormat>& formats = {FigureFormat::Png});
    // The formats, style and colours of the next export (PNG, screen, standard until set), and its
    // folder's first proposal.
    const ExportChoice& exportChoice() const { return exportChoice_; }
    void setExportChoice(const ExportChoice& choice) { exportChoice_ = choice; }

signals:
    // A reading of the sources has been shown.
    void loaded();
    // The export dialog was accepted with `choice` (for the window to remember).
    void exportChosen(const ndrui::ExportChoice& choice);
    // "Open one run…" chose `runFile`, for the window to open (followed if another process trains it).
    void openRunRequested(const QString& runFile);

private:
    // Shows a reading of `sources`.
    void showData(std::shared_ptr<const CompareData> data, std::vector<CompareSource> sources);
    // Puts the runs' curves on the curves plot: Longer or IID accuracy, as its choice says.
    void showCurves();
    void addDialog(bool folder);
    void exportDialog();

    std::vector<CompareSource> sources_;
    std::shared_ptr<const CompareData> data_;
    std::vector<CompareSource> shownSources_; // the sources data_ was read from
    QTableWidget* table_;
    CompareBarsView* bars_;
    OverlayCurvesView* curves_;
    QLabel* status_;
    QTimer poll_;
    QFileSystemWatcher watcher_; // the folders of the runs another process trains
    QTimer settle_;              // a save changes several files: read once they have settled
    QString lastDir_;            // where the last dialog was left: the next one opens there
    ExportChoice exportChoice_;
    std::thread loader_;
    std::atomic<bool> loading_{false};
    bool again_ = false; // sources changed while a reading was under way
};

} // namespace ndrui
