// The C ABI over core's package reader (include/diode_inductor.h). Every entry point catches
// everything: an exception must never unwind into Python's ctypes.

#include "diode_inductor.h"

#include "diode/infer/decisionmodel.h"
#include "diode/infer/features.h"
#include "diode/infer/gputable.h"
#include "diode/infer/jsonlimits.h"
#include "diode/infer/modelpackage.h"
#include "diode/infer/packagechoice.h"
#include "diode/infer/problemjson.h"
#include "diode/infer/selectionpolicy.h"
#include "diode/infer/selector.h"
#include "diode/infer/vocabulary.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

struct diode_model {
    diode::ModelPackage package;
    std::string manifestText;
};

struct diode_selector {
    diode::Selector selector;
};

namespace {

thread_local std::string t_lastError;

void setError(std::string text) {
    t_lastError = std::move(text);
}

// The candidate key's flags (EVEN_K, ALLOW_TF32) are the last of kCandidateKeyFields.
constexpr size_t kFirstFlag = diode::kCandidateKeyFields.size() - diode::kCandidateKeyFlags;

static_assert(DIODE_PACKED_FIELDS == 2 + diode::kCandidateKeyFields.size(),
              "a packed row is a candidate key: kind, name and kCandidateKeyFields");
static_assert(DIODE_DECISION_GEMM_KERNEL == int(diode::DecisionKind::GemmKernel));

diode::KernelConfig fromRow(const int32_t *row, const char *const *names, size_t nameCount, size_t i) {
    if (row[0] < 0 || size_t(row[0]) >= diode::kCandidateRowKinds.size())
        throw diode::InvalidInput(
            fmt::format("rows[{}]: kind {} is not one of 0 (aten), 1 (triton) or 2 (other)", i, row[0]));
    if (row[1] < 0 || size_t(row[1]) >= nameCount || !names[row[1]])
        throw diode::InvalidInput(
            fmt::format("rows[{}]: name index {} is outside the {} names given", i, row[1], nameCount));
    diode::KernelConfig k;
    k.kind = diode::kCandidateRowKinds[size_t(row[0])];
    k.name = names[row[1]];
    int *params[] = {&k.blockM, &k.blockN, &k.blockK, &k.groupM, &k.numStages, &k.numWarps};
    for (size_t f = 0; f < kFirstFlag; ++f)
        *params[f] = row[2 + f];
    // The feature schema reads these flags from `extra`, as problem JSON carries them.
    for (size_t f = 0; f < diode::kCandidateKeyFlags; ++f)
        if (const int32_t flag = row[2 + kFirstFlag + f]; flag >= 0) {
            if (!k.extra.is_object())
                k.extra = nlohmann::json::object();
            k.extra[diode::kCandidateKeyFields[kFirstFlag + f]] = flag != 0;
        }
    return k;
}
static_assert(diode::kCandidateKeyFields.size() - diode::kCandidateKeyFlags == 6,
              "fromRow names each integer field of the key");

// A string into a caller's buffer of `len` bytes, cut to fit and always terminated.
void copyOut(const std::string &text, char *buf, size_t len) {
    if (!len)
        return;
    const size_t n = std::min(text.size(), len - 1);
    std::memcpy(buf, text.data(), n);
    buf[n] = '\0';
}

// Runs `f`, turning any exception into diode_last_error and `failed`: no exception may unwind
// into ctypes.
template <typename F, typename R> R guarded(const char *call, R failed, F &&f) {
    try {
        return f();
    } catch (const std::exception &e) {
        setError(e.what());
    } catch (...) {
        setError(fmt::format("{}: unknown error", call));
    }
    return failed;
}

char *jsonCopy(const nlohmann::json &j) {
    return strdup(j.dump().c_str());
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
        auto *m = new diode_model{diode::ModelPackage::load(path), {}};
        m->manifestText = m->package.manifest().dump();
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

const char *diode_vocabulary(void) {
    static const std::string text = diode::vocabulary().dump();
    return text.c_str();
}

diode_selector *diode_selector_open(const diode_model *model, const char *options_json) {
    if (!model) {
        setError("diode_selector_open: model must not be NULL");
        return nullptr;
    }
    return guarded("diode_selector_open", static_cast<diode_selector *>(nullptr), [&] {
        const auto options = options_json ? diode::parseJsonBounded(options_json, "selector options")
                                          : nlohmann::json::object();
        return new diode_selector{diode::Selector(model->package, diode::SelectorOptions::fromJson(options))};
    });
}

void diode_selector_close(diode_selector *selector) {
    delete selector;
}

char *diode_selector_options(const diode_selector *selector) {
    if (!selector) {
        setError("diode_selector_options: selector must not be NULL");
        return nullptr;
    }
    return guarded("diode_selector_options", static_cast<char *>(nullptr),
                   [&] { return jsonCopy(selector->selector.describe()); });
}

char *diode_selector_counters(const diode_selector *selector) {
    if (!selector) {
        setError("diode_selector_counters: selector must not be NULL");
        return nullptr;
    }
    return guarded("diode_selector_counters", static_cast<char *>(nullptr),
                   [&] { return jsonCopy(selector->selector.counters().toJson()); });
}

void diode_selector_reset_counters(diode_selector *selector) {
    if (selector)
        selector->selector.counters().reset();
}

int diode_decide_gemm(diode_selector *selector, const diode_problem *problem,
                      const diode_gemm_context *context, const char *const *names, size_t name_count,
                      const int32_t *rows, size_t count, diode_decision *decision, int32_t *kept,
                      double *predicted_ms, int32_t *excluded) {
    if (!selector || !problem || !decision ||
        (count && (!rows || !names || !kept || !predicted_ms || !excluded))) {
        setError("diode_decide_gemm: selector, problem, decision, and with candidates names, rows, kept, "
                 "predicted_ms and excluded must not be NULL");
        return -1;
    }
    return guarded("diode_decide_gemm", -1, [&] {
        if (!problem->op || !problem->dtype)
            throw diode::InvalidInput("problem: op and dtype must be given");
        std::vector<diode::KernelConfig> candidates;
        candidates.reserve(count);
        for (size_t i = 0; i < count; ++i)
            candidates.push_back(fromRow(rows + i * DIODE_PACKED_FIELDS, names, name_count, i));
        diode::GemmLowering g;
        g.op = problem->op, g.dtype = problem->dtype;
        g.batch = problem->batch, g.m = problem->m, g.n = problem->n, g.k = problem->k;
        g.aTransposed = problem->a_transposed != 0, g.bTransposed = problem->b_transposed != 0;
        if (context) {
            g.context.addendVariesAlongM = context->addend_varies_along_m != 0;
            g.context.sharedMemoryBytes = context->shared_memory_bytes;
        }
        const diode::Decision d = selector->selector.decide(g, candidates);
        decision->kind = int32_t(d.kind);
        decision->selected = d.selected;
        decision->deferred = d.deferred;
        decision->kept = int32_t(d.kept.size());
        decision->plain = d.plain ? int32_t(*d.plain) : -1;
        decision->scores_reused = d.scoresReused;
        decision->margin = d.margin;
        copyOut(d.notSelected, decision->not_selected, sizeof decision->not_selected);
        copyOut(d.why, decision->why, sizeof decision->why);
        for (size_t i = 0; i < d.kept.size(); ++i)
            kept[i] = int32_t(d.kept[i]);
        std::copy(d.predictedMs.begin(), d.predictedMs.end(), predicted_ms);
        for (size_t i = 0; i < count; ++i)
            excluded[i] = int32_t(d.excluded[i]);
        return 0;
    });
}

char *diode_read_problem_lines(const char *path) {
    if (!path) {
        setError("diode_read_problem_lines: path must not be NULL");
        return nullptr;
    }
    return guarded("diode_read_problem_lines", static_cast<char *>(nullptr), [&] {
        nlohmann::json out = nlohmann::json::array();
        for (const auto &r : diode::readProblemFile(path))
            out.push_back(diode::toJson(r));
        return jsonCopy(out);
    });
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

void diode_free(void *p) {
    std::free(p);
}

const char *diode_last_error(void) {
    return t_lastError.c_str();
}

} // extern "C"

namespace {

nlohmann::json decisionRequest(const char *what, const char *request_json) {
    if (!request_json)
        throw diode::InvalidInput(fmt::format("{}: the request must be given", what));
    nlohmann::json request = diode::parseJsonBounded(request_json, fmt::format("{} request", what));
    if (!request.is_object())
        throw diode::InvalidInput(fmt::format("{}: the request must be a JSON object", what));
    return request;
}

// {"configs": [...]}: what diode_kernel_candidates and diode_fastest_beyond_portfolio answer.
nlohmann::json configsJson(const std::vector<diode::TritonConfig> &configs) {
    nlohmann::json out{{"configs", nlohmann::json::array()}};
    for (const auto &c : configs)
        out["configs"].push_back(c.toJson());
    return out;
}

} // namespace

extern "C" {

char *diode_decide_json(diode_selector *selector, const char *kind, const char *request_json) {
    try {
        if (!selector || !kind)
            throw diode::InvalidInput("diode_decide_json: selector and kind must be given");
        const std::string what(kind);
        const nlohmann::json request = decisionRequest("diode_decide_json", request_json);
        nlohmann::json out;
        if (what == "kernel_config") {
            const auto shape =
                diode::TritonKernelShape::fromJson(request.value("shape", nlohmann::json()), "shape");
            const auto d = selector->selector.decideKernelConfig(shape);
            out = {{"fixed", d.fixed},
                   {"predicted_ratio", d.predictedRatio},
                   {"candidates", d.candidates},
                   {"reason", d.reason}};
            if (d.fixed)
                out["config"] = d.config.toJson();
            if (!d.unmeasured.empty())
                out["unmeasured"] = d.unmeasured;
        } else if (what == "small_m_form") {
            const auto site = diode::SmallMSite::fromJson(request.value("site", nlohmann::json()), "site");
            const auto d = selector->selector.decideSmallMForm(site);
            out = {{"decompose", d.decompose},
                   {"materialise_operand", d.materialiseOperand},
                   {"library_over_cache", d.libraryOverCache},
                   {"predicted_ratio", d.predictedRatio},
                   {"reason", d.reason}};
        } else {
            throw diode::InvalidInput(
                fmt::format("diode_decide_json: kind '{}' is not one of kernel_config, small_m_form", what));
        }
        if (!selector->selector.decisionModelsError().empty() && out.value("reason", "") == "no_model")
            out["error"] = selector->selector.decisionModelsError();
        return strdup(out.dump().c_str());
    } catch (const std::exception &e) {
        setError(e.what());
    } catch (...) {
        setError("diode_decide_json: unknown error");
    }
    return nullptr;
}

char *diode_kernel_candidates(const char *request_json) {
    return guarded("diode_kernel_candidates", static_cast<char *>(nullptr), [&] {
        const nlohmann::json request = decisionRequest("diode_kernel_candidates", request_json);
        const auto shape =
            diode::TritonKernelShape::fromJson(request.value("shape", nlohmann::json()), "shape");
        if (int(request.contains("near")) + int(request.contains("grid")) + int(request.contains("extra")) >
            1)
            throw diode::InvalidInput("ask for one of \"near\", \"grid\" and \"extra\", not several");
        if (request.contains("grid") && !request.at("grid").is_boolean())
            throw diode::InvalidInput("\"grid\": must be true or false");
        std::vector<diode::TritonConfig> extra;
        const auto &given = request.value("extra", nlohmann::json::array());
        if (!given.is_array())
            throw diode::InvalidInput("\"extra\": must be an array of kernel configs");
        for (size_t i = 0; i < given.size(); ++i)
            extra.push_back(diode::TritonConfig::fromJson(given[i], fmt::format("extra[{}]", i)));
        return jsonCopy(configsJson(
            request.contains("near")
                ? diode::neighbourConfigs(shape, diode::TritonConfig::fromJson(request.at("near"), "near"))
            : request.value("grid", false) ? diode::candidateConfigs(shape)
                                           : diode::decisionCandidates(shape, extra)));
    });
}

char *diode_fastest_beyond_portfolio(const char *request_json) {
    return guarded("diode_fastest_beyond_portfolio", static_cast<char *>(nullptr), [&] {
        const nlohmann::json request = decisionRequest("diode_fastest_beyond_portfolio", request_json);
        const auto &lines = request.value("lines", nlohmann::json());
        if (!lines.is_array() || lines.empty())
            throw diode::InvalidInput("\"lines\": must be a non-empty array of kernel line files");
        std::vector<std::string> paths;
        for (const auto &p : lines) {
            if (!p.is_string())
                throw diode::InvalidInput("\"lines\": must hold file paths");
            paths.push_back(p.get<std::string>());
        }
        return jsonCopy(configsJson(diode::fastestBeyondPortfolio(diode::readDecisionData(paths).kernels)));
    });
}

} // extern "C"
