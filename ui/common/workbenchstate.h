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

    void setDatabase(const QString &path, bool readOnly) {
        m_database = path;
        m_readOnly = readOnly;
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
    bool m_readOnly = false;
};
