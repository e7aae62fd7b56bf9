#include "selector.h"

#include "diode/infer/features.h"
#include "diode/infer/gemmproblem.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>

namespace diode {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
// A long-lived process compiling many shapes: the cache starts again past this many GEMMs.
constexpr size_t kScoreCacheEntries = 4096;

std::string classKey(std::string_view op, std::string_view dtype, bool aT, bool bT) {
    return fmt::format("{} {} {} {}", op, dtype, int(aT), int(bT));
}

std::array<int, 6> paramsOf(const KernelConfig &c) {
    return {c.blockM,    c.blockN,  c.blockK, c.kind == "triton" && c.groupM == 0 ? kDefaultGroupM : c.groupM,
            c.numStages, c.numWarps};
}

// One flag of the candidate key (EVEN_K, ALLOW_TF32) as the key has it: 0/1, -1 when not given.
int flagOf(const KernelConfig &c, const char *name) {
    if (!c.extra.is_object())
        return -1;
    const auto it = c.extra.find(name);
    return it == c.extra.end() || !it->is_boolean() ? -1 : int(it->get<bool>());
}

constexpr const char *kOnlyAten = "Inductor offered only ATen kernels: nothing to choose";

// A lowering offering only ATen (GEMM autotuning off, or a shape only ATen takes).
bool allAten(const std::vector<KernelConfig> &candidates) {
    return std::all_of(candidates.begin(), candidates.end(), [](const auto &c) { return c.kind == "aten"; });
}

template <typename T> void appendRaw(std::string &s, const T &v) {
    s.append(reinterpret_cast<const char *>(&v), sizeof v);
}

} // namespace

SelectorOptions SelectorOptions::fromJson(const nlohmann::json &j) {
    if (!j.is_object())
        throw InvalidInput(fmt::format("selector options must be a JSON object, got {}", j.type_name()));
    SelectorOptions o;
    for (const auto &[key, v] : j.items()) {
        const auto bad = [&](const char *want) {
            return InvalidInput(
                fmt::format("selector options: '{}' must be {}, got {}", key, want, v.dump()));
        };
        if (key == "top_k") {
            if (!v.is_number_integer() || v.get<int64_t>() < 1 || v.get<int64_t>() > 1 << 20)
                throw bad("an integer of at least 1");
            o.topK = v.get<int>();
        } else if (key == "performance_threshold") {
            if (!v.is_null() && !(v.is_number() && v.get<double>() >= 1))
                throw bad("a number of at least 1.0, or null for none");
            o.threshold = v.is_null() ? std::numeric_limits<double>::infinity() : v.get<double>();
        } else if (key == "margin") {
            if (!v.is_null() && !(v.is_number() && v.get<double>() >= 0))
                throw bad("a number of at least 0 (0: no ATen guard), or null for the package's");
            o.margin = v.is_null() ? std::nullopt : std::optional<double>(v.get<double>());
        } else if (key == "regime") {
            if (!v.is_null() && !v.is_string())
                throw bad("\"warm\", \"cold\" or null for the package's");
            o.regime = v.is_null() ? std::nullopt : std::optional<Regime>(parseRegime(v.get<std::string>()));
        } else if (key == "ops") {
            if (v.is_null())
                continue;
            if (!v.is_array())
                throw bad(fmt::format("a list of ops ({}) or null for all", opNames()).c_str());
            for (const auto &op : v) {
                if (!op.is_string() || !parseOp(op.get<std::string>()))
                    throw InvalidInput(
                        fmt::format("selector options: ops: {} is not one of {}", op.dump(), opNames()));
                o.ops.push_back(op.get<std::string>());
            }
        } else if (key == "keep_unscored") {
            if (!v.is_boolean())
                throw bad("true or false");
            o.keepUnscored = v.get<bool>();
        } else if (key == "fallback") {
            if (v != "plain" && v != "inductor")
                throw bad("\"plain\" or \"inductor\"");
            o.deferToInductor = v == "inductor";
        } else {
            throw InvalidInput(
                fmt::format("selector options: unknown key '{}' (known: top_k, "
                            "performance_threshold, margin, regime, ops, keep_unscored, fallback)",
                            key));
        }
    }
    return o;
}

Selector::Selector(const ModelPackage &package, SelectorOptions options)
    : m_package(package)
    , m_options(std::move(options))
    , m_regime(m_options.regime.value_or(regimeOf(package.timingMethod()))) {
    m_policy.topK = m_options.topK;
    m_policy.threshold = m_options.threshold;
    m_policy.margin = m_options.margin ? *m_options.margin : packageMargin(package.manifest(), m_regime);
    m_policy.validate();
    try { // a malformed section leaves those decisions to Inductor, the GEMM model still serves
        m_decisions = DecisionModels::fromManifest(package.manifest());
    } catch (const std::exception &e) {
        m_decisionsError = e.what();
    }
    // The package's unsafe_candidates (docs/PACKAGE.md); an entry that cannot be read is skipped:
    // it names no candidate to exclude.
    const auto &m = package.manifest();
    const auto it = m.find("unsafe_candidates");
    if (it == m.end() || !it->is_array())
        return;
    for (size_t i = 0; i < it->size(); ++i) {
        const auto &e = (*it)[i];
        try {
            if (!e.is_object() || !e.at("op").is_string() || !e.at("dtype").is_string())
                continue;
            const KernelConfig c = KernelConfig::fromJson(e.at("candidate"), "unsafe_candidates");
            m_unsafe[classKey(e["op"].get<std::string>(), e["dtype"].get<std::string>(),
                              e.at("a_transposed").get<bool>(), e.at("b_transposed").get<bool>())]
                .push_back({c.kind, c.name, paramsOf(c)});
        } catch (const std::exception &) { // malformed: nothing excluded for it
        }
    }
}

// A decision beside the GEMM kernel, counted: it departed from Inductor's behaviour, or `reason` says
// why not.
void Selector::countBeside(DecisionKind kind, bool departed, const std::string &reason, std::string op) {
    Decision d;
    d.kind = kind;
    d.selected = departed;
    d.notSelected = departed ? "" : reason;
    d.op = std::move(op);
    m_counters.count(d);
}

FormDecision Selector::decideSmallMForm(const SmallMSite &site) {
    FormDecision f;
    if (m_decisions.smallMForm) {
        f = decideForm(*m_decisions.smallMForm, site, m_decisions.formMargin);
    } else {
        f.reason = "no_model";
        f.materialiseOperand = materialisesOperand(site);
    }
    countBeside(DecisionKind::SmallMForm, f.decompose, f.reason, site.op);
    return f;
}

KernelConfigDecision Selector::decideKernelConfig(const TritonKernelShape &shape) {
    KernelConfigDecision k;
    if (m_decisions.kernelConfig)
        k = diode::decideKernelConfig(*m_decisions.kernelConfig, shape, m_decisions.kernelConfigMargin);
    else
        k.reason = "no_model";
    // Counted with the feature it names, so that the stats say which kind of kernel was never measured.
    countBeside(DecisionKind::KernelConfig, k.fixed,
                k.unmeasured.empty() ? k.reason : k.reason + ":" + k.unmeasured,
                shape.reduction ? "reduction" : "pointwise");
    return k;
}

GemmContext Selector::onPackageGpu() const {
    GemmContext c;
    c.sharedMemoryBytes = int64_t(m_package.hardware().sharedMemoryKB) * 1024;
    return c;
}

nlohmann::json Selector::describe() const {
    // The decision kinds this selector decides by a model: the GEMM kernel always, the others where
    // the package carries a model that could be read.
    nlohmann::json decides = nlohmann::json::array({toString(DecisionKind::GemmKernel)});
    if (m_decisions.smallMForm)
        decides.push_back(toString(DecisionKind::SmallMForm));
    if (m_decisions.kernelConfig)
        decides.push_back(toString(DecisionKind::KernelConfig));
    return {{"top_k", m_policy.topK},
            {"performance_threshold",
             std::isinf(m_policy.threshold) ? nlohmann::json(nullptr) : nlohmann::json(m_policy.threshold)},
            {"margin", m_policy.margin},
            {"regime", toString(m_regime)},
            {"ops", m_options.ops.empty() ? opNameList() : m_options.ops},
            {"keep_unscored", m_options.keepUnscored},
            {"fallback", m_options.deferToInductor ? "inductor" : "plain"},
            {"decides", decides}};
}

Decision Selector::notSelected(Decision d, std::string reason, std::string why) const {
    d.selected = false;
    d.notSelected = std::move(reason);
    d.why = std::move(why);
    d.kept.clear();
    // A lowering offering only ATen has nothing to choose: never handed back to be benchmarked.
    d.deferred = m_options.deferToInductor && d.notSelected != "only_aten";
    if (!d.deferred && d.plain)
        d.kept = {*d.plain};
    return d;
}

bool Selector::isUnsafe(const GemmProblem &p, const KernelConfig &c) const {
    if (m_unsafe.empty())
        return false;
    const auto it = m_unsafe.find(classKey(toString(p.op), toString(p.dtype), p.aTransposed, p.bTransposed));
    if (it == m_unsafe.end())
        return false;
    const auto params = paramsOf(c);
    return std::any_of(it->second.begin(), it->second.end(), [&](const UnsafeKernel &u) {
        return u.kind == c.kind && u.name == c.name && u.params == params;
    });
}

void Selector::scoreCached(const GemmProblem &p, const std::vector<KernelConfig> &configs,
                           std::vector<double> &ms, bool &reused) {
    // The key: the problem and each candidate's fields, raw (a model's layers repeat their GEMMs).
    std::string key;
    key.reserve(48 + configs.size() * 48);
    appendRaw(key, p.op), appendRaw(key, p.dtype), appendRaw(key, p.batch), appendRaw(key, p.m);
    appendRaw(key, p.n), appendRaw(key, p.k), appendRaw(key, p.aTransposed), appendRaw(key, p.bTransposed);
    for (const auto &c : configs) {
        key += c.kind, key += '\0', key += c.name, key += '\0';
        appendRaw(key, paramsOf(c));
        appendRaw(key, flagOf(c, "EVEN_K")), appendRaw(key, flagOf(c, "ALLOW_TF32"));
    }
    {
        std::lock_guard lock(m_cacheLock);
        if (const auto it = m_scores.find(key); it != m_scores.end()) {
            ms = it->second;
            reused = true;
            return;
        }
    }
    m_package.predictMs(p, configs, ms);
    std::lock_guard lock(m_cacheLock);
    if (m_scores.size() >= kScoreCacheEntries)
        m_scores.clear();
    m_scores.emplace(std::move(key), ms);
}

Decision Selector::decide(const GemmLowering &g, const std::vector<KernelConfig> &candidates) {
    Decision d;
    d.op = g.op;
    const auto op = parseOp(g.op);
    const auto dtype = parseDType(g.dtype);
    GemmProblem p;
    if (op && dtype) {
        p.op = *op, p.dtype = *dtype, p.batch = g.batch, p.m = g.m, p.n = g.n, p.k = g.k;
        p.aTransposed = g.aTransposed, p.bTransposed = g.bTransposed;
        validate(p, "problem");
        return decide(p, candidates, g.context);
    }
    // The gates that come before the dtype, then the dtype's own, as decide() orders them.
    d.predictedMs.assign(candidates.size(), kNaN);
    d.excluded.assign(candidates.size(), Exclusion::None);
    d.plain = m_policy.plainCandidate(candidates, {});
    d.margin = m_policy.margin;
    if (allAten(candidates))
        d = notSelected(std::move(d), "only_aten", kOnlyAten);
    else if (auto why = opRefused(g.op, op); !why.empty())
        d = notSelected(std::move(d), "unscorable_op_" + g.op, std::move(why));
    else
        d = notSelected(std::move(d), "unscorable_dtype",
                        fmt::format("dtype {} is not one the model knows", g.dtype));
    m_counters.count(d);
    return d;
}

std::string Selector::opRefused(const std::string &name, std::optional<GemmOp> op) const {
    if (!op)
        return fmt::format("op '{}' is not one the model scores ({})", name, opNames());
    if (!m_options.ops.empty() &&
        std::find(m_options.ops.begin(), m_options.ops.end(), name) == m_options.ops.end())
        return fmt::format("op {} is not among the ops asked for", name);
    if (!m_package.scoresOp(*op))
        return fmt::format("the package's feature schema {} has no input for op {}",
                           m_package.featureSchema(), name);
    return {};
}

Decision Selector::decide(const GemmProblem &p, const std::vector<KernelConfig> &candidates,
                          const GemmContext &context, const std::vector<double> *predictedMs) {
    Decision d;
    d.op = toString(p.op);
    d.predictedMs.assign(candidates.size(), kNaN);
    d.excluded.assign(candidates.size(), Exclusion::None);
    d.plain = m_policy.plainCandidate(candidates, {});
    d.margin = m_policy.margin;
    if (predictedMs && predictedMs->size() != candidates.size())
        throw InvalidInput(
            fmt::format("{} predicted times for {} candidates", predictedMs->size(), candidates.size()));
    const auto finish = [&](Decision &&done) {
        m_counters.count(done);
        return std::move(done);
    };
    if (allAten(candidates))
        return finish(notSelected(std::move(d), "only_aten", kOnlyAten));
    if (auto why = opRefused(d.op, p.op); !why.empty())
        return finish(notSelected(std::move(d), "unscorable_op_" + d.op, std::move(why)));
    if (p.op == GemmOp::Baddbmm && p.m > 1 && context.addendVariesAlongM)
        // Problem JSON's baddbmm has an addend (B, 1, N); a full (B, M, N) one reads M times more.
        return finish(notSelected(std::move(d), "unscorable_baddbmm_full_addend",
                                  "a baddbmm addend that varies along M is not in the schema"));
    // A problem the package's training data had nothing like (a layout, op or dtype it never saw)
    // would be scored by extrapolation: plain torch.compile's kernel is kept.
    if (const std::string unseen = m_package.unseenProblemFeature(p); !unseen.empty())
        return finish(notSelected(std::move(d), "unscorable_unseen_" + unseen.substr(0, unseen.find(' ')),
                                  fmt::format("the package was trained on no problem with {}", unseen)));
    std::vector<size_t> known;
    std::vector<KernelConfig> configs;
    const int bytes = elementBytes(p.dtype);
    for (size_t i = 0; i < candidates.size(); ++i) {
        const KernelConfig &c = candidates[i];
        if (!FeatureSchema::describes(c))
            d.excluded[i] = Exclusion::Unscorable;
        else if (isUnsafe(p, c))
            d.excluded[i] = Exclusion::WrongResult;
        else if (c.kind == "triton" && context.sharedMemoryBytes > 0 &&
                 c.tileLoadBytes(bytes) > context.sharedMemoryBytes)
            d.excluded[i] = Exclusion::SharedMemory;
        else {
            known.push_back(i);
            configs.push_back(c);
        }
    }
    if (known.empty())
        return finish(notSelected(std::move(d), "unscorable_no_known_candidates",
                                  "no candidate the model can describe"));
    std::vector<double> ms;
    if (predictedMs) {
        for (size_t i : known)
            ms.push_back((*predictedMs)[i]);
    } else {
        scoreCached(p, configs, ms, d.scoresReused);
    }
    for (size_t j = 0; j < known.size(); ++j)
        d.predictedMs[known[j]] = ms[j];
    // With predictions, plain's kernel is the op's best-predicted ATen one where plainName is not offered.
    d.plain = m_policy.plainCandidate(candidates, d.predictedMs);
    for (size_t j : m_policy.select(configs, ms))
        d.kept.push_back(known[j]);
    // Candidates the model cannot score (decompose-K subgraphs, templates it was not trained on)
    // would make Inductor benchmark: handed back only when asked to.
    if (m_options.keepUnscored)
        for (size_t i = 0; i < candidates.size(); ++i)
            if (d.excluded[i] == Exclusion::Unscorable)
                d.kept.push_back(i);
    d.selected = true;
    return finish(std::move(d));
}

} // namespace diode
