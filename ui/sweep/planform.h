#pragma once

#include <nlohmann/json.hpp>

#include <QWidget>

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QLineEdit;
class QSpinBox;

/// Designs a sweep plan (docs/PLANS.md): plan settings and one generator entry at a time.
/// Sizes are typed as lists ("128, 256"), grids ("64..4096 x2", "64..512 +64") or log-uniform
/// samples ("log 1..8192 n24 s15"). Holds no plan itself: the Sweep page's editor does.
class PlanForm : public QWidget {
    Q_OBJECT
public:
    explicit PlanForm(QWidget *parent = nullptr);

    /// The entry the form describes; throws std::invalid_argument naming the field.
    nlohmann::json entry(const QString &planDir) const;
    /// Writes the plan-level settings (name, search space, timeout, repeats, CPU tiles) into `plan`.
    void applySettings(nlohmann::json &plan) const;
    /// Shows the plan-level settings of `plan`.
    void showSettings(const nlohmann::json &plan);

signals:
    void addEntryRequested();
    void newPlanRequested();
    void settingsChanged();

private:
    QLineEdit *m_name;
    QComboBox *m_searchSpace;
    QDoubleSpinBox *m_timeout;
    QSpinBox *m_repeats;
    QLineEdit *m_cpuBlockM, *m_cpuBlockN, *m_cpuBlockK, *m_cpuThreads;
    QLineEdit *m_entryName;
    QCheckBox *m_mm, *m_addmm, *m_bmm;
    QCheckBox *m_bf16, *m_fp16, *m_fp32;
    QLineEdit *m_b, *m_m, *m_n, *m_k;
    QComboBox *m_shapeSet;
    QCheckBox *m_aRow, *m_aT, *m_bRow, *m_bCol;
    QCheckBox *m_zip;
    QSpinBox *m_sample, *m_seed;
};

/// Parses the size syntax above into plan JSON; throws std::invalid_argument naming `field`.
nlohmann::json parseSizes(const QString &text, const QString &field);
/// The folder of shipped resources (plans, shapes): the source tree's or the installed copy.
QString resourcesDir();
