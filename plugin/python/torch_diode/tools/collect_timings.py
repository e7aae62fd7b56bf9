"""The collector: `with torch_diode.tools.collect_timings.collect("out.jsonl"):` records the timings Inductor's
max-autotune measures while you compile your own model, as problem JSON lines that
`diode import` reads. It adds one feedback saver and removes only that one on exit: other
savers keep working (Inductor's clear_feedback_savers() would remove them all)."""

from __future__ import annotations

import contextlib
import json
import logging
import threading

from .. import _inductor_compat as compat
from .._native import vocabulary
from .._selector import gemm_problem, problem_dict
from ._timings import candidate_from_choice

log = logging.getLogger("torch_diode")


def autotune_timed(cand: dict, t) -> dict:
    """`cand` (a problem-JSON candidate) with Inductor's benchmark time `t` (ms) as its
    inductor_autotune time; a missing or invalid one is that method's failure (a null time and
    the error), never an in-graph one."""
    if t is None or t != t or t == float("inf") or t <= 0:
        return dict(cand, times={"inductor_autotune": None}, error="no valid timing (failed to compile or run)")
    return dict(cand, times={"inductor_autotune": float(t)})


class AutotuneRecorder:
    """A feedback saver (torch 2.11 passes six positional arguments) writing one problem JSON line
    (version 2, docs/FORMATS.md) per autotuned GEMM, Inductor's benchmark times as
    `inductor_autotune`. (The worker's saver, tools.worker.ChoiceCollector, keeps the choices
    themselves to time them in CUDA graphs.)"""

    def __init__(self, out):
        self._out = out
        self._lock = threading.Lock()
        self.problems = 0
        self.skipped = 0

    def __call__(self, timings, name, input_nodes, choices, profiled_time_fn, precompile_times=None, *rest):
        try:
            record = self.record(timings, name, input_nodes)
        except Exception as e:  # a saver must never break the user's compile
            self.skipped += 1
            log.debug("collector skipped %s: %s", name, e)
            return
        if record is None:
            self.skipped += 1
            return
        with self._lock:
            self._out.write(json.dumps(record, separators=(",", ":")) + "\n")
            self._out.flush()
            self.problems += 1

    @staticmethod
    def record(timings, name, input_nodes):
        op = compat.SAVER_OPS.get(str(name))
        if op is None or len(input_nodes) < 2:
            return None
        mat1, mat2 = input_nodes[-2], input_nodes[-1]
        try:
            problem = gemm_problem(op, compat.node_size_stride(mat1), compat.node_size_stride(mat2), mat1.get_dtype())
        except LookupError:  # a dtype the model does not know
            return None
        candidates = [autotune_timed(candidate_from_choice(choice, vocabulary()), t) for choice, t in timings.items()]
        if not candidates:
            return None
        return dict(
            problem_dict(problem),
            search_space=compat.current_search_space(),
            source="torch_diode.tools.collect_timings",
            version=2,
            candidates=candidates,
        )


@contextlib.contextmanager
def collect(path: str, append: bool = False):
    """Yields the AutotuneRecorder (its `problems` counts lines written)."""
    with open(path, "a" if append else "w") as out:
        collector = AutotuneRecorder(out)
        compat.add_feedback_saver(collector)
        try:
            yield collector
        finally:
            if not compat.remove_feedback_saver(collector):
                log.warning(
                    "collect: could not find Inductor's feedback saver list; the collector stays "
                    "registered but writes nothing more"
                )
                collector._out = _Closed()


class _Closed:
    def write(self, _):
        pass

    def flush(self):
        pass
