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


class DecisionStats:
    """Counters of the decisions beside the GEMM kernel, by kind, under one lock."""

    def __init__(self):
        self._lock = threading.Lock()
        self.reset()

    def reset(self):
        self.seen: Counter = Counter()
        self.departed: Counter = Counter()  # kernels given a fixed config, sites decomposed
        self.kept: dict = {k: Counter() for k in KINDS}  # Inductor's own behaviour kept, by reason
        self.undescribed: dict = {k: Counter() for k in KINDS}
        self.errors: Counter = Counter()
        self.reused: Counter = Counter()
        self.seconds: Counter = Counter()

    def add(self, kind: str, outcome: str, reason: str, seconds: float, reused: bool = False):
        with self._lock:
            self.seen[kind] += 1
            self.seconds[kind] += seconds
            self.reused[kind] += reused
            if outcome == "departed":
                self.departed[kind] += 1
            elif outcome == "undescribed":
                self.undescribed[kind][reason] += 1
            elif outcome == "error":
                self.errors[kind] += 1
                self.kept[kind][reason] += 1
            else:
                self.kept[kind][reason] += 1

    def snapshot(self) -> dict:
        with self._lock:
            out = {}
            for kind in KINDS:
                out[kind] = {
                    "seen": self.seen[kind],
                    # small_m_form: sites decomposed; kernel_config: kernels given a fixed config
                    "decided": self.departed[kind],
                    "kept_default": dict(self.kept[kind]),
                    "not_described": dict(self.undescribed[kind]),
                    "errors": self.errors[kind],
                    "reused": self.reused[kind],
                    "time_s": self.seconds[kind],
                }
            return out


class Decisions:
    """The two decision kinds for one installed package."""

    def __init__(self, model, kernel_configs: bool = True, small_m: bool = True):
        self.model = model
        self.enabled = {"kernel_config": bool(kernel_configs), "small_m_form": bool(small_m)}
        self.stats = DecisionStats()
        self._cache: dict = {}
        self._lock = threading.Lock()
        self._logged: set = set()
        self.recorders: list = []

    def _log_once(self, key: str, msg: str, *args):
        with self._lock:
            if key in self._logged:
                return
            self._logged.add(key)
        log.warning(msg, *args)

    def _ask(self, kind: str, key: str, request: dict) -> tuple[dict, bool]:
        cached = self._cache.get((kind, key))
        if cached is not None:
            return cached, True
        answer = _native.decide(kind, request, self.model)
        if len(self._cache) > 8192:
            self._cache.clear()
        self._cache[(kind, key)] = answer
        return answer, False

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
            self.stats.add("kernel_config", "undescribed", e.reason, time.perf_counter() - t0)
            return kwargs
        except Exception as e:  # a kernel the reader trips on keeps Inductor's default
            self._log_once(
                f"kshape_{type(e).__name__}", "kernel config: cannot read a kernel (%s: %s)", type(e).__name__, e
            )
            self.stats.add("kernel_config", "error", f"read_{type(e).__name__}", time.perf_counter() - t0)
            return kwargs
        try:
            key = json.dumps(shape, sort_keys=True)
            answer, reused = self._ask("kernel_config", key, {"shape": shape})
            if self.recorders:
                self._record("kernel_config", {"shape": shape}, answer)
            if not answer.get("fixed"):
                self.stats.add(
                    "kernel_config", "kept", answer.get("reason", "default"), time.perf_counter() - t0, reused
                )
                return kwargs
            # Only a configuration of the kernel's own grid is ever applied (the library's answer is
            # one; anything else, from a mismatched library or a bug, keeps Inductor's default).
            grid = self._ask("kernel_candidates", key, {"shape": shape})[0]["configs"]
            if answer.get("config") not in grid:
                raise ValueError(f"config {answer.get('config')} is not one of the kernel's candidates")
            fixed = _kernels.fixed_kwargs(kwargs, shape, answer["config"])
            _kernels.accepted(kernel_cls, groups, fixed)
        except Exception as e:  # refused by Inductor or the library: Inductor's default
            self._log_once(
                f"kcfg_{type(e).__name__}", "kernel config: keeping Inductor's default (%s: %s)", type(e).__name__, e
            )
            self.stats.add("kernel_config", "error", f"refused_{type(e).__name__}", time.perf_counter() - t0)
            return kwargs
        self.stats.add("kernel_config", "departed", answer["reason"], time.perf_counter() - t0, reused)
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
            self._log_once(
                f"sites_{type(e).__name__}", "small-M form: cannot read the graph (%s: %s)", type(e).__name__, e
            )
            self.stats.add("small_m_form", "error", f"read_{type(e).__name__}", time.perf_counter() - t0)
            return
        for site in sites:
            t1 = time.perf_counter()
            try:
                answer, reused = self._ask("small_m_form", json.dumps(site.site, sort_keys=True), {"site": site.site})
                if self.recorders:
                    self._record("small_m_form", {"site": site.site}, answer)
                if not answer.get("decompose"):
                    self.stats.add(
                        "small_m_form", "kept", answer.get("reason", "library"), time.perf_counter() - t1, reused
                    )
                    continue
                _forms.rewrite(graph, site)
            except Exception as e:  # the site keeps its library kernel
                self._log_once(
                    f"form_{type(e).__name__}", "small-M form: keeping the library kernel (%s: %s)", type(e).__name__, e
                )
                self.stats.add("small_m_form", "error", f"rewrite_{type(e).__name__}", time.perf_counter() - t1)
                continue
            self.stats.add("small_m_form", "departed", answer["reason"], time.perf_counter() - t1, reused)
        graph.lint()


_pass_class = None


def pass_class():
    """Inductor's CustomGraphPass for the small-M decision, defined on first use (needs torch)."""
    global _pass_class
    if _pass_class is not None:
        return _pass_class
    from torch._inductor.custom_graph_pass import CustomGraphPass

    class SmallMFormPass(CustomGraphPass):
        """Runs the user's own pre-pass (if one was set) and then the active selector's decisions."""

        def __init__(self, previous, identity: str):
            self.previous, self.identity = previous, identity

        def __call__(self, graph):
            if self.previous is not None:
                self.previous(graph)
            from ._selector import active

            rt = active()
            if rt is not None and rt.decisions is not None:
                rt.decisions.small_m_pass(graph)

        def uuid(self):
            # Inductor's FX graph cache keys on this: the package and its decisions' options.
            previous = self.previous.uuid() if hasattr(self.previous, "uuid") else None
            return ("torch_diode.small_m_form", self.identity, previous)

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


def make_pass(previous, model, options: dict):
    return pass_class()(previous, package_identity(model, options))


def margins(model) -> Optional[dict]:
    """The package's decision margins (manifest decisions.*.margin), or None without decisions."""
    decisions = (getattr(model, "manifest", None) or {}).get("decisions")
    if not isinstance(decisions, dict):
        return None
    return {k: v.get("margin") for k, v in decisions.items() if isinstance(v, dict)}
