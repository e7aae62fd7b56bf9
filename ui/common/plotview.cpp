#include "common/plotview.h"

#include <qcustomplot.h>

#include <QAction>
#include <QTimer>
#include <QToolTip>

#include <cmath>

namespace {

QString number(double v) {
    return QString::number(v, 'g', 4);
}

QString oneLine(QString s) {
    return s.replace(QLatin1Char('\n'), QLatin1Char(' '));
}

// The text tick nearest `key` on a text-ticked axis (bar charts name their groups so).
QString tickAt(QCPAxis *axis, double key) {
    const auto text = qSharedPointerDynamicCast<QCPAxisTickerText>(axis->ticker());
    if (!text || text->ticks().isEmpty())
        return number(key);
    auto best = text->ticks().constBegin();
    for (auto it = text->ticks().constBegin(); it != text->ticks().constEnd(); ++it)
        if (std::abs(it.key() - key) < std::abs(best.key() - key))
            best = it;
    return oneLine(best.value());
}

QString defaultTip(QCPAbstractPlottable *p, int index) {
    QCPAxis *x = p->keyAxis(), *y = p->valueAxis();
    const QString name =
        p->name().isEmpty() ? QString() : QStringLiteral("<b>%1</b><br>").arg(p->name().toHtmlEscaped());
    if (auto *g = qobject_cast<QCPGraph *>(p)) {
        if (index < 0 || index >= g->dataCount())
            return {};
        const auto it = g->data()->at(index);
        return name + QStringLiteral("%1: %2<br>%3: %4")
                          .arg(oneLine(x->label()).toHtmlEscaped(), number(it->key),
                               oneLine(y->label()).toHtmlEscaped(), number(it->value));
    }
    if (auto *b = qobject_cast<QCPBars *>(p)) {
        if (index < 0 || index >= b->dataCount())
            return {};
        const auto it = b->data()->at(index);
        return name + QStringLiteral("%1<br>%2: %3")
                          .arg(tickAt(x, it->key).toHtmlEscaped(), oneLine(y->label()).toHtmlEscaped(),
                               number(it->value));
    }
    return {};
}

} // namespace

PlotView::PlotView(QCustomPlot *plot)
    : QObject(plot)
    , m_plot(plot)
    , m_tipDelay(new QTimer(this)) {
    setObjectName(QStringLiteral("plotView"));
    plot->setInteractions(plot->interactions() | QCP::iRangeDrag | QCP::iRangeZoom);
    plot->setMouseTracking(true);
    m_tipDelay->setSingleShot(true);
    m_tipDelay->setInterval(40);
    connect(m_tipDelay, &QTimer::timeout, this, &PlotView::showTip);
    connect(plot, &QCustomPlot::mouseWheel, this, [this] { m_userEvent = true; });
    connect(plot, &QCustomPlot::mouseMove, this, [this](QMouseEvent *e) {
        if (e->buttons() != Qt::NoButton) {
            m_userEvent = true; // a drag pans
            QToolTip::hideText();
            return;
        }
        m_tipPos = e->position();
        m_tipDelay->start();
    });
    connect(plot, &QCustomPlot::mouseDoubleClick, this, &PlotView::reset);
    connect(plot, &QCustomPlot::afterReplot, this, &PlotView::afterReplot);
    auto *resetAction = new QAction(tr("Reset view (double-click)"), plot);
    resetAction->setObjectName(QStringLiteral("resetView"));
    connect(resetAction, &QAction::triggered, this, &PlotView::reset);
    plot->setContextMenuPolicy(Qt::ActionsContextMenu);
    plot->addAction(resetAction);
    m_home = ranges();
}

PlotView *PlotView::of(QCustomPlot *plot) {
    if (auto *view = plot->findChild<PlotView *>(QStringLiteral("plotView"), Qt::FindDirectChildrenOnly))
        return view;
    return new PlotView(plot);
}

QMap<QCPAxis *, QPair<double, double>> PlotView::ranges() const {
    QMap<QCPAxis *, QPair<double, double>> out;
    if (!m_plot->axisRect())
        return out;
    for (QCPAxis *axis : m_plot->axisRect()->axes())
        out.insert(axis, {axis->range().lower, axis->range().upper});
    return out;
}

// A replot after the wheel or a drag shows the user's view; one after the plot set ranges of its
// own (new data) shows the data's view, the new home.
void PlotView::afterReplot() {
    const auto now = ranges();
    if (m_userEvent) {
        m_userEvent = false;
        m_moved = true;
        m_userView = now;
        return;
    }
    if (!m_moved || now != m_userView) {
        m_moved = false;
        m_home = now;
    }
}

void PlotView::showRange(QCPAxis *axis, const QCPRange &range) {
    m_home.insert(axis, {range.lower, range.upper});
    if (!m_moved)
        axis->setRange(range);
}

void PlotView::setTips(const QHash<const QCPAbstractPlottable *, QStringList> *tips) {
    setTip([tips](QCPAbstractPlottable *p, int i) {
        const QStringList list = tips->value(p);
        return i >= 0 && i < list.size() ? list[i] : QString();
    });
}

void PlotView::zoomValuesOnly() {
    m_plot->axisRect()->setRangeDrag(Qt::Vertical);
    m_plot->axisRect()->setRangeZoom(Qt::Vertical);
}

void PlotView::reset() {
    for (auto it = m_home.constBegin(); it != m_home.constEnd(); ++it)
        it.key()->setRange(it.value().first, it.value().second);
    m_moved = false;
    m_userEvent = false;
    m_plot->replot();
}

QString PlotView::tipAt(const QPointF &pos) const {
    if (!m_tipsOn || !m_plot->axisRect() || !m_plot->axisRect()->rect().contains(pos.toPoint()))
        return {};
    QCPAbstractPlottable *nearest = nullptr;
    int index = -1;
    double distance = m_plot->selectionTolerance();
    for (int i = m_plot->plottableCount() - 1; i >= 0; --i) { // the top-most first
        QCPAbstractPlottable *p = m_plot->plottable(i);
        if (!p->realVisibility())
            continue;
        if (auto *map = qobject_cast<QCPColorMap *>(p)) {
            double key = 0, value = 0;
            map->pixelsToCoords(pos, key, value);
            int cx = -1, cy = -1;
            map->data()->coordToCell(key, value, &cx, &cy);
            if (cx < 0 || cy < 0 || cx >= map->data()->keySize() || cy >= map->data()->valueSize())
                continue;
            const double v = map->data()->cell(cx, cy);
            if (std::isnan(v))
                continue;
            if (m_tip)
                if (const QString t = m_tip(map, cy * map->data()->keySize() + cx); !t.isEmpty())
                    return t;
            return QStringLiteral("%1: %2<br>%3: %4<br>%5")
                .arg(oneLine(map->keyAxis()->label()).toHtmlEscaped(), tickAt(map->keyAxis(), key),
                     oneLine(map->valueAxis()->label()).toHtmlEscaped(), tickAt(map->valueAxis(), value),
                     number(v));
        }
        QVariant details;
        const double d = p->selectTest(pos, false, &details);
        if (d < 0 || d > distance || (nearest && d >= distance)) // ties: the top-most
            continue;
        const auto selection = details.value<QCPDataSelection>();
        if (selection.isEmpty())
            continue;
        nearest = p;
        index = selection.dataRange().begin();
        distance = d;
    }
    if (!nearest)
        return {};
    // A whisker says what its bar says: error bars are index for index the points of the plottable
    // they belong to.
    if (auto *errors = qobject_cast<QCPErrorBars *>(nearest); errors && errors->dataPlottable())
        nearest = errors->dataPlottable();
    if (m_tip)
        if (const QString t = m_tip(nearest, index); !t.isEmpty())
            return t;
    return defaultTip(nearest, index);
}

void PlotView::showTip() {
    const QString text = tipAt(m_tipPos);
    if (text.isEmpty())
        QToolTip::hideText();
    else
        QToolTip::showText(m_plot->mapToGlobal(m_tipPos.toPoint()), text, m_plot);
}
