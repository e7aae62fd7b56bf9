#!/usr/bin/env python3
"""Latency of the selector's one library call per GEMM decision (score the candidates and apply the
policy, torch_diode._native.Model.select_keys), on the problems of a problem-JSON file: in a hot
loop, with the CPU busy in Python for 2 ms between calls (as Inductor is between two GEMM lowerings),
and asleep for 2 ms between calls; then the first call on a package just opened (as the demo's every
mode makes it: install() opens the package). DIODE_KERNEL=avx2|generic caps the dense kernel the library
picks (docs/BENCHMARKS.md, "Ranking latency").
Usage: score-latency.py PACKAGE PROBLEMS.jsonl [--count N] [--margin M]
"""
import argparse
import json
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

    model = _native.Model(a.package)
    problems = []
    with open(a.problems) as f:
        for line in f:
            if len(problems) >= a.count:
                break
            p = json.loads(line)
            keys = [_native.candidate_key(c) for c in p["candidates"] if _native.scorable(c)]
            flags = (int(p.get("a_transposed", False)), int(p.get("b_transposed", False)))
            problems.append(((p["op"], p["dtype"], p.get("B", 1), p["M"], p["N"], p["K"]) + flags, keys))
    policy = _native.Policy(1, a.margin, float("inf"))

    def busy(seconds):
        t = time.perf_counter()
        while time.perf_counter() - t < seconds:
            pass

    def median_us(between):
        times = []
        for problem, keys in problems:
            between()
            t = time.perf_counter()
            model.select_keys(problem, keys, policy)
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
        fresh.select_keys(problem, keys, policy)
        first.append((time.perf_counter() - t) * 1e6)
        fresh.close()
    print(f"median us of the first decision on a package just opened: {statistics.median(first):.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
