#pragma once

#include <cstdint>
#include <string_view>

namespace diode {

/// FNV-1a, 64 bits: the same value on every machine and in every run (unlike std::hash), for
/// fingerprints of data and for choices that must not depend on order, sharding or workers.
class Fnv1a64 {
public:
    static constexpr uint64_t kOffsetBasis = 0xcbf29ce484222325ull;
    explicit Fnv1a64(uint64_t basis = kOffsetBasis)
        : m_h(basis) {}
    Fnv1a64 &add(std::string_view bytes) {
        for (unsigned char c : bytes)
            m_h = (m_h ^ c) * 0x100000001b3ull;
        return *this;
    }
    uint64_t value() const { return m_h; }

private:
    uint64_t m_h;
};

inline uint64_t fnv1a64(std::string_view bytes) {
    return Fnv1a64().add(bytes).value();
}

} // namespace diode
