#include "summary/summarypage.h"

#include "diode/analysis/wording.h"

#include <QHeaderView>
#include <QLabel>
#include <QTableWidget>
#include <QVBoxLayout>

SummaryPage::SummaryPage(QWidget *parent)
    : QWidget(parent)
    , m_title(new QLabel(this))
    , m_counts(new QLabel(this))
    , m_runs(new QTableWidget(this)) {
    m_title->setObjectName("summaryTitle");
    m_counts->setObjectName("summaryCounts");
    m_runs->setObjectName("runsTable");
    QFont f = m_title->font();
    f.setPointSizeF(f.pointSizeF() * 1.4);
    f.setBold(true);
    m_title->setFont(f);
    m_counts->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_runs->setColumnCount(7);
    m_runs->setHorizontalHeaderLabels(
        {"Run", "Backend", "Hardware", "Status", "Problems planned", "Torch", "Created"});
    m_runs->horizontalHeader()->setStretchLastSection(true);
    m_runs->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_runs->verticalHeader()->hide();
    auto *layout = new QVBoxLayout(this);
    layout->addWidget(m_title);
    layout->addWidget(m_counts);
    layout->addWidget(m_runs, 1);
    setMessage(tr("No database open."));
}

void SummaryPage::setMessage(const QString &text) {
    m_title->setText(text);
    m_counts->clear();
    m_runs->setRowCount(0);
}

namespace {

QString glitches(const diode::StoreStats &st) {
    const auto &m = st.measurementsByMethod;
    if (!m.count(std::string(diode::toString(diode::TimingMethod::GraphWarm))) ||
        !m.count(std::string(diode::toString(diode::TimingMethod::GraphCold))))
        return QObject::tr("— (no in-graph warm and cold times to compare)");
    if (st.warmColdGlitches == 0)
        return QObject::tr("none (no candidate's warm time is implausibly above its cold one)");
    return QString::fromStdString(st.warmColdGlitchNote());
}

} // namespace

void SummaryPage::setSummary(const DatasetSummary &s) {
    auto join = [](const std::vector<std::string> &v) {
        QStringList l;
        for (const auto &x : v)
            l << QString::fromStdString(x);
        return l.isEmpty() ? QStringLiteral("—") : l.join(QStringLiteral(", "));
    };
    m_title->setText(s.path);
    const auto &st = s.stats;
    QStringList methods;
    for (const auto &[method, n] : st.measurementsByMethod)
        methods << tr("%1 %2").arg(QString::fromStdString(method)).arg(n);
    if (methods.isEmpty())
        methods << QStringLiteral("—");
    m_counts->setText(
        tr("<table cellspacing=4>"
           "<tr><td><b>Runs</b></td><td>%1</td></tr>"
           "<tr><td><b>Problems</b></td><td>%2 (%3 failed); a line is a problem in one run, as the "
           "Data page lists them</td></tr>"
           "<tr><td><b>Measurements</b></td><td>%4 (%5 failed)</td></tr>"
           "<tr><td><b>Kernel configs</b></td><td>%6</td></tr>"
           "<tr><td><b>Hardware</b></td><td>%7</td></tr>"
           "<tr><td><b>Ops</b></td><td>%8</td></tr>"
           "<tr><td><b>Dtypes</b></td><td>%9</td></tr>"
           "<tr><td><b>Timing methods</b></td><td>%10</td></tr>"
           "<tr><td><b>Default method</b></td><td>%11</td></tr>"
           "<tr><td><b>Timing glitches</b></td><td>%12</td></tr>"
           "<tr><td><b>Kernel and site lines</b></td><td>%13</td></tr></table>")
            .arg(st.runs)
            .arg(QString::fromStdString(diode::problemCount(size_t(st.problems), size_t(st.problemLines))))
            .arg(st.failedProblems)
            .arg(st.measurements)
            .arg(st.failedMeasurements)
            .arg(st.configs)
            .arg(join(st.gpus), join(st.ops), join(st.dtypes), methods.join(QStringLiteral(", ")),
                 QString::fromStdString(st.defaultMethod.describe()), glitches(st))
            .arg(st.caseLinesNote().empty()
                     ? tr("— (diode sweep-kernels measures them, diode import stores them)")
                     : QString::fromStdString(st.caseLinesNote())));
    m_runs->setRowCount(int(s.runs.size()));
    for (int i = 0; i < int(s.runs.size()); ++i) {
        const auto &r = s.runs[size_t(i)];
        const QStringList cells{QString::number(r.id),
                                QString::fromStdString(r.backend),
                                QString::fromStdString(r.gpuName),
                                QString::fromStdString(r.status),
                                QString::number(r.problemsPlanned),
                                QString::fromStdString(r.torchVersion),
                                QString::fromStdString(r.createdAt)};
        for (int c = 0; c < cells.size(); ++c)
            m_runs->setItem(i, c, new QTableWidgetItem(cells[c]));
    }
    m_runs->resizeColumnsToContents();
}
