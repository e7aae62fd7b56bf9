#pragma once

#include <QString>

/// A file shipped with the workbench (`relative` to the source tree or the installed data
/// directory, e.g. "trained_models/h200/h200-demo.json"): the source tree's when it exists, else
/// the installed one, else empty.
QString shippedFile(const QString &relative);
