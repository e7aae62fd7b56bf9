"""The collector: `with torch_diode.collect("out.jsonl"):` records the timings Inductor's
max-autotune measures while you compile your own model, as problem JSON lines that
`diode import` reads. It adds one feedback saver and removes only that one on exit: other
savers keep working (Inductor's clear_feedback_savers() would remove them all)."""

from __future__ import annotations

import contextlib
import json
import logging
import threading

from ._selector import DTYPES, _layout_transposed
from ._timings import candidate_from_choice

log = logging.getLogger("torch_diode")
_OPS = {"mm": "mm", "addmm": "addmm", "bias_addmm": "addmm", "bmm": "bmm"}


class Collector:
    """A feedback saver (torch 2.11 passes six positional arguments) writing one line per
    autotuned GEMM."""

    def __init__(self, out):
        self._out = out
        self._lock = threading.Lock()
        self.problems = 0
        self.skipped = 0

    def __call__(self, timings, name, input_nodes, choices, profiled_time_fn, precompile_times=None, *rest):
        try:
            record = self.record(timings, name, input_nodes)
        except Exception as e:  # noqa: BLE001 - a saver must never break the user's compile
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
        import torch._inductor.config as cfg
        from torch._inductor.virtualized import V

        op = _OPS.get(str(name))
        if op is None or len(input_nodes) < 2:
            return None
        mat1, mat2 = input_nodes[-2], input_nodes[-1]
        sizes = V.graph.sizevars
        s1, s2 = sizes.size_hints(mat1.get_size()), sizes.size_hints(mat2.get_size())
        t1, t2 = sizes.size_hints(mat1.get_stride()), sizes.size_hints(mat2.get_stride())
        dtype = DTYPES.get(str(mat1.get_dtype()))
        if dtype is None:
            return None
        candidates = []
        for choice, t in timings.items():
            cand = candidate_from_choice(choice)
            if t is None or t != t or t == float("inf") or t <= 0:
                cand["time_ms"] = None
                cand["error"] = "no valid timing (failed to compile or run)"
            else:
                cand["time_ms"] = float(t)
            candidates.append(cand)
        if not candidates:
            return None
        return {"op": op, "dtype": dtype, "B": int(s1[-3]) if len(s1) >= 3 else 1, "M": int(s1[-2]),
                "N": int(s2[-1]), "K": int(s1[-1]), "a_transposed": _layout_transposed(s1, t1),
                "b_transposed": _layout_transposed(s2, t2),
                "search_space": str(cfg.max_autotune_gemm_search_space).upper(),
                "source": "torch_diode.collect", "candidates": candidates}


def _saver_lists(fn):
    """The lists holding feedback savers that contain `fn` (torch 2.11 keeps them on the
    module's AlgorithmSelectorCache instance)."""
    import torch._inductor.select_algorithm as sa

    holders = [getattr(sa, "_ALGORITHM_SELECTOR_CACHE", None), sa, getattr(sa, "AlgorithmSelectorCache", None)]
    for holder in filter(lambda h: h is not None, holders):
        for attr in ("feedback_saver_fns", "_feedback_savers", "feedback_savers"):
            val = getattr(holder, attr, None)
            if isinstance(val, list) and any(x is fn for x in val):
                yield val


@contextlib.contextmanager
def collect(path: str, append: bool = False):
    """Yields the Collector (its `problems` counts lines written)."""
    from torch._inductor.select_algorithm import add_feedback_saver

    with open(path, "a" if append else "w") as out:
        collector = Collector(out)
        add_feedback_saver(collector)
        try:
            yield collector
        finally:
            removed = False
            for lst in _saver_lists(collector):
                lst[:] = [x for x in lst if x is not collector]
                removed = True
            if not removed:
                log.warning("collect: could not find Inductor's feedback saver list; the collector stays "
                            "registered but writes nothing more")
                collector._out = _Closed()


class _Closed:
    def write(self, _):
        pass

    def flush(self):
        pass
