#pragma once

#include <QAbstractTableModel>
#include <QVector>

class WorkbenchState;

/// A model package the workbench knows of: shipped, trained here, or opened.
struct KnownModel {
    QString path, name, createdAt;
    double testTop1 = 0; ///< top-1 efficiency on the training run's own test split
    int problems = 0;    ///< problems it was trained on
};

/// The packages the Train, Validate and Export pages offer, newest last, remembered across
/// sessions (QSettings "models/known"). One list per WorkbenchState, shared by the pages.
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

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    void save() const;
    QVector<KnownModel> m_models;
};
