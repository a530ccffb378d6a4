// Palette, replot, fit, tooltip and export behaviour shared by the dashboard plots (see plotview.h).
#include "ui/plots/plot_view.h"

#include "ui/plots/figure.h"
#include "ui/plots/plot_style.h"

#include <QAbstractScrollArea>
#include <QCoreApplication>
#include <QEvent>
#include <QFontMetrics>
#include <QHBoxLayout>
#include <QMouseEvent>
#include <QPicture>
#include <QScrollBar>
#include <QToolTip>
#include <QVBoxLayout>
#include <QWheelEvent>
#include <algorithm>
#include <qcustomplot.h>

namespace ndrui {

PlotView::PlotView(QWidget* parent)
    : QWidget(parent), plot_(new QCustomPlot(this)), root_(new QVBoxLayout(this)) {
    root_->setContentsMargins(0, 0, 0, 0);
    root_->setSpacing(2);
    root_->addWidget(plot_, 1);
    // The plot's own minimum follows its legend and labels; a small fixed one lets the dashboard's
    // splitters give a view less room, and the legend wraps to fit instead of widening the window.
    plot_->setMinimumSize(kMinimumPlotSize);
    plot_->setMouseTracking(true);
    plot_->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
    plot_->setNoAntialiasingOnDrag(true);
    plot_->installEventFilter(this);

    // Following the data stops when the user moves the view, so streaming points do not undo a zoom.
    connect(plot_, &QCustomPlot::mouseWheel, this, [this] { following_ = false; });
    connect(plot_, &QCustomPlot::mouseMove, this, [this](QMouseEvent* e) {
        if (e->buttons() & Qt::LeftButton)
            following_ = false;
        const QString text = toolTipAt(e->pos());
        if (text.isEmpty())
            QToolTip::hideText();
        else
            QToolTip::showText(e->globalPosition().toPoint(), text, plot_);
    });
    connect(plot_, &QCustomPlot::mouseDoubleClick, this, [this] { fitToData(); });
    connect(plot_, &QCustomPlot::afterLayout, this, [this] { keepRectHeight(); });
    connect(plot_, &QCustomPlot::beforeReplot, this, [this] {
        wrapLegend(plot_, plot_->width());
        // About one number per 80 pixels along a bottom axis, so that labels such as "5000" never run
        // together on a narrow plot, and one per 28 pixels up a left axis (two lines of text), so that
        // a short plot at a laptop's size labels 0, 0.5 and 1 rather than six crowded numbers. Tickers
        // with fixed steps or fixed labels ignore the count.
        for (QCPAxisRect* rect : plot_->axisRects()) {
            QCPAxis* x = rect->axis(QCPAxis::atBottom);
            if (x && x->ticker())
                x->ticker()->setTickCount(std::clamp(rect->width() / 80, 2, 8));
            QCPAxis* y = rect->axis(QCPAxis::atLeft);
            if (y && y->ticker())
                y->ticker()->setTickCount(std::clamp(rect->height() / 28, 2, 5));
        }
        if (following_)
            fitRanges();
    });
}

bool PlotView::eventFilter(QObject* watched, QEvent* event) {
    // Inside a scrolling page the wheel scrolls the page and Ctrl+wheel zooms; elsewhere the wheel
    // zooms.
    if (watched == plot_ && event->type() == QEvent::Wheel) {
        auto* wheel = static_cast<QWheelEvent*>(event);
        if (!(wheel->modifiers() & Qt::ControlModifier))
            for (QWidget* w = parentWidget(); w; w = w->parentWidget())
                if (auto* area = qobject_cast<QAbstractScrollArea*>(w)) {
                    QCoreApplication::sendEvent(area->verticalScrollBar(), event);
                    return true;
                }
    }
    return QWidget::eventFilter(watched, event);
}

QHBoxLayout* PlotView::controls() {
    if (!controls_) {
        controls_ = new QHBoxLayout;
        controls_->setContentsMargins(6, 2, 6, 0);
        root_->insertLayout(0, controls_);
    }
    return controls_;
}

void PlotView::fitToData() {
    following_ = true;
    requestReplot();
}

void PlotView::setLeastRectHeight(int pixels) {
    leastRectHeight_ = pixels;
    requestReplot();
}

void PlotView::keepRectHeight() {
    // Laid out for the screen only: an export lays the plot out at its own size.
    if (leastRectHeight_ <= 0 || !isVisible() || plot_->viewport().size() != plot_->size())
        return;
    const QList<QCPAxisRect*> rects = plot_->axisRects();
    if (rects.isEmpty())
        return;
    // What each rect needs inside its axes: the least height, or more where the left axis's label is
    // longer than the rect with its margins (the label would be cut). Each rect keeps that as its
    // minimum, and the plot's minimum is what is not inside a rect (title, legend, tick and axis
    // labels) in the layout just made plus those minimums. A plot squeezed below its elements'
    // minimums shares the shortfall among its rows, so this undercounts then; the next replot, laid
    // out at the larger minimum, counts right.
    int least = plot_->height();
    bool changed = false;
    for (QCPAxisRect* rect : rects) {
        int inside = leastRectHeight_;
        if (const QCPAxis* y = rect->axis(QCPAxis::atLeft); y && y->visible() && !y->label().isEmpty()) {
            const int label = QFontMetrics(y->labelFont()).horizontalAdvance(y->label()) + 4; // and a gap
            inside = std::max(inside, label - (rect->outerRect().height() - rect->height()));
        }
        least += inside - rect->height();
        if (rect->minimumSize().height() != inside) {
            rect->setMinimumSize(rect->minimumSize().width(), inside);
            changed = true;
        }
    }
    least = std::max(kMinimumPlotSize.height(), least);
    // After the replot: a larger minimum resizes the plot at once, and QCustomPlot takes a resize in
    // the middle of its replot for the old size.
    if (least != plot_->minimumHeight() || changed) {
        QMetaObject::invokeMethod(
            plot_,
            [plot = plot_, least] {
                plot->setMinimumHeight(least);
                plot->replot(QCustomPlot::rpQueuedReplot);
            },
            Qt::QueuedConnection);
    }
}

void PlotView::requestReplot() {
    plot_->replot(QCustomPlot::rpQueuedReplot);
}

void PlotView::applyPalette() {
    stylePlot(plot_, palette());
    requestReplot();
}

void PlotView::changeEvent(QEvent* event) {
    if (event->type() == QEvent::PaletteChange)
        applyPalette();
    QWidget::changeEvent(event);
}

void PlotView::paint(QPainter& painter, QSize size) {
    layoutFor(size);
    wrapLegend(plot_, size.width());
    if (following_)
        fitRanges();
    drawPlot(painter, size);
    layoutFor(QSize());
    wrapLegend(plot_, plot_->width());
}

void PlotView::drawPlot(QPainter& painter, QSize size) {
    if (QCPPainter* qcp = figurePainter(painter)) {
        plot_->toPainter(qcp, size.width(), size.height());
    } else {
        // A plain QPainter: QCustomPlot draws with its own painter, on a picture that is then played
        // back as the same drawing commands (text as text).
        QPicture picture;
        QCPPainter recorder(&picture);
        recorder.setMode(QCPPainter::pmVectorized);
        plot_->toPainter(&recorder, size.width(), size.height());
        recorder.end();
        painter.drawPicture(0, 0, picture);
    }
}

QImage PlotView::render(QSize size) {
    return paintImage({size}, [this](QPainter& p, QSize s) { paint(p, s); });
}

} // namespace ndrui
