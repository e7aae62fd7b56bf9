#include "kernelconfig.h"

#include "diode/infer/gemmproblem.h"

#include <fmt/format.h>

#include <array>

namespace diode {
namespace {

struct IntField {
    const char *jsonName;
    int KernelConfig::*member;
};

// The candidate key's integer fields (kernelconfig.h), then the cpu backend's threads.
constexpr const auto &kKey = kCandidateKeyFields;
constexpr std::array kIntFields{
    IntField{kKey[0], &KernelConfig::blockM},    IntField{kKey[1], &KernelConfig::blockN},
    IntField{kKey[2], &KernelConfig::blockK},    IntField{kKey[3], &KernelConfig::groupM},
    IntField{kKey[4], &KernelConfig::numStages}, IntField{kKey[5], &KernelConfig::numWarps},
    IntField{"threads", &KernelConfig::threads},
};
static_assert(kCandidateKeyFields.size() - kCandidateKeyFlags == 6, "kIntFields names each integer field");

// Per-measurement keys that are not part of the kernel's identity: the same kernel from a
// version 1 line (time_ms) and a version 2 line (times) is one config.
bool isMeasurementKey(const std::string &k) {
    return k == "times" || k == "time_ms" || k == "error" || k == "timed_by";
}

} // namespace

nlohmann::json KernelConfig::toJson() const {
    nlohmann::json j = extra.is_object() ? extra : nlohmann::json::object();
    j["kind"] = kind;
    j[kind == "triton" ? "template" : "name"] = name;
    for (const auto &f : kIntFields)
        if (this->*f.member != 0)
            j[f.jsonName] = this->*f.member;
    return j;
}

std::string KernelConfig::key() const {
    return toJson().dump();
} // nlohmann objects are sorted

int KernelConfig::intParameter(const nlohmann::json &v, const std::string &where, const std::string &field) {
    constexpr uint64_t kMax = 1 << 20;
    if (!v.is_number_integer() || (v.is_number_unsigned() && v.get<uint64_t>() > kMax) ||
        v.get<int64_t>() < 0 || v.get<int64_t>() > int64_t(kMax))
        throw InvalidInput(fmt::format("{}: candidate field '{}' must be an integer in 0..{}, got {}", where,
                                       field, kMax, v.dump()));
    return v.get<int>();
}

bool KernelConfig::isKnownKind(std::string_view kind) {
    return kind == "aten" || kind == "triton" || kind == "cpu";
}

KernelConfig KernelConfig::fromJson(const nlohmann::json &j, const std::string &where) {
    if (!j.is_object())
        throw InvalidInput(fmt::format("{}: a candidate must be a JSON object", where));
    KernelConfig c;
    auto kindIt = j.find("kind");
    if (kindIt == j.end() || !kindIt->is_string())
        throw InvalidInput(fmt::format("{}: candidate field 'kind' is missing", where));
    c.kind = kindIt->get<std::string>();
    if (!isKnownKind(c.kind))
        throw InvalidInput(fmt::format("{}: candidate field 'kind' has unknown value \"{}\"; expected {}",
                                       where, c.kind, kKnownKinds));
    const char *nameKey = c.kind == "triton" ? "template" : "name";
    auto nameIt = j.find(nameKey);
    if (nameIt == j.end() || !nameIt->is_string())
        throw InvalidInput(fmt::format("{}: {} candidate needs a string '{}'", where, c.kind, nameKey));
    c.name = nameIt->get<std::string>();
    for (const auto &[k, v] : j.items()) {
        if (k == "kind" || k == nameKey || isMeasurementKey(k))
            continue;
        bool known = false;
        for (const auto &f : kIntFields) {
            if (k != f.jsonName)
                continue;
            known = true;
            c.*f.member = intParameter(v, where, k);
        }
        if (!known)
            c.extra[k] = v;
    }
    return c;
}

} // namespace diode
