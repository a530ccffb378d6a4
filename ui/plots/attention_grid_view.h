// Attention of one probe example: a grid of heatmaps, one per step, NDR's rows over the vanilla
// Transformer's, for the mean over heads or a chosen head, on one shared 0..1 colour scale.
#pragma once

#include "core/records/records.h"
#include "ui/plots/plot_view.h"

#include <QStringList>
#include <vector>

class QComboBox;
class QCPColorMap;
class QCPColorScale;
class QCPTextElement;
class QScrollArea;

namespace ndrui {

class AttentionGridView : public PlotView {
    Q_OBJECT

public:
    explicit AttentionGridView(QWidget* parent = nullptr);

    // One trace per model (index = model); a model whose trace has no steps or no attention (an
    // LSTM's) is left out.
    void setTraces(const std::vector<ndr::Trace>& traces, const QStringList& modelNames);
    // -1 shows the mean over heads; a model with fewer heads shows its mean.
    void setHead(int head);
    int head() const;
    void clear();

    // The heatmap of `model` at `step` (1-based) and the head it shows (-1: mean), for inspection.
    double weight(int model, int step, int head, int target, int source) const;

    QString toolTipAt(const QPoint& pos) const override;

    // The grid in `size` as render() draws it when every map fits with a label per token (in a smaller
    // font at the least); otherwise as the screen shows it: the maps at the size the screen gives them,
    // cut to the rows that fit from the top (the rest scrolls on screen). For pictures of the whole
    // dashboard, where the view keeps its on-screen share.
    void paintReadable(QPainter& painter, QSize size);
    // The height the whole grid needs at `width` with its maps in rows of at most `columns`, each row
    // as full as the others: for figures as tall as their content.
    int heightFor(int width, int columns) const;
    QImage renderReadable(QSize size);

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
    static bool hasAttention(const ndr::Trace& t);
    static QStringList tokenLabels(const ndr::Trace& t);
    Hit hitAt(const QPoint& pos) const;
    int shownHead(int model) const;
    void fill();

    // Layout (attentiongridlayout.cpp). Only the first column shows the target tokens and only a
    // model's last row the source tokens, as in a facet grid, so the maps keep the room.
    struct Margins {
        int labelLeft, plainLeft, right, top, labelBottom, plainBottom, title, titleWidth;
    };
    struct Geometry {
        int columns = 1, side = 0, every = 1; // map side in pixels; label every how many tokens
        double labelScale = 1;                // of labelFont(): exports shrink labels rather than skip any
        QSize needed;                         // the whole grid
        bool scroll = false;
        int visibleHeight = 0; // of the area the grid is shown in
    };
    Margins margins() const;
    int mapRows(int columns) const; // rows of maps of all models
    QSize neededSize(int columns, int side) const;
    int sideFor(int columns, QSize size) const;
    Geometry geometryFor(QSize size, bool screen) const;
    void rebuild(int columns);
    void applyGeometry(const Geometry& g);
    // Lays the maps out for `size` (as the screen would: `screen`), rebuilding them for another number
    // of columns; returns the geometry applied.
    Geometry arrange(QSize size, bool screen);
    QFont labelFont() const;

    int scaleWidth_ = 80; // measured after each rebuild
    std::vector<ndr::Trace> traces_;
    QStringList names_;
    std::vector<Map> maps_;
    QComboBox* head_;
    QScrollArea* scroll_;
    QCPColorScale* scale_ = nullptr;
    std::vector<std::pair<int, QCPTextElement*>> titles_; // model, its title over its rows
    int columns_ = 0;
    QPoint pressPos_;
};

} // namespace ndrui
