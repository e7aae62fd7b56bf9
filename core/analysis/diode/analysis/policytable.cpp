#include "policytable.h"

#include "diode/analysis/metrics.h"
#include "diode/infer/features.h"
#include "diode/infer/problemjson.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>
#include <optional>

namespace diode {

namespace {

constexpr std::array<const char *, 5> kColumns{"model (policy)", "plain torch.compile", "max-autotune's pick",
                                               "best ATen", "random"};
constexpr std::array<const char *, 3> kBands{"M ≤ 32", "M 33–1024", "M > 1024"};

std::string upper(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return char(std::toupper(c)); });
    return s;
}

std::string extraString(const ProblemRecord &r, const char *key, const std::string &otherwise) {
    const auto it = r.extra.find(key);
    return it != r.extra.end() && it->is_string() ? it->get<std::string>() : otherwise;
}

} // namespace

PolicyTable policyTable(Selector &selector, const ModelPackage &package,
                        const std::vector<ProblemRecord> &records, TimingMethod method,
                        const std::string &searchSpace) {
    PolicyTable table;
    table.method = method;
    table.policy = selector.policy();
    const GemmContext gpu = selector.onPackageGpu();
    // group -> column -> values
    std::map<std::string, std::array<std::vector<double>, kColumns.size()>> groups;
    for (size_t index = 0; index < records.size(); ++index) {
        const auto &rec = records[index];
        if (upper(extraString(rec, "search_space", std::string(kSearchSpaces[0]))) != upper(searchSpace)) {
            ++table.skippedOtherSpace;
            continue;
        }
        RankedProblem p;
        p.problem = rec.problem;
        // The columns judge the candidates a model describes; the decision sees every one, as
        // Inductor offers them to the plugin (those it cannot describe it excludes itself).
        std::vector<KernelConfig> configs, offered;
        std::vector<size_t> described; // per offered candidate: its index among `configs`, or npos
        for (const auto &c : rec.candidates) {
            offered.push_back(c.config);
            described.push_back(FeatureSchema::describes(c.config) ? configs.size() : std::string::npos);
            if (described.back() == std::string::npos)
                continue;
            configs.push_back(c.config);
            p.measuredMs.push_back(c.timeMs(method));
        }
        double best = INFINITY;
        for (const auto &t : p.measuredMs)
            if (t && *t > 0)
                best = std::min(best, *t);
        if (!std::isfinite(best))
            continue;
        p.predictedMs = package.predictMs(rec.problem, configs);
        std::array<std::optional<double>, kColumns.size()> row;
        const std::vector<double> decidedBy = policyPredictions(p);
        std::vector<double> offeredMs(offered.size(), std::numeric_limits<double>::max());
        for (size_t i = 0; i < offered.size(); ++i)
            if (described[i] != std::string::npos)
                offeredMs[i] = decidedBy[described[i]];
        const Decision decision = selector.decide(rec.problem, offered, gpu, &offeredMs);
        const auto among = [&](std::optional<size_t> i) { // an offered candidate among `configs`
            return i ? std::optional<size_t>(described[*i]) : std::nullopt;
        };
        const auto pick = among(decision.pick());
        table.decisions.push_back(
            {index, pick ? std::optional(configs[*pick]) : std::nullopt, decision.notSelected});
        row[0] = pickEfficiency(p, pick);
        if (const auto *plain = rec.baseline(BaselineTiming::kPlain, method)) {
            row[1] = best / plain->timeMs;
            // Where the policy keeps plain's own kernel, the plugin's compiled function is plain's
            // (the same generated code; measured end to end, docs/BENCHMARKS.md "The plugin against
            // plain torch.compile, GEMM by GEMM"): it runs at plain's time, not at its candidate's.
            // Otherwise efficiencies share the best time, so their ratio is the pick's time over
            // plain's. A pick without a time (efficiency 0) is the worst outcome.
            const bool keepsPlain = pick && pick == among(decision.plain);
            table.pickOverPlain.push_back(keepsPlain ? 1.0 : *row[0] > 0 ? *row[1] / *row[0] : INFINITY);
            table.picksKeepingPlain += keepsPlain;
        }
        if (const auto *tuned = rec.baseline(BaselineTiming::kMaxAutotune, method))
            row[2] = best / tuned->timeMs;
        double aten = 0, random = 0;
        for (size_t i = 0; i < configs.size(); ++i) {
            const double e = p.measuredMs[i] && *p.measuredMs[i] > 0 ? best / *p.measuredMs[i] : 0.0;
            random += e;
            if (configs[i].kind == "aten")
                aten = std::max(aten, e);
        }
        row[3] = aten;
        row[4] = random / double(configs.size());
        const auto &g = rec.problem;
        const char *band = g.m <= 32 ? kBands[0] : g.m <= 1024 ? kBands[1] : kBands[2];
        const std::string held = extraString(rec, "heldout", "");
        const std::string tag = held.rfind("family:", 0) == 0 ? "family " + held.substr(7) : "random 10 %";
        for (const std::string &key : {std::string("all"), fmt::format("op {}", toString(g.op)),
                                       fmt::format("dtype {}", toString(g.dtype)), std::string(band), tag})
            for (size_t c = 0; c < kColumns.size(); ++c)
                if (row[c])
                    groups[key][c].push_back(*row[c]);
    }
    if (groups.empty())
        throw InvalidInput(fmt::format("no problem of search space {} has a {} time to judge a pick by",
                                       upper(searchSpace), toString(method)));
    // all, ops, dtypes, M bands (small to large), families, then the random 10 %.
    std::vector<std::string> order{"all"};
    auto withPrefix = [&](const std::string &prefix) {
        for (const auto &[k, v] : groups)
            if (k.rfind(prefix, 0) == 0)
                order.push_back(k);
    };
    withPrefix("op ");
    withPrefix("dtype ");
    for (const char *b : kBands)
        if (groups.count(b))
            order.push_back(b);
    withPrefix("family ");
    if (groups.count("random 10 %"))
        order.push_back("random 10 %");
    for (const auto &key : order) {
        PolicyTableRow r;
        r.group = key;
        r.problems = int(groups[key][0].size());
        for (size_t c = 0; c < kColumns.size(); ++c)
            r.columns.push_back({kColumns[c], groups[key][c]});
        table.rows.push_back(std::move(r));
    }
    return table;
}

std::string formatPolicyTable(const PolicyTable &table) {
    std::string out = fmt::format("| {} | n |", toString(table.method));
    for (const char *c : kColumns)
        out += fmt::format(" {} |", c);
    out += "\n| --- | ---: |";
    for (size_t c = 0; c < kColumns.size(); ++c)
        out += " ---: |";
    out += '\n';
    for (const auto &r : table.rows) {
        out += fmt::format("| {} | {} |", r.group, r.problems);
        for (const auto &c : r.columns) {
            if (c.values.empty()) {
                out += " – |";
                continue;
            }
            const Distribution d = Distribution::of(c.values);
            out += fmt::format(" {:.3f} / {:.3f}", d.mean, d.p10);
            out += int(c.values.size()) == r.problems ? " |" : fmt::format(" ({}) |", c.values.size());
        }
        out += '\n';
    }
    if (!table.pickOverPlain.empty()) {
        double logSum = 0;
        int timed = 0, over = 0;
        for (double r : table.pickOverPlain) {
            over += r > kSlowerThanPlainLimit;
            if (std::isfinite(r))
                logSum += std::log(r), ++timed;
        }
        const double worst = *std::max_element(table.pickOverPlain.begin(), table.pickOverPlain.end());
        out += fmt::format(
            "\nThe policy's pick against plain torch.compile's function ({} problems; {} keep plain's own "
            "kernel, which runs as plain's function does): {:.3f}x its time (geometric mean{}), worst "
            "{:.3f}x, {} over {:.0f} % slower\n",
            table.pickOverPlain.size(), table.picksKeepingPlain, timed ? std::exp(logSum / timed) : NAN,
            timed < int(table.pickOverPlain.size()) ? fmt::format("; {} picks without a time left out",
                                                                  table.pickOverPlain.size() - size_t(timed))
                                                    : "",
            worst, over, (kSlowerThanPlainLimit - 1) * 100);
    }
    return out;
}

} // namespace diode
