#pragma once

#include <QString>

#include <string_view>

/// A file shipped with the workbench (`relative` to the source tree or the installed data
/// directory, e.g. "trained_models/h200/h200-demo.json"): the source tree's when it exists, else
/// the installed one, else empty.
QString shippedFile(const QString &relative);
/// The same for one of the names of core/infer/diode/infer/shippeddata.h.
inline QString shippedFile(std::string_view relative) {
    return shippedFile(QString::fromUtf8(relative.data(), qsizetype(relative.size())));
}

/// The `diode` command line that came with the workbench: next to it (install, build tree) or,
/// for the tests' binaries, in the build tree's app/; empty when there is none.
QString diodeBinary();
