#pragma once

#include "diode/infer/timingmethod.h"

#include <QComboBox>

#include <initializer_list>
#include <optional>

/// Picks the timing method a page trains or validates on: the data's default (the rule of
/// diode::defaultTimingMethod, said in the first item) or one method by name.
class TimingMethodBox : public QComboBox {
    Q_OBJECT
public:
    explicit TimingMethodBox(QWidget *parent = nullptr);

    /// nullopt: the data's default.
    std::optional<diode::TimingMethod> method() const;
    void setMethod(std::optional<diode::TimingMethod> method);
    /// The choice as QSettings keep it: "" for the default, else the method's name.
    QString settingsValue() const;
    void setSettingsValue(const QString &value);
    /// Offers only `methods`, without the data's default (a page that reads no other method).
    void offerOnly(std::initializer_list<diode::TimingMethod> methods);
};
