#include "datamix.h"

#include "diode/store/sqlstatement.h"
#include "diode/store/store.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <vector>

namespace diode {

DataOrigin dataOrigin(Store &store) {
    DataOrigin o;
    SqlStatement runs(store, "SELECT DISTINCT backend, coalesce(gpu_name, '') FROM runs r WHERE EXISTS "
                             "(SELECT 1 FROM run_problems rp WHERE rp.run_id = r.id)");
    while (runs.step()) {
        if (const auto backend = runs.text(0); backend != "import")
            o.backends.insert(backend);
        if (auto gpu = runs.text(1); !gpu.empty())
            o.gpus.insert(std::move(gpu));
    }
    for (const auto &[method, n] : store.methodCounts())
        if (n > 0)
            o.methods.insert(method);
    return o;
}

namespace {

// "x with a, b" when `added` holds something `existing` does not; both must be known.
template <typename T, typename Name>
void addMix(std::vector<std::string> &out, const char *what, const std::set<T> &existing,
            const std::set<T> &added, Name name) {
    if (existing.empty() || added.empty())
        return;
    std::vector<std::string> fresh, old;
    for (const auto &a : added)
        if (!existing.count(a))
            fresh.emplace_back(name(a));
    if (fresh.empty())
        return;
    for (const auto &e : existing)
        old.emplace_back(name(e));
    out.push_back(fmt::format("{} {} with {}", what, fmt::join(fresh, ", "), fmt::join(old, ", ")));
}

} // namespace

std::string describeMix(const DataOrigin &existing, const DataOrigin &added) {
    std::vector<std::string> parts;
    const auto same = [](const std::string &s) { return s; };
    addMix(parts, "backend", existing.backends, added.backends, same);
    addMix(parts, "GPU", existing.gpus, added.gpus, same);
    addMix(parts, "timing method", existing.methods, added.methods,
           [](TimingMethod m) { return std::string(toString(m)); });
    return fmt::format("{}", fmt::join(parts, "; "));
}

} // namespace diode
