#!/usr/bin/env python3
"""Does a GEMM's in-graph warm time depend on what ran before it? For each problem: its inputs made
(just written, so in L2), timed; L2 flushed, timed; the inputs rewritten in place, timed. With the
timer as shipped every timing starts from a flushed L2 and the three agree; with --as-before the
timer starts from whatever L2 its predecessor left, as the stores shipped were measured
(docs/BENCHMARKS.md, "Where a time starts").
Usage: l2-history.py [--as-before] OP:DTYPE:M:N:K ...   (b column-major, as nn.Linear's weight)
"""
import argparse
import sys


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--as-before", action="store_true", help="start each timing from the L2 the last one left")
    ap.add_argument("problems", nargs="+", help="OP:DTYPE:M:N:K, e.g. mm:fp32:1:896:4864")
    a = ap.parse_args()
    import torch

    from torch_diode.tools import ingraph
    from torch_diode.tools.worker import environment_problem, make_inputs

    why = environment_problem()
    if why:
        print(f"error: needs a GPU with torch and Triton: {why}", file=sys.stderr)
        return 3
    ingraph.START_FLUSHED = not a.as_before
    timer = ingraph.GraphTimer()
    print("problem | just written | after a flush | rewritten (warm us)")
    for spec in a.problems:
        try:
            op, dtype, m, n, k = spec.split(":")
            p = dict(op=op, dtype=dtype, B=1, M=int(m), N=int(n), K=int(k), a_transposed=False, b_transposed=True)
        except ValueError:
            ap.error(f"'{spec}' is not OP:DTYPE:M:N:K")
        fn, args = make_inputs(p)

        def warm():
            with timer.stream_ctx():
                return 1000 * timer.time(lambda: fn(*args), cold=False)[0]

        written = warm()
        timer.flush()
        flushed = warm()
        for x in args:
            x.mul_(1.0)
        torch.cuda.synchronize()
        print(f"{spec} | {written:.2f} | {flushed:.2f} | {warm():.2f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
