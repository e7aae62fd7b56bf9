#pragma once

#include <atomic>
#include <cstdint>
#include <functional>

namespace diode {

// The trainer's knobs live apart from the trainer (which needs LibTorch), so the CLI can hold
// and document them in every build.

struct EpochReport {
    int epoch = 0;
    double loss = 0;
    double valTop1 = 0; ///< mean top-1 efficiency on the validation problems
    bool improved = false;
};

struct TrainOptions {
    int epochs = 600;
    uint64_t seed = 1;
    double validationFraction = 0.15;
    double testFraction = 0.15;
    int hidden = 128;
    double learningRate = 2e-3;
    double rankWeight = 1.0;
    double weightDecay = 0.0;
    int patience = 150; ///< epochs without a better validation top-1 before stopping
    int threads = 0;    ///< 0: all cores
    std::function<void(const EpochReport &)> progress;
    /// Set from another thread to stop after the current epoch; the best network so far is kept
    /// and `TrainResult::cancelled` says so.
    const std::atomic<bool> *cancel = nullptr;
};

} // namespace diode
