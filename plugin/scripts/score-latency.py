#!/usr/bin/env python3
"""Latency of the selector's one library call per GEMM decision (the gates, the exclusions, the scores
and the policy: torch_diode._native.Selector.decide_gemm), on the problems of a problem-JSON file: in a hot
loop, with the CPU busy in Python for 2 ms between calls (as Inductor is between two GEMM lowerings),
and asleep for 2 ms between calls; then the first call on a package just opened (as the demo's every
mode makes it: install() opens the package). DIODE_KERNEL=avx2|generic caps the dense kernel the library
picks (docs/BENCHMARKS.md, "Ranking latency").
Usage: score-latency.py PACKAGE PROBLEMS.jsonl [--count N] [--margin M]
"""
import argparse
import os
import statistics
import sys
import time


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("package")
    ap.add_argument("problems", help="problem JSON lines with candidates (e.g. a held-out file)")
    ap.add_argument("--count", type=int, default=150, help="the first N problems (default 150)")
    ap.add_argument("--margin", type=float, default=0.05, help="the ATen guard's margin (default 0.05)")
    a = ap.parse_args()
    from torch_diode import _native

    options = {"margin": a.margin}
    model = _native.Model(a.package)
    fields = _native.vocabulary()["problem_fields"]
    problems = []
    for p in _native.read_problems(a.problems)[: a.count]:
        # Each line's candidates as the plugin hands them over; the library scores the ones it describes.
        keys = [_native.candidate_key(c) for c in p["candidates"]]
        problems.append((tuple(int(p[f]) if isinstance(p[f], bool) else p[f] for f in fields), keys))

    def busy(seconds):
        t = time.perf_counter()
        while time.perf_counter() - t < seconds:
            pass

    def median_us(between):
        times = []
        for problem, keys in problems:
            fresh = _native.Selector(model, options)  # no score cache from the round before
            between()
            t = time.perf_counter()
            fresh.decide_gemm(problem, keys)
            times.append((time.perf_counter() - t) * 1e6)
        return statistics.median(times)

    candidates = statistics.mean(len(k) for _, k in problems)
    print(
        f"{len(problems)} problems, {candidates:.1f} candidates each; kernel {os.environ.get('DIODE_KERNEL', 'auto')}"
    )
    for _ in range(2):
        hot = median_us(lambda: None)
        cpu = median_us(lambda: busy(0.002))
        idle = median_us(lambda: time.sleep(0.002))
        print(f"median us a decision: hot {hot:.1f}, busy 2 ms between {cpu:.1f}, asleep 2 ms between {idle:.1f}")
    first = []
    for problem, keys in problems[:50]:
        fresh = _native.Model(a.package)
        t = time.perf_counter()
        _native.Selector(fresh, options).decide_gemm(problem, keys)
        first.append((time.perf_counter() - t) * 1e6)
    print(f"median us of the first decision on a package just opened: {statistics.median(first):.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
