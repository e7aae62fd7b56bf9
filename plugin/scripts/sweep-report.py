#!/usr/bin/env python3
"""Where the time of an inductor sweep went: problems, choices, compile seconds, and Inductor's
own split of autotuning into precompiling and benchmarking (from the worker logs).
Usage: sweep-report.py DIR   (DIR holds shard*.jsonl and shard*.log from sweep-gpus.sh)
"""
import collections
import glob
import json
import os
import re
import sys

d = sys.argv[1]
rows = [json.loads(l) for f in sorted(glob.glob(os.path.join(d, "shard*.jsonl"))) for l in open(f) if l.strip()]


def timed(c):
    """Whether a candidate has a time: problem JSON v2 keeps them by method under "times"
    (docs/FORMATS.md); version 1 lines had one "time_ms"."""
    return any(v for v in c.get("times", {}).values()) or bool(c.get("time_ms"))


choices = sum(1 for p in rows for c in p["candidates"] if timed(c))
failed = sum(1 for p in rows for c in p["candidates"] if not timed(c))
compile_s = sum(p.get("compile_s", 0) for p in rows)
pre = bench = 0.0
for f in glob.glob(os.path.join(d, "shard*.log")):
    for m in re.finditer(r"benchmarking takes ([\d.]+) seconds and ([\d.]+) seconds precompiling", open(f).read()):
        bench += float(m.group(1))
        pre += float(m.group(2))
by = collections.defaultdict(lambda: [0, 0, 0.0])
for p in rows:
    k = (p["op"], p["dtype"])
    by[k][0] += 1
    by[k][1] += sum(1 for c in p["candidates"] if timed(c))
    by[k][2] += p.get("compile_s", 0)
med = sorted(p.get("compile_s", 0) for p in rows)[len(rows) // 2]
print(f"problems {len(rows)}, timed choices {choices} ({failed} choices without a timing)")
print(f"compile wall {compile_s:.0f} s (median {med:.1f} s a problem): {choices / (compile_s / 60):.1f} choices per GPU-minute")
print(f"  Inductor autotune: precompiling {pre:.0f} s ({100 * pre / compile_s:.0f}%), benchmarking {bench:.0f} s "
      f"({100 * bench / compile_s:.0f}%), rest (tracing, lowering, codegen, worker) {compile_s - pre - bench:.0f} s "
      f"({100 * (compile_s - pre - bench) / compile_s:.0f}%)")
print("op     dtype  problems choices  compile_s  choices/GPU-min")
for (op, dt), (n, c, s) in sorted(by.items()):
    print(f"{op:6} {dt:6} {n:8} {c:7} {s:10.0f} {c / (s / 60) if s else 0:16.1f}")
