/* libdiode_inductor: the C ABI the torch_diode Python package (ctypes) loads inside a PyTorch
 * process. It wraps core's package reader, feature schema and Eigen inference; it links no Qt
 * and no LibTorch, so it never clashes with the torch already loaded.
 *
 * Threads: a model handle and a selector may be used from several threads at once.
 * Errors: calls that fail return NULL or a negative value; diode_last_error() then gives the
 * reason, per thread, until the next failing call on that thread. */
#ifndef DIODE_INDUCTOR_H
#define DIODE_INDUCTOR_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define DIODE_ABI_VERSION 13

#if defined(__GNUC__)
#define DIODE_API __attribute__((visibility("default")))
#else
#define DIODE_API
#endif

typedef struct diode_model diode_model;

/* One GEMM: C[B,M,N] = A[B,M,K] @ B[B,K,N]; op "mm" | "addmm" | "bmm" | "baddbmm" (bmm plus an
 * addend [B,1,N]), dtype "bf16" | "fp16" | "fp32" (torch names such as "bfloat16" are accepted too).
 * In diode_decide_gemm op and dtype may be any name Inductor gives: one the model does not know is
 * a reason not to decide, not an error. */
typedef struct diode_problem {
    const char *op;
    const char *dtype;
    int64_t batch, m, n, k;
    int32_t a_transposed, b_transposed; /* non-zero: stored column-major */
} diode_problem;

/* The version of this ABI (DIODE_ABI_VERSION) and of the feature schema packages must match. */
DIODE_API int diode_abi_version(void);
DIODE_API int diode_feature_schema_version(void);

/* The names and limits the library and its callers share, defined once in core and read from here
 * by the Python package (torch_diode._native.vocabulary), as JSON text owned by the library:
 *   {"ops": [...], "batched_ops": [...], "dtypes": [{"name": "bf16", "torch": "bfloat16", "bytes": 2}, ...],
 *    "problem_fields": ["op", "dtype", "B", "M", "N", "K", "a_transposed", "b_transposed"],
 *    "max_problem_size": the largest B, M, N or K a problem may have (each is 1 or more),
 *    "candidate_key": ["kind", "name", "BLOCK_M", ..., "EVEN_K", "ALLOW_TF32"] (a packed row's fields,
 * below), "candidate_flags": ["EVEN_K", "ALLOW_TF32"] (the key's last fields: 0/1, -1 when not given),
 *    "row_kinds": ["aten", "triton", "other"] (a row's kind code is its index), "default_group_m": 8
 * (Inductor's GROUP_M where a template sets none), "triton_templates": the Triton templates a model
 * describes, "exclusions": ["", "unscorable", "wrong_result", "shared_memory"] (diode_decide_gemm's
 * codes), "decision_kinds": ["gemm_kernel"],
 *    "search_spaces": ["DEFAULT", "EXHAUSTIVE"], "step_line_prefix": "step:" (how the name of a kernel
 * or site line measured inside a model step begins), "problem_line": {"max_bytes": ..., "max_depth": ...}
 * (what one problem JSON line may hold), "min_torch": "2.9", "model_directory": "trained_models" (the
 * shipped packages' folder, beside the package or in a source checkout),
 *    "timing_methods": [...], "regimes": ["warm", "cold"], "default_regime": "warm",
 *    "timing_agreement": {"relative": 0.03, "absolute_ms": 0.0003} (two times of one kernel agree when
 * they differ by at most the relative share of the reference or the absolute part, the larger)} */
DIODE_API const char *diode_vocabulary(void);

/* Where a user's packages are looked for, in order, before the shipped ones, as malloc'ed JSON text
 * (release it with diode_free): [{"source": "TORCH_DIODE_MODEL_PATH", "path": ...} for each entry of
 * that ':'-separated variable, {"source": "user", "path": $XDG_DATA_HOME/torch_diode/models or
 * ~/.local/share/torch_diode/models}]. `diode install` and the workbench install into the first. */
DIODE_API char *diode_model_locations(void);

/* Opens and checks a .diode package; NULL on failure (diode_last_error says why). */
DIODE_API diode_model *diode_model_open(const char *path);
DIODE_API void diode_model_close(diode_model *model);

/* The package's manifest as JSON text, owned by the model (valid until close). */
DIODE_API const char *diode_model_manifest(const diode_model *model);

/* What the plugin makes of the package, as malloc'ed JSON text (release it with diode_free):
 *   {"timing_method": its truth ("inductor_autotune" for packages older than timing methods),
 *    "regime_rank": {"warm": r, "cold": r} (how well that truth fits each regime: 0 trained on it,
 *    1 on the other in-graph regime, 2 on Inductor's own benchmark, 3 never: a cpu model),
 *    "refused": "" or why the plugin never loads it}.
 * NULL on error (diode_last_error). */
DIODE_API char *diode_model_facts(const diode_model *model);

/* Whether a package trained on `package_gpu` may serve the device `device_gpu` (its architecture
 * as the runtime reports it, "9.0", and its SM count; NULL/0: from core's GPU table): 0 the same
 * GPU model, 1 a similar one (same vendor and architecture; *distance says how far: the nearest
 * package has the smallest), 2 refused (another architecture or vendor, or a GPU the table does
 * not know). why[why_len] gets one line saying what matched or why not; -1 on NULL names. */
DIODE_API int diode_gpu_transfer(const char *package_gpu, const char *device_gpu, const char *device_arch,
                                 int device_sms, double *distance, char *why, size_t why_len);

/* Which package the plugin loads by default on a device (core's choosePackage, packagechoice.h):
 * `packages_json` is a JSON array of the usable packages found, each {"gpu": the GPU it was made on,
 * "created_at": ISO time, "timing_method": its truth, "source_rank": where it was found, lower first};
 * the device as for diode_gpu_transfer; `regime` "warm" | "cold". Returns the index of the package
 * to load (one made on that GPU model, else one of the nearest similar GPU; then the earliest
 * source, the best fit to the regime, the newest), with *transferred 1 when it is of a similar GPU;
 * -1 when none may serve the device; -2 on bad input (diode_last_error names it). */
DIODE_API int diode_choose_package(const char *packages_json, const char *device_gpu, const char *device_arch,
                                   int device_sms, const char *regime, int *transferred);

/* ---- Decisions (core/infer/diode/infer/selector.h) --------------------------------------------------
 * A selector makes the plugin's decisions with one package, by the rule `diode eval`, the Validate
 * page, calibration and `diode characterise` score. Each decision kind has its own call; the
 * counters of every kind come back from diode_selector_counters. A selector may decide from several
 * threads at once. */
typedef struct diode_selector diode_selector;

/* Opens a selector on `model` (which must outlive it). `options_json` is NULL or a JSON object, every
 * key optional: {"top_k": 1, "performance_threshold": null (none) or >= 1, "margin": null (the
 * package's for the regime) or >= 0, "regime": null (the one the package was trained for), "warm" or
 * "cold", "ops": null (all) or a list, "keep_unscored": false, "fallback": "plain" | "inductor"}.
 * NULL on error (diode_last_error names the key). */
DIODE_API diode_selector *diode_selector_open(const diode_model *model, const char *options_json);
DIODE_API void diode_selector_close(diode_selector *selector);

/* The options in use, the margin and regime resolved, as malloc'ed JSON text (diode_free):
 * {"top_k", "performance_threshold", "margin", "regime", "ops", "keep_unscored", "fallback",
 * "decides"}; "decides" lists the decision kinds the package's models decide ("gemm_kernel" always,
 * "small_m_form" and "kernel_config" where the package carries them). */
DIODE_API char *diode_selector_options(const diode_selector *selector);

/* The selector's counters per decision kind as malloc'ed JSON text (diode_free):
 * {"gemm_kernel": {"decisions", "selected", "not_selected": {reason: n}, "handed_back_several",
 * "scores_reused", "selections_by_op": {op: n}, "candidates_seen", "candidates_scored",
 * "candidates_filtered", "candidates_unknown_kept", "candidates_unknown_dropped",
 * "candidates_excluded": {"wrong_result": n, "shared_memory": n}}} (selector.h, DecisionCounters). */
DIODE_API char *diode_selector_counters(const diode_selector *selector);
DIODE_API void diode_selector_reset_counters(diode_selector *selector);

/* The kinds of decision (the vocabulary's "decision_kinds", in this order). */
#define DIODE_DECISION_GEMM_KERNEL 0

/* One decision's outcome, beside the per-candidate arrays of its call. */
typedef struct diode_decision {
    int32_t kind;          /* DIODE_DECISION_* */
    int32_t selected;      /* 1: the model decided; 0: not_selected says why */
    int32_t deferred;      /* 1: hand Inductor its own candidates (options' fallback "inductor") */
    int32_t kept;          /* indices written to kept[], best first; 0 with deferred, or nothing plain */
    int32_t plain;         /* the candidate plain torch.compile runs, -1 when none is offered */
    int32_t scores_reused; /* the predictions came from the selector's score cache */
    double margin;         /* the ATen guard's margin the policy ran with */
    char not_selected[64]; /* the reason's counter key ("only_aten", "unscorable_dtype", ...); "" */
    char why[256];         /* the same for a person, one sentence (cut to fit); "" */
} diode_decision;

/* What Inductor knows of a GEMM lowering that a problem line does not carry. */
typedef struct diode_gemm_context {
    int32_t addend_varies_along_m; /* baddbmm: the addend is (B, M, N), not (B, 1, N) */
    int64_t shared_memory_bytes;   /* shared memory a block may use on the device; 0: unknown */
} diode_gemm_context;

/* The GEMM kernel decision for one lowering. Each of the `count` candidates is one row of
 * DIODE_PACKED_FIELDS int32 values in `rows`: kind (the vocabulary's row_kinds: 0 aten, 1 triton,
 * 2 other, a candidate the caller could not read), name (an index into names[name_count]: the ATen
 * function, the Triton template, or for other what Inductor calls it), BLOCK_M, BLOCK_N, BLOCK_K,
 * GROUP_M, num_stages, num_warps, EVEN_K, ALLOW_TF32 (flags 0/1, -1 when not given). Writes
 * *decision, the kept indices to kept[count], each candidate's predicted milliseconds to
 * predicted_ms[count] (NaN where none) and its exclusion code to excluded[count] (the vocabulary's
 * "exclusions"). The decision is counted. Returns 0, or -1 (a bad row or size; nothing counted) with
 * diode_last_error naming the row or field at fault. */
#define DIODE_PACKED_FIELDS 10
DIODE_API int diode_decide_gemm(diode_selector *selector, const diode_problem *problem,
                                const diode_gemm_context *context, const char *const *names,
                                size_t name_count, const int32_t *rows, size_t count,
                                diode_decision *decision, int32_t *kept, double *predicted_ms,
                                int32_t *excluded);

/* Which of `count` candidates (their kinds and names) is the kernel plain torch.compile runs when
 * nothing is predicted: the selection policy's rule (extern bias_addmm where offered, else the first
 * ATen kernel). Returns its index, -1 without an ATen candidate, -2 on NULL arrays (diode_last_error). */
DIODE_API int diode_plain_candidate(const char *const *kinds, const char *const *names, size_t count);

/* Problem JSON lines of a file (docs/FORMATS.md), read by core's reader within its limits, blank
 * lines skipped: malloc'ed JSON text of an array of the problems as core writes them (diode_free),
 * or NULL with diode_last_error naming the file, the line and the field at fault. */
DIODE_API char *diode_read_problem_lines(const char *path);

/* The decisions beside the GEMM kernel (selector.h, decisionmodel.h), each made by a model the
 * package carries (manifest "decisions", docs/PACKAGE.md) and counted in the selector's counters
 * under its kind: one JSON request in, one JSON answer out (malloc'ed: diode_free), NULL on error
 * with diode_last_error naming the field at fault. `kind`:
 *   "kernel_config": {"shape": a pointwise or reduction kernel (docs/FORMATS.md, "Kernel and site
 *     lines")} -> {"fixed": true|false, "config": {"XBLOCK", ...} when fixed, "predicted_ratio": the
 *     chosen configuration's time over Inductor's default, "candidates": n, "reason":
 *     "predicted_faster" | "replaces_first_run_tuning" (the shape's "default_tuned": a configuration
 *     predicted within the margin of the default Inductor would benchmark) | "default_predicted_best" |
 *     "no_candidates" | "none_tried_nearby" |
 *     "feature_not_measured" (with "unmeasured": the kernel feature every measured kernel shares and
 *     this one does not, e.g. "hint_outer") | "no_model"};
 *   "small_m_form": {"site": {"op": "attention"|"bmm"|"mm"|"addmm", "dtype", "B", "M", "N", "K",
 *     "kv_group", "concat", "stored_cache"?}} -> {"decompose": true|false, "materialise_operand":
 *     true when the site's decomposed form (an mm or addmm), whichever form is chosen, reads its
 *     activation operand written out once rather than recomputing it in each program,
 *     "library_over_cache": true when its library form, whichever form is chosen, reads the KV
 *     cache as stored (grouped-query attention with "stored_cache", where the package's sites were
 *     timed so: FlashAttention over the cache, new tokens merged), "predicted_ratio",
 *     "reason": "decomposed_predicted_faster" | "library_predicted_faster" | "op_not_measured" |
 *     "no_model"}.
 * The margins are the package's (decisions.<kind>.margin). */
DIODE_API char *diode_decide_json(diode_selector *selector, const char *kind, const char *request_json);

/* The configurations the kernel sweep measures on a kernel, for {"shape": ...}: what a decision
 * chooses among (core's decisionCandidates: the portfolio, then those of "extra": [configs] that the
 * kernel's grid holds); with "near": a config, that config's neighbours in the kernel's grid (core's
 * neighbourConfigs); with "grid": true, the whole grid (core's candidateConfigs), which holds every
 * configuration a decision may give the kernel. {"configs": [{"persistent", "XBLOCK", ...}, ...]},
 * malloc'ed (diode_free); NULL on error (diode_last_error). */
DIODE_API char *diode_kernel_candidates(const char *request_json);

/* For {"lines": [kernel line files]}: the distinct fastest configuration of each measured kernel beyond
 * its portfolio (core's fastestBeyondPortfolio), {"configs": [...]}: the "extra" a second sweep
 * measures on every kernel. malloc'ed (diode_free); NULL on error (diode_last_error). */
DIODE_API char *diode_fastest_beyond_portfolio(const char *request_json);

DIODE_API void diode_free(void *p);

/* The last error on this thread ("" if none). */
DIODE_API const char *diode_last_error(void);

#ifdef __cplusplus
}
#endif
#endif
