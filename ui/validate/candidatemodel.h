#pragma once

#include "diode/infer/kernelconfig.h"

#include <QAbstractTableModel>
#include <QStringList>
#include <QVector>

/// One candidate of the problem opened on the Validate page.
struct CandidateRow {
    QString config;
    double measuredMs = 0;       ///< NaN: no timing
    int measuredRank = 0;        ///< 1 = fastest; 0 without a timing
    double efficiency = 0;       ///< best measured time of the problem / this one's
    QVector<double> predictedMs; ///< per model
    QVector<int> modelRank;      ///< per model, 1 = predicted fastest
};

/// All candidates of one problem, ranked by each model and by measurement.
class CandidateModel : public QAbstractTableModel {
    Q_OBJECT
public:
    using QAbstractTableModel::QAbstractTableModel;
    void setResults(const QStringList &modelNames, const QVector<CandidateRow> &rows);

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    QStringList m_models;
    QVector<CandidateRow> m_rows;
};
