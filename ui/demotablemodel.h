#pragma once

#include "diode/demoresult.h"

#include <QAbstractTableModel>

/// One row per case and mode of a demo result: times, speed-ups against max-autotune, errors.
class DemoTableModel : public QAbstractTableModel {
    Q_OBJECT
public:
    using QAbstractTableModel::QAbstractTableModel;
    void setResults(const diode::DemoResult &result);

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

    /// Compile-time speed-up of `mode` against max-autotune on `c`, or NaN.
    static double compileSpeedup(const diode::DemoCase &c, const std::string &mode);
    /// Kernel speed of `mode` against max-autotune (max-autotune's time / this one's), or NaN.
    static double kernelSpeed(const diode::DemoCase &c, const std::string &mode);

private:
    struct Row {
        const diode::DemoCase *c;
        std::string mode;
    };
    diode::DemoResult m_result;
    QVector<Row> m_rows;
};
