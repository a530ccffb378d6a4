// Attention of one probe example: a grid of heatmaps, one per step, NDR's rows over the vanilla
// Transformer's, for the mean over heads or a chosen head, on one shared 0..1 colour scale.
#pragma once

#include "plotview.h"
#include "records.h"

#include <QStringList>
#include <vector>

class QComboBox;
class QCPColorMap;
class QCPColorScale;
class QCPMarginGroup;
class QCPTextElement;
class QScrollArea;

namespace ndrui {

class AttentionGridView : public PlotView {
    Q_OBJECT

public:
    explicit AttentionGridView(QWidget* parent = nullptr);

    // One trace per model (index = model); a model whose trace has no steps is left out.
    void setTraces(const std::vector<ndr::Trace>& traces, const QStringList& modelNames);
    // -1 shows the mean over heads; a model with fewer heads shows its mean.
    void setHead(int head);
    int head() const;
    void clear();

    // The heatmap of `model` at `step` (1-based) and the head it shows (-1: mean), for inspection.
    double weight(int model, int step, int head, int target, int source) const;

    QString toolTipAt(const QPoint& pos) const override;

signals:
    // A click on a cell: `head` is -1 for the mean over heads; `step` is 1-based.
    void cellClicked(int model, int step, int head, int target, int source, double weight);

protected:
    void fitRanges() override;
    void layoutFor(QSize size) override;
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    struct Map {
        int model, step;
        QCPColorMap* map;
    };
    struct Hit {
        const Map* map = nullptr;
        int target = -1, source = -1;
    };
    Hit hitAt(const QPoint& pos) const;
    int shownHead(int model) const;
    void rebuild(int columns);
    void fill();
    int columnsFor(QSize size, double* mapSide) const;
    int mapRows(int columns) const;
    int gridHeight(int columns, double side) const;

    // Pixels taken beside the maps: around one map (token labels left and below, step number above),
    // by a model's title and by the colour scale. Estimates until the first layout measures them.
    struct Extra {
        double mapX = 44, mapY = 56, title = 24, scaleWidth = 90;
    };
    Extra extra_;

    std::vector<ndr::Trace> traces_;
    QStringList names_;
    std::vector<Map> maps_;
    QComboBox* head_;
    QScrollArea* scroll_;
    QCPColorScale* scale_ = nullptr;
    QCPMarginGroup* margins_;
    std::vector<std::pair<int, QCPTextElement*>> titles_; // model, its title over its rows
    int columns_ = 0;
    QPoint pressPos_;
};

} // namespace ndrui
