"""The kernel selector inside Inductor: a subclass of InductorChoices that, like Inductor's own
LookupTableChoices, consults the library for each GEMM lowering and otherwise defers to Inductor.

The decision itself (the op and feature-schema gates, the unseen-flag guard, the exclusions of
candidates found wrong or too big for the device's shared memory, the score cache and the
selection policy with the package's margin for the regime) is made in C++ by one library call
(diode_decide_gemm, core/infer/diode/infer/selector.h), the rule `diode eval` scores. This module only
translates Inductor's choices to the library's rows and back, counts what Python alone sees
(lowerings, threads, compile modes, errors) and records decisions.

Installed process-wide (config.inductor_choices_class, which Inductor reads in every thread that
lowers: AOTAutograd's backward compile runs on autograd's device thread) and in the installing
thread. Nothing here may fail a compile unless fallback="raise".
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections import Counter
from typing import Optional

from . import _inductor_compat as compat
from . import _native

log = logging.getLogger("torch_diode")

# The names core defines (diode_vocabulary, diode_inductor.h): read, never written again here.
_VOCABULARY = _native.vocabulary()
DTYPES = _native.dtype_names()  # torch's name -> ours
TORCH_DTYPE_NAMES = {d["name"]: d["torch"] for d in _VOCABULARY["dtypes"]}  # ours -> torch's, getattr(torch, ...)
PROBLEM_KEYS = tuple(_VOCABULARY["problem_fields"])
# The ops of problem JSON (docs/FORMATS.md); baddbmm's addend is broadcast over M, (B, 1, N).
PROBLEM_OPS = tuple(_VOCABULARY["ops"])
BATCHED_OPS = tuple(_VOCABULARY["batched_ops"])  # the ops whose problems have a batch B
REGIMES = tuple(_VOCABULARY["regimes"])
SEARCH_SPACES = tuple(_VOCABULARY["search_spaces"])
# The part of a candidate key that names its kernel (kind, name and the integer parameters): the
# flags may be unset on one side.
KERNEL_FIELDS = len(_VOCABULARY["candidate_key"]) - len(_VOCABULARY["candidate_flags"])
candidate_dict = _native.candidate_dict
candidate_key = _native.candidate_key


class Stats:
    """What Python alone sees of the lowerings (calls, threads, compile modes, errors and the time
    spent), beside the library's counters of its decisions; updated under one lock (compiles may
    run in threads)."""

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
        self.fallbacks: Counter = Counter()
        self.scoring_s = 0.0
        self.selector_s = 0.0

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

    def count(self, counter: str, key: str):
        with self._lock:
            getattr(self, counter)[key] += 1

    def snapshot(self, decisions: Optional[dict] = None) -> dict:
        """get_stats(): these counters with the library's (`decisions`, diode_selector_counters)."""
        kinds = decisions or {k: {} for k in _VOCABULARY["decision_kinds"]}
        gemm = kinds.get("gemm_kernel", {})
        with self._lock:
            selections = gemm.get("selected", 0)
            n = max(1, selections)
            not_selected = Counter(gemm.get("not_selected", {}))
            not_selected.update(self.not_selected)
            return {
                "calls": self.calls,
                # Every GEMM lowering the handler saw, against the model's selections; each one not
                # selected has its reason in not_selected ("only_aten": Inductor offered only its
                # ATen kernel, so there was nothing to choose; "unscorable_op_X": an op the model
                # does not score; "fallback_X": an error; "unscorable_X": a GEMM the model cannot describe,
                # "unscorable_unseen_F": one whose flag F the training data never had).
                "lowerings": self.lowerings,
                "model_selections": selections,
                "not_selected": dict(not_selected),
                # Lowerings where more than one candidate went back to Inductor, which then
                # benchmarks them (never with top_k=1 unless a fallback says "autotune").
                "autotuned": gemm.get("handed_back_several", 0) + self.autotuned,
                "lowerings_by_thread": dict(self.threads),
                # "recommended" (plain torch.compile with the selector), or what else was on.
                "lowerings_by_mode": dict(self.modes),
                "scores_reused": gemm.get("scores_reused", 0),
                "fallbacks": dict(self.fallbacks),
                "fallback_total": sum(self.fallbacks.values()),
                "selections_by_op": dict(gemm.get("selections_by_op", {})),
                "candidates_seen": gemm.get("candidates_seen", 0),
                "candidates_scored": gemm.get("candidates_scored", 0),
                "candidates_filtered": gemm.get("candidates_filtered", 0),
                "candidates_unknown_kept": gemm.get("candidates_unknown_kept", 0),
                "candidates_unknown_dropped": gemm.get("candidates_unknown_dropped", 0),
                # Candidates never kept, by why: "wrong_result" (the package's data found its output
                # wrong on a problem of this op, dtype and layout), "shared_memory" (its loads alone
                # need more shared memory than the device has: it cannot compile).
                "candidates_excluded": dict(gemm.get("candidates_excluded", {})),
                # Time of the model's selections: in the library's decision call, and in Python's
                # translation around it.
                "scoring_time_s": self.scoring_s,
                "selector_time_s": self.selector_s,
                "mean_scoring_us": 1e6 * self.scoring_s / n,
                "mean_selector_us": 1e6 * self.selector_s / n,
                # Every decision kind's own counters, as the library keeps them.
                "decisions": kinds,
            }


def plain_index(kinds, names) -> Optional[int]:
    """Index of plain torch.compile's kernel among candidates of `kinds` and `names` when nothing is
    predicted (the selection policy's rule in the library), None without an ATen candidate."""
    return _native.plain_candidate(kinds, names)


# The recommended way (docs/PLUGIN.md, measured in docs/BENCHMARKS.md "Model steps"): plain torch.compile
# with the selector installed. Inductor options that make a compile something else, with what they
# cost there (the figures live in docs/BENCHMARKS.md, not here).
NOT_RECOMMENDED = {
    "max_autotune": "max-autotune mode: Inductor also benchmarks every GEMM the selector does not decide and the "
    "pointwise and reduction kernels, for a compile many times longer and a step about as fast",
    "coordinate_descent_tuning": "coordinate-descent tuning: it tunes pointwise and reduction kernels for a much "
    "longer compile (worth it only in a long training job) and decomposes small-M GEMMs, which slowed decode steps",
    "max_autotune_pointwise": "wider pointwise and reduction autotuning: faster long prefill and training steps, "
    "slower short prefill and ViT blocks, for seconds more compile: for long prefill and training only",
    compat.FIRST_RUN_AUTOTUNE: "Inductor's first-run benchmark of pointwise configurations turned back on, which the "
    "plugin turns off while its package decides kernel configurations: it adds those benchmarks to the compile "
    "(`diode demo --modes plugin,plugin-first-run-tuning` measures both)",
}


def compile_mode(runtime=None) -> str:
    """ "recommended", or the option(s) of NOT_RECOMMENDED on in the current compile ('+'-joined).
    Inductor's first-run pointwise benchmark, on in plain torch.compile, counts only where `runtime`
    turns it off (Runtime.turns_first_run_tuning_off) and the compile turned it back on."""
    on = [name for name in NOT_RECOMMENDED if name != compat.FIRST_RUN_AUTOTUNE and compat.get_config(name)]
    if runtime is not None and runtime.turns_first_run_tuning_off() and compat.get_config(compat.FIRST_RUN_AUTOTUNE):
        on.append(compat.FIRST_RUN_AUTOTUNE)
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
        regime=None,
        autotune_gemm=True,
        keep_unscored=False,
        small_m_forms=True,
        kernel_configs=True,
    ):
        if int(top_k) < 1:
            raise ValueError(f"top_k must be at least 1, got {top_k}")
        if float(performance_threshold) < 1.0:
            raise ValueError(f"performance_threshold must be at least 1.0, got {performance_threshold}")
        ops = PROBLEM_OPS if ops is None else ops
        unknown = set(ops) - set(PROBLEM_OPS)
        if unknown:
            raise ValueError(f"ops {sorted(unknown)} are not supported; choose from {', '.join(PROBLEM_OPS)}")
        if search_space.upper() not in SEARCH_SPACES:
            raise ValueError(f"search_space must be {' or '.join(SEARCH_SPACES)}, got {search_space!r}")
        if regime is not None and regime not in REGIMES:
            raise ValueError(f"regime must be {' or '.join(repr(r) for r in REGIMES)}, got {regime!r}")
        if margin is not None and not float(margin) >= 0.0:
            raise ValueError(f"margin must be at least 0 (0: no ATen guard), got {margin}")
        if fallback is True or fallback is False:  # before 0.3: True = Inductor's choices, False = raise
            fallback = "plain" if fallback else "raise"
        if fallback not in FALLBACKS:
            raise ValueError(f"fallback must be one of {', '.join(FALLBACKS)}, got {fallback!r}")
        self.margin = None if margin is None else float(margin)  # None: the package's (Runtime)
        self.regime = regime  # None: the package's own (Runtime), or the default for choosing one
        self.top_k = int(top_k)
        self.threshold = float(performance_threshold)
        self.ops = tuple(ops)
        self.search_space = search_space.upper()
        self.fallback = fallback
        self.autotune_gemm = bool(autotune_gemm)
        self.keep_unscored = bool(keep_unscored)
        self.small_m_forms = bool(small_m_forms)
        self.kernel_configs = bool(kernel_configs)

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
            "small_m_forms": self.small_m_forms,
            "kernel_configs": self.kernel_configs,
        }

    def selector_options(self) -> dict:
        """The library's options for these (diode_selector_open)."""
        return {
            "top_k": self.top_k,
            "performance_threshold": self.threshold,
            "margin": self.margin,
            "regime": self.regime,
            "ops": list(self.ops),
            "keep_unscored": self.keep_unscored,
            "fallback": "inductor" if self.fallback == "autotune" else "plain",
        }


def _layout_transposed(size, stride) -> bool:
    """Column-major storage of the last two dims (a weight used as x @ W.t())."""
    if len(size) < 2 or len(stride) < 2:
        return False
    if size[-1] == 1:
        return False
    return stride[-1] != 1 and stride[-2] == 1


def _sizes(a: tuple, b: tuple) -> tuple:
    """(B, M, N, K, a_transposed, b_transposed) of a GEMM of A and B, each (size, stride)."""
    (s1, t1), (s2, t2) = a, b
    batch = int(s1[-3]) if len(s1) >= 3 else 1
    return (
        batch,
        int(s1[-2]),
        int(s2[-1]),
        int(s1[-1]),
        int(_layout_transposed(s1, t1)),
        int(_layout_transposed(s2, t2)),
    )


def gemm_problem(op_name: str, a: tuple, b: tuple, torch_dtype) -> tuple:
    """(op, dtype, B, M, N, K, a_transposed, b_transposed) of a GEMM of A and B, each given as (size,
    stride) with integer sizes, in problem JSON's names: the collector's feedback saver and the
    selector's records. LookupError for a dtype no problem line can carry."""
    dtype = DTYPES.get(str(torch_dtype))
    if dtype is None:
        raise LookupError(f"dtype {torch_dtype} is not one the model knows")
    return (op_name, dtype) + _sizes(a, b)


def problem_of(kernel_inputs, op_name: str) -> tuple:
    """The GEMM Inductor is lowering, as (op, dtype, B, M, N, K, a_transposed, b_transposed)."""
    a, b, dt = compat.kernel_inputs_problem(kernel_inputs)
    return gemm_problem(op_name, a, b, dt)


def problem_dict(problem: tuple) -> dict:
    d = dict(zip(PROBLEM_KEYS, problem))
    d["a_transposed"], d["b_transposed"] = bool(d["a_transposed"]), bool(d["b_transposed"])
    return d


class Unscorable(LookupError):
    """A GEMM the model does not decide (fallback="raise"); `reason` names why, as get_stats() does."""

    def __init__(self, reason: str, message: str):
        super().__init__(message)
        self.reason = reason


def _plain_only(ktcs: list, keys: list) -> Optional[list]:
    """Of Inductor's candidates, the one plain torch.compile runs (plain_index's rule); None when no
    ATen kernel is offered."""
    i = plain_index([k[0] for k in keys], [k[1] for k in keys])
    return None if i is None else [ktcs[i]]


class Runtime:
    """Everything the installed selector uses: the model, its selector in the library, the
    options, Python's stats and the recorders."""

    def __init__(self, model, options: Options):
        self.model = model
        self.options = options
        self.selector = _native.Selector(model, options.selector_options())
        # The margin and regime in use, as the library resolved them (the package's where none was
        # asked for); `options` stays what was asked.
        resolved = self.selector.options()
        self.margin, self.regime = resolved["margin"], resolved["regime"]
        self._decides = tuple(resolved.get("decides", ()))
        self.stats = Stats()
        self.recorders: list = []
        from ._decisions import Decisions, LogOnce

        self.log_once = LogOnce()
        # The decisions beside the GEMM kernel: small-M forms and pointwise/reduction configs.
        self.decisions = Decisions(
            self.selector, options.kernel_configs, options.small_m_forms, self.log_once, self.recorders
        )

    def decides(self, kind: str) -> bool:
        """Whether the library decides `kind` ("kernel_config", ...) by a model of the package."""
        return kind in self._decides

    def turns_first_run_tuning_off(self) -> bool:
        """Whether install() turns Inductor's first-run benchmark of pointwise configurations off: the
        package decides kernel configurations, the options let it, and this torch has the option."""
        return (
            self.options.kernel_configs
            and self.decides("kernel_config")
            and compat.has_config(compat.FIRST_RUN_AUTOTUNE)
        )

    def snapshot(self) -> dict:
        stats = self.stats.snapshot(self.selector.counters())
        stats["decisions"] = self.decisions.stats.merged(stats["decisions"])
        return stats

    def reset_stats(self) -> None:
        self.stats.reset()
        self.decisions.stats.reset()
        self.selector.reset_counters()

    def select(self, ktcs: list, keys: list, kernel_inputs, op_name: str) -> Optional[list]:
        """One GEMM lowering decided by the library: the candidates to hand back, or None for
        Inductor's own."""
        t0 = time.perf_counter()
        a, b, dt = compat.kernel_inputs_problem(kernel_inputs)
        problem = (op_name, str(dt).replace("torch.", "", 1)) + _sizes(a, b)
        # Inductor's baddbmm lowering expands its addend to (B, M, N); problem JSON's is (B, 1, N).
        varies = op_name == "baddbmm" and problem[3] > 1 and not compat.addend_broadcast_over_m(kernel_inputs)
        smem = compat.shared_memory_limit(kernel_inputs)
        t1 = time.perf_counter()
        decision, kept_idx, predicted, excluded = self.selector.decide_gemm(problem, keys, varies, smem)
        t2 = time.perf_counter()
        kept = [ktcs[i] for i in kept_idx]
        if not decision.selected:
            reason = decision.not_selected.decode()
            if self.options.fallback == "raise" and reason != "only_aten":
                raise Unscorable(reason, decision.why.decode())
            if kept and self.recorders:
                self._record_fallback(kernel_inputs, op_name, kept, reason)
            return kept or None
        self.stats.add(scoring_s=t2 - t1, selector_s=(t1 - t0) + (time.perf_counter() - t2))
        if self.recorders:
            recorded = (DTYPES["torch." + problem[1]],) + problem[2:]
            self._record(
                (op_name,) + recorded,
                keys,
                predicted,
                kept_idx,
                excluded,
                ktcs,
                compat.lookup_table_entry(kernel_inputs, op_name, kept),
            )
        return kept

    def lowering(self, by_template: dict, kernel_inputs, op_name: str) -> Optional[list]:
        """The candidates to hand back for one GEMM lowering, or None for Inductor's own. Every
        lowering is counted; one the model does not decide has its reason counted and follows
        options.fallback."""
        self.stats.lowering(threading.current_thread().name, compile_mode(self))
        ktcs = [ktc for group in by_template.values() for ktc in group]
        keys = None
        try:
            keys = compat.ktc_keys(ktcs)
            return self.select(ktcs, keys, kernel_inputs, op_name)
        except Unscorable:
            raise  # fallback="raise", counted by the library
        except Exception as e:  # any failure ends in options.fallback, counted
            reason = f"fallback_{type(e).__name__}"
            self.stats.count("not_selected", reason)
            self.stats.count("fallbacks", type(e).__name__)
            self.log_once(
                reason,
                "torch_diode: selection failed (%s: %s); using %s (logged once per kind of error)",
                type(e).__name__,
                e,
                "plain torch.compile's kernel" if self.options.fallback == "plain" else "Inductor's choices",
            )
            if self.options.fallback == "raise":
                raise
            plain = _plain_only(ktcs, keys or compat.ktc_keys(ktcs)) if self.options.fallback == "plain" else None
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
        decision["candidates"] = [dict(candidate_dict(k), kept=True) for k in compat.ktc_keys(plain)]
        self._emit(decision, compat.lookup_table_entry(kernel_inputs, op_name, plain))

    def _record(self, problem, keys, predicted, kept_idx, excluded, ktcs, lookup=None):
        keep = set(kept_idx)
        decision = problem_dict(problem)
        decision["selector"] = {
            "top_k": self.options.top_k,
            "performance_threshold": self.options.threshold,
            "margin": self.margin,
            "regime": self.regime,
            "model": getattr(self.model, "path", ""),
        }
        scored = [i for i, why in enumerate(excluded) if not why and not math.isnan(predicted[i])]
        decision["candidates"] = [
            dict(candidate_dict(keys[i]), predicted_ms=predicted[i], kept=i in keep) for i in scored
        ]
        decision["unscored_templates"] = sorted(
            {str(getattr(ktcs[i].template, "uid", "?")) for i, why in enumerate(excluded) if why == "unscorable"}
        )
        dropped = [
            dict(candidate_dict(keys[i]), reason=why) for i, why in enumerate(excluded) if why not in ("", "unscorable")
        ]
        if dropped:
            decision["excluded"] = dropped
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
        """Consults the installed selector for each GEMM lowering; defers to Inductor otherwise."""

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

        def triton_kernel_kwargs(self, kernel_cls, features, groups, kernel_kwargs):
            kwargs = super().triton_kernel_kwargs(kernel_cls, features, groups, kernel_kwargs)
            rt = _active
            if rt is None or rt.decisions is None:
                return kwargs
            return rt.decisions.kernel_kwargs(kernel_cls, features, groups, kwargs)

    _choices_class = DiodeChoices
    return DiodeChoices


def choices_factory():
    """What Inductor calls (config.inductor_choices_class) to make a thread's choices handler. A
    module-level function, so that Inductor's config stays picklable for its caches."""
    return choices_class()()
