"""The kernel selector inside Inductor: a subclass of InductorChoices whose
_finalize_template_configs scores every candidate with the model and keeps the best few.

Installed process-wide (config.inductor_choices_class, which Inductor reads in every thread that
lowers: AOTAutograd's backward compile runs on autograd's device thread) and in the installing
thread. Every GEMM lowering is counted; one the model cannot decide keeps plain torch.compile's
kernel (install(fallback=...)). Nothing here may fail a compile unless fallback="raise".
"""

from __future__ import annotations

import logging
import threading
import time
from collections import Counter
from typing import Optional

from . import _inductor_compat as compat
from . import _native

log = logging.getLogger("torch_diode")

# The names core defines (diode_vocabulary, diode_inductor.h): read, never written again here.
_VOCABULARY = _native.vocabulary()
DTYPES = {"torch." + d["torch"]: d["name"] for d in _VOCABULARY["dtypes"]}  # torch's name -> ours
DTYPE_BYTES = {d["name"]: d["bytes"] for d in _VOCABULARY["dtypes"]}
TORCH_DTYPE_NAMES = {d["name"]: d["torch"] for d in _VOCABULARY["dtypes"]}  # ours -> torch's, getattr(torch, ...)


class Stats:
    """Counters behind get_stats(); updated under one lock (compiles may run in threads)."""

    def __init__(self):
        self._lock = threading.Lock()
        self.reset()

    def reset(self):
        self.calls = 0
        self.lowerings = 0
        self.autotuned = 0
        self.not_selected: Counter = Counter()
        self.threads: Counter = Counter()
        self.modes: Counter = Counter()
        self.model_selections = 0
        self.scores_reused = 0
        self.fallbacks: Counter = Counter()
        self.excluded: Counter = Counter()
        self.candidates_seen = 0
        self.candidates_scored = 0
        self.candidates_filtered = 0
        self.candidates_unknown = 0
        self.candidates_unknown_dropped = 0
        self.scoring_s = 0.0
        self.selector_s = 0.0
        self.by_op: Counter = Counter()

    def add(self, **kw):
        with self._lock:
            for k, v in kw.items():
                setattr(self, k, getattr(self, k) + v)

    def lowering(self, thread: str, mode: str):
        """Inductor lowered one GEMM (mm, addmm, bmm, baddbmm, ...) through the choices handler,
        in a compile of `mode` (compile_mode())."""
        with self._lock:
            self.lowerings += 1
            self.threads[thread] += 1
            self.modes[mode] += 1

    def decision(
        self,
        op: str,
        scored: int,
        kept: int,
        unknown: int,
        reused: bool,
        scoring_s: float,
        selector_s: float,
        dropped: int = 0,
    ):
        """One model selection (the selector's path: one lock, no keyword loop)."""
        with self._lock:
            self.model_selections += 1
            self.candidates_unknown_dropped += dropped
            self.autotuned += kept + unknown - dropped > 1
            self.scores_reused += reused
            self.candidates_seen += scored + unknown
            self.candidates_scored += scored
            self.candidates_filtered += scored - kept
            self.candidates_unknown += unknown
            self.scoring_s += scoring_s
            self.selector_s += selector_s
            self.by_op[op] += 1

    def count(self, counter: str, key: str):
        with self._lock:
            getattr(self, counter)[key] += 1

    def snapshot(self) -> dict:
        with self._lock:
            n = max(1, self.model_selections)
            return {
                "calls": self.calls,
                # Every GEMM lowering the handler saw, against the model's selections; each one not
                # selected has its reason in not_selected ("only_aten": Inductor offered only its
                # ATen kernel, so there was nothing to choose; "unscorable_op_X": an op the model
                # does not score; "fallback_X": an error; "unscorable_X": a GEMM the model cannot describe,
                # "unscorable_unseen_F": one whose flag F the training data never had).
                "lowerings": self.lowerings,
                "model_selections": self.model_selections,
                "not_selected": dict(self.not_selected),
                # Lowerings where more than one candidate went back to Inductor, which then
                # benchmarks them (never with top_k=1 unless a fallback says "autotune").
                "autotuned": self.autotuned,
                "lowerings_by_thread": dict(self.threads),
                # "recommended" (plain torch.compile with the selector), or what else was on.
                "lowerings_by_mode": dict(self.modes),
                "scores_reused": self.scores_reused,
                "fallbacks": dict(self.fallbacks),
                "fallback_total": sum(self.fallbacks.values()),
                "selections_by_op": dict(self.by_op),
                "candidates_seen": self.candidates_seen,
                "candidates_scored": self.candidates_scored,
                "candidates_filtered": self.candidates_filtered,
                "candidates_unknown_kept": self.candidates_unknown - self.candidates_unknown_dropped,
                "candidates_unknown_dropped": self.candidates_unknown_dropped,
                # Candidates never kept, by why: "wrong_result" (the package's data found its output
                # wrong on a problem of this op, dtype and layout), "shared_memory" (its loads alone
                # need more shared memory than the device has: it cannot compile).
                "candidates_excluded": dict(self.excluded),
                "scoring_time_s": self.scoring_s,
                "selector_time_s": self.selector_s,
                "mean_scoring_us": 1e6 * self.scoring_s / n,
                "mean_selector_us": 1e6 * self.selector_s / n,
            }


# The kernel plain torch.compile runs, where no model decides (a lowering the model cannot score,
# the worker's record of plain's launches): the selection policy's rule in the library
# (SelectionPolicy::plainCandidate, core/infer/diode/selectionpolicy.h), asked without predictions:
# extern bias_addmm where Inductor offers it (core's kPlainAddmmKernel), else the op's first ATen kernel.


def plain_index(kinds, names) -> Optional[int]:
    """Index of plain torch.compile's kernel among candidates of `kinds` and `names`, None without
    an ATen candidate."""
    return _native.plain_candidate(kinds, names)


# The ATen guard's margin (Options.margin None) is the package's: the one `diode calibrate` wrote
# into it for the regime, else the library's default for the regime (Model.margin).
REGIMES = tuple(_VOCABULARY["regimes"])


# The recommended way (docs/PLUGIN.md, measured in docs/BENCHMARKS.md "Model steps"): plain torch.compile
# with the selector installed. Inductor options that make a compile something else, with what
# they cost there.
NOT_RECOMMENDED = {
    "max_autotune": "max-autotune mode: Inductor also benchmarks every GEMM the selector does not decide and the "
    "pointwise and reduction kernels; it compiled a training step 44-63x longer than the recommended "
    "way, and its step was 1.6 % faster on an H200, 1.9 % slower on an H100",
    "coordinate_descent_tuning": "coordinate-descent tuning: it tunes pointwise and reduction kernels (a training "
    "step 3.6 % faster on an H100, for a compile 9x longer: worth it only in a long "
    "training job) and decomposes small-M GEMMs (decode steps were slower)",
    "max_autotune_pointwise": "wider pointwise and reduction autotuning: on an H100 a 4,096-token prefill 3-5 % and a "
    "training step 1.3-2.8 % faster, but a 1,024-token prefill 3-4 % and a ViT block 2 % slower, for 1-5 s more "
    "compile: for long prefill and training only",
}


def compile_mode() -> str:
    """ "recommended", or the option(s) of NOT_RECOMMENDED on in the current compile ('+'-joined)."""
    on = [name for name in NOT_RECOMMENDED if compat.get_config(name)]
    return "+".join(on) or "recommended"


# What happens to a GEMM lowering the model cannot decide (an op it does not score, an unknown
# dtype or layout, no candidate it can describe, or an error inside the selector):
#   "plain": only the kernel plain torch.compile runs (ATen) is kept, so nothing is benchmarked;
#   "autotune": Inductor's own candidates, which it then benchmarks (max-autotune's behaviour);
#   "raise": the error propagates (for debugging the selector).
FALLBACKS = ("plain", "autotune", "raise")


class Options:
    def __init__(
        self,
        top_k=1,
        performance_threshold=1.1,
        ops=None,
        search_space="DEFAULT",
        fallback="plain",
        margin=None,
        regime=_VOCABULARY["default_regime"],
        autotune_gemm=True,
        keep_unscored=False,
    ):
        if int(top_k) < 1:
            raise ValueError(f"top_k must be at least 1, got {top_k}")
        if float(performance_threshold) < 1.0:
            raise ValueError(f"performance_threshold must be at least 1.0, got {performance_threshold}")
        ops = PROBLEM_OPS if ops is None else ops
        unknown = set(ops) - set(PROBLEM_OPS)
        if unknown:
            raise ValueError(f"ops {sorted(unknown)} are not supported; choose from {', '.join(PROBLEM_OPS)}")
        if search_space.upper() not in ("DEFAULT", "EXHAUSTIVE"):
            raise ValueError(f"search_space must be DEFAULT or EXHAUSTIVE, got {search_space!r}")
        if regime not in REGIMES:
            raise ValueError(f"regime must be {' or '.join(repr(r) for r in REGIMES)}, got {regime!r}")
        if margin is not None and not float(margin) >= 0.0:
            raise ValueError(f"margin must be at least 0 (0: no ATen guard), got {margin}")
        if fallback is True or fallback is False:  # before 0.3: True = Inductor's choices, False = raise
            fallback = "plain" if fallback else "raise"
        if fallback not in FALLBACKS:
            raise ValueError(f"fallback must be one of {', '.join(FALLBACKS)}, got {fallback!r}")
        self.margin = None if margin is None else float(margin)  # None: the package's (Runtime)
        self.regime = regime
        self.top_k = int(top_k)
        self.threshold = float(performance_threshold)
        self.ops = tuple(ops)
        self.search_space = search_space.upper()
        self.fallback = fallback
        self.autotune_gemm = bool(autotune_gemm)
        self.keep_unscored = bool(keep_unscored)

    def as_dict(self) -> dict:
        return {
            "top_k": self.top_k,
            "performance_threshold": self.threshold,
            "ops": list(self.ops),
            "search_space": self.search_space,
            "fallback": self.fallback,
            "margin": self.margin,
            "regime": self.regime,
            "autotune_gemm": self.autotune_gemm,
            "keep_unscored": self.keep_unscored,
        }


def _layout_transposed(size, stride) -> bool:
    """Column-major storage of the last two dims (a weight used as x @ W.t())."""
    if len(size) < 2 or len(stride) < 2:
        return False
    if size[-1] == 1:
        return False
    return stride[-1] != 1 and stride[-2] == 1


def gemm_problem(op_name: str, a: tuple, b: tuple, torch_dtype) -> tuple:
    """(op, dtype, B, M, N, K, a_transposed, b_transposed) of a GEMM of A and B, each given as (size,
    stride) with integer sizes: the one reader of a GEMM off Inductor's nodes, for the selector's
    lowering (problem_of) and the collector's feedback saver. LookupError for a dtype the model
    does not know."""
    (s1, t1), (s2, t2) = a, b
    dtype = DTYPES.get(str(torch_dtype))
    if dtype is None:
        raise LookupError(f"dtype {torch_dtype} is not one the model knows")
    batch = int(s1[-3]) if len(s1) >= 3 else 1
    return (
        op_name,
        dtype,
        batch,
        int(s1[-2]),
        int(s2[-1]),
        int(s1[-1]),
        int(_layout_transposed(s1, t1)),
        int(_layout_transposed(s2, t2)),
    )


def problem_of(kernel_inputs, op_name: str) -> tuple:
    """The GEMM Inductor is lowering, as (op, dtype, B, M, N, K, a_transposed, b_transposed)."""
    a, b, dt = compat.kernel_inputs_problem(kernel_inputs)
    return gemm_problem(op_name, a, b, dt)


PROBLEM_KEYS = tuple(_VOCABULARY["problem_fields"])
# The ops of problem JSON (docs/FORMATS.md); baddbmm's addend is broadcast over M, (B, 1, N).
PROBLEM_OPS = tuple(_VOCABULARY["ops"])
BATCHED_OPS = tuple(_VOCABULARY["batched_ops"])  # the ops whose problems have a batch B


def problem_dict(problem: tuple) -> dict:
    d = dict(zip(PROBLEM_KEYS, problem))
    d["a_transposed"], d["b_transposed"] = bool(d["a_transposed"]), bool(d["b_transposed"])
    return d


# The candidate key of each KernelTemplateChoice (the library's packed row, _native.candidate_key), or
# None when the model does not know its template or parameters.
candidate_keys = compat.ktc_keys
candidate_dict = _native.candidate_dict
candidate_key = _native.candidate_key
# The part of a candidate key that names its kernel for exclusions (kind, name and the integer
# parameters): the flags may be unset on one side.
KERNEL_FIELDS = len(_VOCABULARY["candidate_key"]) - len(_VOCABULARY["candidate_flags"])


def unsafe_candidates(manifest: dict) -> dict:
    """{(op, dtype, a_transposed, b_transposed): {kernel}} of the package's unsafe_candidates: the
    candidates whose output failed the worker's check on problems of that op, dtype and layout in
    the training data (docs/PACKAGE.md). A malformed entry is skipped."""
    out: dict = {}
    for e in manifest.get("unsafe_candidates") or []:
        try:
            cls = (e["op"], e["dtype"], int(bool(e["a_transposed"])), int(bool(e["b_transposed"])))
            out.setdefault(cls, set()).add(candidate_key(e["candidate"])[:KERNEL_FIELDS])
        except (KeyError, TypeError, ValueError):
            continue
    return out


def shared_memory_bytes(key: tuple, dtype: str) -> int:
    """The shared memory a Triton GEMM config's pipelined loads need at least: num_stages tiles of
    A (BLOCK_M x BLOCK_K) and B (BLOCK_K x BLOCK_N). Inductor's own estimate adds 128 bytes of
    barriers and, for persistent TMA, the epilogue's; a config over the device's limit by this
    lower bound cannot compile (measured on an H200: 128x128x128 with 4 stages, bf16, 262,144 bytes
    against 232,448)."""
    return key[6] * (key[2] * key[4] + key[4] * key[3]) * DTYPE_BYTES[dtype]


class Unscorable(LookupError):
    """A GEMM the model cannot describe; `reason` names what (for get_stats()["not_selected"])."""

    def __init__(self, reason: str, message: str):
        super().__init__(message)
        self.reason = reason


def _plain_only(by_template: dict) -> Optional[list]:
    """Of Inductor's candidates, the one plain torch.compile runs (plain_index's rule); None when no
    ATen kernel is offered."""
    aten = [ktc for uid, ktcs in by_template.items() if str(uid).startswith("aten::") for ktc in ktcs]
    keys = candidate_keys(aten)
    i = plain_index([k[0] for k in keys], [k[1] for k in keys])
    return None if i is None else [aten[i]]


class Runtime:
    """Everything the installed selector uses: the model, the options, stats and recorders."""

    def __init__(self, model, options: Options):
        self.model = model
        self.options = options
        if options.margin is None and model is not None:
            options.margin = model.margin(options.regime)
        self.policy = _native.Policy(options.top_k, options.margin or 0.0, options.threshold)
        self.stats = Stats()
        self.recorders: list = []
        self._logged: set = set()
        self._lock = threading.Lock()
        self._scores: dict = {}  # (problem, candidate keys) -> predicted ms
        # Candidates never kept: those the package's data found wrong (unsafe_candidates).
        self.unsafe = unsafe_candidates(getattr(model, "manifest", None) or {})

    def log_once(self, key: str, msg: str, *args):
        with self._lock:
            if key in self._logged:
                return
            self._logged.add(key)
        log.warning(msg, *args)

    def select(self, by_template: dict, kernel_inputs, op_name: str) -> list:
        t0 = time.perf_counter()
        try:
            problem = problem_of(kernel_inputs, op_name)
        except LookupError as e:
            raise Unscorable("dtype", str(e)) from None
        # A problem the package's training data had nothing like (a layout, op or dtype it never
        # saw: a training step's dW = dY^T X with a column-major A, before such data was
        # measured) would be scored by extrapolation; plain torch.compile's kernel is kept.
        if op_name == "baddbmm" and problem[3] > 1 and not compat.addend_broadcast_over_m(kernel_inputs):
            # Problem JSON's baddbmm has an addend (B, 1, N); a full (B, M, N) one reads M times more.
            raise Unscorable("baddbmm_full_addend", "a baddbmm addend that varies along M is not in the schema")
        check = getattr(self.model, "unseen", None)
        unseen = check(problem) if check else ""
        if unseen:
            raise Unscorable(f"unseen_{unseen.split(' ')[0]}", f"the package was trained on no problem with {unseen}")
        known, keys, unknown, excluded = [], [], [], []
        unsafe = self.unsafe.get((problem[0], problem[1], problem[6], problem[7]), ())
        smem = compat.shared_memory_limit(kernel_inputs)
        for ktcs in by_template.values():
            for ktc, key in zip(ktcs, candidate_keys(ktcs)):
                if key is None:
                    unknown.append(ktc)
                elif key[:KERNEL_FIELDS] in unsafe:
                    excluded.append((key, "wrong_result"))
                elif key[0] == "triton" and smem and shared_memory_bytes(key, problem[1]) > smem:
                    excluded.append((key, "shared_memory"))
                else:
                    known.append(ktc)
                    keys.append(key)
        for _key, why in excluded:
            self.stats.count("excluded", why)
        if not known:
            raise Unscorable("no_known_candidates", "no candidate the model can describe")
        t1 = time.perf_counter()
        # A model's layers repeat their GEMMs: the same problem with the same candidates gets the
        # same scores, so they are kept and only the policy runs again. The library scores and
        # applies the policy (top_k, the ATen guard's margin, the threshold and, when several
        # templates are kept, plain's kernel as Inductor's fallback) in one call.
        seen = (problem, tuple(keys))
        cached = self._scores.get(seen)
        seen_before = cached is not None
        predicted, kept_idx = self.model.select_keys(problem, keys, self.policy, cached)
        if not seen_before:
            if len(self._scores) >= 4096:
                self._scores.clear()
            self._scores[seen] = predicted
        t2 = time.perf_counter()
        o = self.options
        # Candidates the model cannot score (decompose-K subgraphs, templates it was not trained
        # on) would make Inductor benchmark: they are dropped unless install(keep_unscored=True).
        kept = [known[i] for i in kept_idx] + (unknown if o.keep_unscored else [])
        t3 = time.perf_counter()
        self.stats.decision(
            op_name,
            len(known),
            len(kept_idx),
            len(unknown),
            seen_before,
            t2 - t1,
            (t1 - t0) + (t3 - t2),
            0 if o.keep_unscored else len(unknown),
        )
        if self.recorders:
            self._record(
                problem,
                keys,
                predicted,
                kept_idx,
                unknown,
                compat.lookup_table_entry(kernel_inputs, op_name, kept),
                excluded,
            )
        return kept

    def lowering(self, by_template: dict, kernel_inputs, op_name: str) -> Optional[list]:
        """The candidates to hand back for one GEMM lowering, or None for Inductor's own. Every
        lowering is counted; one the model does not decide has its reason counted and follows
        options.fallback."""
        self.stats.lowering(threading.current_thread().name, compile_mode())
        if all(str(uid).startswith("aten::") for uid in by_template):
            # GEMM autotuning is off for this compile, or the shape takes only ATen: the kernel
            # plain torch.compile runs is kept (of two ATen kernels, Inductor would benchmark both).
            self.stats.count("not_selected", "only_aten")
            return _plain_only(by_template)
        try:
            scores_op = getattr(self.model, "scores_op", None)
            if op_name not in self.options.ops or (scores_op and op_name in PROBLEM_OPS and not scores_op(op_name)):
                # Not asked for, not an op of problem JSON, or one the package's feature schema has
                # no input for (baddbmm before schema 3).
                raise Unscorable(f"op_{op_name}", f"the model does not score {op_name}")
            return self.select(by_template, kernel_inputs, op_name)
        except Exception as e:  # any failure ends in options.fallback, counted
            reason = f"unscorable_{e.reason}" if isinstance(e, Unscorable) else f"fallback_{type(e).__name__}"
            self.stats.count("not_selected", reason)
            if not isinstance(e, Unscorable):
                self.stats.count("fallbacks", type(e).__name__)
                self.log_once(
                    reason,
                    "torch_diode: selection failed (%s: %s); using %s (logged once per kind of " "error)",
                    type(e).__name__,
                    e,
                    "plain torch.compile's kernel" if self.options.fallback == "plain" else "Inductor's choices",
                )
            if self.options.fallback == "raise":
                raise
            plain = _plain_only(by_template) if self.options.fallback == "plain" else None
            if plain is None:
                self.stats.add(autotuned=1)
            elif self.recorders:
                self._record_fallback(kernel_inputs, op_name, plain, reason)
            return plain

    def _record_fallback(self, kernel_inputs, op_name, plain, reason):
        """A lowering kept at plain's kernel: recorded (without predictions) where the problem can
        be described, so that a lookup table made of the decisions covers it too."""
        if op_name not in PROBLEM_OPS or reason == "unscorable_baddbmm_full_addend":
            return  # no problem line can carry it (diode import refuses it; a line's baddbmm has a (B, 1, N) addend)
        try:
            decision = problem_dict(problem_of(kernel_inputs, op_name))
        except Exception:  # e.g. a dtype no problem line can carry
            return
        decision["not_selected"] = reason
        decision["candidates"] = [dict(candidate_dict(k), kept=True) for k in candidate_keys(plain) if k]
        self._emit(decision, compat.lookup_table_entry(kernel_inputs, op_name, plain))

    def _record(self, problem, keys, predicted, kept_idx, unknown, lookup=None, excluded=()):
        keep = set(kept_idx)
        decision = problem_dict(problem)
        decision["selector"] = {
            "top_k": self.options.top_k,
            "performance_threshold": self.options.threshold,
            "margin": self.options.margin,
            "regime": self.options.regime,
            "model": getattr(self.model, "path", ""),
        }
        decision["candidates"] = [
            dict(candidate_dict(k), predicted_ms=predicted[i], kept=i in keep) for i, k in enumerate(keys)
        ]
        decision["unscored_templates"] = sorted({getattr(k.template, "uid", "?") for k in unknown})
        if excluded:
            decision["excluded"] = [dict(candidate_dict(k), reason=why) for k, why in excluded]
        self._emit(decision, lookup)

    def _emit(self, decision: dict, lookup: Optional[dict]):
        """Hands one recorded decision to every recorder, with the search space and, where this
        torch has one, its Inductor lookup-table entry."""
        decision["search_space"] = self.options.search_space
        if lookup:
            decision["inductor_lookup"] = lookup
        for r in list(self.recorders):
            r.append(decision)


# The runtime every DiodeChoices consults, set by install() and cleared by uninstall(). Handlers
# are made per thread by Inductor (config.inductor_choices_class), so they hold no runtime of
# their own: one left cached in a thread after uninstall() is Inductor's default again.
_active: Optional[Runtime] = None


def activate(runtime: Optional[Runtime]) -> None:
    global _active
    _active = runtime


def active() -> Optional[Runtime]:
    return _active


_choices_class = None


def choices_class():
    """The InductorChoices subclass, defined on first use so that importing torch_diode never
    needs torch."""
    global _choices_class
    if _choices_class is not None:
        return _choices_class
    InductorChoices = compat.choices_base_class()

    class DiodeChoices(InductorChoices):
        def _finalize_template_configs(self, template_choices, kernel_inputs, templates, op_name, kwarg_overrides=None):
            rt = _active
            if rt is None or op_name.endswith("-ah"):  # not installed; AutoHeuristic's second call
                return super()._finalize_template_configs(
                    template_choices, kernel_inputs, templates, op_name, kwarg_overrides
                )
            rt.stats.add(calls=1)
            # Materialise the generators first: on failure they are rebuilt for the fallback.
            try:
                by_template = {uid: list(gen) for uid, gen in template_choices.items()}
            except Exception as e:  # any failure ends in options.fallback, counted
                rt.stats.count("not_selected", f"fallback_{type(e).__name__}")
                if rt.options.fallback == "raise":
                    raise
                fresh = compat.fresh_template_choices(self, kernel_inputs, templates, op_name, kwarg_overrides)
                return super()._finalize_template_configs(fresh, kernel_inputs, templates, op_name, kwarg_overrides)
            kept = rt.lowering(by_template, kernel_inputs, op_name)
            if kept is not None:
                return kept
            return super()._finalize_template_configs(
                {uid: iter(k) for uid, k in by_template.items()}, kernel_inputs, templates, op_name, kwarg_overrides
            )

    _choices_class = DiodeChoices
    return DiodeChoices


def choices_factory():
    """What Inductor calls (config.inductor_choices_class) to make a thread's choices handler. A
    module-level function, so that Inductor's config stays picklable for its caches."""
    return choices_class()()
