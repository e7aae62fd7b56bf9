#pragma once

#include <QString>

/// Whether this build can train (it has LibTorch); if not, `why` says what to install. The Train
/// page and the Hardware page's characterisation ask it before they start a job.
bool trainingAvailable(QString *why = nullptr);
