#pragma once

#include <QWidget>

class MetricsModel;
class ModelList;
class QComboBox;
class MessageLabel;
class QLabel;
class QPlainTextEdit;
class QTableView;
class WorkbenchState;

/// Export: a package's metrics on its test split (model, its groups, the baselines) beside the
/// rest of its manifest as JSON, each fact shown once; write it to a `.diode` file of the user's
/// choosing, and install it into the Inductor plugin's model directory (never replacing a file
/// without asking).
class ExportPage : public QWidget {
    Q_OBJECT
public:
    explicit ExportPage(WorkbenchState *state, QWidget *parent = nullptr);

    /// Loads and verifies `path` (checksums, schema) and shows its manifest; false with a
    /// visible message when it is not a usable package.
    bool showPackage(const QString &path);
    QString packagePath() const { return m_path; }
    /// Writes the shown package to `target`. Returns an empty string or the reason.
    QString saveAs(const QString &target);
    /// Installs into `directory` (default: the plugin's user model directory). Returns the
    /// installed path, or an empty string with `error` set; an existing file is replaced only
    /// with `overwrite`.
    QString install(bool overwrite, QString *error, const QString &directory = {});
    MetricsModel *metricsModel() const { return m_metrics; }
    /// The manifest as shown (JSON, without the metrics the table holds).
    QString manifestText() const;
    QString message() const;

private:
    void chooseSaveTarget();
    void installInteractive();
    void setMessage(const QString &text, bool error);

    WorkbenchState *m_state;
    ModelList *m_models;
    QString m_path;
    QComboBox *m_package;
    QLabel *m_summary, *m_target;
    MessageLabel *m_message;
    MetricsModel *m_metrics;
    QTableView *m_view;
    QPlainTextEdit *m_raw;
};
