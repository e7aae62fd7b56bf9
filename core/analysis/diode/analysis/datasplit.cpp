#include "datasplit.h"

#include "diode/infer/modelpackage.h"
#include "diode/infer/splitmix64.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>

namespace diode {

DataSplit DataSplit::byProblem(size_t n, double valFrac, double testFrac, uint64_t seed) {
    const size_t nTest = std::max<size_t>(1, size_t(std::round(testFrac * double(n))));
    const size_t nVal = std::max<size_t>(1, size_t(std::round(valFrac * double(n))));
    return byCounts(n, nVal, nTest, seed);
}

DataSplit DataSplit::byCounts(size_t n, size_t nVal, size_t nTest, uint64_t seed) {
    std::vector<size_t> idx(n);
    std::iota(idx.begin(), idx.end(), 0);
    SplitMix64 rng(seed);
    for (size_t i = n - 1; n > 0 && i > 0; --i)
        std::swap(idx[i], idx[rng.next() % (i + 1)]);
    nTest = std::min(nTest, n);
    nVal = std::min(nVal, n - nTest);
    DataSplit s;
    s.test.assign(idx.begin(), idx.begin() + long(nTest));
    s.validation.assign(idx.begin() + long(nTest), idx.begin() + long(nTest + nVal));
    s.train.assign(idx.begin() + long(nTest + nVal), idx.end());
    for (auto *v : {&s.train, &s.validation, &s.test})
        std::sort(v->begin(), v->end());
    return s;
}

HeldOutProblems heldOutProblems(Store &store, const nlohmann::json &manifest) {
    HeldOutProblems out;
    const auto td = manifest.value("training_data", nlohmann::json::object());
    const auto split = td.value("split", nlohmann::json::object());
    const auto fp = td.value("fingerprint", std::string());
    TimingMethod method;
    try {
        method = packageTimingMethod(manifest); // packages before timing methods: inductor_autotune
    } catch (const std::exception &e) {
        out.why = e.what();
        return out;
    }
    const auto seed = manifest.value("/training/seed"_json_pointer, nlohmann::json());
    if (fp.empty() || !split.is_object() || !seed.is_number_unsigned()) {
        out.why = "the package does not record its training split";
        return out;
    }
    const DatasetFilter filter = packageFilter(manifest);
    Dataset data;
    try {
        data = loadDataset(store, method, filter);
    } catch (const InvalidInput &) {
        out.why = fmt::format("the data has no {} times, which the model was trained on", toString(method));
        return out;
    }
    if (fingerprint(data.problems) != fp) {
        out.why = "not this model's training data";
        return out;
    }
    const size_t nTrain = split.value("train", size_t(0)), nVal = split.value("validation", size_t(0)),
                 nTest = split.value("test", size_t(0));
    if (nTrain + nVal + nTest != data.problems.size()) {
        out.why = "the package's split does not add up to its training data";
        return out;
    }
    const DataSplit s = DataSplit::byCounts(data.problems.size(), nVal, nTest, seed.get<uint64_t>());
    std::set<std::string> seen;
    for (const auto *part : {&s.train, &s.validation})
        for (size_t i : *part)
            seen.insert(data.problems[i].problem.label());
    for (size_t i : s.test) {
        const std::string label = data.problems[i].problem.label();
        if (!seen.count(label))
            out.labels.insert(label);
    }
    out.trainedOn = s.train.size() + s.validation.size();
    out.known = true;
    return out;
}

DatasetFilter packageFilter(const nlohmann::json &manifest) {
    auto strings = [&](const char *key) {
        std::vector<std::string> v;
        for (const auto &x : manifest.value(key, nlohmann::json::array()))
            if (x.is_string())
                v.push_back(x.get<std::string>());
        return v;
    };
    return {strings("ops"), strings("dtypes")};
}

} // namespace diode
