#pragma once

#include "diode/infer/gemmproblem.h"
#include "diode/infer/timingmethod.h"

#include <QStringList>

#include <string>
#include <vector>

/// The problem schema's names as core lists them (gemmproblem.h, timingmethod.h), for choice
/// boxes and check rows: a new op, dtype or timing method appears on every page without touching it.
inline QStringList toQStringList(const std::vector<std::string> &names) {
    QStringList out;
    for (const auto &n : names)
        out << QString::fromStdString(n);
    return out;
}

inline QStringList opNameList() {
    return toQStringList(diode::opNameList());
}

inline QStringList dtypeNameList() {
    return toQStringList(diode::dtypeNameList());
}

inline QStringList timingMethodNameList() {
    return toQStringList(diode::timingMethodNameList());
}
