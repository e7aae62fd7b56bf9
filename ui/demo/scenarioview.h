#pragma once

#include "diode/analysis/demoresult.h"

#include <QWidget>

class BreakdownChart;
class DemoChart;
class DemoKernelModel;
class QComboBox;
class QLabel;
class QTableView;

/// The Demo page's model steps, one scenario at a time (decode with a KV cache, prefill, a training
/// step, a ViT block): the step time of each mode with its spread over processes, its compile
/// time, where the step's time goes by kind of kernel, and the largest kernels. Plain torch.compile
/// first, max-autotune second, then the plugin (the recommended way) and any other mode.
class ScenarioView : public QWidget {
    Q_OBJECT
public:
    explicit ScenarioView(QWidget *parent = nullptr);
    /// Lists the result's model steps (cases of kind "model"); the first is shown.
    void setResult(const diode::DemoResult &result);
    /// Shows scenario `index` of scenarios().
    void showScenario(int index);
    QStringList scenarios() const;
    DemoChart *stepChart() const { return m_step; }
    DemoChart *compileChart() const { return m_compile; }
    BreakdownChart *breakdownChart() const { return m_breakdown; }
    DemoKernelModel *kernelModel() const { return m_kernels; }

private:
    diode::DemoResult m_result;
    std::vector<size_t> m_cases; ///< indices of the model steps in m_result.cases
    QComboBox *m_scenario;
    QLabel *m_note;
    DemoChart *m_step, *m_compile;
    BreakdownChart *m_breakdown;
    DemoKernelModel *m_kernels;
    QTableView *m_kernelView;
};
