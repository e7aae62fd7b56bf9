#pragma once

#include "summary/storeloader.h"

#include <QWidget>

class QLabel;
class QTableWidget;

/// The dataset summary: counts, GPUs, ops and dtypes, and one row per run. Only draws.
class SummaryPage : public QWidget {
    Q_OBJECT
public:
    explicit SummaryPage(QWidget *parent = nullptr);
    void setSummary(const DatasetSummary &summary);
    void setMessage(const QString &text);

private:
    QLabel *m_title;
    QLabel *m_counts;
    QTableWidget *m_runs;
};
