#include "common/timingmethodbox.h"

#include <algorithm>

TimingMethodBox::TimingMethodBox(QWidget *parent)
    : QComboBox(parent) {
    setObjectName(QStringLiteral("timingMethod"));
    addItem(tr("default for the data"), QString());
    setItemData(
        0, tr("graph_warm when the data has in-graph times, else cpu for cpu data, else inductor_autotune"),
        Qt::ToolTipRole);
    for (diode::TimingMethod m : diode::kTimingMethods) {
        const QString name = QString::fromUtf8(diode::toString(m).data());
        addItem(name, name);
    }
    setToolTip(tr("The timing method whose times are used: in-graph warm or cold L2, Inductor's autotune "
                  "benchmark, or the cpu backend's"));
}

std::optional<diode::TimingMethod> TimingMethodBox::method() const {
    return diode::parseTimingMethod(currentData().toString().toStdString());
}

void TimingMethodBox::setMethod(std::optional<diode::TimingMethod> method) {
    setSettingsValue(method ? QString::fromUtf8(diode::toString(*method).data()) : QString());
}

QString TimingMethodBox::settingsValue() const {
    return currentData().toString();
}

void TimingMethodBox::setSettingsValue(const QString &value) {
    setCurrentIndex(std::max(0, findData(value)));
}

void TimingMethodBox::offerOnly(std::initializer_list<diode::TimingMethod> methods) {
    for (int i = count() - 1; i >= 0; --i) {
        const auto m = diode::parseTimingMethod(itemData(i).toString().toStdString());
        if (!m || std::find(methods.begin(), methods.end(), *m) == methods.end())
            removeItem(i);
    }
}
