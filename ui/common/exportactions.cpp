#include "common/exportactions.h"
#include "common/plotview.h"

#include <QAction>
#include <QDir>
#include <QFile>
#include <QFileDialog>
#include <QMainWindow>
#include <QMessageBox>
#include <QStatusBar>
#include <QTableView>
#include <QTextStream>

#include <qcustomplot.h>

#include <algorithm>

namespace {

QString csvField(QString s) {
    if (s.contains(',') || s.contains('"') || s.contains('\n'))
        s = '"' + s.replace('"', "\"\"") + '"';
    return s;
}

void reportPlotSaved(QWidget *parent, bool ok, const QString &path) {
    if (!ok)
        QMessageBox::warning(parent, QObject::tr("Export failed"),
                             QObject::tr("Could not write %1").arg(path));
    else
        reportSaved(parent, QObject::tr("Plot saved to %1").arg(QDir::toNativeSeparators(path)));
}

} // namespace

void reportSaved(QWidget *from, const QString &what) {
    if (auto *main = qobject_cast<QMainWindow *>(from->window())) {
        main->statusBar()->showMessage(what, 15000);
        return;
    }
    auto *box = new QMessageBox(QMessageBox::Information, QObject::tr("Saved"), what, QMessageBox::Ok, from);
    box->setObjectName(QStringLiteral("savedMessage"));
    box->setAttribute(Qt::WA_DeleteOnClose);
    box->open();
}

void addPlotExport(QCustomPlot *plot, const QString &baseName) {
    PlotView::of(plot); // zoom, pan, reset and tooltips: every plot has them, as every plot exports
    plot->setContextMenuPolicy(Qt::ActionsContextMenu);
    auto *png = new QAction(QObject::tr("Save plot as PNG…"), plot);
    auto *pdf = new QAction(QObject::tr("Save plot as PDF…"), plot);
    QObject::connect(png, &QAction::triggered, plot, [plot, baseName] {
        const QString path =
            QFileDialog::getSaveFileName(plot, QObject::tr("Save plot"), baseName + ".png", "PNG (*.png)");
        if (!path.isEmpty())
            reportPlotSaved(plot, plot->savePng(path, 0, 0, 2.0), path);
    });
    QObject::connect(pdf, &QAction::triggered, plot, [plot, baseName] {
        const QString path =
            QFileDialog::getSaveFileName(plot, QObject::tr("Save plot"), baseName + ".pdf", "PDF (*.pdf)");
        if (!path.isEmpty())
            reportPlotSaved(plot, plot->savePdf(path), path);
    });
    plot->addAction(png);
    plot->addAction(pdf);
}

void addTableExport(QTableView *view, const QString &baseName) {
    view->setContextMenuPolicy(Qt::ActionsContextMenu);
    auto *csv = new QAction(QObject::tr("Save table as CSV…"), view);
    QObject::connect(csv, &QAction::triggered, view, [view, baseName] {
        const QString path =
            QFileDialog::getSaveFileName(view, QObject::tr("Save table"), baseName + ".csv", "CSV (*.csv)");
        if (path.isEmpty() || !view->model())
            return;
        const QString err = saveModelCsv(view->model(), path);
        if (!err.isEmpty())
            QMessageBox::warning(view, QObject::tr("Export failed"), err);
        else
            reportSaved(view, QObject::tr("Table saved to %1 (%2 rows)")
                                  .arg(QDir::toNativeSeparators(path))
                                  .arg(view->model()->rowCount()));
    });
    view->addAction(csv);
}

QString saveModelCsv(const QAbstractItemModel *model, const QString &path) {
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly | QIODevice::Truncate | QIODevice::Text))
        return QObject::tr("Could not write %1: %2").arg(path, f.errorString());
    QTextStream out(&f);
    QStringList row;
    for (int c = 0; c < model->columnCount(); ++c)
        row << csvField(model->headerData(c, Qt::Horizontal).toString());
    out << row.join(',') << '\n';
    // Item models over the store page their rows in: fetch everything before writing.
    auto *m = const_cast<QAbstractItemModel *>(model);
    while (m->canFetchMore({}))
        m->fetchMore({});
    for (int r = 0; r < model->rowCount(); ++r) {
        row.clear();
        for (int c = 0; c < model->columnCount(); ++c)
            row << csvField(model->index(r, c).data().toString());
        out << row.join(',') << '\n';
    }
    out.flush();
    if (f.error() != QFile::NoError)
        return QObject::tr("Could not write %1: %2").arg(path, f.errorString());
    return {};
}

void legendBelowAxes(QCustomPlot *plot, int columns) {
    plot->legend->setVisible(true);
    plot->legend->setFillOrder(QCPLegend::foColumnsFirst);
    if (columns > 0)
        plot->legend->setWrap(columns);
    plot->axisRect()->insetLayout()->take(plot->legend);
    const int row = plot->plotLayout()->rowCount();
    plot->plotLayout()->addElement(row, 0, plot->legend);
    plot->plotLayout()->setRowStretchFactor(row, 0.001);
}

QCPGraph *addRingGraph(QCustomPlot *plot) {
    QCPGraph *ring = plot->addGraph();
    ring->setLineStyle(QCPGraph::lsNone);
    ring->setScatterStyle(QCPScatterStyle(
        QCPScatterStyle::ssCircle, QPen(plot->palette().color(QPalette::WindowText), 2), Qt::NoBrush, 12));
    ring->setAdaptiveSampling(false);
    ring->removeFromLegend();
    return ring;
}

void showRing(QCPGraph *ring, QVector<QCPGraphData> points, const QString &name) {
    std::sort(points.begin(), points.end(),
              [](const QCPGraphData &a, const QCPGraphData &b) { return a.key < b.key; });
    ring->data()->set(points, true);
    ring->setName(QObject::tr("%1 (ringed)").arg(name));
    if (points.isEmpty())
        ring->removeFromLegend();
    else
        ring->addToLegend();
}

void setLogScale(QCPAxis *axis, const QString &format, int precision) {
    axis->setScaleType(QCPAxis::stLogarithmic);
    axis->setTicker(QSharedPointer<QCPAxisTickerLog>(new QCPAxisTickerLog));
    if (!format.isEmpty())
        axis->setNumberFormat(format);
    if (precision >= 0)
        axis->setNumberPrecision(precision);
}

void applyPalette(QCustomPlot *plot) {
    const QPalette pal = plot->palette();
    const QColor fg = pal.color(QPalette::WindowText);
    const QColor bg = pal.color(QPalette::Base);
    const QColor grid = pal.color(QPalette::Mid);
    plot->setBackground(bg);
    for (QCPAxis *axis : plot->axisRect() ? plot->axisRect()->axes() : QList<QCPAxis *>()) {
        axis->setBasePen(QPen(fg));
        axis->setTickPen(QPen(fg));
        axis->setSubTickPen(QPen(fg));
        axis->setTickLabelColor(fg);
        axis->setLabelColor(fg);
        axis->grid()->setPen(QPen(grid, 0, Qt::DotLine));
    }
    if (plot->legend) {
        plot->legend->setBrush(bg);
        plot->legend->setTextColor(fg);
        plot->legend->setBorderPen(QPen(grid));
    }
    for (QCPLayoutElement *element : plot->plotLayout()->elements(true))
        if (auto *text = qobject_cast<QCPTextElement *>(element)) // titles (PlotTitle)
            text->setTextColor(fg);
}
