#pragma once

#include "diode/analysis/demoresult.h"

#include <QAbstractTableModel>
#include <QVector>

/// The largest kernels of one model step, per mode (plain torch.compile first, max-autotune
/// second, then the others): name, kind, microseconds a step and share of the step. The table under
/// "where the time goes".
class DemoKernelModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { Mode, Kernel, Category, Us, Share, Count };
    /// Kernels listed per mode, the largest first.
    static constexpr int kPerMode = 8;
    using QAbstractTableModel::QAbstractTableModel;
    void setResults(const diode::DemoCase &step, const std::vector<std::string> &modes);

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    struct Row {
        QString mode;
        diode::DemoKernel kernel;
        double stepUs = 0;
    };
    QVector<Row> m_rows;
};
