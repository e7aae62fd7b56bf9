#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <functional>

namespace diode {

/// LibTorch's OpenMP threads spin while they wait for work by default: on a 2-core machine with
/// one other busy process, a cpu-database training took 40-64 s against 1.7 s idle and 2.9-3.2 s
/// with passive waits; two in-graph trainings side by side took ~8 minutes an ensemble
/// member, ~1.25 with passive waits and one thread each. GNU OpenMP reads OMP_WAIT_POLICY once,
/// when it is loaded, which for a program linked with LibTorch is before main(): so this is set
/// by the programs that start one, `diode` before it runs diode-train and `diode-workbench`
/// before it runs the GUI (app/workbench/launcher.cpp). A value the user set is kept.
inline void preferPassiveThreadWaits() {
    ::setenv("OMP_WAIT_POLICY", "PASSIVE", 0);
}

// The trainer's knobs live apart from the trainer (which needs LibTorch), so the CLI can hold
// and document them in every build.

struct EpochReport {
    int member = 0; ///< which network of the ensemble is training (0-based)
    int members = 1;
    int step = 0;  ///< epochs run so far over all members: a running x axis for curves
    int epoch = 0; ///< the epoch of this member
    double loss = 0;
    double valTop1 = 0; ///< mean top-1 efficiency on the validation problems
    bool improved = false;
};

struct TrainOptions {
    int epochs = 400;
    uint64_t seed = 1;
    double validationFraction = 0.15;
    double testFraction = 0.15;
    int hidden = 64;
    double learningRate = 1e-3;
    double rankWeight = 1.0;      ///< pairwise logistic term among a problem's candidates
    double listWeight = 1.0;      ///< listwise term: cross-entropy against softmax(-ln t / listTemperature)
    double listTemperature = 0.2; ///< in ln(time): 0.2 makes a 20 % slower candidate e times less likely
    int members = 6;              ///< networks in the ensemble; their ln-time predictions are averaged
    int batchProblems = 32;       ///< problems per optimiser step, shuffled each epoch; 0: all (full batch)
    double weightDecay = 0.0;
    int patience = 80; ///< epochs without a better validation top-1 before stopping
    int threads = 0;   ///< 0: the cores available to the process (availableCores())
    std::function<void(const EpochReport &)> progress;
    /// Set from another thread to stop after the current epoch; the best network so far is kept
    /// and `TrainResult::cancelled` says so.
    const std::atomic<bool> *cancel = nullptr;
};

} // namespace diode
