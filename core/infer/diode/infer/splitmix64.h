#pragma once

#include <cstdint>

namespace diode {

/// A small seeded generator (plans, training shuffles, held-out splits, bootstrap samples), so a
/// seed means the same numbers on every machine. SplitMix64 (Steele, Lea and Flood, 2014).
class SplitMix64 {
public:
    explicit SplitMix64(uint64_t seed)
        : m_state(seed) {}
    uint64_t next() {
        m_state += 0x9E3779B97F4A7C15ull;
        uint64_t z = m_state;
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        return z ^ (z >> 31);
    }
    /// [0, 1) with 53 bits.
    double uniform() { return double(next() >> 11) * (1.0 / 9007199254740992.0); }

private:
    uint64_t m_state;
};

} // namespace diode
