#pragma once

#include <QObject>
#include <QString>
#include <QStringList>

/// What every page shares: the open database, the model package in use, this machine's GPUs and
/// the problem selected. Pages listen to the signals; nobody else keeps a copy of these.
class WorkbenchState : public QObject {
    Q_OBJECT
public:
    using QObject::QObject;

    QString databasePath() const { return m_database; }
    QString packagePath() const { return m_package; }
    /// Read-only databases (the shipped dataset) are shown but never written: sweeps and
    /// predictions go to a database the user chose.
    bool databaseReadOnly() const { return m_readOnly; }

    /// The open data's truth: the timing method train, eval and Validate read by default
    /// ("graph_warm" for in-graph data; diode::defaultTimingMethod), so every page shows the same
    /// times first. Empty when the opener did not say (a page then finds it out itself).
    QString dataMethod() const { return m_dataMethod; }

    /// The GPU most of the open data's problems were measured on (empty for cpu data, or when the
    /// opener did not say): the models offered for the data are those made for it.
    QString dataGpu() const { return m_dataGpu; }

    void setDatabase(const QString &path, bool readOnly, const QString &dataMethod = {},
                     const QString &dataGpu = {}) {
        m_database = path;
        m_readOnly = readOnly;
        m_dataMethod = dataMethod;
        m_dataGpu = dataGpu;
        emit databaseChanged(path);
    }
    void setPackage(const QString &path) {
        m_package = path;
        emit packageChanged(path);
    }
    /// Something wrote to the open database (a sweep, a training run's predictions).
    void notifyDataChanged() { emit dataChanged(); }

    /// The GPUs of this machine, once the Hardware page has read them: the flows that need one
    /// (an inductor sweep, characterising a GPU) are offered only where there is one.
    bool localGpusKnown() const { return m_gpusKnown; }
    QStringList localGpus() const { return m_gpus; }
    void setLocalGpus(const QStringList &names) {
        m_gpus = names;
        m_gpusKnown = true;
        emit localGpusChanged(names);
    }

    /// The problem selected on one page (GemmProblem::label()), shown on the others: Validate,
    /// Bias and Data select it too (linked selection). `from` is the page's objectName, so a page
    /// does not answer its own selection.
    QString selectedProblem() const { return m_problem; }
    void selectProblem(const QString &label, const QString &from) {
        if (label == m_problem)
            return;
        m_problem = label;
        emit problemSelected(label, from);
    }

signals:
    void databaseChanged(const QString &path);
    void packageChanged(const QString &path);
    void dataChanged();
    void localGpusChanged(const QStringList &names);
    void problemSelected(const QString &label, const QString &from);

private:
    QString m_database;
    QString m_package;
    QString m_dataMethod;
    QString m_dataGpu;
    QString m_problem;
    QStringList m_gpus;
    bool m_gpusKnown = false;
    bool m_readOnly = false;
};
