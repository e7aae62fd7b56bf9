#pragma once

#include <QAbstractTableModel>
#include <QVector>

class WorkbenchState;

/// A model package the workbench knows of: shipped, trained here, or opened.
struct KnownModel {
    QString path;
    QString name;         ///< the file's name without .diode (diode::packageName), as every list shows it
    QString manifestName; ///< what the manifest calls it, where that differs
    QString createdAt;
    QString gpu;          ///< the GPU it was trained on (manifest hardware.gpu)
    QString timingMethod; ///< the times it learnt from: graph_warm, graph_cold, inductor_autotune, cpu
    /// What the lists show: the name, the GPU and the truth ("warm · NVIDIA H200 · graph_warm"), or
    /// "(cpu model)" for one trained on cpu-backend times.
    QString label;
    double testTop1 = 0; ///< top-1 efficiency on the training run's own test split
    int problems = 0;    ///< problems it was trained on
};

/// The packages the Train, Validate and Export pages offer: the shipped ones
/// (core/infer/diode/infer/shippeddata.h, kModelDirectory), then those trained or opened here, newest last,
/// remembered across sessions (QSettings "models/known"). One list per WorkbenchState, shared by
/// the pages.
class ModelList : public QAbstractTableModel {
    Q_OBJECT
public:
    explicit ModelList(QObject *parent = nullptr);
    /// The list that belongs to `state` (created on first use as its child).
    static ModelList *of(WorkbenchState *state);

    /// Adds (or refreshes) the package at `path`; returns its row, or -1 with `error` set when
    /// it is not a readable package.
    int add(const QString &path, QString *error = nullptr);
    const KnownModel &at(int row) const { return m_models[row]; }
    int rowOf(const QString &path) const;
    QVector<KnownModel> models() const { return m_models; }
    /// The package that fits data of `gpu` read with `method` (diode::packageForData), or empty.
    QString packageForData(const QString &gpu, const QString &method) const;
    /// Whether the package at `path` fits that data (diode::fitsData); false when not listed.
    bool fitsData(const QString &path, const QString &gpu, const QString &method) const;

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    void save() const;
    QVector<KnownModel> m_models;
};
