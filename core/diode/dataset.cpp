#include "dataset.h"

#include "problemjson.h"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>

namespace diode {

bool TrainingProblem::hasTiming() const
{
    return std::any_of(timesMs.begin(), timesMs.end(), [](const auto &t) { return t.has_value(); });
}

bool DatasetFilter::accepts(const GemmProblem &p) const
{
    auto in = [](const std::vector<std::string> &v, std::string_view x) {
        return v.empty() || std::find(v.begin(), v.end(), x) != v.end();
    };
    return in(ops, toString(p.op)) && in(dtypes, toString(p.dtype));
}

namespace {

std::optional<TrainingProblem> fromRecord(const ProblemRecord &r, const std::string &gpu, int sms, const DatasetFilter &f)
{
    if (!f.accepts(r.problem)) return std::nullopt;
    TrainingProblem t;
    t.problem = r.problem;
    t.gpu = gpu;
    t.smCount = sms;
    for (const auto &m : r.candidates) {
        if (m.config.kind != "aten" && m.config.kind != "triton") continue;
        if (m.config.kind == "triton" && (m.config.blockM <= 0 || m.config.blockN <= 0 || m.config.blockK <= 0)) continue;
        t.configs.push_back(m.config);
        t.timesMs.push_back(m.status == MeasureStatus::Ok ? m.timeMs : std::nullopt);
    }
    if (!t.hasTiming()) return std::nullopt;
    return t;
}

} // namespace

std::vector<TrainingProblem> loadDataset(Store &store, const DatasetFilter &filter)
{
    std::vector<TrainingProblem> out;
    store.forEachRecord([&](const RunInfo &run, const ProblemRecord &r) {
        if (auto t = fromRecord(r, run.gpuName, run.smCount, filter)) out.push_back(std::move(*t));
    });
    return out;
}

std::vector<TrainingProblem> loadDatasetJsonl(const std::string &path, const DatasetFilter &filter)
{
    std::ifstream in(path);
    if (!in) throw InvalidInput(fmt::format("cannot read '{}'", path));
    std::vector<TrainingProblem> out;
    std::string line;
    for (int n = 1; std::getline(in, line); ++n) {
        if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
        const auto rec = parseProblemLine(line, fmt::format("{}: line {}", path, n));
        const auto hw = rec.extra.value("hardware", nlohmann::json::object());
        if (auto t = fromRecord(rec, hw.value("gpu", ""), hw.value("sm_count", 0), filter)) out.push_back(std::move(*t));
    }
    return out;
}

std::string fingerprint(const std::vector<TrainingProblem> &problems)
{
    uint64_t h = 1469598103934665603ull;
    auto mix = [&](const std::string &s) {
        for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
    };
    for (const auto &p : problems) {
        mix(p.problem.label());
        for (size_t i = 0; i < p.configs.size(); ++i)
            mix(p.configs[i].key() + (p.timesMs[i] ? fmt::format("{:.6g}", *p.timesMs[i]) : "-"));
    }
    return fmt::format("fnv1a64:{:016x}", h);
}

} // namespace diode
