#include "common/trainingavailable.h"

#include "diode/config.h"

#include <QCoreApplication>

bool trainingAvailable(QString *why) {
#if DIODE_HAVE_TORCH
    (void)why;
    return true;
#else
    if (why)
        *why = QCoreApplication::translate(
            "Training",
            "This build has no LibTorch, so it cannot train. Install libtorch-dev (or point CMake at a "
            "pip torch) and reconfigure; validation and export work without it.");
    return false;
#endif
}
