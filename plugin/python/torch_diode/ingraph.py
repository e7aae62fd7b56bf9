"""Kernel time as a compiled model runs it: launches captured in a CUDA graph, timed with CUDA
events on the GPU (never a Python clock around a call).

- graph_warm: the launch captured `calls` times back to back in one graph (operands stay in L2);
  the median replay divided by `calls`.
- graph_cold: each launch preceded by an L2 flush (zeroing a buffer twice the GPU's L2) in one
  graph; a second graph holds the flushes alone; (median(with) - median(flushes)) / `calls`.

Only public torch API is used here. A GPU lock (fcntl, `TORCH_DIODE_GPU_LOCK`) lets several
workers share one GPU: they compile in parallel and time one at a time.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import statistics

# Graph sizes: aim for ~`TARGET_MS` of kernels per replay, at least MIN_CALLS launches.
TARGET_MS = 1.0
MIN_CALLS, MAX_CALLS = 3, 64
REPLAYS = 7


@contextlib.contextmanager
def gpu_lock(path=None):
    """Exclusive use of the GPU for timing, across processes (no-op when no lock file is set)."""
    path = path or os.environ.get("TORCH_DIODE_GPU_LOCK")
    if not path:
        yield
        return
    with open(path, "a+") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


class GraphTimer:
    """Times no-argument launch functions in CUDA graphs on one side stream. Launch functions that
    bind a stream when made (Inductor's run functions do) must be made inside `with
    timer.stream_ctx():`."""

    def __init__(self, device=None, flush_bytes=None):
        import torch

        self.torch = torch
        self.device = torch.device("cuda", torch.cuda.current_device() if device is None else device)
        props = torch.cuda.get_device_properties(self.device)
        self.l2_bytes = int(getattr(props, "L2_cache_size", 0) or 50 * 2**20)
        self.flush_bytes = int(flush_bytes or max(2 * self.l2_bytes, 64 * 2**20))
        self.stream = torch.cuda.Stream(self.device)
        self._flush = torch.empty(self.flush_bytes // 4, dtype=torch.int32, device=self.device)

    def stream_ctx(self):
        return self.torch.cuda.stream(self.stream)

    def _replay_ms(self, graph, replays=REPLAYS):
        torch = self.torch
        times = []
        with self.stream_ctx():
            graph.replay()  # first replay uploads the graph
            for _ in range(replays):
                start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                start.record(self.stream)
                graph.replay()
                end.record(self.stream)
                times.append((start, end))
        self.stream.synchronize()
        return statistics.median(s.elapsed_time(e) for s, e in times)

    def _capture(self, body, calls):
        # Not `with torch.cuda.graph(...)`: its gc.collect() and empty_cache() on every capture
        # cost ~0.1-0.3 s inside a compile-heavy process, more than the timing itself.
        torch = self.torch
        graph = torch.cuda.CUDAGraph()
        self.stream.synchronize()
        with self.stream_ctx():
            graph.capture_begin()
            try:
                for _ in range(calls):
                    body()
            finally:
                graph.capture_end()
        return graph

    def _calls_for(self, launch):
        """Warm the launch up, estimate its GPU time from a small graph (no launch overhead, so
        the fast path and a compiled function get the same graph size), pick launches per graph."""
        with self.stream_ctx():
            launch()
            launch()
        graph = self._capture(launch, 2)
        rough = max(self._replay_ms(graph, replays=2) / 2, 1e-3)
        del graph
        return max(MIN_CALLS, min(MAX_CALLS, int(TARGET_MS / rough)))

    def flush(self):
        self._flush.zero_()

    def time(self, launch, cold=True):
        """(graph_warm_ms, graph_cold_ms or None) for one launch function.

        graph_cold replays the flush-only graph and the flush+launch graph alternately and takes
        the median of the per-pair differences, so that clock changes between the two cannot
        leak into the subtraction."""
        torch = self.torch
        calls = self._calls_for(launch)
        graph = self._capture(launch, calls)
        warm = self._replay_ms(graph) / calls
        del graph
        if not cold:
            return warm, None

        def flushed():
            self.flush()
            launch()

        with_launch = self._capture(flushed, calls)
        flushes = self._capture(self.flush, calls)
        pairs = []
        with self.stream_ctx():
            with_launch.replay()
            flushes.replay()
            for _ in range(REPLAYS):
                ev = [torch.cuda.Event(enable_timing=True) for _ in range(3)]
                ev[0].record(self.stream)
                with_launch.replay()
                ev[1].record(self.stream)
                flushes.replay()
                ev[2].record(self.stream)
                pairs.append(ev)
        self.stream.synchronize()
        diffs = [e[0].elapsed_time(e[1]) - e[1].elapsed_time(e[2]) for e in pairs]
        del with_launch, flushes
        return warm, max(statistics.median(diffs), 0.0) / calls
