"""The inductor sweep worker: for each GEMM problem it measures what a compiled model runs.

For every candidate Inductor offers in the search space (ATen and each Triton template config),
max-autotune compiles them all (in parallel, as it always does) and a feedback saver keeps each
one's launch function and Inductor's own benchmark tensors. After the compile, each candidate's
kernel is timed alone in CUDA graphs (`graph_warm`, `graph_cold`: see ingraph.py) and its
output checked against ATen's; Inductor's own number is kept as `inductor_autotune`. Two
baselines are timed the same way: the op compiled by plain `torch.compile` (no autotune) and
by max-autotune (its pick), with their compile seconds. Output: problem JSON version 2.

It measures what it is told and nothing else: `diode sweep` (core/sweep/diode/sweep/sweeprunner.cpp) is the
one driver (which problems, in which order, how many workers a GPU, shards, deadlines, resume,
timeouts, restarts); on a GPU server without the workbench, build `diode` alone (docs/CLI.md,
"Sweeping on a GPU server") and run `diode sweep` there.
  python3 -m torch_diode.tools.worker            JSON lines on stdin/stdout, driven by `diode sweep`
  python3 -m torch_diode.tools.worker --check    why this Python cannot measure, or 'ok'

Protocol (one JSON object per line; stdout carries nothing else: what libraries print goes to stderr, the log):
  worker -> {"event": "hello", "ok": true, "hardware": {...}, "torch": "...", "triton": "...",
             "methods": ["graph_warm", "graph_cold", "inductor_autotune"]}
            or {"event": "hello", "ok": false, "error": "..."} and exit 3
  runner -> {"id": 7, "problem": {...problem JSON...}, "search_space": "DEFAULT",
             "inductor_benchmark": true, "exhaustive_configs": 0, "aten_only": false,   (the plan's choices)
             "sample_seed": the problem's sampling hash, "vocabulary": {...core's names: dtypes, ...}}
  worker -> {"id": 7, "ok": true, "problem": {... "candidates": [...], "baselines": {...}}, "compile_s": 9.1}
            or {"id": 7, "ok": false, "error": "..."}
"""

import argparse
import contextlib
import functools
import json
import os
import re
import sys
import time
import traceback

from .. import _inductor_compat as compat
from . import ingraph
from ._timings import candidate_from_choice
from .ingraph import gpu_lock

# The worker times Inductor alone: the plugin must not install its selector into the compiles
# it measures. Importing torch_diode would, unless told not to: diode sweep tells its workers
# (TORCH_DIODE_AUTOREGISTER=0), this line tells what imports the package after this module, and
# main() takes out what `python3 -m torch_diode.tools.worker` started by hand installed (the package's
# __init__ runs before this module).
os.environ.setdefault("TORCH_DIODE_AUTOREGISTER", "0")

# The timing methods this worker writes into each candidate's "times" (docs/FORMATS.md).
METHODS = ("graph_warm", "graph_cold", "inductor_autotune")
# Core's names: the dtypes ({name: torch's name}, {name: bytes an element}) and the candidate key,
# from the runner's request (its "vocabulary", what diode_vocabulary reports); a tool calling
# measure() sets them with use_vocabulary(torch_diode._native.vocabulary()).
DTYPE_NAMES: dict = {}
DTYPE_BYTES: dict = {}
VOCABULARY: dict = {}  # the whole of it (the candidate key's fields, for candidate_from_choice)


def use_vocabulary(vocabulary: dict) -> None:
    """Takes core's names (the runner's request, or the library's diode_vocabulary)."""
    VOCABULARY.clear()
    VOCABULARY.update(vocabulary)
    DTYPE_NAMES.clear()
    DTYPE_NAMES.update({d["name"]: d["torch"] for d in vocabulary["dtypes"]})
    DTYPE_BYTES.clear()
    DTYPE_BYTES.update({d["name"]: d["bytes"] for d in vocabulary["dtypes"]})


# A candidate whose output differs from ATen's by more than this (max |diff| / max |ATen|) is wrong.
TOLERANCE = {"bf16": 3e-2, "fp16": 1e-2, "fp32": 1e-3, "fp32_tf32": 1e-2}
# baddbmm's scalars, as ALiBi attention calls it (Bloom: beta 1, alpha 1/sqrt(head_dim), and the
# head dim is the problem's K): out = BETA * addend + K**-0.5 * (A @ B), the addend (B, 1, N).
BADDBMM_BETA = 1.0


def baddbmm_alpha(p) -> float:
    return float(p["K"]) ** -0.5


def hardware():
    from .._hardware import gpu_identity

    return gpu_identity(0)


def log(msg):
    print(f"[torch_diode.tools.worker] {msg}", file=sys.stderr, flush=True)


def emit(out, obj):
    out.write(json.dumps(obj, separators=(",", ":"), allow_nan=False) + "\n")
    out.flush()


def environment_problem():
    """One clear sentence saying why this Python cannot run the inductor backend, or None."""
    try:
        import torch
    except Exception as e:  # any import failure is the message
        return f"cannot import torch in {sys.executable}: {e}"
    # Whether this torch is new enough is the runner's to say: the hello reports its version.
    try:
        import triton  # noqa: F401 - imported only to see that it loads
    except Exception as e:  # any import failure is the message
        return f"cannot import triton in {sys.executable}: {e}"
    if not torch.cuda.is_available():
        visible = os.environ.get("CUDA_VISIBLE_DEVICES", "unset")
        return f"torch {torch.__version__} sees no CUDA GPU (CUDA_VISIBLE_DEVICES={visible})"
    return compat.saver_problem()


class ChoiceCollector:
    """The feedback saver (six positional arguments in torch 2.11). For each autotuned GEMM it
    keeps every choice with Inductor's time, the tensors Inductor benchmarked it with, and the
    ChoiceCaller itself, so that the choices can be timed in CUDA graphs after the compile."""

    def __init__(self):
        self.events = []
        self.shapes = []
        self.armed = False

    def __call__(self, timings, name, input_nodes, choices, profiled_time_fn, precompile_times=None, *rest):
        if not self.armed:
            return
        try:
            tensors_for = compat.benchmark_tensors(choices, input_nodes)
            self.shapes.append([list(compat.node_size_stride(n)[0]) for n in input_nodes])
            entries = []
            for choice in choices:
                inputs, out = tensors_for(choice)
                entries.append((choice, timings.get(choice), inputs, out))
            self.events.append((str(name), entries, None))
        except Exception as e:  # a saver must never break the compile
            self.events.append((str(name), [(c, timings.get(c), None, None) for c in choices], repr(e)))


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
    if p["op"] == "baddbmm":
        a = mat(M, K, p["a_transposed"], B)
        b = mat(K, N, p["b_transposed"], B)
        addend = torch.randn((B, 1, N), device=dev, dtype=dt)  # broadcast over M (docs/FORMATS.md)
        alpha = baddbmm_alpha(p)
        return (lambda c, x, y: torch.baddbmm(c, x, y, beta=BADDBMM_BETA, alpha=alpha)), (addend, a, b)
    a = mat(M, K, p["a_transposed"])
    b = mat(K, N, p["b_transposed"])
    if p["op"] == "addmm":
        bias = torch.randn((N,), device=dev, dtype=dt)
        return (lambda c, x, y: torch.addmm(c, x, y)), (bias, a, b)
    return (lambda x, y: torch.mm(x, y)), (a, b)


def fits_in_memory(p):
    import torch

    elem = DTYPE_BYTES[p["dtype"]]
    B, M, N, K = p["B"], p["M"], p["N"], p["K"]
    need = elem * B * (M * K + K * N + 2 * M * N) + N * elem
    free, _total = torch.cuda.mem_get_info()
    return need, free


def _valid_ms(t):
    return t is not None and t == t and t != float("inf") and t > 0


def _relative_error(out, ref) -> float:
    diff = (out.float() - ref.float()).abs().max().item()
    scale = ref.float().abs().max().item()
    return diff / max(scale, 1e-6)


def _tolerance(p, cand) -> float:
    if p["dtype"] == "fp32" and cand.get("ALLOW_TF32"):
        return TOLERANCE["fp32_tf32"]
    return TOLERANCE[p["dtype"]]


def precompile_all(entries):
    """Each Triton choice's kernel built before the GPU lock is taken (compat.precompile_choices),
    on the compile threads. Returns {index: error} for the ones that failed to build (e.g. more
    shared memory than the GPU has), which are then failed measurements without touching the GPU."""
    failed = compat.precompile_choices([e[0] for e in entries])
    return {i: f"failed to compile: {type(e).__name__}: {e}".splitlines()[0][:300] for i, e in failed.items()}


def launched_kernels(call) -> list:
    """Names of the GPU kernels (and copies, sets) one `call()` launches, in order (torch.profiler,
    CUDA activity only)."""
    import torch
    from torch.profiler import ProfilerActivity, profile

    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        call()
        torch.cuda.synchronize()
    return [e.name for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]


# A GPU kernel name that is a GEMM's main loop (cuBLAS, cuBLASLt, CUTLASS, Triton's mm templates).
GEMM_KERNEL = re.compile(r"gemm|nvjet|cutlass|xmma|sm\d+_|triton_tem|_mm_|bmm", re.I)


def plain_difference(plain: list, candidate: list) -> str:
    """Says what plain torch.compile's function launched beside or instead of the kernels of the
    ATen candidate it calls: "same kernels", "another GEMM kernel: X instead of
    Y", and/or "also ran N kernel(s): ..." (a copy of a non-contiguous operand, padding, a
    decomposition's pointwise kernels)."""
    if plain == candidate:
        return "same kernels"
    extra = [k for k in plain if k not in candidate]
    missing = [k for k in candidate if k not in plain]
    said = []
    gemm_in, gemm_out = [k for k in extra if GEMM_KERNEL.search(k)], [k for k in missing if GEMM_KERNEL.search(k)]
    if gemm_in or gemm_out:
        said.append(
            f"another GEMM kernel: {', '.join(gemm_in)[:120] or 'none'} instead of "
            f"{', '.join(gemm_out)[:120] or 'none'}"
        )
    other = [k for k in extra if k not in gemm_in]
    if other:
        said.append(f"also ran {len(other)} kernel(s): {', '.join(k[:60] for k in other)[:200]}")
    if not said:  # the same kernels in another order or count
        said.append(f"the same kernels, {len(plain)} launches against {len(candidate)}")
    return "; ".join(said)


def time_candidates(p, timer, entries, check=True, inductor_timed=True, build_errors=None, kernels=None):
    """Time each (choice, inductor_ms, inputs, out) in CUDA graphs and check its output against
    ATen's. Returns problem-JSON v2 candidates (with `times` and, on failure, `error`). Without
    `inductor_timed` Inductor's benchmark was skipped: its placeholder times are not kept.
    `build_errors` ({index: message}, from precompile_all) are candidates that failed to compile.
    With a `kernels` dict, each ATen candidate's launched GPU kernels go into it by name."""
    import torch

    candidates = [candidate_from_choice(choice, VOCABULARY) for choice, _t, _i, _o in entries]
    # ATen of the problem's own op first: its output is the reference for the others.
    aten_name = f"extern_kernels.{p['op']}"
    order = sorted(range(len(entries)), key=lambda i: candidates[i].get("name") != aten_name)
    reference = None
    for i in order:
        choice, inductor_ms, inputs, out = entries[i]
        cand = candidates[i]
        cand["times"] = {"inductor_autotune": float(inductor_ms)} if inductor_timed and _valid_ms(inductor_ms) else {}
        if inputs is None:
            cand["error"] = "no benchmark tensors (Inductor's feedback saver interface changed?)"
            continue
        if inductor_timed and not _valid_ms(inductor_ms):
            cand["error"] = "Inductor reported no valid timing (failed to compile or run, e.g. out of shared memory)"
            continue
        if build_errors and i in build_errors:
            cand["error"] = build_errors[i]
            continue
        try:
            with timer.stream_ctx():
                launch = compat.choice_run_fn(choice, inputs, out)
                out.zero_()
                launch()
            timer.stream.synchronize()
            if check:
                if reference is None:
                    reference = (
                        out.detach().clone() if cand.get("name") == aten_name else _eager_reference(p, cand, inputs)
                    )
                err = _relative_error(out, reference)
                tol = _tolerance(p, cand)
                if not err <= tol:
                    cand["error"] = f"wrong result: max error {err:.3g} of the largest ATen value (tolerance {tol:g})"
                    continue
            warm, cold = timer.time(launch)
            cand["times"].update(graph_warm=warm, graph_cold=cold)
            if kernels is not None and cand.get("kind") == "aten":
                with timer.stream_ctx():
                    kernels[cand["name"]] = launched_kernels(launch)
        except Exception as e:  # one bad candidate is a failed measurement
            cand["error"] = f"in-graph timing failed: {type(e).__name__}: {e}".splitlines()[0][:300]
            torch.cuda.synchronize()
        finally:
            compat.cleanup_run_fn(choice)
    return candidates


def _eager_reference(p, cand, inputs):
    """ATen's result on the tensors a Triton choice got (when no ATen choice came first)."""
    import torch

    if p["op"] == "bmm":
        return torch.bmm(inputs[-2], inputs[-1])
    if p["op"] == "baddbmm":  # inputs[0]: the addend as Inductor expanded it to (B, M, N)
        return torch.baddbmm(inputs[0], inputs[-2], inputs[-1], beta=BADDBMM_BETA, alpha=baddbmm_alpha(p))
    ref = torch.mm(inputs[-2], inputs[-1])
    return ref + inputs[0] if p["op"] == "addmm" else ref


def time_compiled(timer, fn, args):
    """(graph_warm_ms, graph_cold_ms) of a compiled function, outputs allocated in the graph."""
    return timer.time(lambda: fn(*args))


def compile_op(fn, args, options):
    """torch.compile `fn` with Inductor `options`, run it once; (compiled, seconds). Call it
    inside `compat.fresh_cache()`, kept open while the compiled kernels are still loaded from
    their files (the candidates' run functions are)."""
    import torch
    import torch._dynamo

    torch._dynamo.reset()
    t0 = time.perf_counter()
    with compat.config_patch(options):
        compiled = torch.compile(fn, dynamic=False, fullgraph=True)
        compiled(*args)
        torch.cuda.synchronize()
    return compiled, time.perf_counter() - t0


def measure(
    p,
    search_space,
    collector,
    timer,
    check=True,
    inductor_benchmark=True,
    exhaustive_configs=0,
    aten_only=False,
    sample_seed=0,
):
    """Candidates (times per method) and baselines of one problem: problem JSON version 2.

    Without `inductor_benchmark`, Inductor's own benchmark is skipped (about two thirds of the
    GPU time a problem takes when it runs): no `inductor_autotune` times and no max-autotune
    baseline, the candidates' in-graph times as always. With `exhaustive_configs` N > 0, an
    EXHAUSTIVE problem gets ATen and N Triton configs drawn from the whole space (seeded by
    `sample_seed`, the problem's sampling hash from the runner), not all of them. With
    `aten_only`, max-autotune is offered the ATen kernels alone: a quick probe of plain's function
    against the ATen candidate it calls, not training data."""
    import torch

    need, free = fits_in_memory(p)
    if need * 1.2 + timer.flush_bytes > free:
        raise MemoryError(f"problem needs {need / 2**30:.1f} GiB of GPU memory; {free / 2**30:.1f} GiB free")
    fn, args = make_inputs(p)
    split = {}
    baselines = {}
    lock_before = dict(ingraph.LOCK_SECONDS)
    gpu_before = ingraph.TIMED_GPU_MS[0]

    # Plain torch.compile: what a user gets without autotuning (ATen/cuBLAS for the GEMM).
    with compat.fresh_cache():
        plain, plain_s = compile_op(fn, args, compat.plain_options())
        t = time.perf_counter()
        with gpu_lock():
            warm, cold = time_compiled(timer, plain, args)
            kernels = {"default": launched_kernels(functools.partial(plain, *args))}
        split["time_baselines_s"] = time.perf_counter() - t
    baselines["default"] = {"graph_warm": warm, "graph_cold": cold, "compile_s": round(plain_s, 3)}
    del plain

    # max-autotune: Inductor compiles and benchmarks every candidate; the saver keeps them.
    collector.events.clear()
    collector.shapes.clear()
    collector.armed = True
    sampled = search_space.upper() == "EXHAUSTIVE" and exhaustive_configs > 0
    handler = compat.sampling_choices_handler(exhaustive_configs, seed=sample_seed) if sampled else None
    with compat.fresh_cache():
        try:
            with compat.autotune_benchmark(lock=gpu_lock, skip=not inductor_benchmark), (
                compat.choices_handler(handler) if handler else contextlib.nullcontext()
            ):
                options = compat.max_autotune_options(search_space)
                if aten_only:
                    options["max_autotune_gemm_backends"] = "ATEN"
                tuned, tuned_s = compile_op(fn, args, options)
        finally:
            collector.armed = False
        split["max_autotune_compile_s"] = tuned_s
        events = [e for e in collector.events if compat.SAVER_OPS.get(e[0]) == p["op"]] or collector.events
        t = time.perf_counter()
        build_errors = [precompile_all(entries) for _name, entries, _err in events]
        split["build_candidates_s"] = time.perf_counter() - t
        t = time.perf_counter()
        with gpu_lock():
            split["wait_gpu_s"] = time.perf_counter() - t
            t = time.perf_counter()
            if inductor_benchmark and not sampled:
                warm, cold = time_compiled(timer, tuned, args)
                baselines["max_autotune"] = {"graph_warm": warm, "graph_cold": cold, "compile_s": round(tuned_s, 3)}
            candidates = []
            notes = [e[2] for e in events if e[2]]
            # Where Inductor padded the operands, ATen gets sliced views and Triton the padded base
            # tensors: their outputs cannot be compared element for element (measured: every
            # Triton candidate of 3 padded problems "wrong"), so the check is skipped and said.
            padded = bool(collector.shapes) and not _same_gemm(p, collector.shapes[0])
            for (_name, entries, _err), errors in zip(events, build_errors):
                got = time_candidates(p, timer, entries, check and not padded, inductor_benchmark, errors, kernels)
                inductor = [c["times"].get("inductor_autotune") for c in got]
                valid = [i for i, x in enumerate(inductor) if x is not None]
                if valid and "max_autotune" in baselines and "pick" not in baselines["max_autotune"]:
                    baselines["max_autotune"]["pick"] = len(candidates) + min(valid, key=inductor.__getitem__)
                candidates.extend(got)
            if not candidates:
                # Inductor skips autotuning for some shapes: the ATen op is the only candidate;
                # time it the same way.
                warm, cold = timer.time(functools.partial(fn, *args))
                candidates.append(
                    {
                        "kind": "aten",
                        "name": f"extern_kernels.{p['op']}",
                        "times": {"graph_warm": warm, "graph_cold": cold},
                    }
                )
                kernels[candidates[-1]["name"]] = launched_kernels(functools.partial(fn, *args))
                notes.append("Inductor did not autotune this shape: ATen alone, timed in graph")
    split["time_candidates_s"] = time.perf_counter() - t
    if sampled:
        notes.insert(
            0,
            f"EXHAUSTIVE space sampled ({exhaustive_configs} Triton configs a template): "
            "no max-autotune baseline (its pick is of the sample)",
        )
    if aten_only:
        notes.insert(0, "ATen candidates only (--aten-only): a probe of plain's function, not training data")
    if not inductor_benchmark:
        notes.insert(
            0,
            "Inductor's own benchmark skipped (sampled problems only): no inductor_autotune "
            "times, no max-autotune baseline",
        )
    collector.events.clear()
    del tuned, args
    torch.cuda.empty_cache()
    # Keys the problem came with (plan, entry, family, ...) flow through.
    out = {k: v for k, v in p.items() if k not in ("candidates", "baselines", "error", "time_split_s")}
    out["version"] = 2
    out["search_space"] = search_space
    out["candidates"] = candidates
    out["baselines"] = baselines
    # Whole-problem GPU lock accounting (Inductor's benchmark included): how much of the GPU's
    # time this problem took, and how long it waited for other workers.
    split["gpu_lock_hold_s"] = ingraph.LOCK_SECONDS["hold"] - lock_before["hold"]
    split["gpu_lock_wait_s"] = ingraph.LOCK_SECONDS["wait"] - lock_before["wait"]
    split["timed_gpu_s"] = (ingraph.TIMED_GPU_MS[0] - gpu_before) / 1000
    out["time_split_s"] = {k: round(v, 3) for k, v in split.items()}
    if notes:
        out["worker_notes"] = notes[:3]
    # What plain's compiled function launched against each ATen candidate (the one it calls is core's
    # rule, SelectionPolicy::plainCandidate): where their times differ, this names why.
    out["launched_kernels"] = kernels
    out["plain_vs_aten"] = {
        name: plain_difference(kernels["default"], launched) for name, launched in kernels.items() if name != "default"
    }
    # Inductor may pad odd sizes before lowering the GEMM (pad_mm): then the candidates ran on
    # the padded operands, and the compiled function adds the padding copies. Say so.
    if padded:
        out["inductor_operand_shapes"] = collector.shapes[0]
        out["output_check"] = "skipped: Inductor padded the operands"
    failed = sum(1 for c in candidates if c.get("error"))
    return out, tuned_s + baselines["default"]["compile_s"], failed


def _same_gemm(p, shapes) -> bool:
    """Whether Inductor's GEMM operands (last two inputs) have the problem's M, K and K, N."""
    if len(shapes) < 2:
        return True
    a, b = shapes[-2], shapes[-1]
    return a[-2:] == [p["M"], p["K"]] and b[-2:] == [p["K"], p["N"]]


def setup():
    problem = environment_problem()
    if problem:
        return None, None, problem
    # The sweep measures Inductor's own candidates: the selector must not filter them, whatever
    # `import torch_diode` auto-registered.
    from .. import uninstall
    from .ingraph import GraphTimer

    uninstall()
    collector = ChoiceCollector()
    compat.add_feedback_saver(collector)
    return collector, GraphTimer(), None


def versions():
    import torch
    import triton

    return {"torch": torch.__version__, "triton": triton.__version__, "python": sys.version.split()[0]}


def serve(stdin, stdout):
    collector, timer, problem = setup()
    if problem:
        emit(stdout, {"event": "hello", "ok": False, "error": problem})
        return 3
    hello = {"event": "hello", "ok": True, "hardware": hardware(), "pid": os.getpid(), "methods": list(METHODS)}
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
            use_vocabulary(req["vocabulary"])
            result, compile_s, failed = measure(
                req["problem"],
                req.get("search_space", "DEFAULT"),
                collector,
                timer,
                inductor_benchmark=bool(req.get("inductor_benchmark", True)),
                exhaustive_configs=int(req.get("exhaustive_configs", 0)),
                aten_only=bool(req.get("aten_only", False)),
                sample_seed=int(req.get("sample_seed", 0)),
            )
            emit(
                stdout,
                {"id": rid, "ok": True, "problem": result, "compile_s": round(compile_s, 3), "failed_choices": failed},
            )
        except Exception as e:  # one bad problem must not end the sweep
            emit(stdout, {"id": rid, "ok": False, "error": problem_error(e)})
    return 0


def problem_error(e) -> str:
    import torch

    msg = f"{type(e).__name__}: {e}".strip().splitlines()[0][:500]
    if isinstance(e, (torch.cuda.OutOfMemoryError, MemoryError)):
        msg = "out of GPU memory: " + msg
    log(traceback.format_exc())
    torch.cuda.empty_cache()
    return msg


def protocol_stream():
    """The stream the answers go to: a copy of stdout. File descriptor 1, where print() and C libraries
    (Triton, CUDA) write, is pointed at stderr, the worker log, so that the runner's pipe carries the
    protocol alone (docs/FORMATS.md, "Worker protocol": a line that is not an answer ends the worker)."""
    fd = os.dup(sys.stdout.fileno())
    sys.stdout.flush()
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    return os.fdopen(fd, "w", buffering=1, encoding="utf-8")


def main(argv=None):
    ap = argparse.ArgumentParser(
        prog="python3 -m torch_diode.tools.worker",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument("--check", action="store_true", help="print why this Python cannot run the backend, or 'ok'")
    args = ap.parse_args(argv)
    import torch_diode

    torch_diode.uninstall()  # nothing when diode sweep started it; see TORCH_DIODE_AUTOREGISTER above
    if args.check:
        problem = environment_problem()
        print(problem or "ok")
        return 3 if problem else 0
    return serve(sys.stdin, protocol_stream())


if __name__ == "__main__":
    sys.exit(main())
