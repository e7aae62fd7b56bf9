"""Kernel time as a compiled model runs it: launches captured in a CUDA graph, timed with CUDA
events on the GPU (never a Python clock around a call).

- graph_warm: the launch captured `calls` times back to back in one graph (operands stay in L2
  as far as the kernel keeps them there); the median replay divided by `calls`. Every timing starts
  from a flushed L2, so it does not depend on what ran before it.
- graph_cold: each launch preceded by an L2 flush (zeroing a buffer twice the GPU's L2) in one
  graph of ~COLD_TARGET_MS of flushes and launches; a second graph holds the flushes alone; the
  two are replayed alternately and the median per-pair difference divided by the graph's launches
  (21 pairs for launches shorter than one flush, else 7).

Only public torch API is used here. A GPU lock (fcntl, `TORCH_DIODE_GPU_LOCK`) lets several
workers share one GPU: they compile in parallel and time one at a time.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import statistics
import time

# Graph sizes: aim for ~`TARGET_MS` of kernels per replay, at least MIN_CALLS launches.
TARGET_MS = 1.0
MIN_CALLS, MAX_CALLS = 3, 64
REPLAYS = 7
# graph_cold subtracts a flush (~25 us on an H200) from flush + launch: for launches much shorter
# than the flush the difference is noisy, so more pairs are replayed (median of per-pair diffs).
COLD_PAIRS, COLD_PAIRS_SMALL = 7, 21
# The cold graphs hold ~COLD_TARGET_MS of flushes and launches (at least MIN_CALLS launches, at
# most the warm graph's count). With as many launches as the warm graph, a launch shorter than the
# ~25 us flush would cost 64 flushes a graph, 21 pairs of graphs: ~80 ms of GPU a candidate, the
# sweep's largest GPU cost. None: as many launches as the warm graph (for comparing the two).
COLD_TARGET_MS = 0.5

# Seconds this process waited for and held the GPU lock (all holders: timing and Inductor's own
# benchmark); the worker reports the change per problem.
LOCK_SECONDS = {"wait": 0.0, "hold": 0.0}
# Milliseconds of GPU time inside the timed replays of this process (what the CUDA events saw):
# against the lock's held time, how much of it the GPU was busy timing rather than waiting for
# this process's CPU (graph captures, launches, Python).
TIMED_GPU_MS = [0.0]


@contextlib.contextmanager
def gpu_lock(path=None):
    """Exclusive use of the GPU for timing, across processes (no-op when no lock file is set)."""
    path = path or os.environ.get("TORCH_DIODE_GPU_LOCK")
    if not path:
        yield
        return
    with open(path, "a+") as f:
        t0 = time.perf_counter()
        fcntl.flock(f, fcntl.LOCK_EX)
        t1 = time.perf_counter()
        LOCK_SECONDS["wait"] += t1 - t0
        # While this thread has the GPU, others' compiles must not starve it of CPU (measured on
        # 2 H200s with 4 workers a GPU: the lock was held 94 % of the time, 3x longer a problem
        # than without contention). Raising priority needs privilege; without it, carry on.
        nice = _raise_priority()
        watch = _long_hold_watch()
        try:
            yield
        finally:
            if watch:
                watch.cancel()
            _restore_priority(nice)
            fcntl.flock(f, fcntl.LOCK_UN)
            LOCK_SECONDS["hold"] += time.perf_counter() - t1


def _long_hold_watch():
    """With TORCH_DIODE_LOCK_PROFILE=S: print the holding thread's stack each S seconds it holds
    the GPU lock (to find what keeps the GPU idle while held)."""
    every = float(os.environ.get("TORCH_DIODE_LOCK_PROFILE") or 0)
    if every <= 0:
        return None
    import sys
    import threading
    import traceback

    tid = threading.get_ident()

    def dump():
        frame = sys._current_frames().get(tid)
        if frame is not None:
            print(
                "[torch_diode.tools.ingraph] GPU lock held; stack:\n" + "".join(traceback.format_stack(frame)[-14:]),
                file=sys.stderr,
                flush=True,
            )
        timer[0] = threading.Timer(every, dump)
        timer[0].daemon = True
        timer[0].start()

    timer = [threading.Timer(every, dump)]
    timer[0].daemon = True
    timer[0].start()

    class Watch:
        def cancel(self):
            timer[0].cancel()

    return Watch()


def _raise_priority():
    try:
        old = os.getpriority(os.PRIO_PROCESS, 0)
        os.setpriority(os.PRIO_PROCESS, 0, -10)  # on Linux: this thread only
        return old
    except (OSError, AttributeError):
        return None


def _restore_priority(old):
    if old is not None:
        try:
            os.setpriority(os.PRIO_PROCESS, 0, old)
        except OSError:
            pass


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
        self._flush_ms = None

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
        elapsed = [s.elapsed_time(e) for s, e in times]
        TIMED_GPU_MS[0] += sum(elapsed)
        return statistics.median(elapsed)

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
        return max(MIN_CALLS, min(MAX_CALLS, int(TARGET_MS / rough))), rough

    def flush(self):
        self._flush.zero_()

    def flush_ms(self):
        """GPU time of one flush (measured once, in a graph of 8)."""
        if self._flush_ms is None:
            graph = self._capture(self.flush, 8)
            self._flush_ms = self._replay_ms(graph, replays=3) / 8
            del graph
        return self._flush_ms

    def cold_calls(self, warm_calls, rough_ms):
        """Launches in each graph_cold graph: ~COLD_TARGET_MS of flush + launch, within
        [MIN_CALLS, warm_calls]."""
        if COLD_TARGET_MS is None:
            return warm_calls
        return max(MIN_CALLS, min(warm_calls, int(COLD_TARGET_MS / (self.flush_ms() + rough_ms))))

    def interleaved(self, launches, rounds=REPLAYS):
        """Warm ms a call of each launch function in each of `rounds` rounds: every launch captured in a
        graph of the same size, the graphs replayed in turn, their order rotated from round to round,
        so that a clock change between rounds reaches them alike and a difference is best taken round
        by round (compiles of one step that differ in one decision)."""
        torch = self.torch
        with self.stream_ctx():
            self.flush()
        calls = self._calls_for(launches[0])[0]
        for launch in launches[1:]:
            with self.stream_ctx():
                launch()
                launch()
        graphs = [self._capture(launch, calls) for launch in launches]
        events = []
        with self.stream_ctx():
            for g in graphs:
                g.replay()  # the first replay uploads the graph
            for r in range(rounds):
                order = [(r + i) % len(graphs) for i in range(len(graphs))]
                for i in order:
                    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                    start.record(self.stream)
                    graphs[i].replay()
                    end.record(self.stream)
                    events.append((r, i, start, end))
        self.stream.synchronize()
        times = [[0.0] * rounds for _ in launches]
        for r, i, start, end in events:
            ms = start.elapsed_time(end)
            TIMED_GPU_MS[0] += ms
            times[i][r] = ms / calls
        del graphs
        return times

    def time(self, launch, cold=True):
        """(graph_warm_ms, graph_cold_ms or None) for one launch function.

        graph_cold replays the flush-only graph and the flush+launch graph alternately and takes
        the median of the per-pair differences, so that clock changes between the two cannot
        leak into the subtraction.

        Both start from a flushed L2, so the operands come from HBM on the first launch and a warm
        time is what repeated launches keep in L2, whatever ran before: a timing that started from
        the L2 its predecessor left made the first function timed after the inputs were written
        look up to 1.6x faster (docs/BENCHMARKS.md, "Where a time starts")."""
        torch = self.torch
        with self.stream_ctx():
            self.flush()
        calls, rough = self._calls_for(launch)
        graph = self._capture(launch, calls)
        warm = self._replay_ms(graph) / calls
        del graph
        if not cold:
            return warm, None

        def flushed():
            self.flush()
            launch()

        calls = self.cold_calls(calls, rough)
        with_launch = self._capture(flushed, calls)
        flushes = self._capture(self.flush, calls)
        n_pairs = COLD_PAIRS_SMALL if rough < self.flush_ms() else COLD_PAIRS
        pairs = []
        with self.stream_ctx():
            with_launch.replay()
            flushes.replay()
            for _ in range(n_pairs):
                ev = [torch.cuda.Event(enable_timing=True) for _ in range(3)]
                ev[0].record(self.stream)
                with_launch.replay()
                ev[1].record(self.stream)
                flushes.replay()
                ev[2].record(self.stream)
                pairs.append(ev)
        self.stream.synchronize()
        diffs = [e[0].elapsed_time(e[1]) - e[1].elapsed_time(e[2]) for e in pairs]
        TIMED_GPU_MS[0] += sum(e[0].elapsed_time(e[2]) for e in pairs)
        del with_launch, flushes
        return warm, max(statistics.median(diffs), 0.0) / calls
