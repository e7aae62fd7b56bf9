#pragma once

#include "diode/gemmproblem.h"
#include "diode/timingmethod.h"

#include <QStringList>

/// The problem schema's names as core defines them, in core's order, for choice boxes and check
/// rows: a new op, dtype or timing method appears on every page without touching it.

inline QStringList opNameList() {
    QStringList out;
    for (diode::GemmOp op : diode::allOps())
        out << QString::fromUtf8(diode::toString(op));
    return out;
}

inline QStringList dtypeNameList() {
    QStringList out;
    for (diode::DType dtype : diode::allDTypes())
        out << QString::fromUtf8(diode::toString(dtype));
    return out;
}

inline QStringList timingMethodNameList() {
    QStringList out;
    for (diode::TimingMethod method : diode::kTimingMethods)
        out << QString::fromUtf8(diode::toString(method));
    return out;
}
