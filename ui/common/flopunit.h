#pragma once

#include <QCoreApplication>
#include <QString>

/// The unit the plots write achieved FLOP rates in, chosen from the largest rate shown: TFLOP/s
/// for a GPU's rates, GFLOP/s where everything is below 1 TFLOP/s (a CPU's: "0.004 TFLOP/s" read
/// as no speed at all). Rates arrive in TFLOP/s and are multiplied by `scale`.
struct FlopUnit {
    double scale = 1;
    QString name = QStringLiteral("TFLOP/s");

    static FlopUnit forLargest(double tflops) {
        if (tflops > 0 && tflops < 1)
            return {1000, QStringLiteral("GFLOP/s")};
        return {};
    }
};
