/* libdiode_inductor: the C ABI the torch_diode Python package (ctypes) loads inside a PyTorch
 * process. It wraps core's package reader, feature schema and Eigen inference; it links no Qt
 * and no LibTorch, so it never clashes with the torch already loaded.
 *
 * Threads: a model handle may be scored from several threads at once (scoring only reads it).
 * Errors: calls that fail return NULL or a negative value; diode_last_error() then gives the
 * reason, per thread, until the next failing call on that thread. */
#ifndef DIODE_INDUCTOR_H
#define DIODE_INDUCTOR_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define DIODE_ABI_VERSION 11

#if defined(__GNUC__)
#define DIODE_API __attribute__((visibility("default")))
#else
#define DIODE_API
#endif

typedef struct diode_model diode_model;

/* One GEMM: C[B,M,N] = A[B,M,K] @ B[B,K,N]; op "mm" | "addmm" | "bmm" | "baddbmm" (bmm plus an
 * addend [B,1,N]), dtype "bf16" | "fp16" | "fp32" (torch names such as "bfloat16" are accepted too). */
typedef struct diode_problem {
    const char *op;
    const char *dtype;
    int64_t batch, m, n, k;
    int32_t a_transposed, b_transposed; /* non-zero: stored column-major */
} diode_problem;

/* One candidate kernel: kind "aten" (name "extern_kernels.mm", ...) or "triton" (name = the
 * template, "mm" | "bmm", and its parameters). Flags are 0/1; -1 means not given. */
typedef struct diode_candidate {
    const char *kind;
    const char *name;
    int32_t block_m, block_n, block_k, group_m, num_stages, num_warps;
    int32_t even_k, allow_tf32;
} diode_candidate;

/* The version of this ABI (DIODE_ABI_VERSION) and of the feature schema packages must match. */
DIODE_API int diode_abi_version(void);
DIODE_API int diode_feature_schema_version(void);

/* The names the library and its callers share, defined once in core and read from here by the
 * Python package (torch_diode._native.vocabulary), as JSON text owned by the library:
 *   {"ops": [...], "batched_ops": [...], "dtypes": [{"name": "bf16", "torch": "bfloat16", "bytes": 2}, ...],
 *    "problem_fields": ["op", "dtype", "B", "M", "N", "K", "a_transposed", "b_transposed"],
 *    "max_problem_size": the largest B, M, N or K a problem may have (each is 1 or more),
 *    "candidate_key": ["kind", "name", "BLOCK_M", ..., "EVEN_K", "ALLOW_TF32"] (a packed row's fields,
 * below), "candidate_flags": ["EVEN_K", "ALLOW_TF32"] (the key's last fields: 0/1, -1 when not given),
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

/* Whether the package's training data had problems like `problem`: 0 when it did; 1 when a
 * problem flag (dtype, op, a_transposed, b_transposed) takes a value no training problem had, with
 * the flag written to why[why_len] (e.g. "a_transposed = 1"); -1 for an invalid problem
 * (diode_last_error). Scores of a problem it returns 1 for are extrapolations. */
DIODE_API int diode_model_unseen(const diode_model *model, const diode_problem *problem, char *why,
                                 size_t why_len);

/* Whether the package's feature schema has an input for `op` ("baddbmm" from feature schema 3; a
 * package of schema 1 or 2 cannot score it): 1 it has, 0 it has not, -1 for an op name no schema
 * has (diode_last_error). */
DIODE_API int diode_model_scores_op(const diode_model *model, const char *op);

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

/* Predicted milliseconds of each of `count` candidates of `problem`, written to out_ms[count],
 * in one batched call. Returns 0, or -1 (nothing written) with diode_last_error naming the
 * field at fault, e.g. "candidates[3]: candidate kind 'cutlass' is not one the model knows". */
DIODE_API int diode_model_score(const diode_model *model, const diode_problem *problem,
                                const diode_candidate *candidates, size_t count, double *out_ms);

/* The selector's fast path: the same scoring with every candidate as one row of
 * DIODE_PACKED_FIELDS int32 values in `rows` (count rows, no per-candidate structs or strings):
 *   kind (0 aten, 1 triton), name (an index into names[name_count]), BLOCK_M, BLOCK_N, BLOCK_K,
 *   GROUP_M, num_stages, num_warps, EVEN_K, ALLOW_TF32 (flags 0/1, -1 when not given).
 * Returns 0, or -1 (nothing written) with diode_last_error naming the row at fault. */
#define DIODE_PACKED_FIELDS 10
DIODE_API int diode_model_score_packed(const diode_model *model, const diode_problem *problem,
                                       const char *const *names, size_t name_count, const int32_t *rows,
                                       size_t count, double *out_ms);

/* The selection policy (core/infer/diode/selectionpolicy.h, docs/MODELS.md "Policy"): plain torch.compile's
 * kernel (extern bias_addmm where offered, else the op's best-predicted ATen kernel) is kept alone
 * unless another is predicted faster by more than `margin` (ATen wins ties; 0 turns the guard off);
 * otherwise the top_k best predicted within `threshold` x the best, fastest first, with plain's
 * kernel appended when more than one is kept and none is ATen (Inductor's fallback). */
typedef struct diode_policy {
    int32_t top_k;    /* >= 1 */
    double margin;    /* >= 0 */
    double threshold; /* >= 1; INFINITY for none */
} diode_policy;

/* The margin the selector uses with `model` in `regime` ("warm" | "cold"): the one the package was
 * calibrated with for that regime (manifest "selection_policy", docs/PACKAGE.md), else the
 * regime's default; with model NULL the default. Negative on error (diode_last_error). */
DIODE_API double diode_policy_margin(const diode_model *model, const char *regime);

/* The selector's one call per GEMM: scores the packed rows (as diode_model_score_packed) into
 * out_ms[count] and applies `policy`, writing the kept candidates' indices, best first, to
 * kept[count]. With `scored` non-zero out_ms already holds these candidates' predictions (a
 * repeated GEMM) and only the policy runs. Returns how many were kept (0 only when count is 0),
 * or -1 with diode_last_error naming the field or row at fault. */
DIODE_API int diode_model_select_packed(const diode_model *model, const diode_problem *problem,
                                        const char *const *names, size_t name_count, const int32_t *rows,
                                        size_t count, const diode_policy *policy, int scored, double *out_ms,
                                        int32_t *kept);

/* Which of `count` candidates (their kinds and names, as in diode_candidate) is the kernel plain
 * torch.compile runs, when nothing is predicted: the selection policy's rule (extern bias_addmm
 * where offered, else the first ATen kernel). Returns its index, -1 without an ATen candidate, -2
 * on NULL arrays (diode_last_error). */
DIODE_API int diode_plain_candidate(const char *const *kinds, const char *const *names, size_t count);

/* The decisions beside the GEMM kernel, each made by a model the package carries (manifest
 * "decisions", docs/PACKAGE.md): one JSON request in, one JSON answer out (malloc'ed: release it
 * with diode_free), NULL on error with diode_last_error naming the field at fault. `kind`:
 *   "kernel_config": {"shape": a pointwise or reduction kernel (docs/FORMATS.md, "Kernel and site
 *     lines"), "margin": optional} -> {"fixed": true|false, "config": {"XBLOCK", ...} when fixed,
 *     "predicted_ratio": the chosen config's time over Inductor's default, "candidates": n,
 *     "reason": "predicted_faster" | "default_predicted_best" | "no_candidates" | "no_model"};
 *   "small_m_form": {"site": {"op": "attention"|"bmm"|"mm"|"addmm", "dtype", "B", "M", "N", "K",
 *     "kv_group", "concat"}, "margin": optional} -> {"decompose": true|false, "predicted_ratio",
 *     "reason": "decomposed_predicted_faster" | "library_predicted_faster" | "no_model"};
 *   "kernel_candidates": {"shape": ...} -> {"configs": [...]}: the grid a kernel's config is chosen
 *     from (the kernel sweep samples it); `model` may be NULL.
 * Without "margin" (or with a negative one) the package's calibrated margin of that kind is used. */
DIODE_API char *diode_decide(const diode_model *model, const char *kind, const char *request_json);

/* Scores one problem JSON line (docs/FORMATS.md) exactly as `diode rank` does and returns the
 * same output object as JSON text ({"predicted_ms": [...], "order": [...]} or {"error": ...}).
 * The text is malloc'ed: release it with diode_free. */
DIODE_API char *diode_model_rank_json(const diode_model *model, const char *problem_line);
DIODE_API void diode_free(void *p);

/* The last error on this thread ("" if none). */
DIODE_API const char *diode_last_error(void);

#ifdef __cplusplus
}
#endif
#endif
