"""The speed-up demo behind `diode demo`: compiles GEMMs (and a bf16 transformer MLP block) with
Inductor's default, max-autotune, and max-autotune with the selector (top_k 1 and 3, and over
the EXHAUSTIVE search space), and reports compile seconds and kernel time.

Kernel time is measured on the GPU, never with a Python clock around a call: the compiled
function is captured `--graph-calls` times in one CUDA graph, the graph is replayed between
CUDA events, and the median replay divided by the calls is reported.

  python3 -m torch_diode.demo --problems FILE.jsonl [--mlp] --json OUT.json [--cases-out PART.jsonl]

Each finished case is appended to --cases-out at once, so a run cut short keeps its cases and
a second run with the same file skips them (--resume).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys
import time
import traceback

os.environ.setdefault("TORCH_DIODE_AUTOREGISTER", "0")
# Every compile must really compile: cached graphs or autotune results would hide its cost.
os.environ.setdefault("TORCHINDUCTOR_FORCE_DISABLE_CACHES", "1")

MODES = ["default", "max-autotune", "plugin-top1", "plugin-top3", "plugin-top3-unfiltered", "exhaustive-plugin"]
# plugin-top3 keeps at most 3 candidates within install()'s default performance_threshold (1.1 x
# the best prediction); plugin-top3-unfiltered keeps the 3 best predictions whatever their gap.
UNFILTERED = float("inf")
SCHEMA = "diode-demo/1"


def log(msg):
    print(f"[diode demo] {msg}", file=sys.stderr, flush=True)


def gemm_case(p):
    from .worker import make_inputs

    fn, args = make_inputs(p)
    name = f"{p['op']} {p['dtype']} " + (f"B={p['B']} " if p["op"] == "bmm" else "") + \
        f"M={p['M']} N={p['N']} K={p['K']}" + (" At" if p.get("a_transposed") else "") + \
        (" Bt" if p.get("b_transposed") else "")
    return name, fn, args


def mlp_case(tokens=2048, d_model=4096, d_ff=14336):
    """A bf16 transformer MLP block made of nn.Linear (x @ W.t() + b: addmm with a column-major
    weight)."""
    import torch

    block = torch.nn.Sequential(torch.nn.Linear(d_model, d_ff), torch.nn.GELU(approximate="tanh"),
                                torch.nn.Linear(d_ff, d_model)).to("cuda", torch.bfloat16).eval()
    x = torch.randn(tokens, d_model, device="cuda", dtype=torch.bfloat16)

    def fn(inp):
        with torch.no_grad():
            return block(inp)

    return f"MLP block bf16 tokens={tokens} d_model={d_model} d_ff={d_ff}", fn, (x,)


def kernel_ms(fn, args, graph_calls=20, replays=15):
    """GPU time per call: `graph_calls` calls captured in one CUDA graph, median of replays."""
    import torch

    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):
            fn(*args)
    torch.cuda.current_stream().wait_stream(s)
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for _ in range(graph_calls):
            fn(*args)
    g.replay()
    torch.cuda.synchronize()
    times = []
    for _ in range(replays):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        g.replay()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) / graph_calls)
    del g
    return statistics.median(times)


def run_mode(mode, fn, args, package, graph_calls):
    import torch
    import torch._dynamo

    import torch_diode
    from torch_diode import _inductor_compat as compat

    torch_diode.uninstall()
    torch._dynamo.reset()
    result = {}
    if mode.startswith("plugin") or mode == "exhaustive-plugin":
        top_k = 1 if mode == "plugin-top1" else 3
        space = "EXHAUSTIVE" if mode == "exhaustive-plugin" else "DEFAULT"
        options = {"performance_threshold": UNFILTERED} if mode == "plugin-top3-unfiltered" else {}
        if not torch_diode.install(model=package, top_k=top_k, search_space=space, **options):
            return {"error": torch_diode.get_integration_status()["reason"]}
        torch_diode.reset_stats()
    compile_mode = None if mode == "default" else "max-autotune-no-cudagraphs"
    try:
        with compat.config_patch({"force_disable_caches": True}):
            compiled = torch.compile(fn, mode=compile_mode, dynamic=False, fullgraph=True)
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            compiled(*args)
            torch.cuda.synchronize()
            result["compile_s"] = time.perf_counter() - t0
        result["kernel_ms"] = kernel_ms(compiled, args, graph_calls)
        if torch_diode.get_integration_status()["installed"]:
            st = torch_diode.get_stats()
            result["selections"] = st["model_selections"]
            result["fallbacks"] = st["fallback_total"]
            result["candidates_scored"] = st["candidates_scored"]
            result["selector_us"] = st["mean_selector_us"] + st["mean_scoring_us"]
    except Exception as e:  # noqa: BLE001 - one failing mode must not end the demo
        result = {"error": f"{type(e).__name__}: {e}"}
        log(traceback.format_exc())
    finally:
        torch_diode.uninstall()
        torch._dynamo.reset()
        torch.cuda.empty_cache()
    return result


def summarize(cases, modes):
    summary = {}
    for mode in modes:
        if mode == "max-autotune":
            continue
        speedups, ratios = [], []
        for c in cases:
            r, ma = c["results"].get(mode, {}), c["results"].get("max-autotune", {})
            if "compile_s" in r and "compile_s" in ma and r["compile_s"] > 0:
                speedups.append(ma["compile_s"] / r["compile_s"])
            if "kernel_ms" in r and "kernel_ms" in ma and ma["kernel_ms"] > 0:
                ratios.append(r["kernel_ms"] / ma["kernel_ms"])
        if speedups or ratios:
            summary[mode] = {
                "cases": len(ratios),
                "compile_speedup_median": statistics.median(speedups) if speedups else None,
                "kernel_time_ratio_geomean": math.exp(sum(map(math.log, ratios)) / len(ratios)) if ratios else None,
                "kernel_time_ratio_worst": max(ratios) if ratios else None,
            }
    return summary


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python3 -m torch_diode.demo", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--problems", help="problem JSON lines (candidates are ignored)")
    ap.add_argument("--limit", type=int, default=0, help="only the first N problems")
    ap.add_argument("--mlp", action="store_true", help="also the bf16 transformer MLP block")
    ap.add_argument("--package", help=".diode package (default: the best for this GPU)")
    ap.add_argument("--modes", default=",".join(MODES))
    ap.add_argument("--graph-calls", type=int, default=20)
    ap.add_argument("--json", required=True, help="where to write the result (diode-demo/1)")
    ap.add_argument("--cases-out", help="append each finished case here (JSON lines); cases already there only "
                    "run the modes they lack")
    a = ap.parse_args(argv)
    modes = [m for m in a.modes.split(",") if m]
    bad = [m for m in modes if m not in MODES]
    if bad:
        ap.error(f"unknown modes {bad}; choose from {MODES}")

    from .worker import environment_problem

    why = environment_problem()
    if why:
        print(f"error: diode demo needs a GPU with torch and Triton: {why}", file=sys.stderr)
        return 3
    import torch

    import torch_diode

    from ._hardware import gpu_identity

    problems = []
    if a.problems:
        with open(a.problems) as f:
            for n, line in enumerate(f, 1):
                if line.strip():
                    p = json.loads(line)
                    p.pop("candidates", None)
                    p.setdefault("B", 1)
                    p.setdefault("a_transposed", False)
                    p.setdefault("b_transposed", False)
                    problems.append(p)
    if a.limit:
        problems = problems[: a.limit]
    done = {}
    if a.cases_out and os.path.exists(a.cases_out):
        with open(a.cases_out) as f:
            for line in f:
                if line.strip():
                    c = json.loads(line)
                    done[c["name"]] = c
    package = a.package
    if package is None:
        torch_diode.install()
        st = torch_diode.get_integration_status()
        torch_diode.uninstall()
        if not st["model"].get("ok"):
            print(f"error: no model package for this GPU: {st['reason']}", file=sys.stderr)
            return 2
        package = st["model"]["path"]
    specs = [("gemm", p) for p in problems] + ([("model", None)] if a.mlp else [])
    cases = []
    for i, (kind, p) in enumerate(specs, 1):
        name, fn, args = gemm_case(p) if kind == "gemm" else mlp_case()
        case = done.get(name) or {"name": name, "kind": kind, "results": {}}
        missing = [m for m in modes if m not in case["results"]]
        if not missing:  # finished by an earlier run
            cases.append(case)
            continue
        if p is not None:
            case["problem"] = p
        for mode in missing:
            case["results"][mode] = run_mode(mode, fn, args, package, a.graph_calls)
            r = case["results"][mode]
            log(f"[{i}/{len(specs)}] {name} {mode}: " + (r["error"] if "error" in r else
                f"compile {r['compile_s']:.2f} s, kernel {r['kernel_ms'] * 1000:.1f} us"))
        cases.append(case)
        if a.cases_out:  # a case that gained modes is appended again; the last line of a name wins
            with open(a.cases_out, "a") as f:
                f.write(json.dumps(case) + "\n")
        del fn, args
        torch.cuda.empty_cache()
    hw = gpu_identity(0)
    import triton

    out = {"schema": SCHEMA, "gpu": hw["gpu"], "torch": torch.__version__, "triton": triton.__version__,
           "package": os.path.abspath(package), "created_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
           "graph_calls": a.graph_calls, "modes": modes, "cases": cases, "summary": summarize(cases, modes)}
    with open(a.json, "w") as f:
        json.dump(out, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
