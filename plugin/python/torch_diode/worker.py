"""The inductor sweep worker: compiles one GEMM at a time with max-autotune and reports every
choice Inductor benchmarked, through Inductor's feedback saver.

Two ways to run it:
  python3 -m torch_diode.worker            JSON lines on stdin/stdout, driven by `diode sweep`
  python3 -m torch_diode.worker --plan P --out OUT.jsonl [--shard i/n] [--deadline-s S]
                                           alone on a GPU server; `diode import OUT.jsonl` later

Protocol (one JSON object per line; stdout carries nothing else, logs go to stderr):
  worker -> {"event": "hello", "ok": true, "hardware": {...}, "torch": "...", "triton": "..."}
            or {"event": "hello", "ok": false, "error": "..."} and exit 3
  runner -> {"id": 7, "problem": {...problem JSON...}, "search_space": "DEFAULT"}
  worker -> {"id": 7, "ok": true, "problem": {... "candidates": [...]}, "compile_s": 9.1}
            or {"id": 7, "ok": false, "error": "..."}
"""

import argparse
import json
import os
import re
import sys
import time
import traceback

# Caches would hide new measurements: every problem must really be autotuned.
os.environ.setdefault("TORCHINDUCTOR_FORCE_DISABLE_CACHES", "1")

MIN_TORCH = (2, 9)
DTYPE_NAMES = {"bf16": "bfloat16", "fp16": "float16", "fp32": "float32"}


from ._timings import candidate_from_choice  # noqa: E402


def hardware():
    from ._hardware import gpu_identity

    return gpu_identity(0)


def log(msg):
    print(f"[torch_diode.worker] {msg}", file=sys.stderr, flush=True)


def emit(out, obj):
    out.write(json.dumps(obj, separators=(",", ":"), allow_nan=False) + "\n")
    out.flush()


def environment_problem():
    """One clear sentence saying why this Python cannot run the inductor backend, or None."""
    try:
        import torch
    except Exception as e:  # noqa: BLE001 - any import failure is the message
        return f"cannot import torch in {sys.executable}: {e}"
    version = tuple(int(x) for x in re.findall(r"\d+", torch.__version__)[:2])
    if version < MIN_TORCH:
        return f"torch {torch.__version__} in {sys.executable} is too old; the inductor backend needs torch >= 2.9"
    try:
        import triton  # noqa: F401
    except Exception as e:  # noqa: BLE001
        return f"cannot import triton in {sys.executable}: {e}"
    if not torch.cuda.is_available():
        return f"torch {torch.__version__} sees no CUDA GPU (CUDA_VISIBLE_DEVICES={os.environ.get('CUDA_VISIBLE_DEVICES', 'unset')})"
    try:
        from torch._inductor.select_algorithm import add_feedback_saver  # noqa: F401
    except Exception as e:  # noqa: BLE001
        return f"torch {torch.__version__} has no Inductor feedback saver: {e}"
    return None


class Collector:
    """The feedback saver: torch 2.11 calls it with six positional arguments."""

    def __init__(self):
        self.events = []

    def __call__(self, timings, name, input_nodes, choices, profiled_time_fn, precompile_times, *rest):
        self.events.append((name, dict(timings), precompile_times))


def make_inputs(p):
    import torch
    dt = getattr(torch, DTYPE_NAMES[p["dtype"]])
    B, M, N, K = p["B"], p["M"], p["N"], p["K"]
    dev = "cuda"

    def mat(rows, cols, transposed, batch=None):
        shape = (cols, rows) if transposed else (rows, cols)
        if batch is not None:
            shape = (batch,) + shape
        t = torch.randn(shape, device=dev, dtype=dt)
        return t.transpose(-1, -2) if transposed else t

    if p["op"] == "bmm":
        a = mat(M, K, p["a_transposed"], B)
        b = mat(K, N, p["b_transposed"], B)
        return (lambda x, y: torch.bmm(x, y)), (a, b)
    a = mat(M, K, p["a_transposed"])
    b = mat(K, N, p["b_transposed"])
    if p["op"] == "addmm":
        bias = torch.randn((N,), device=dev, dtype=dt)
        return (lambda c, x, y: torch.addmm(c, x, y)), (bias, a, b)
    return (lambda x, y: torch.mm(x, y)), (a, b)


def fits_in_memory(p):
    import torch
    elem = 4 if p["dtype"] == "fp32" else 2
    B, M, N, K = p["B"], p["M"], p["N"], p["K"]
    need = elem * B * (M * K + K * N + 2 * M * N) + N * elem
    free, _total = torch.cuda.mem_get_info()
    return need, free


def measure(p, search_space, collector):
    """Compile the op with max-autotune and return its candidates with Inductor's timings."""
    import torch
    import torch._dynamo
    import torch._inductor.config as icfg

    need, free = fits_in_memory(p)
    if need * 1.2 > free:
        raise MemoryError(f"problem needs {need / 2**30:.1f} GiB of GPU memory; {free / 2**30:.1f} GiB free")
    torch._dynamo.reset()
    collector.events.clear()
    fn, args = make_inputs(p)
    t0 = time.perf_counter()
    with icfg.patch(max_autotune=True, max_autotune_gemm=True,
                    max_autotune_gemm_backends="ATEN,TRITON",
                    max_autotune_gemm_search_space=search_space,
                    force_disable_caches=True):
        compiled = torch.compile(fn, mode="max-autotune-no-cudagraphs", dynamic=False, fullgraph=True)
        compiled(*args)
        torch.cuda.synchronize()
    compile_s = time.perf_counter() - t0
    candidates = []
    failed = 0
    events = [e for e in collector.events if e[0] in (p["op"], "addmm", "mm", "bmm", "bias_addmm")] or collector.events
    for _name, timings, _pre in events:
        for choice, t in timings.items():
            cand = candidate_from_choice(choice)
            if t is None or not (t == t) or t == float("inf") or t <= 0:
                cand["time_ms"] = None
                cand["error"] = "no valid timing (failed to compile or run, e.g. out of shared memory)"
                failed += 1
            else:
                cand["time_ms"] = float(t)
            candidates.append(cand)
    if not candidates:
        # Inductor skips autotuning for some shapes (M=1 goes straight to ATen): time the ATen op
        # ourselves with CUDA events so the dataset still holds the kernel that will run.
        from triton.testing import do_bench
        t = do_bench(lambda: fn(*args), warmup=25, rep=100, return_mode="median")
        candidates.append({"kind": "aten", "name": f"extern_kernels.{p['op']}", "time_ms": float(t),
                           "timed_by": "worker do_bench (Inductor did not autotune this shape)"})
    del compiled, args
    torch.cuda.empty_cache()
    out = dict(p)
    out["search_space"] = search_space
    out["candidates"] = candidates
    return out, compile_s, failed


def setup():
    problem = environment_problem()
    if problem:
        return None, problem
    from torch._inductor.select_algorithm import add_feedback_saver

    # The sweep measures Inductor's own max-autotune: the selector must not filter its choices,
    # whatever `import torch_diode` auto-registered.
    from . import uninstall

    uninstall()
    collector = Collector()
    add_feedback_saver(collector)
    return collector, None


def versions():
    import torch
    import triton
    return {"torch": torch.__version__, "triton": triton.__version__, "python": sys.version.split()[0]}


def serve(stdin, stdout):
    collector, problem = setup()
    if problem:
        emit(stdout, {"event": "hello", "ok": False, "error": problem})
        return 3
    hello = {"event": "hello", "ok": True, "hardware": hardware(), "pid": os.getpid()}
    hello.update(versions())
    emit(stdout, hello)
    for line in stdin:
        line = line.strip()
        if not line:
            continue
        try:
            req = json.loads(line)
        except ValueError as e:
            emit(stdout, {"id": None, "ok": False, "error": f"request is not JSON: {e}"})
            continue
        if req.get("cmd") == "quit":
            break
        rid = req.get("id")
        try:
            result, compile_s, failed = measure(req["problem"], req.get("search_space", "DEFAULT"), collector)
            emit(stdout, {"id": rid, "ok": True, "problem": result, "compile_s": round(compile_s, 3),
                          "failed_choices": failed})
        except Exception as e:  # noqa: BLE001 - one bad problem must not end the sweep
            import torch
            msg = f"{type(e).__name__}: {e}".strip().splitlines()[0][:500]
            if isinstance(e, torch.cuda.OutOfMemoryError) or isinstance(e, MemoryError):
                msg = "out of GPU memory: " + msg
            log(traceback.format_exc())
            torch.cuda.empty_cache()
            emit(stdout, {"id": rid, "ok": False, "error": msg})
    return 0


def run_alone(args):
    from torch_diode import plan as planmod
    settings, problems = planmod.load(args.plan)
    index, count = (int(x) for x in args.shard.split("/"))
    mine = [p for i, p in enumerate(problems) if i % count == index]
    done = set()
    if os.path.exists(args.out):
        with open(args.out) as f:
            for line in f:
                try:
                    done.add(planmod.problem_key(json.loads(line)))
                except (ValueError, KeyError):
                    pass
    collector, problem = setup()
    if problem:
        log(problem)
        return 3
    hw, ver = hardware(), versions()
    log(f"{len(mine)} problems in shard {args.shard}, {len(done)} already done, on {hw['gpu']}")
    start = time.perf_counter()
    with open(args.out, "a") as out:
        for n, p in enumerate(mine):
            if planmod.problem_key(p) in done:
                continue
            if args.deadline_s and time.perf_counter() - start > args.deadline_s:
                log(f"deadline reached after {n} problems")
                break
            try:
                result, compile_s, failed = measure(p, settings["search_space"], collector)
                result.update({"hardware": hw, "versions": ver, "compile_s": round(compile_s, 3)})
            except Exception as e:  # noqa: BLE001
                result = dict(p, search_space=settings["search_space"], hardware=hw, versions=ver,
                              error=f"{type(e).__name__}: {e}".splitlines()[0][:500], candidates=[])
                compile_s = 0.0
            emit(out, result)
            log(f"{n + 1}/{len(mine)} {p['op']} {p['dtype']} B={p['B']} M={p['M']} N={p['N']} K={p['K']} "
                f"-> {len(result['candidates'])} choices in {compile_s:.1f} s")
    return 0


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python3 -m torch_diode.worker", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--plan", help="run this sweep plan alone and write problem JSON lines to --out")
    ap.add_argument("--out", help="output file (appended to; problems already in it are skipped)")
    ap.add_argument("--shard", default="0/1", help="i/n: run every n-th problem starting at i")
    ap.add_argument("--deadline-s", type=float, default=0, help="stop starting new problems after this many seconds")
    ap.add_argument("--check", action="store_true", help="print why this Python cannot run the backend, or 'ok'")
    args = ap.parse_args(argv)
    if args.check:
        problem = environment_problem()
        print(problem or "ok")
        return 3 if problem else 0
    if args.plan:
        if not args.out:
            ap.error("--plan needs --out")
        return run_alone(args)
    return serve(sys.stdin, sys.stdout)


if __name__ == "__main__":
    sys.exit(main())
