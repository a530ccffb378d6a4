// Palette, replot, fit, tooltip and export behaviour shared by the dashboard plots (see plotview.h).
#include "ui/plots/plot_view.h"

#include "ui/plots/plot_style.h"

#include <QAbstractScrollArea>
#include <QCoreApplication>
#include <QEvent>
#include <QHBoxLayout>
#include <QMouseEvent>
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

QImage PlotView::render(QSize size) {
    layoutFor(size);
    wrapLegend(plot_, size.width());
    if (following_)
        fitRanges();
    const QImage image = plot_->toPixmap(size.width(), size.height()).toImage();
    layoutFor(QSize());
    wrapLegend(plot_, plot_->width());
    return image;
}

bool PlotView::savePng(const QString& path, int width, int height) {
    return render(QSize(width, height)).save(path, "PNG");
}

} // namespace ndrui
