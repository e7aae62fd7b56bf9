"""The decisions beside the GEMM kernel, as the installed selector makes them inside Inductor:

- "small_m_form": whether each small-M GEMM and one-token attention runs as a library kernel or as
  Inductor's fused multiply-and-sum (torch_diode._forms, a post-grad custom pass);
- "kernel_config": the launch configuration of each pointwise and reduction kernel Inductor
  generates (torch_diode._kernels, InductorChoices.triton_kernel_kwargs).

Each is decided by the library (diode_decide) from a model the package carries; a package without
one, a kernel or site the model cannot describe, and any error keep Inductor's own behaviour, with
the reason counted for get_stats(). Nothing here may fail a compile.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from collections import Counter
from typing import Optional

from . import _native

log = logging.getLogger("torch_diode")

KINDS = ("small_m_form", "kernel_config")


def gemm_decisions(records: list) -> list:
    """The GEMM decisions among what torch_diode.record_decisions kept: the problem JSON lines that
    diode import, diode demo --problems and diode lookup-table read (the other kinds are not)."""
    return [r for r in records if r.get("kind") not in KINDS]


class DecisionStats:
    """What Python alone sees of the decisions beside the GEMM kernel, by kind: kernels and sites the
    translator could not describe, errors, the decisions applied, and the time spent; the library
    counts what it decided (diode_selector_counters), which Inductor may still refuse. Under one
    lock."""

    def __init__(self):
        self._lock = threading.Lock()
        self.reset()

    def reset(self):
        with self._lock:
            self.undescribed: dict = {k: Counter() for k in KINDS}
            self.errors: dict = {k: Counter() for k in KINDS}
            self.applied: Counter = Counter()
            self.tuned: Counter = Counter()
            self.seconds: Counter = Counter()
            self.library_forms = 0

    def add(
        self,
        kind: str,
        seconds: float,
        undescribed: str = "",
        error: str = "",
        applied: bool = False,
        tuned: bool = False,
    ):
        """`error`: "read_..." (the translator failed) or "ask_..." (the library refused the request) for
        one the library did not count, else one met after its answer. `tuned`: a kernel left to a
        default Inductor benchmarks at its first run."""
        with self._lock:
            self.seconds[kind] += seconds
            self.applied[kind] += bool(applied)
            self.tuned[kind] += bool(tuned)
            if undescribed:
                self.undescribed[kind][undescribed] += 1
            if error:
                self.errors[kind][error] += 1

    def add_library_form(self, written: bool) -> None:
        """A site kept in its library form, written over the KV cache as stored (_forms.Site.library)."""
        with self._lock:
            self.library_forms += bool(written)

    def merged(self, library: dict) -> dict:
        """get_stats()["decisions"]: the library's counters of every kind, and for these two kinds:
        "seen" (every kernel or site met), "decided" (a site decomposed, a kernel given a fixed
        configuration, and Inductor took it), "kept_default" ({reason: n}: the library kept
        Inductor's behaviour, or an error did), "not_described" ({reason: n}), "errors" and
        "time_s"; for kernel configs also "tuned_at_first_run" (kernels described and left to a default
        of several configurations, which Inductor benchmarks at the kernel's first run); for small-M
        forms also "library_over_cache" (attention with grouped KV heads kept in
        its library form, FlashAttention over the KV cache as stored instead of the copies the
        attention as written makes)."""
        out = dict(library)
        with self._lock:
            for kind in KINDS:
                lib = library.get(kind, {})
                kept = Counter(lib.get("not_selected", {}))
                kept.update(self.errors[kind])
                errors = sum(self.errors[kind].values())
                uncounted = sum(n for why, n in self.errors[kind].items() if why.startswith(("read_", "ask_")))
                undescribed = sum(self.undescribed[kind].values())
                out[kind] = {
                    "seen": lib.get("decisions", 0) + undescribed + uncounted,
                    "decided": self.applied[kind],
                    "kept_default": dict(kept),
                    "not_described": dict(self.undescribed[kind]),
                    "errors": errors,
                    "time_s": self.seconds[kind],
                }
            out["kernel_config"]["tuned_at_first_run"] = self.tuned["kernel_config"]
            out["small_m_form"]["library_over_cache"] = self.library_forms
        return out


class LogOnce:
    """A warning said once per key for the life of the installed selector: a hook that fails on
    every kernel says so once, not once per kernel. Thread-safe (Inductor compiles in threads)."""

    def __init__(self):
        self._lock = threading.Lock()
        self._logged: set = set()

    def __call__(self, key: str, msg: str, *args) -> None:
        with self._lock:
            if key in self._logged:
                return
            self._logged.add(key)
        log.warning(msg, *args)


class Decisions:
    """The two decision kinds, made by the library's selector of the installed package."""

    def __init__(
        self,
        selector,
        kernel_configs: bool = True,
        small_m: bool = True,
        log_once: LogOnce = None,
        recorders: Optional[list] = None,
    ):
        self.selector = selector
        self.model = selector.model
        self.enabled = {"kernel_config": bool(kernel_configs), "small_m_form": bool(small_m)}
        self.stats = DecisionStats()
        self._grids: dict = {}
        self._log_once = log_once or LogOnce()  # the installed selector's, shared with its GEMM hook
        # The installed selector's recorders (torch_diode.record_decisions), shared with its GEMM hook.
        self.recorders: list = recorders if recorders is not None else []
        # A measurement's rule in place of the library's kernel-config decision (the step sweep,
        # torch_diode.tools.step_kernels): (shape, Inductor's kernel features) -> a config of the
        # kernel's grid, or None for Inductor's default. Applied under the same guards.
        self.fixed_by = None
        # A measurement's rule over the library's small-M form (the step sweep's sites): (the site,
        # the library's answer: decompose or not) -> the form to apply. Rewritten as the library's own
        # answers are, the operand written once where the answer says so. The pass's uuid does not
        # know it: compile with Inductor's caches off while it is set.
        self.form_by = None

    def _grid(self, key: str, shape: dict) -> list:
        grid = self._grids.get(key)
        if grid is None:
            if len(self._grids) > 4096:
                self._grids.clear()
            grid = self._grids[key] = _native.kernel_candidates(shape, grid=True)
        return grid

    def _kept(self, kind: str, stage: str, what: str, e: Exception, seconds: float, tuned: bool = False) -> None:
        """An error at `stage` ("read", "ask", "refused", "rewrite", "lint") keeps Inductor's own
        behaviour: said once per kind, stage and exception type, and counted as "<stage>_<type>"."""
        name = type(e).__name__
        self._log_once(f"{kind}_{stage}_{name}", "%s (%s: %s)", what, name, e)
        self.stats.add(kind, seconds, error=f"{stage}_{name}", tuned=tuned)

    def _record(self, kind: str, subject: dict, answer: dict):
        for r in list(self.recorders):
            r.append({"kind": kind, **subject, "decision": answer})

    # ---- kernel_config -------------------------------------------------------------------------

    def kernel_kwargs(self, kernel_cls, features, groups, kwargs: dict) -> dict:
        """Inductor's kwargs for one kernel, with a fixed config where the library chose one."""
        if not self.enabled["kernel_config"]:
            return kwargs
        from . import _kernels

        t0 = time.perf_counter()
        try:
            shape = _kernels.kernel_shape(kernel_cls, features, groups, kwargs)
        except _kernels.Undescribable as e:
            self.stats.add("kernel_config", time.perf_counter() - t0, undescribed=e.reason)
            return kwargs
        except Exception as e:  # a kernel the reader trips on keeps Inductor's default
            self._kept("kernel_config", "read", "kernel config: cannot read a kernel", e, time.perf_counter() - t0)
            return kwargs
        shape["default_tuned"] = _kernels.default_tuned_or_one(
            features,
            groups,
            kwargs,
            shape,
            lambda e: self._log_once(
                f"kernel_config_tuned_{type(e).__name__}",
                "kernel config: cannot ask Inductor's heuristics about a kernel's default (%s: %s)",
                type(e).__name__,
                e,
            ),
        )
        tuned = shape["default_tuned"]  # kept, the kernel is benchmarked at its first run
        try:
            if self.fixed_by is not None:
                config = self.fixed_by(shape, features)
                answer = {"fixed": config is not None, "config": config}
            else:
                answer = self.selector.decide_json("kernel_config", {"shape": shape})
        except Exception as e:  # the library (or the rule in its place) gave no answer; nothing counted
            self._kept(
                "kernel_config", "ask", "kernel config: no decision for a kernel", e, time.perf_counter() - t0, tuned
            )
            return kwargs
        try:
            if self.recorders:
                self._record("kernel_config", {"shape": shape}, answer)
            if not answer.get("fixed"):
                self.stats.add("kernel_config", time.perf_counter() - t0, tuned=tuned)
                return kwargs
            # Only a configuration of the kernel's grid is ever applied (the library's answer is one,
            # from its portfolio or the package's extra configurations; anything else, from a
            # mismatched library or a bug, keeps Inductor's default).
            if answer.get("config") not in self._grid(json.dumps(shape, sort_keys=True), shape):
                raise ValueError(f"config {answer.get('config')} is not in the kernel's grid")
            fixed = _kernels.fixed_kwargs(kwargs, shape, answer["config"])
            _kernels.accepted(kernel_cls, groups, fixed)
        except Exception as e:  # refused by Inductor or the library: Inductor's default
            self._kept(
                "kernel_config",
                "refused",
                "kernel config: keeping Inductor's default",
                e,
                time.perf_counter() - t0,
                tuned,
            )
            return kwargs
        self.stats.add("kernel_config", time.perf_counter() - t0, applied=True)
        return fixed

    # ---- small_m_form --------------------------------------------------------------------------

    def small_m_pass(self, graph) -> None:
        """Rewrites the sites of `graph` the library decides to decompose."""
        if not self.enabled["small_m_form"]:
            return
        from . import _forms

        t0 = time.perf_counter()
        try:
            sites = _forms.find_sites(graph)
        except Exception as e:
            self._kept("small_m_form", "read", "small-M form: cannot read the graph", e, time.perf_counter() - t0)
            return
        self.stats.add("small_m_form", time.perf_counter() - t0)
        traces = {}  # each decomposed form traced once per operand metadata
        replaced = {}  # nodes earlier rewrites erased, and what stands for them
        for site in sites:
            t1 = time.perf_counter()
            try:
                answer = self.selector.decide_json("small_m_form", {"site": site.site})
            except Exception as e:  # the library refused the request (and counted nothing)
                self._kept(
                    "small_m_form", "ask", "small-M form: the library refused a site", e, time.perf_counter() - t1
                )
                continue
            try:
                applied = bool(answer.get("decompose"))
                if self.form_by is not None:
                    applied = bool(self.form_by(site.site, applied))
                # the library form over the KV cache as stored, where the model's library times are of it
                library_form = not applied and site.library is not None and bool(answer.get("library_over_cache"))
                if self.recorders:  # the form applied
                    self._record(
                        "small_m_form", {"site": site.site}, dict(answer, decompose=applied, library_form=library_form)
                    )
                if applied or library_form:
                    _forms.follow(site, replaced)
                    materialise = bool(answer.get("materialise_operand"))
                    replaced.update(_forms.rewrite(graph, site, traces, materialise=materialise, decompose=applied))
                    self.stats.add_library_form(library_form)
            except Exception as e:  # the site keeps its library kernel
                self._kept(
                    "small_m_form", "rewrite", "small-M form: keeping the library kernel", e, time.perf_counter() - t1
                )
                continue
            self.stats.add("small_m_form", time.perf_counter() - t1, applied=applied)
        try:
            graph.lint()
        except Exception as e:  # a rewrite swaps a node's uses in one step; say so, but never fail the compile
            self._kept("small_m_form", "lint", "small-M form: the graph fails its check", e, 0.0)


_pass_class = None


def pass_class():
    """Inductor's CustomGraphPass for the small-M decision, defined on first use (needs torch)."""
    global _pass_class
    if _pass_class is not None:
        return _pass_class
    from torch._inductor.custom_graph_pass import CustomGraphPass

    class SmallMFormPass(CustomGraphPass):
        """Runs the user's own pre-pass (if one was set) and then the active selector's decisions."""

        def __init__(self, previous, identity: str, runtime):
            self.previous, self.identity, self.runtime = previous, identity, runtime

        def __call__(self, graph):
            if self.previous is not None:
                self.previous(graph)
            rt = self.runtime()
            if rt is not None and rt.decisions is not None:
                rt.decisions.small_m_pass(graph)

        def uuid(self):
            # Inductor's FX graph cache keys on this: the package and its decisions' options.
            previous = self.previous.uuid() if hasattr(self.previous, "uuid") else None
            from ._forms import FORMS_VERSION

            return ("torch_diode.small_m_form", FORMS_VERSION, self.identity, previous)

    _pass_class = SmallMFormPass
    return SmallMFormPass


def package_identity(model, options: dict) -> str:
    """What the decisions depend on, for the FX graph cache: the package file and the options."""
    path = getattr(model, "path", "") or ""
    try:
        st = os.stat(path)
        stamp = f"{st.st_size}:{st.st_mtime_ns}"
    except OSError:
        stamp = ""
    return json.dumps({"package": path, "stamp": stamp, "options": options}, sort_keys=True)


def make_pass(previous, model, options: dict, runtime):
    """The pre-pass for `model`'s package; `runtime()` gives the selector installed when it runs."""
    return pass_class()(previous, package_identity(model, options), runtime)
