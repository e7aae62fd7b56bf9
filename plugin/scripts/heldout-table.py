#!/usr/bin/env python3
"""A package's held-out table for docs/MODELS.md: efficiency against the fastest candidate
(best candidate time / time of the pick) of the model's pick under the selector's policy, of
plain torch.compile's compiled function and of max-autotune's (both timed the same way by the
worker: the problem's `baselines`), of the best ATen candidate and of a random candidate
(expected value), by op, dtype, size class and held-out family, in one regime.

  python3 plugin/scripts/heldout-table.py --package P.diode --heldout H.jsonl --method graph_warm [--margin M]
"""
import argparse
import collections
import json
import os
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "python"))
from torch_diode import _native  # noqa: E402
from torch_diode._selector import DEFAULT_MARGINS, pick_policy  # noqa: E402


def p10(xs):
    xs = sorted(xs)
    return xs[int(0.1 * (len(xs) - 1))]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--package", required=True)
    ap.add_argument("--heldout", required=True)
    ap.add_argument("--method", default="graph_warm")
    ap.add_argument("--margin", type=float, default=None,
                    help="the ATen guard (default: the selector's for the package's regime, as install() "
                         "takes it with that package)")
    ap.add_argument("--search-space", default="DEFAULT", help="only problems swept in this space")
    a = ap.parse_args()
    model = _native.Model(a.package)
    if a.margin is None:
        a.margin = DEFAULT_MARGINS["cold" if model.manifest.get("timing_method") == "graph_cold" else "warm"]
    groups = collections.defaultdict(lambda: collections.defaultdict(list))
    for line in open(a.heldout):
        p = json.loads(line)
        if str(p.get("search_space", "DEFAULT")).upper() != a.search_space.upper():
            continue
        cands = [c for c in p["candidates"] if _native.scorable(c)]
        times = [c.get("times", {}).get(a.method) for c in cands]
        ok = [t for t in times if t and t > 0]
        if not ok:
            continue
        best = min(ok)
        pred = model.score(p, cands)
        pick = pick_policy([c["kind"] for c in cands], pred, 1, a.margin, names=[c.get("name", "") for c in cands])[0]
        row = {
            "model (policy)": best / times[pick] if times[pick] else 0.0,
            "plain torch.compile": best / p["baselines"]["default"][a.method],
            # Only where the sweep ran Inductor's own benchmark (worker --inductor-every).
            "max-autotune's pick": best / p["baselines"]["max_autotune"][a.method]
            if "max_autotune" in p.get("baselines", {}) else None,
            "best ATen": max((best / t for c, t in zip(cands, times) if c["kind"] == "aten" and t), default=0.0),
            "random": statistics.fmean(best / t if t else 0.0 for t in times),
        }
        size = "M ≤ 32" if p["M"] <= 32 else "M 33–1024" if p["M"] <= 1024 else "M > 1024"
        held = p.get("heldout", "")
        for key in ("all", f"op {p['op']}", f"dtype {p['dtype']}", size,
                    held.replace("family:", "family ") if held.startswith("family:") else "random 10 %"):
            for k, v in row.items():
                if v is not None:
                    groups[key][k].append(v)
    cols = ["model (policy)", "plain torch.compile", "max-autotune's pick", "best ATen", "random"]
    print(f"| {a.method} | n | " + " | ".join(cols) + " |")
    print("| --- | ---: | " + " | ".join("---:" for _ in cols) + " |")
    order = ["all"] + sorted(k for k in groups if k.startswith("op ")) + sorted(k for k in groups if k.startswith("dtype ")) \
        + [k for k in ("M ≤ 32", "M 33–1024", "M > 1024") if k in groups] \
        + sorted(k for k in groups if k.startswith("family ")) + [k for k in ("random 10 %",) if k in groups]
    for key in order:
        g = groups[key]
        n = len(g[cols[0]])
        print(f"| {key} | {n} | " + " | ".join(cell(g[c], n) for c in cols) + " |")


def cell(xs, n):
    """mean / P10, and how many problems when fewer than the row's (max-autotune's pick)."""
    if not xs:
        return "–"
    text = f"{statistics.fmean(xs):.3f} / {p10(xs):.3f}"
    return text if len(xs) == n else f"{text} ({len(xs)})"


if __name__ == "__main__":
    main()
