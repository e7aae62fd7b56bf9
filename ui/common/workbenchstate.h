#pragma once

#include <QObject>
#include <QString>

/// What every page shares: the open database and the model package in use. Pages listen to
/// the signals; nobody else keeps a copy of these paths.
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

    void setDatabase(const QString &path, bool readOnly, const QString &dataMethod = {}) {
        m_database = path;
        m_readOnly = readOnly;
        m_dataMethod = dataMethod;
        emit databaseChanged(path);
    }
    void setPackage(const QString &path) {
        m_package = path;
        emit packageChanged(path);
    }
    /// Something wrote to the open database (a sweep, a training run's predictions).
    void notifyDataChanged() { emit dataChanged(); }

signals:
    void databaseChanged(const QString &path);
    void packageChanged(const QString &path);
    void dataChanged();

private:
    QString m_database;
    QString m_package;
    QString m_dataMethod;
    bool m_readOnly = false;
};
