#!/usr/bin/env python3
"""Split sweep output (problem JSON lines) into a training set and a held-out set, by problem.

The held-out choice depends only on the problem itself (a SHA-1 of op, dtype, sizes and
layouts), so it never changes when more problems are added and no problem can sit in both sets.
Usage: split-heldout.py --percent 18 --train OUT.jsonl --heldout HELD.jsonl SHARD.jsonl...
"""
import argparse
import hashlib
import json
import sys


def key(p):
    return "|".join(str(p.get(k)) for k in ("op", "dtype", "B", "M", "N", "K", "a_transposed", "b_transposed"))


def is_heldout(p, percent):
    return int(hashlib.sha1(key(p).encode()).hexdigest()[:8], 16) % 100 < percent


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--percent", type=int, default=18)
    ap.add_argument("--train", required=True)
    ap.add_argument("--heldout", required=True)
    ap.add_argument("inputs", nargs="+")
    args = ap.parse_args()
    seen, train, held = set(), [], []
    for path in args.inputs:
        with open(path) as f:
            for line in f:
                if not line.strip():
                    continue
                p = json.loads(line)
                if key(p) in seen:
                    continue
                seen.add(key(p))
                (held if is_heldout(p, args.percent) else train).append(p)
    order = lambda p: (p["op"], p["dtype"], p["B"], p["M"], p["N"], p["K"], p["a_transposed"], p["b_transposed"])
    for path, rows in ((args.train, train), (args.heldout, held)):
        with open(path, "w") as f:
            for p in sorted(rows, key=order):
                f.write(json.dumps(p, separators=(",", ":")) + "\n")
    print(f"{len(train)} training problems -> {args.train}; {len(held)} held-out -> {args.heldout}", file=sys.stderr)


if __name__ == "__main__":
    main()
