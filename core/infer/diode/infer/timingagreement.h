#pragma once

#include <algorithm>
#include <cmath>

namespace diode {

/// Two timings of one kernel agree when they differ by at most 3 % of the reference or by 0.3 µs,
/// whichever is larger: two plain compiles of one GEMM differed by up to 3 % on an H200, and
/// kernels of a few microseconds move by tenths of a microsecond between launches. The one rule
/// for `diode bias` (plain's function against its ATen candidate), `diode compare` (two runs of
/// the same problems) and the Python validation of the worker's timing (diode_vocabulary's
/// "timing_agreement").
inline constexpr double kAgreementRelative = 0.03;
inline constexpr double kAgreementAbsoluteMs = 0.0003;

inline bool timesAgree(double ms, double referenceMs) {
    return std::abs(ms - referenceMs) <= std::max(kAgreementRelative * referenceMs, kAgreementAbsoluteMs);
}

/// A kernel's warm-L2 time over its cold-L2 time beyond which the pair is a timing glitch, not a
/// cache effect: a flushed L2 can only slow a kernel, so warm above 1.5x cold (and by more than the
/// agreement's 0.3 µs) means one of the two was disturbed: about 0.1 % of the shipped H100 pairs
/// (docs/FORMATS.md); `diode stats` counts them.
inline constexpr double kWarmOverColdGlitch = 1.5;

inline bool warmColdGlitch(double warmMs, double coldMs) {
    return warmMs > kWarmOverColdGlitch * coldMs && warmMs - coldMs > kAgreementAbsoluteMs;
}

} // namespace diode
