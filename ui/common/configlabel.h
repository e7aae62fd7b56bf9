#pragma once

#include "diode/infer/kernelconfig.h"

#include <QString>

#include <string>

/// How every page names a kernel configuration: "triton mm 64×128×64 G8 s4 w4",
/// "aten extern_kernels.mm", "cpu tiled 64×64×256 t4" (block sizes and threads: cpu tiles differ
/// only there).
QString configLabel(const diode::KernelConfig &config);
/// The same for a config's key (KernelConfig::key(), its JSON); the key itself if it cannot be read.
QString configLabel(const std::string &key);
