"""Checks the worker's fast in-graph timing against the slow, obvious method.

Fast path (worker.measure): max-autotune compiles every candidate once; each candidate's kernel
is launched through Inductor's benchmark run function inside a CUDA graph.
Slow path (here): for one candidate, a choices handler keeps only that candidate, the op is
compiled (Inductor then has nothing to benchmark) and the compiled function is timed in a CUDA
graph, warm and cold, the same GraphTimer as the fast path.

  python3 -m torch_diode.tools.validate_timing --problems P.jsonl --out VALID.jsonl [--per-problem 3]
  python3 -m torch_diode.tools.validate_timing --measured --problems EXPORT.jsonl --out VALID.jsonl

With --measured the fast times are the ones the problem lines carry (`diode export` of a sweep),
not measured again: what is checked is the truth a sweep stored, under the sweep's own load.
Problems whose M, N or K is not a multiple of 8 are skipped there: an export does not say whether
Inductor padded them.

Each line of VALID.jsonl: the problem, the candidate, fast and slow times per method, and
whether they agree (within 3 % or 0.3 us). A summary goes to stderr and --summary.
"""

from __future__ import annotations

import argparse
import json
import random
import sys

from .. import _inductor_compat as compat
from . import worker
from .._native import NativeError, candidate_key as library_key, read_problems, vocabulary

# The fields of the library's candidate key (its packed row) that name a kernel: EVEN_K and
# ALLOW_TF32 may be unset on one side.
KERNEL_FIELDS = len(vocabulary()["candidate_key"]) - len(vocabulary()["candidate_flags"])
PROBLEM_FIELDS = vocabulary()["problem_fields"]


def candidate_key(cand) -> tuple:
    return library_key(cand)[:KERNEL_FIELDS]


def ktc_candidate_key(ktc) -> tuple:
    return compat.ktc_key(ktc)[:KERNEL_FIELDS]


def only_handler(target):
    """An InductorChoices keeping only the candidate whose key is `target`."""
    base = compat.choices_base_class()

    class OnlyOne(base):
        found = 0

        def _finalize_template_configs(self, template_choices, kernel_inputs, templates, op_name, kwarg_overrides=None):
            kept = [ktc for gen in template_choices.values() for ktc in gen if ktc_candidate_key(ktc) == target]
            OnlyOne.found += len(kept)
            return kept[:1]

    return OnlyOne()


def slow_time(p, cand, timer):
    fn, args = worker.make_inputs(p)
    handler = only_handler(candidate_key(cand))
    with compat.fresh_cache():
        with compat.choices_handler(handler):
            compiled, _s = worker.compile_op(fn, args, compat.max_autotune_options(p.get("search_space", "DEFAULT")))
        if not type(handler).found:
            raise LookupError(f"Inductor offered no candidate matching {candidate_key(cand)}")
        with worker.gpu_lock():
            return worker.time_compiled(timer, compiled, args)


def agree(fast, slow) -> bool:
    """The library's rule (timingagreement.h, diode_vocabulary's "timing_agreement"), the slow time the reference."""
    rule = vocabulary()["timing_agreement"]
    return abs(fast - slow) <= max(rule["relative"] * slow, rule["absolute_ms"])


def pick(candidates, n, rng):
    """ATen, the fastest candidate in graph, then others at random: the ones that matter most."""
    ok = [c for c in candidates if not c.get("error") and "graph_warm" in c.get("times", {})]
    if not ok:
        return []
    chosen = [min(ok, key=lambda c: c["times"]["graph_warm"])]
    aten = [c for c in ok if c["kind"] == "aten" and c not in chosen]
    chosen += aten[:1]
    rest = [c for c in ok if c not in chosen]
    rng.shuffle(rest)
    return chosen + rest[: max(0, n - len(chosen))]


def main(argv=None):
    ap = argparse.ArgumentParser(
        prog="python3 -m torch_diode.tools.validate_timing",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument("--problems", required=True, help="problem JSON lines (with or without measured candidates)")
    ap.add_argument("--out", required=True)
    ap.add_argument("--per-problem", type=int, default=3)
    ap.add_argument("--limit", type=int, default=0, help="at most this many problems")
    ap.add_argument(
        "--want", type=int, default=0, help="stop once this many problems were compared (padded ones do not count)"
    )
    ap.add_argument("--summary", help="write the summary JSON here too")
    ap.add_argument(
        "--measured",
        action="store_true",
        help="take the fast times from the lines' candidates (a sweep's export) instead of measuring them",
    )
    args = ap.parse_args(argv)
    try:
        problems = read_problems(args.problems)  # core's reader: the file, line and field at fault
    except NativeError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    for p in problems:
        p["search_space"] = str(p.get("search_space", vocabulary()["search_spaces"][0])).upper()
    worker.use_vocabulary(vocabulary())
    if args.limit:
        problems = problems[: args.limit]
    collector, timer, why = worker.setup()
    if why:
        print(why, file=sys.stderr)
        return 3
    rng = random.Random(7)
    rows = []
    padded = 0
    with open(args.out, "w") as out:
        for p in problems:
            if args.measured:
                measured = p
                # A sweep's export does not keep the worker's note that Inductor padded the operands;
                # sizes it may pad are left out rather than misjudged.
                padding = any(p[k] % 8 for k in ("M", "N", "K")) and (
                    "M, N or K is not a multiple of 8: Inductor may pad it (--measured cannot tell)"
                )
            else:
                try:
                    measured, _c, _f = worker.measure(p, p["search_space"], collector, timer)
                except Exception as e:  # one problem that cannot be measured is logged and skipped
                    worker.log(f"fast path failed on {p}: {e}")
                    continue
                shapes = measured.get("inductor_operand_shapes")
                padding = shapes and f"Inductor padded the operands to {shapes}"
            if padding:
                # Inductor padded the operands (pad_mm): the fast path times the kernel on the
                # padded tensors, the compiled function adds the padding copies (or, compiled
                # with one candidate, may not pad at all). Not the same thing: not compared.
                row = {k: p[k] for k in PROBLEM_FIELDS}
                row["skipped"] = padding
                out.write(json.dumps(row) + "\n")
                padded += 1
                continue
            for cand in pick(measured.get("candidates") or [], args.per_problem, rng):
                row = {k: p[k] for k in PROBLEM_FIELDS}
                row["candidate"] = {k: v for k, v in cand.items() if k != "times"}
                row["fast"] = {m: cand["times"][m] for m in ("graph_warm", "graph_cold")}
                try:
                    warm, cold = slow_time(p, cand, timer)
                    row["slow"] = {"graph_warm": warm, "graph_cold": cold}
                    row["agree"] = {m: agree(row["fast"][m], row["slow"][m]) for m in row["slow"]}
                except Exception as e:  # one failed slow path is its row's error
                    row["error"] = f"{type(e).__name__}: {e}".splitlines()[0][:300]
                rows.append(row)
                out.write(json.dumps(row) + "\n")
                out.flush()
                worker.log(json.dumps(row))
            if args.want and summarize(rows)["problems"] >= args.want:
                break
    summary = summarize(rows)
    summary["padded_problems_not_compared"] = padded
    print(json.dumps(summary, indent=1), file=sys.stderr)
    if args.summary:
        with open(args.summary, "w") as f:
            json.dump(summary, f, indent=1)
    return 0


def summarize(rows) -> dict:
    done = [r for r in rows if "slow" in r]
    s = {
        "candidates": len(rows),
        "compared": len(done),
        "errors": len(rows) - len(done),
        "problems": len({tuple(r[k] for k in PROBLEM_FIELDS) for r in done}),
    }
    for m in ("graph_warm", "graph_cold"):
        rel = sorted(abs(r["fast"][m] - r["slow"][m]) / r["slow"][m] for r in done if r["slow"][m] > 0)
        s[m] = {
            "agree": sum(r["agree"][m] for r in done),
            "median_rel_diff": rel[len(rel) // 2] if rel else None,
            "p90_rel_diff": rel[int(len(rel) * 0.9)] if rel else None,
            "max_rel_diff": rel[-1] if rel else None,
        }
    return s


if __name__ == "__main__":
    sys.exit(main())
