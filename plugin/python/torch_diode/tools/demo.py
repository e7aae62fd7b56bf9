"""The speed-up demo behind `diode demo`: compiles GEMMs and real model blocks (torch_diode.tools.blocks)
with plain torch.compile, max-autotune, and max-autotune with the selector (its defaults, the cold
regime, top_k 3, EXHAUSTIVE), and reports compile seconds and kernel time.

Kernel time is measured on the GPU exactly as the worker measures its baselines
(torch_diode.tools.ingraph.GraphTimer): calls captured in a CUDA graph and replayed between CUDA events,
warm (back to back) and cold (an L2 flush before each call, timed alone and subtracted: weights
evicted from L2).

  python3 -m torch_diode.tools.demo --problems FILE.jsonl [--blocks] --json OUT.json [--cases-out PART.jsonl]
  python3 -m torch_diode.tools.demo --models table --processes 3 --breakdown --json OUT.json

Each finished case is appended to --cases-out at once, so a run cut short keeps its cases and
a second run with the same file skips them. With --processes N the whole run is repeated in N
processes one after another, each timing a case's modes in another order (process i starts at the
i-th mode); the result keeps each mode's median over the processes and its spread (min, max).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import statistics
import sys
import time
import traceback

from .._inductor_compat import FIRST_RUN_AUTOTUNE

os.environ.setdefault("TORCH_DIODE_AUTOREGISTER", "0")
# Every compile must really compile: cached graphs or autotune results would hide its cost.
os.environ.setdefault("TORCHINDUCTOR_FORCE_DISABLE_CACHES", "1")
# (and each compile runs under config_patch(force_disable_caches=True) as well)

# Each mode: how the function is compiled. Plugin modes install the selector with these options
# (the rest at install()'s defaults: top_k 1, the calibrated ATen-guard margin, regime warm).
MODES = {
    "default": None,  # plain torch.compile: no autotuning, ATen (cuBLAS) GEMMs
    "max-autotune": None,  # Inductor compiles and benchmarks every candidate
    "plugin": {},  # max-autotune with the selector at its defaults
    "plugin-cold": {"regime": "cold"},
    "plugin-top3": {"top_k": 3},  # Inductor's own benchmark picks among the 3 best predictions
    "plugin-no-guard": {"margin": 0.0},  # the model's arg-min, no ATen guard
    "exhaustive-plugin": {"search_space": "EXHAUSTIVE"},
    # max-autotune as users run it (pointwise and reduction kernels tuned too), with the selector
    # deciding the GEMMs instead of Inductor's GEMM benchmark
    "plugin-max-autotune": {},
    # The selector with Inductor's coordinate-descent tuning of pointwise and reduction kernels
    # (which also decomposes GEMMs with M or N of 1 into a fused multiply and sum), no max-autotune
    "plugin-cdt": {},
    # Plain torch.compile with coordinate-descent tuning alone (no selector, no GEMM autotuning)
    "cdt": None,
    # The selector with Inductor's wider pointwise and reduction autotuning (max_autotune_pointwise:
    # several configs for every reduction and foreach kernel, benchmarked on their first run), no
    # coordinate descent and no decomposition of small-M GEMMs
    "plugin-pw": {},
    # The selector with Inductor's first-run benchmark of a pointwise kernel's configurations left on,
    # as plain torch.compile has it (installed, the plugin turns it off where it decides configurations)
    "plugin-first-run-tuning": {},
}
# Modes compiled with mode="max-autotune-no-cudagraphs"; the other plugin modes with
# max_autotune_gemm only.
FULL_AUTOTUNE = ("max-autotune", "plugin-max-autotune")
# Extra Inductor options of a mode, on top of the above.
MODE_CONFIG = {
    "plugin-cdt": {"coordinate_descent_tuning": True},
    "cdt": {"coordinate_descent_tuning": True},
    "plugin-pw": {"max_autotune_pointwise": True},
    "plugin-first-run-tuning": {FIRST_RUN_AUTOTUNE: True},
}
GEMM_MODES = ["default", "max-autotune", "plugin", "plugin-cold", "plugin-top3"]
MODEL_MODES = ["default", "max-autotune", "plugin"]
BLOCK_MODES = ["default", "max-autotune", "plugin", "plugin-top3", "exhaustive-plugin"]
SCHEMA = "diode-demo/3"


def log(msg):
    print(f"[diode demo] {msg}", file=sys.stderr, flush=True)


def gemm_case(p):
    from .._selector import BATCHED_OPS
    from .worker import make_inputs

    fn, args = make_inputs(p)
    name = (
        f"{p['op']} {p['dtype']} "
        + (f"B={p['B']} " if p["op"] in BATCHED_OPS else "")
        + f"M={p['M']} N={p['N']} K={p['K']}"
        + (" At" if p.get("a_transposed") else "")
        + (" Bt" if p.get("b_transposed") else "")
    )
    return name, fn, args


def mlp_case(tokens=2048, d_model=4096, d_ff=14336):
    """A bf16 transformer MLP block made of nn.Linear (x @ W.t() + b: addmm with a column-major
    weight)."""
    import torch

    block = (
        torch.nn.Sequential(
            torch.nn.Linear(d_model, d_ff), torch.nn.GELU(approximate="tanh"), torch.nn.Linear(d_ff, d_model)
        )
        .to("cuda", torch.bfloat16)
        .eval()
    )
    x = torch.randn(tokens, d_model, device="cuda", dtype=torch.bfloat16)

    def fn(inp):
        with torch.no_grad():
            return block(inp)

    return f"MLP block bf16 tokens={tokens} d_model={d_model} d_ff={d_ff}", fn, (x,)


def kernel_times(fn, args, timer):
    """(warm_ms, cold_ms) per call, timed as the worker times its baselines (torch_diode.tools.ingraph:
    calls captured in a CUDA graph; cold: an L2 flush before each call, subtracted)."""
    with timer.stream_ctx():
        return timer.time(lambda: fn(*args))


class FunctionCase:
    """A GEMM or a block: a function compiled whole and timed in a CUDA graph."""

    def __init__(self, fn, args):
        self.fn, self.args = fn, args

    def compile(self, **kwargs):
        import torch

        return torch.compile(self.fn, dynamic=False, fullgraph=True, **kwargs)

    def first_call(self, compiled):
        compiled(*self.args)

    def times(self, compiled, timer):
        return kernel_times(compiled, self.args, timer)


class ModelCase:
    """A model step of torch_diode.tools.models (a forward, or a training step: forward, backward,
    optimizer), timed in a CUDA graph; the forward's output checked against eager."""

    def __init__(self, scenario):
        self.sc = scenario
        self.reference = None if scenario.training else scenario.fn(*scenario.args)

    def compile(self, **kwargs):
        from .models import compile_scenario

        return compile_scenario(self.sc, **kwargs)

    def first_call(self, compiled):
        compiled(*self.sc.args)

    def times(self, compiled, timer):
        from .models import step_times

        return step_times(self.sc, compiled, timer)

    def check(self, compiled):
        from .models import check_output

        return None if self.reference is None else check_output(self.sc, compiled, self.reference)

    def breakdown(self, compiled):
        from .models import kernel_breakdown

        return kernel_breakdown(self.sc, compiled)


def run_mode(mode, case, package, timer, decisions=None, breakdown=False):
    """Compiles and times `case` in `mode`. With a list as `decisions`, a plugin mode appends each
    GEMM decision it made (torch_diode.record_decisions) to it."""
    import torch
    import torch._dynamo

    import torch_diode
    from .. import _inductor_compat as compat

    torch_diode.uninstall()
    torch._dynamo.reset()
    result = {}
    options = MODES[mode]
    if options is not None:
        # regime "cold" picks the cold package; an explicit --package pins one for every mode
        model = None if (package is None or "regime" in options) else package
        if not torch_diode.install(model=model, **options):
            return {"error": torch_diode.get_integration_status()["reason"]}
        result["package"] = os.path.basename(torch_diode.get_integration_status()["model"]["path"])
        torch_diode.reset_stats()
    # max-autotune: the whole of Inductor's autotuning, as users run it. Plugin modes: plain
    # torch.compile, which the installed selector turns GEMM autotuning on for and then decides,
    # with the small-M forms and kernel configurations the package decides (and without Inductor's
    # first-run tuning of pointwise kernels where it decides configurations).
    # plugin-max-autotune: max-autotune with the selector (Inductor still tunes the pointwise and
    # reduction kernels, which is where max-autotune's remaining block wins were measured).
    kwargs = {"mode": "max-autotune-no-cudagraphs"} if mode in FULL_AUTOTUNE else {}
    if mode in MODE_CONFIG:
        kwargs["options"] = dict(MODE_CONFIG[mode])
    from torch._dynamo.utils import counters

    counters.clear()
    recording = (
        torch_diode.record_decisions() if decisions is not None and options is not None else contextlib.nullcontext([])
    )
    try:
        with compat.config_patch({"force_disable_caches": True}), recording as made:
            compiled = case.compile(**kwargs)
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            case.first_call(compiled)
            torch.cuda.synchronize()
            result["compile_s"] = time.perf_counter() - t0
        if decisions is not None:
            from .._decisions import gemm_decisions

            decisions.extend(dict(d, mode=mode) for d in gemm_decisions(made))
        result["kernel_ms"], result["kernel_cold_ms"] = case.times(compiled, timer)
        if hasattr(case, "check"):
            result["max_rel_error"] = case.check(compiled)
        if breakdown and hasattr(case, "breakdown"):
            result["breakdown"] = case.breakdown(compiled)
        # Inductor's own count of GEMM lowerings it benchmarked (select_algorithm's autotune).
        result["inductor_counters"] = {
            k: v
            for k, v in counters["inductor"].items()
            if "select_algorithm" in k or "decompose" in k or "coordesc" in k
        }
        if torch_diode.get_integration_status()["installed"]:
            st = torch_diode.get_stats()
            result["selections"] = st["model_selections"]
            result["lowerings"] = st["lowerings"]
            result["not_selected"] = st["not_selected"]
            result["autotuned"] = st["autotuned"]
            result["lowerings_by_thread"] = st["lowerings_by_thread"]
            result["fallbacks"] = st["fallback_total"]
            result["candidates_scored"] = st["candidates_scored"]
            result["selector_us"] = st["mean_selector_us"] + st["mean_scoring_us"]
            result["scoring_us"] = st["mean_scoring_us"]
            result["decisions"] = st.get("decisions", {})
            # The selector's whole time in this compile: GEMM decisions and the decisions beside them.
            result["selector_s"] = (
                st["selector_time_s"]
                + st["scoring_time_s"]
                + sum(d.get("time_s", 0.0) for d in result["decisions"].values())
            )
    except Exception as e:  # one failing mode must not end the demo
        result = {"error": f"{type(e).__name__}: {e}"}
        log(traceback.format_exc())
    finally:
        torch_diode.uninstall()
        torch._dynamo.reset()
        torch.cuda.empty_cache()
    return result


def distinct_problems(lines):
    """Each line's problem alone (not its candidates, nor a recorded decision's selector, case and
    mode), in file order, a GEMM listed twice (a model step's decisions repeat its layers) once."""
    from .._selector import PROBLEM_KEYS

    problems = ({k: p[k] for k in PROBLEM_KEYS} for p in lines)
    return list({json.dumps(q, sort_keys=True): q for q in problems}.values())


def _geomean(xs):
    return math.exp(sum(map(math.log, xs)) / len(xs)) if xs else None


def summarize(cases, modes):
    """Per mode, against plain torch.compile ("default") and max-autotune: speed-up x (reference
    time / mode time, higher is better) of kernels warm and cold, geomean and worst; compile
    speed-up against max-autotune (median)."""
    summary = {}
    for mode in modes:
        row = {"cases": 0}
        for ref in ("default", "max-autotune"):
            for key, label in (("kernel_ms", "warm"), ("kernel_cold_ms", "cold")):
                ups = []
                for c in cases:
                    r, b = c["results"].get(mode, {}), c["results"].get(ref, {})
                    if r.get(key) and b.get(key):
                        ups.append(b[key] / r[key])
                if ups:
                    row["cases"] = max(row["cases"], len(ups))
                    row[f"speedup_vs_{ref}_{label}_geomean"] = _geomean(ups)
                    row[f"speedup_vs_{ref}_{label}_worst"] = min(ups)
        comp = [
            c["results"]["max-autotune"]["compile_s"] / c["results"][mode]["compile_s"]
            for c in cases
            if c["results"].get(mode, {}).get("compile_s") and c["results"].get("max-autotune", {}).get("compile_s")
        ]
        if comp:
            row["compile_speedup_vs_max_autotune_median"] = statistics.median(comp)
        sel = [c["results"][mode]["selector_us"] for c in cases if c["results"].get(mode, {}).get("selector_us")]
        if sel:
            row["selector_us_median"] = statistics.median(sel)
        summary[mode] = row
    return summary


def _model_specs(text):
    from .models import DTYPES, SCENARIOS, TABLE_SCENARIOS, parse_scenario

    if not text or text == "all":
        return [(n, DTYPES[0]) for n in SCENARIOS]
    if text == "table":
        return [(n, DTYPES[0]) for n in TABLE_SCENARIOS]
    specs = []
    for item in text.split(","):
        name, _, dtype = item.partition(":")
        dtype = dtype or DTYPES[0]
        try:
            parse_scenario(name)
        except ValueError as e:
            raise ValueError(f"--models entry '{item}': {e}") from None
        if dtype not in DTYPES:
            raise ValueError(f"--models entry '{item}': DTYPE '{dtype}' is neither {' nor '.join(DTYPES)}")
        specs.append((name, dtype))
    return specs


def _block_specs(text):
    from .blocks import DEFAULT_CASES

    if not text:
        return list(DEFAULT_CASES)
    specs = []
    for item in text.split(","):
        parts = item.split(":")
        if len(parts) != 4 or not parts[2].isdigit():
            raise ValueError(
                f"--block-cases entry '{item}': expected BLOCK:PHASE:TOKENS:DTYPE, e.g. llama:decode:8:bf16"
            )
        specs.append((parts[0], parts[1], int(parts[2]), parts[3]))
    return specs


def _without(argv, flag, takes_value=True):
    out, skip = [], False
    for x in argv:
        if skip:
            skip = False
            continue
        if x == flag:
            skip = takes_value
            continue
        if x.startswith(flag + "="):
            continue
        out.append(x)
    return out


def _spread(values):
    return [min(values), max(values)] if values else None


def merge_processes(parts: list, modes: list) -> dict:
    """One result of several processes' results: per case and mode the median kernel and compile
    times with their spreads [min, max] and the number of processes; the rest (breakdown, counters)
    from the process whose warm time is the median."""
    first = parts[0]
    by_name: dict = {}
    for part in parts:
        for c in part["cases"]:
            by_name.setdefault(c["name"], []).append(c)
    cases = []
    for name, copies in by_name.items():
        case = {k: v for k, v in copies[0].items() if k != "results"}
        case["results"] = {}
        for mode in modes:
            runs = [c["results"][mode] for c in copies if mode in c.get("results", {})]
            ok = [r for r in runs if "error" not in r and r.get("kernel_ms")]
            if not ok:
                if runs:
                    case["results"][mode] = runs[0]
                continue
            ok.sort(key=lambda r: r["kernel_ms"])
            merged = dict(ok[len(ok) // 2])
            for key in ("kernel_ms", "kernel_cold_ms", "compile_s", "selector_s"):
                vals = [r[key] for r in ok if r.get(key) is not None]
                if vals:
                    merged[key] = statistics.median(vals)
                    merged[f"{key}_spread"] = _spread(vals)
            merged["processes"] = len(ok)
            case["results"][mode] = merged
        cases.append(case)
    out = dict(first, cases=cases, summary=summarize(cases, modes), processes=len(parts))
    out["mode_order"] = "process i times each case's modes starting at the i-th of " + ", ".join(modes)
    return out


def process_waves(processes: int, gpus: list) -> list:
    """--processes N over --gpus: waves of processes run at once, each [(process, GPU)]; one GPU a process
    of a wave, a wave as many as there are GPUs. Without GPUs one process a wave on the environment's."""
    if not gpus:
        return [[(i, None)] for i in range(processes)]
    return [
        [(i, gpus[i % len(gpus)]) for i in range(w, min(w + len(gpus), processes))]
        for w in range(0, processes, len(gpus))
    ]


def run_processes(a, argv, modes, gpus) -> int:
    """--processes N: the same run in N child processes, one after another or, with `gpus` (--gpus), as
    many at once as there are GPUs (each on its own), then merged; each process's decisions go to a file
    of its own, appended to --decisions-out in process order at the end."""
    import subprocess

    base = argv
    for flag in ("--processes", "--json", "--cases-out", "--gpus", "--decisions-out"):
        base = _without(base, flag)
    parts = []
    for wave in process_waves(a.processes, gpus):
        running = []
        for i, gpu in wave:
            part = f"{a.json}.process{i}"
            cmd = [sys.executable, "-m", "torch_diode.tools.demo", *base, "--json", part, "--rotation", str(i)]
            if a.cases_out:
                cmd += ["--cases-out", f"{a.cases_out}.process{i}"]
            if a.decisions_out:
                cmd += ["--decisions-out", f"{a.decisions_out}.process{i}"]
            env = dict(os.environ, CUDA_VISIBLE_DEVICES=gpu) if gpu is not None else None
            where = f" on GPU {gpu}" if gpu is not None else ""
            log(f"process {i + 1} of {a.processes}{where}: modes from {modes[i % len(modes)]}")
            running.append((i, part, subprocess.Popen(cmd, env=env)))
        for i, part, child in running:
            rc = child.wait()
            if rc != 0:
                log(f"process {i + 1} ended with exit code {rc}")
            if os.path.exists(part):
                with open(part) as f:
                    parts.append(json.load(f))
    made = [f"{a.decisions_out}.process{i}" for i in range(a.processes)] if a.decisions_out else []
    made = [m for m in made if os.path.exists(m)]
    if made:
        with open(a.decisions_out, "a") as out:
            for mine in made:
                with open(mine) as f:
                    out.write(f.read())
                os.remove(mine)
    if not parts:
        print("error: no process finished", file=sys.stderr)
        return 1
    with open(a.json, "w") as f:
        json.dump(merge_processes(parts, modes), f, indent=1)
    return 0


def main(argv=None):
    from .models import DTYPES, SCENARIO_GRAMMAR, SCENARIOS

    ap = argparse.ArgumentParser(
        prog="python3 -m torch_diode.tools.demo",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument("--problems", help="problem JSON lines (candidates are ignored)")
    ap.add_argument("--limit", type=int, default=0, help="only the first N problems")
    ap.add_argument("--blocks", action="store_true", help="the model blocks (torch_diode.tools.blocks.DEFAULT_CASES)")
    ap.add_argument("--block-cases", help="instead of the default blocks: BLOCK:PHASE:TOKENS:DTYPE,...")
    ap.add_argument("--mlp", action="store_true", help="also the bf16 transformer MLP block")
    ap.add_argument(
        "--models",
        nargs="?",
        const="all",
        help="whole model steps (torch_diode.tools.models): all, or SCENARIO[:DTYPE],... (decode with a KV "
        f"cache, prefill, a training step, a ViT block), SCENARIO of the form {SCENARIO_GRAMMAR} (all: "
        f"{', '.join(SCENARIOS)}), DTYPE "
        f"{' or '.join(DTYPES)} (default {DTYPES[0]})",
    )
    ap.add_argument(
        "--package",
        help=".diode package for every plugin mode but plugin-cold (default: the best "
        "for this GPU and the mode's regime)",
    )
    ap.add_argument(
        "--modes",
        help=f"comma-separated, from {', '.join(MODES)} (default: GEMMs "
        f"{','.join(GEMM_MODES)}; blocks {','.join(BLOCK_MODES)})",
    )
    ap.add_argument(
        "--deadline-s",
        type=float,
        default=0,
        help="start no new case after this many seconds (the result keeps what finished)",
    )
    ap.add_argument("--json", required=True, help=f"where to write the result ({SCHEMA})")
    ap.add_argument(
        "--decisions-out",
        help="append the GEMM decisions of the plugin modes here (torch_diode.record_decisions' problem JSON "
        "lines, each with its case and mode): what the selector kept for each lowering it decided or left to "
        "plain's kernel (a lowering that offers only ATen is not recorded)",
    )
    ap.add_argument(
        "--processes",
        type=int,
        default=1,
        help="repeat the run in this many processes, one after another (several at once with --gpus), each "
        "starting at another mode; the result keeps each mode's median over them and its spread",
    )
    ap.add_argument(
        "--gpus",
        default="",
        help="with --processes: run as many processes at once as GPUs are named here (comma-separated, as "
        "CUDA_VISIBLE_DEVICES names them), each on its own; they share the CPUs, which slows compiles",
    )
    ap.add_argument("--rotation", type=int, default=0, help=argparse.SUPPRESS)
    ap.add_argument(
        "--breakdown",
        action="store_true",
        help="model scenarios: also each mode's kernels (torch.profiler), by name and category: where the time goes",
    )
    ap.add_argument(
        "--cases-out",
        help="append each finished case here (JSON lines); cases already there only " "run the modes they lack",
    )
    a = ap.parse_args(argv)
    started = time.monotonic()
    default_modes = (
        MODEL_MODES
        if a.models and not (a.problems or a.blocks or a.block_cases)
        else BLOCK_MODES
        if (a.blocks or a.block_cases) and not a.problems
        else GEMM_MODES
    )
    modes = [m for m in (a.modes or ",".join(default_modes)).split(",") if m]
    bad = [m for m in modes if m not in MODES]
    if bad:
        ap.error(f"unknown modes {bad}; choose from {', '.join(MODES)}")
    if a.processes < 1:
        ap.error("--processes must be at least 1")
    if a.gpus and a.processes < 2:
        ap.error("--gpus spreads the processes of --processes N (N at least 2) over GPUs")
    gpus = [g.strip() for g in a.gpus.split(",")] if a.gpus else []
    if any(not g for g in gpus) or len(set(gpus)) != len(gpus):
        ap.error(f"--gpus {a.gpus!r}: name each GPU once, comma-separated")
    if a.processes > 1:
        return run_processes(a, argv if argv is not None else sys.argv[1:], modes, gpus)
    # Process i of a repeated run times each case's modes starting at the i-th.
    order = modes[a.rotation % len(modes) :] + modes[: a.rotation % len(modes)]
    try:
        blocks = _block_specs(a.block_cases) if (a.blocks or a.block_cases) else []
        model_specs = _model_specs(a.models) if a.models else []
    except ValueError as e:
        ap.error(str(e))
    if not a.problems and not blocks and not a.mlp and not model_specs:
        ap.error("give --problems FILE, --blocks, --models, --mlp, or several")

    from .._native import NativeError, read_problems, vocabulary
    from .worker import environment_problem, use_vocabulary

    problems = []
    if a.problems:
        try:
            read = read_problems(a.problems)  # core's reader: the file, line and field at fault
        except NativeError as e:
            print(f"error: {e}", file=sys.stderr)
            return 2
        problems = distinct_problems(read)
        use_vocabulary(vocabulary())  # the dtype names make_inputs builds the problems' operands with
    why = environment_problem()
    if why:
        print(f"error: diode demo needs a GPU with torch and Triton: {why}", file=sys.stderr)
        return 3
    import torch

    import torch_diode

    from .._hardware import gpu_identity
    from .blocks import block_case
    from .ingraph import GraphTimer

    if a.limit:
        problems = problems[: a.limit]
    done = {}
    if a.cases_out and os.path.exists(a.cases_out):
        with open(a.cases_out) as f:
            for line in f:
                if line.strip():
                    c = json.loads(line)
                    done[c["name"]] = c
    torch_diode.install(model=a.package)
    st = torch_diode.get_integration_status()
    torch_diode.uninstall()
    if not st["model"].get("ok"):
        print(f"error: no model package for this GPU: {st['reason']}", file=sys.stderr)
        return 2
    package = a.package
    timer = GraphTimer()
    specs = (
        [("gemm", p) for p in problems]
        + [("block", b) for b in blocks]
        + ([("mlp", None)] if a.mlp else [])
        + [("model", m) for m in model_specs]
    )
    cases = []
    for i, (kind, p) in enumerate(specs, 1):
        if kind == "model":
            from .models import scenario

            name = f"{p[0]} {p[1]}"
            if all(m in done.get(name, {}).get("results", {}) for m in modes):
                cases.append(done[name])
                continue
            sc = scenario(*p)
            runner = ModelCase(sc)
        else:
            if kind == "gemm":
                name, fn, args = gemm_case(p)
            elif kind == "block":
                name, fn, args = block_case(*p)
            else:
                name, fn, args = mlp_case()
                kind = "model"
            runner = FunctionCase(fn, args)
        case = done.get(name) or {"name": name, "kind": kind, "results": {}}
        missing = [m for m in modes if m not in case["results"]]
        if not missing:  # finished by an earlier run
            cases.append(case)
            continue
        if a.deadline_s and time.monotonic() - started > a.deadline_s:
            log(f"deadline: {len(specs) - i + 1} cases left for a later run")
            break
        if kind == "gemm":
            case["problem"] = p
        elif kind == "block":
            case["block"] = dict(zip(("block", "phase", "tokens", "dtype"), p))
        elif kind == "model" and p is not None:
            case["model"] = dict(runner.sc.params, scenario=p[0], training=runner.sc.training)
        decisions = [] if a.decisions_out else None
        for mode in [m for m in order if m in missing]:
            case["results"][mode] = run_mode(mode, runner, package, timer, decisions, a.breakdown)
            r = case["results"][mode]
            log(
                f"[{i}/{len(specs)}] {name} {mode}: "
                + (
                    r["error"]
                    if "error" in r
                    else f"compile {r['compile_s']:.2f} s, kernel {r['kernel_ms'] * 1000:.1f} us warm, "
                    + (f"{r['kernel_cold_ms'] * 1000:.1f} us cold" if r.get("kernel_cold_ms") else "no cold time")
                )
            )
        cases.append(case)
        if decisions:
            with open(a.decisions_out, "a") as f:
                for d in decisions:
                    f.write(json.dumps(dict(d, case=name), separators=(",", ":")) + "\n")
        if a.cases_out:  # a case that gained modes is appended again; the last line of a name wins
            with open(a.cases_out, "a") as f:
                f.write(json.dumps(case) + "\n")
        del runner
        torch.cuda.empty_cache()
    hw = gpu_identity(0)
    import triton

    out = {
        "schema": SCHEMA,
        "gpu": hw["gpu"],
        "torch": torch.__version__,
        "triton": triton.__version__,
        "package": st["model"]["path"],
        "created_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "timing": "torch_diode.tools.ingraph: CUDA graph, warm and L2-flushed (cold), as the worker's baselines",
        "modes": modes,
        "mode_options": {m: MODES[m] for m in modes},
        "cases": cases,
        "summary": summarize(cases, modes),
    }
    with open(a.json, "w") as f:
        json.dump(out, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
