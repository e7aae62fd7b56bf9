#include "torchversion.h"

#include <fmt/format.h>

#include <charconv>

namespace diode {

std::string minTorchVersion() {
    return fmt::format("{}.{}", kMinTorchMajor, kMinTorchMinor);
}

std::optional<bool> torchVersionSupported(std::string_view version) {
    int major = 0, minor = 0;
    const char *end = version.data() + version.size();
    auto [p, ec] = std::from_chars(version.data(), end, major);
    if (ec != std::errc() || p == end || *p != '.')
        return std::nullopt;
    auto [q, ec2] = std::from_chars(p + 1, end, minor);
    if (ec2 != std::errc())
        return std::nullopt;
    return major > kMinTorchMajor || (major == kMinTorchMajor && minor >= kMinTorchMinor);
}

} // namespace diode
