#!/usr/bin/env python3
"""Split sweep output (problem JSON lines) into a training set and a held-out set, by problem.

Two kinds of held-out problems:
- whole model families (--families DIR NAME,...): every mm/addmm whose weight shape (N, K) is a
  layer of one of those families' shape sets (DIR/NAME.json), or whose backward GEMM (dX, dW)
  is, is held out, whichever plan entry produced it, so no layer of a held-out family is ever
  trained on;
- a random percentage of the rest, chosen by a SHA-1 of op, dtype, sizes and layouts, so the
  choice never changes when more problems are added and no problem can sit in both sets.
Each held-out line gets "heldout": "family:NAME" or "random". Problems that failed as a whole
(a problem-level "error") are dropped and counted.
Usage: split-heldout.py --percent 10 [--families DIR A,B,C] --train OUT.jsonl --heldout HELD.jsonl SHARD.jsonl...
"""
import argparse
import hashlib
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
from torch_diode._native import vocabulary  # noqa: E402 - the checkout's package, found above

# The fields that name a problem, core's (problemjson.h, through the library): the held-out choice
# hashes them in this order.
FIELDS = vocabulary()["problem_fields"]


def key(p):
    return "|".join(str(p.get(k)) for k in FIELDS)


def is_heldout(p, percent):
    return int(hashlib.sha1(key(p).encode()).hexdigest()[:8], 16) % 100 < percent


def family_layers(directory, names):
    """(N, K) -> family name, for the held-out families."""
    layers = {}
    for name in names:
        with open(f"{directory}/{name}.json") as f:
            for layer in json.load(f)["layers"]:
                layers.setdefault((layer["N"], layer["K"]), name)
    return layers


def family_of(p, held_layers):
    """The held-out family whose layer this mm/addmm is: its forward (N, K) = (out, in), or, for
    the backward GEMMs a plan's 'passes' make (docs/PLANS.md), dX = dY W as (M, in, out) and
    dW^T = X^T dY as (in, out, tokens) with a column-major A."""
    if p["op"] in ("bmm", "baddbmm"):  # attention, no layer of a family's shape set
        return None
    return (
        held_layers.get((p["N"], p["K"]))
        or held_layers.get((p["K"], p["N"]))
        or (held_layers.get((p["N"], p["M"])) if p.get("a_transposed") else None)
    )


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--percent", type=int, default=18)
    ap.add_argument("--families", nargs=2, metavar=("DIR", "NAMES"), help="hold out these families' layers")
    ap.add_argument("--train", required=True)
    ap.add_argument("--heldout", required=True)
    ap.add_argument("inputs", nargs="+")
    args = ap.parse_args()
    held_layers = family_layers(args.families[0], args.families[1].split(",")) if args.families else {}
    seen, train, held, failed = set(), [], [], 0
    for path in args.inputs:
        with open(path) as f:
            for line in f:
                if not line.strip():
                    continue
                p = json.loads(line)
                if p.get("error"):
                    failed += 1
                    continue
                # The same problem in the DEFAULT and the EXHAUSTIVE space is kept twice (and goes
                # the same way: the held-out choice is by problem, not by space).
                space = str(p.get("search_space", vocabulary()["search_spaces"][0])).upper()
                if (key(p), space) in seen:
                    continue
                seen.add((key(p), space))
                family = family_of(p, held_layers)
                if family:
                    p["heldout"] = f"family:{family}"
                    held.append(p)
                elif is_heldout(p, args.percent):
                    p["heldout"] = "random"
                    held.append(p)
                else:
                    train.append(p)

    def order(p):
        return tuple(p[k] for k in FIELDS) + (str(p.get("search_space", vocabulary()["search_spaces"][0])),)

    for path, rows in ((args.train, train), (args.heldout, held)):
        with open(path, "w") as f:
            for p in sorted(rows, key=order):
                f.write(json.dumps(p, separators=(",", ":")) + "\n")
    by_reason = {}
    for p in held:
        by_reason[p["heldout"]] = by_reason.get(p["heldout"], 0) + 1
    print(
        f"{len(train)} training problems -> {args.train}; {len(held)} held-out -> {args.heldout} "
        f"{json.dumps(by_reason, sort_keys=True)}; {failed} failed problems dropped",
        file=sys.stderr,
    )


if __name__ == "__main__":
    main()
