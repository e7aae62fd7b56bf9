// The C ABI over core's package reader (include/diode_inductor.h). Every entry point catches
// everything: an exception must never unwind into Python's ctypes.

#include "diode_inductor.h"

#include "diode/decisionmodel.h"
#include "diode/features.h"
#include "diode/gputable.h"
#include "diode/jsonlimits.h"
#include "diode/modelpackage.h"
#include "diode/packagechoice.h"
#include "diode/problemjson.h"
#include "diode/ranking.h"
#include "diode/selectionpolicy.h"
#include "diode/timingagreement.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <type_traits>
#include <vector>

struct diode_model {
    diode::ModelPackage package;
    std::string manifestText;
    // The package's decision models (manifest "decisions"), read when the package is opened; a
    // malformed section leaves them empty with `decisionsError` saying why, so the GEMM model
    // still serves.
    diode::DecisionModels decisions;
    std::string decisionsError;
};

namespace {

thread_local std::string t_lastError;

void setError(std::string text) {
    t_lastError = std::move(text);
}

diode::GemmProblem toProblem(const diode_problem &p) {
    using diode::InvalidInput;
    if (!p.op || !p.dtype)
        throw InvalidInput("problem: op and dtype must be given");
    const auto op = diode::parseOp(p.op);
    if (!op)
        throw InvalidInput(fmt::format("problem: op '{}' is not one of {}", p.op, diode::opNames()));
    const auto dtype = diode::parseDType(p.dtype);
    if (!dtype)
        throw InvalidInput(fmt::format("problem: dtype '{}' is not one of bf16, fp16, fp32", p.dtype));
    diode::GemmProblem g;
    g.op = *op;
    g.dtype = *dtype;
    g.batch = p.batch;
    g.m = p.m;
    g.n = p.n;
    g.k = p.k;
    g.aTransposed = p.a_transposed != 0;
    g.bTransposed = p.b_transposed != 0;
    diode::validate(g, "problem");
    return g;
}

// The first of the candidate key's flags (EVEN_K, ALLOW_TF32) among kCandidateKeyFields.
constexpr size_t kFirstFlag = diode::kCandidateKeyFields.size() - diode::kCandidateKeyFlags;

diode::KernelConfig toConfig(const diode_candidate &c, size_t i) {
    if (!c.kind || !c.name)
        throw diode::InvalidInput(fmt::format("candidates[{}]: kind and name must be given", i));
    diode::KernelConfig k;
    k.kind = c.kind;
    k.name = c.name;
    k.blockM = c.block_m;
    k.blockN = c.block_n;
    k.blockK = c.block_k;
    k.groupM = c.group_m;
    k.numStages = c.num_stages;
    k.numWarps = c.num_warps;
    // The feature schema reads these flags from `extra`, as problem JSON carries them.
    const int32_t flags[diode::kCandidateKeyFlags] = {c.even_k, c.allow_tf32};
    for (size_t f = 0; f < diode::kCandidateKeyFlags; ++f)
        if (flags[f] >= 0) {
            if (!k.extra.is_object())
                k.extra = nlohmann::json::object();
            k.extra[diode::kCandidateKeyFields[kFirstFlag + f]] = flags[f] != 0;
        }
    return k;
}

static_assert(DIODE_PACKED_FIELDS == 2 + diode::kCandidateKeyFields.size(),
              "a packed row is a candidate key: kind, name and kCandidateKeyFields");

diode::KernelConfig fromRow(const int32_t *row, const char *const *names, size_t nameCount, size_t i) {
    static const char *const kKinds[] = {"aten", "triton"};
    if (row[0] < 0 || row[0] > 1)
        throw diode::InvalidInput(
            fmt::format("rows[{}]: kind {} is neither 0 (aten) nor 1 (triton)", i, row[0]));
    if (row[1] < 0 || size_t(row[1]) >= nameCount || !names[row[1]])
        throw diode::InvalidInput(
            fmt::format("rows[{}]: name index {} is outside the {} names given", i, row[1], nameCount));
    const diode_candidate c{kKinds[row[0]], names[row[1]], row[2], row[3], row[4],
                            row[5],         row[6],        row[7], row[8], row[9]};
    return toConfig(c, i);
}

// Scores `count` candidates into `out` and, with a policy, writes the kept indices to `kept`;
// returns 0 or how many were kept, -1 on error. With `scored`, `out` already holds the predictions.
int scoreConfigs(const diode_model *model, const diode_problem &problem, size_t count, double *out,
                 const std::function<diode::KernelConfig(size_t)> &config,
                 const diode_policy *policy = nullptr, bool scored = false, int32_t *kept = nullptr) {
    try {
        const diode::GemmProblem p = toProblem(problem);
        std::vector<diode::KernelConfig> configs;
        configs.reserve(count);
        for (size_t i = 0; i < count; ++i)
            configs.push_back(config(i));
        std::vector<double> ms;
        if (scored) {
            ms.assign(out, out + count);
        } else {
            model->package.predictMs(p, configs, ms);
            std::memcpy(out, ms.data(), count * sizeof(double));
        }
        if (!policy)
            return 0;
        diode::SelectionPolicy rule;
        rule.topK = policy->top_k;
        rule.margin = policy->margin;
        rule.threshold = policy->threshold;
        rule.validate();
        const std::vector<size_t> chosen = rule.select(configs, ms);
        for (size_t i = 0; i < chosen.size(); ++i)
            kept[i] = int32_t(chosen[i]);
        return int(chosen.size());
    } catch (const std::exception &e) {
        setError(e.what());
    } catch (...) {
        setError("diode_model_score: unknown error");
    }
    return -1;
}

// A string into a caller's buffer of `len` bytes, cut to fit and always terminated.
void copyOut(const std::string &text, char *buf, size_t len) {
    if (!len)
        return;
    const size_t n = std::min(text.size(), len - 1);
    std::memcpy(buf, text.data(), n);
    buf[n] = '\0';
}

} // namespace

extern "C" {

int diode_abi_version(void) {
    return DIODE_ABI_VERSION;
}
int diode_feature_schema_version(void) {
    return diode::FeatureSchema::kVersion;
}

diode_model *diode_model_open(const char *path) {
    if (!path) {
        setError("diode_model_open: path is NULL");
        return nullptr;
    }
    try {
        auto *m = new diode_model{diode::ModelPackage::load(path), {}, {}, {}};
        m->manifestText = m->package.manifest().dump();
        try {
            m->decisions = diode::DecisionModels::fromManifest(m->package.manifest());
        } catch (const std::exception &e) {
            m->decisionsError = fmt::format("{}: {}", path, e.what());
        }
        return m;
    } catch (const std::exception &e) {
        setError(e.what());
    } catch (...) {
        setError(fmt::format("{}: unknown error while loading", path));
    }
    return nullptr;
}

void diode_model_close(diode_model *model) {
    delete model;
}

const char *diode_model_manifest(const diode_model *model) {
    return model ? model->manifestText.c_str() : "";
}

int diode_model_score(const diode_model *model, const diode_problem *problem,
                      const diode_candidate *candidates, size_t count, double *out_ms) {
    if (!model || !problem || (count && (!candidates || !out_ms))) {
        setError("diode_model_score: model, problem, candidates and out_ms must not be NULL");
        return -1;
    }
    return scoreConfigs(model, *problem, count, out_ms, [&](size_t i) { return toConfig(candidates[i], i); });
}

int diode_model_score_packed(const diode_model *model, const diode_problem *problem, const char *const *names,
                             size_t name_count, const int32_t *rows, size_t count, double *out_ms) {
    if (!model || !problem || (count && (!rows || !out_ms || !names))) {
        setError("diode_model_score_packed: model, problem, names, rows and out_ms must not be NULL");
        return -1;
    }
    return scoreConfigs(model, *problem, count, out_ms, [&](size_t i) {
        return fromRow(rows + i * DIODE_PACKED_FIELDS, names, name_count, i);
    });
}

double diode_policy_margin(const diode_model *model, const char *regime) {
    if (!regime) {
        setError("diode_policy_margin: regime must not be NULL");
        return -1;
    }
    try {
        const diode::Regime r = diode::parseRegime(regime);
        return model ? diode::packageMargin(model->package.manifest(), r) : diode::defaultMargin(r);
    } catch (const std::exception &e) {
        setError(e.what());
    } catch (...) {
        setError("diode_policy_margin: unknown error");
    }
    return -1;
}

int diode_plain_candidate(const char *const *kinds, const char *const *names, size_t count) {
    if (count && (!kinds || !names)) {
        setError("diode_plain_candidate: kinds and names must not be NULL");
        return -2;
    }
    std::vector<diode::KernelConfig> candidates(count);
    for (size_t i = 0; i < count; ++i) {
        candidates[i].kind = kinds[i] ? kinds[i] : "";
        candidates[i].name = names[i] ? names[i] : "";
    }
    const auto plain = diode::SelectionPolicy{}.plainCandidate(candidates, {});
    return plain ? int(*plain) : -1;
}

int diode_model_select_packed(const diode_model *model, const diode_problem *problem,
                              const char *const *names, size_t name_count, const int32_t *rows, size_t count,
                              const diode_policy *policy, int scored, double *out_ms, int32_t *kept) {
    if (!model || !problem || !policy || (count && (!rows || !out_ms || !names || !kept))) {
        setError("diode_model_select_packed: model, problem, policy, names, rows, out_ms and kept must not "
                 "be NULL");
        return -1;
    }
    return scoreConfigs(
        model, *problem, count, out_ms,
        [&](size_t i) { return fromRow(rows + i * DIODE_PACKED_FIELDS, names, name_count, i); }, policy,
        scored != 0, kept);
}

int diode_gpu_transfer(const char *package_gpu, const char *device_gpu, const char *device_arch,
                       int device_sms, double *distance, char *why, size_t why_len) {
    if (!package_gpu || !device_gpu || (why_len && !why)) {
        setError("diode_gpu_transfer: package_gpu and device_gpu must not be NULL, nor why when why_len > 0");
        return -1;
    }
    try {
        const auto t =
            diode::gpuTransfer(package_gpu, device_gpu, device_arch ? device_arch : "", device_sms);
        if (distance)
            *distance = t.distance;
        copyOut(t.why, why, why_len);
        return t.kind == diode::GpuTransfer::Same ? 0 : t.kind == diode::GpuTransfer::Similar ? 1 : 2;
    } catch (const std::exception &e) {
        setError(e.what());
    } catch (...) {
        setError("diode_gpu_transfer: unknown error");
    }
    return -1;
}

int diode_choose_package(const char *packages_json, const char *device_gpu, const char *device_arch,
                         int device_sms, const char *regime, int *transferred) {
    if (!packages_json || !device_gpu || !regime) {
        setError("diode_choose_package: packages_json, device_gpu and regime must not be NULL");
        return -2;
    }
    try {
        const auto list = nlohmann::json::parse(packages_json);
        if (!list.is_array())
            throw diode::InvalidInput("diode_choose_package: packages_json must be a JSON array");
        std::vector<diode::PackageFacts> packages;
        for (size_t i = 0; i < list.size(); ++i) {
            const auto &p = list[i];
            const std::string where = fmt::format("packages[{}]", i);
            if (!p.is_object() || !p.value("gpu", nlohmann::json()).is_string())
                throw diode::InvalidInput(where + ": an object with a string 'gpu' is needed");
            // An optional field of the right type, or an error naming the package and the field.
            const auto optional = [&](const char *key, auto fallback,
                                      bool (nlohmann::json::*isType)() const) {
                const auto &v = p.contains(key) ? p[key] : nlohmann::json();
                if (v.is_null())
                    return fallback;
                if (!(v.*isType)())
                    throw diode::InvalidInput(
                        fmt::format("{}: '{}' is {}, not {}", where, key, v.type_name(),
                                    std::is_same_v<decltype(fallback), int> ? "an integer" : "a string"));
                return v.template get<decltype(fallback)>();
            };
            diode::PackageFacts f;
            f.gpu = p["gpu"].get<std::string>();
            f.createdAt = optional("created_at", std::string(), &nlohmann::json::is_string);
            const std::string method = optional("timing_method", std::string(), &nlohmann::json::is_string);
            const auto m = diode::parseTimingMethod(method);
            if (!m)
                throw diode::InvalidInput(
                    fmt::format("{}: timing_method '{}' is not one core knows", where, method));
            f.timingMethod = *m;
            f.sourceRank = optional("source_rank", 0, &nlohmann::json::is_number_integer);
            packages.push_back(std::move(f));
        }
        const auto choice =
            diode::choosePackage(packages, {device_gpu, device_arch ? device_arch : "", device_sms},
                                 diode::toString(diode::parseRegime(regime)));
        if (transferred)
            *transferred = choice && choice->transfer.kind == diode::GpuTransfer::Similar;
        return choice ? int(choice->index) : -1;
    } catch (const std::exception &e) {
        setError(e.what());
    } catch (...) {
        setError("diode_choose_package: unknown error");
    }
    return -2;
}

int diode_model_unseen(const diode_model *model, const diode_problem *problem, char *why, size_t why_len) {
    if (!model || !problem || (why_len && !why)) {
        setError("diode_model_unseen: model and problem must not be NULL, nor why when why_len > 0");
        return -1;
    }
    try {
        const std::string flag = model->package.unseenProblemFeature(toProblem(*problem));
        copyOut(flag, why, why_len);
        return flag.empty() ? 0 : 1;
    } catch (const std::exception &e) {
        setError(e.what());
    } catch (...) {
        setError("diode_model_unseen: unknown error");
    }
    return -1;
}

int diode_model_scores_op(const diode_model *model, const char *op) {
    if (!model || !op) {
        setError("diode_model_scores_op: model and op must not be NULL");
        return -1;
    }
    const auto parsed = diode::parseOp(op);
    if (!parsed) {
        setError(fmt::format("diode_model_scores_op: op '{}' is not one of {}", op, diode::opNames()));
        return -1;
    }
    return model->package.scoresOp(*parsed) ? 1 : 0;
}

const char *diode_vocabulary(void) {
    static const std::string text = [] {
        nlohmann::json ops = nlohmann::json::array(), batched = nlohmann::json::array();
        for (const auto op : diode::allOps()) {
            ops.push_back(diode::toString(op));
            if (diode::isBatched(op))
                batched.push_back(diode::toString(op));
        }
        nlohmann::json dtypes = nlohmann::json::array();
        for (const auto d : diode::allDTypes())
            dtypes.push_back({{"name", diode::toString(d)},
                              {"torch", diode::torchName(d)},
                              {"bytes", diode::elementBytes(d)}});
        nlohmann::json fields = nlohmann::json::array();
        for (const auto f : diode::kProblemFields)
            fields.push_back(f);
        nlohmann::json key = {"kind", "name"}, flags = nlohmann::json::array();
        for (size_t i = 0; i < diode::kCandidateKeyFields.size(); ++i) {
            key.push_back(diode::kCandidateKeyFields[i]);
            if (i >= kFirstFlag)
                flags.push_back(diode::kCandidateKeyFields[i]);
        }
        return nlohmann::json{
            {"ops", ops},
            {"batched_ops", batched},
            {"dtypes", dtypes},
            {"problem_fields", fields},
            {"max_problem_size", diode::kMaxProblemSize},
            {"candidate_key", key},
            {"candidate_flags", flags},
            {"timing_methods", diode::timingMethodNameList()},
            {"regimes", {diode::toString(diode::Regime::Warm), diode::toString(diode::Regime::Cold)}},
            {"default_regime", diode::kDefaultRegime},
            {"timing_agreement",
             {{"relative", diode::kAgreementRelative}, {"absolute_ms", diode::kAgreementAbsoluteMs}}}}
            .dump();
    }();
    return text.c_str();
}

char *diode_model_locations(void) {
    try {
        nlohmann::json out = nlohmann::json::array();
        for (const auto &l : diode::userModelLocations())
            out.push_back({{"source", l.source}, {"path", l.path.string()}});
        return strdup(out.dump().c_str());
    } catch (const std::exception &e) {
        setError(e.what());
    } catch (...) {
        setError("diode_model_locations: unknown error");
    }
    return nullptr;
}

char *diode_model_facts(const diode_model *model) {
    if (!model) {
        setError("diode_model_facts: model must not be NULL");
        return nullptr;
    }
    try {
        const auto method = model->package.timingMethod();
        nlohmann::json rank;
        for (const auto r : {diode::Regime::Warm, diode::Regime::Cold})
            rank[std::string(diode::toString(r))] = diode::regimeRank(method, diode::toString(r));
        return strdup(nlohmann::json{{"timing_method", diode::toString(method)},
                                     {"regime_rank", rank},
                                     {"refused", diode::pluginRefusal(method)}}
                          .dump()
                          .c_str());
    } catch (const std::exception &e) {
        setError(e.what());
    } catch (...) {
        setError("diode_model_facts: unknown error");
    }
    return nullptr;
}

char *diode_model_rank_json(const diode_model *model, const char *problem_line) {
    if (!model || !problem_line) {
        setError("diode_model_rank_json: model and problem_line must not be NULL");
        return nullptr;
    }
    try {
        return strdup(diode::rankProblemLine(model->package, problem_line, "line 1").dump().c_str());
    } catch (const std::exception &e) {
        setError(e.what());
    } catch (...) {
        setError("diode_model_rank_json: unknown error");
    }
    return nullptr;
}

void diode_free(void *p) {
    std::free(p);
}

const char *diode_last_error(void) {
    return t_lastError.c_str();
}

} // extern "C"

char *diode_decide(const diode_model *model, const char *kind, const char *request_json) {
    try {
        if (!kind || !request_json)
            throw diode::InvalidInput("diode_decide: kind and request must be given");
        const nlohmann::json request =
            diode::parseJsonBounded(request_json, fmt::format("diode_decide {} request", kind));
        if (!request.is_object())
            throw diode::InvalidInput(
                fmt::format("diode_decide {}: the request must be a JSON object", kind));
        const std::string what(kind);
        double margin = -1;
        if (request.contains("margin")) {
            if (!request["margin"].is_number())
                throw diode::InvalidInput(fmt::format("diode_decide {}: \"margin\" must be a number", what));
            margin = request["margin"].get<double>();
        }
        nlohmann::json out;
        if (what == "kernel_candidates") {
            const auto shape =
                diode::TritonKernelShape::fromJson(request.value("shape", nlohmann::json()), "shape");
            out["configs"] = nlohmann::json::array();
            for (const auto &c : diode::candidateConfigs(shape))
                out["configs"].push_back(c.toJson());
        } else if (what == "kernel_config") {
            const auto shape =
                diode::TritonKernelShape::fromJson(request.value("shape", nlohmann::json()), "shape");
            if (!model || !model->decisions.kernelConfig) {
                out = {{"fixed", false}, {"reason", "no_model"}};
                if (model && !model->decisionsError.empty())
                    out["error"] = model->decisionsError;
            } else {
                const auto d =
                    diode::decideKernelConfig(*model->decisions.kernelConfig, shape,
                                              margin < 0 ? model->decisions.kernelConfigMargin : margin);
                out = {{"fixed", d.fixed},
                       {"predicted_ratio", d.predictedRatio},
                       {"candidates", d.candidates},
                       {"reason", d.reason}};
                if (d.fixed)
                    out["config"] = d.config.toJson();
            }
        } else if (what == "small_m_form") {
            const auto site = diode::SmallMSite::fromJson(request.value("site", nlohmann::json()), "site");
            if (!model || !model->decisions.smallMForm) {
                out = {{"decompose", false}, {"reason", "no_model"}};
                if (model && !model->decisionsError.empty())
                    out["error"] = model->decisionsError;
            } else {
                const auto d = diode::decideForm(*model->decisions.smallMForm, site,
                                                 margin < 0 ? model->decisions.formMargin : margin);
                out = {
                    {"decompose", d.decompose}, {"predicted_ratio", d.predictedRatio}, {"reason", d.reason}};
            }
        } else {
            throw diode::InvalidInput(fmt::format(
                "diode_decide: kind '{}' is not one of kernel_config, small_m_form, kernel_candidates",
                what));
        }
        return strdup(out.dump().c_str());
    } catch (const std::exception &e) {
        setError(e.what());
    } catch (...) {
        setError("diode_decide: unknown error");
    }
    return nullptr;
}
