#include "exporter.h"

#include "diode/infer/problemjson.h"
#include "diode/store/decisionstore.h"

#include <fmt/format.h>

namespace diode {

int64_t exportJsonl(Store &store, std::ostream &out) {
    int64_t n = 0;
    store.forEachRecord([&](const RunInfo &run, const ProblemRecord &rec) {
        auto j = toJson(rec);
        j["hardware"] = {{"gpu", run.gpuName},
                         {"sm_count", run.smCount},
                         {"memory_mb", run.gpuMemoryMb},
                         {"driver", run.driver}};
        j["versions"] = {{"torch", run.torchVersion}, {"triton", run.tritonVersion}};
        if (!run.searchSpace.empty())
            j["search_space"] = run.searchSpace;
        j["run"] = run.id;
        out << j.dump() << '\n';
        ++n;
    });
    return n;
}

int64_t exportDecisionLines(Store &store, std::ostream &out) {
    const DecisionData data = storedDecisionData(store);
    for (const auto &k : data.kernels)
        out << toJson(k).dump() << '\n';
    for (const auto &s : data.sites)
        out << toJson(s).dump() << '\n';
    for (const auto &c : data.skipped)
        out << toJson(c).dump() << '\n';
    return int64_t(data.kernels.size() + data.sites.size() + data.skipped.size());
}

namespace {
std::string csvField(const std::string &s) {
    if (s.find_first_of(",\"\n") == std::string::npos)
        return s;
    std::string q = "\"";
    for (char c : s)
        q += c == '"' ? std::string("\"\"") : std::string(1, c);
    return q + "\"";
}
} // namespace

int64_t exportCsv(Store &store, std::ostream &out) {
    out << "run,gpu,op,dtype,B,M,N,K,a_transposed,b_transposed,kind,name,BLOCK_M,BLOCK_N,BLOCK_K,GROUP_M,"
           "num_stages,num_warps,threads,method,time_ms,status,error\n";
    int64_t n = 0;
    store.forEachRecord([&](const RunInfo &run, const ProblemRecord &rec) {
        const auto &p = rec.problem;
        const std::string prefix =
            fmt::format("{},{},{},{},{},{},{},{},{},{}", run.id, csvField(run.gpuName), toString(p.op),
                        toString(p.dtype), p.batch, p.m, p.n, p.k, int(p.aTransposed), int(p.bTransposed));
        if (rec.candidates.empty()) {
            out << prefix << ",,,,,,,,,,,,"
                << "failed," << csvField(rec.error) << '\n';
            ++n;
        }
        for (const auto &cand : rec.candidates) {
            const auto &c = cand.config;
            for (const auto &t : cand.timings) {
                out << prefix << ',' << c.kind << ',' << csvField(c.name) << ',' << c.blockM << ','
                    << c.blockN << ',' << c.blockK << ',' << c.groupM << ',' << c.numStages << ','
                    << c.numWarps << ',' << c.threads << ',' << toString(t.method) << ','
                    << (t.timeMs ? fmt::format("{:.6g}", *t.timeMs) : "") << ',' << toString(t.status) << ','
                    << csvField(t.error) << '\n';
                ++n;
            }
        }
    });
    return n;
}

} // namespace diode
