"""Kernel and site lines measured inside model steps: the pointwise and reduction kernels a step's
compile really makes (the RMSNorm recomputed in a decomposed projection, two GEMVs sharing their
input, the row statistics a GEMM template's fused softmax leaves), which single-kernel cases do not
reproduce, and its small-M sites in both forms with the neighbours the step fuses into them.

Each step (torch_diode.tools.models, a forward: decode, prefill or a ViT block) is compiled with the
package's GEMM and small-M decisions, once with Inductor's own kernel configurations and once for
each configuration a kernel of it may be given (diode_kernel_candidates: its portfolio and the extra
configurations), which is fixed on every kernel whose candidates hold it. Each kernel's time is its
GPU time in the step under torch.profiler (summed over the step's calls of it, the mean of
--steps-timed steps), kernels matched across compiles by their names (Inductor's, made from the
graph's node names for the sweep, so that the kernels of one graph are told apart and named alike in
every compile of it). A compile whose output differs from eager's by more than four times the
default's difference (2 % of the largest value at least), that fails, or in which Inductor refused
the configuration for a kernel records an error for it on the kernels concerned. Workers compile in
parallel and check and profile one at a time (the GPU lock of torch_diode.tools.ingraph); a kernel's
default time is the median of the workers'.

A line is a kernel line (docs/FORMATS.md, "Kernel and site lines") named
"step:SCENARIO/KERNEL", its family the model the scenario's layers are shaped after (so that holding
out a family holds out its steps' kernels too), `grid` the kernel's candidates (a line cut short by
--limit or --deadline-s holds fewer).

Sites (--kinds site): the step is compiled with the package's decisions, then once for each group of
its small-M sites that are alike (a decoder's layers repeat them) with that group's form turned the
other way (the decisions' own form_by hook; a decomposed projection reads its operand written once, as
the library says a compile does). Each compile is checked against eager; the compiles stay alive
side by side and are timed whole in CUDA graphs replayed in turn (GraphTimer.interleaved), the
step's change the median of the round-by-round differences. A site line ("step:SCENARIO/SITE", one
per group) gives each site of the group its share: library_ms the time of the library kernels the
decomposed form removes (torch.profiler, per site), decomposed_ms that plus the step's change per
site (site_times). A group that does not compile or run, or whose output is off, is a skipped line; a
step without small-M sites gets one skipped line, so that it is not measured again. A CUDA error or
--deadline-s before a step's last group keeps none of its site lines: it is measured again whole.

  python3 -m torch_diode.tools.step_kernels --steps NAME[,NAME...] --package P --out LINES.jsonl
      [--kinds kernel,site] [--extra-configs-from LINES] [--match REGEX] [--workers N] [--limit N]
      [--deadline-s S] [--steps-timed N] [--list]

--match keeps the kernels whose name (the fused operations a line names after "step:SCENARIO/") the
regular expression finds: only the configurations they may be given are compiled, and only their lines
are written (the step then counts as measured in --out). Sites are not filtered by it.

A step is skipped for a kind whose lines --out already holds for this GPU, a step's kernels also when
cut short by --limit or --deadline-s (its lines hold fewer configurations than `grid`): remove its
lines to measure it again. --list prints the steps --out lacks lines of a kind asked for and, without
--limit, those whose kernels it holds in part. `diode sweep-kernels --steps NAMES --package P` runs it.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import statistics
import subprocess
import sys
import time

# The model family a scenario's layers are shaped after (torch_diode.tools.kernel_sweep's FAMILIES).
FAMILY = {"llama": "llama2-7b", "gqa": "llama3-8b", "gpt2": "gpt2-medium", "vit": "vit-l16"}
# Inductor's kernel names: triton_<category>_<fused operations>_<index>; a fixed configuration turns
# the category into "unk" and the index follows the kernel's place in the graph, so neither is kept.
_KERNEL_NAME = re.compile(r"^triton_(?:poi|red|per|unk)_(fused_.+)_\d+$")
# How the name of every kernel Inductor generates begins (its Triton kernels and GEMM templates).
INDUCTOR_KERNEL = "triton_"
KINDS = ("kernel", "site")
# Kernel names made from the graph's node names: unique within a graph, the same in every compile of it.
NAMES = {"triton.descriptive_names": "inductor_node"}


def log(msg):
    print(f"[step kernels] {msg}", file=sys.stderr, flush=True)


def step_prefix() -> str:
    """How the name of every line measured inside a step begins (core's, from the library's
    vocabulary): prefix + "SCENARIO/KERNEL" or "SCENARIO/SITE"."""
    from .. import _native

    return _native.vocabulary()["step_line_prefix"]


def family_of(scenario: str) -> str:
    """The model family of a scenario name; ValueError for a name outside the grammar or a step this
    sweep cannot check (a training step: its output is the optimizer's update)."""
    from .models import parse_scenario

    kind, _ = parse_scenario(scenario)
    if kind == "train":
        raise ValueError(f"step '{scenario}': a training step's kernels are not measured here (no output to check)")
    return FAMILY[scenario.split("-")[0]]


def wrong_result(error: float, error0: float) -> bool:
    """Whether a compile's largest relative error against eager is off: more than four times that of
    the step's compile with the package's own decisions, and 2 % of the largest value at least."""
    return not error <= max(4 * error0, 0.02)


def kernel_times(rows: list) -> dict:
    """{fused operations: us a step} of a step's profiled kernels (torch_diode.tools.models'
    kernel_breakdown rows); kernels that are not Inductor's pointwise or reduction kernels (cuBLAS,
    GEMM templates) are left out."""
    times: dict = {}
    for r in rows:
        m = _KERNEL_NAME.match(r["name"])
        if m:
            times[m.group(1)] = times.get(m.group(1), 0.0) + r["us"]
    return times


def lines_of(scenario: str, parts: list) -> list:
    """The kernel lines of one scenario from its workers' parts (each {"gpu", "sm_count", "kernels":
    {name: {"shape", "default_ms", "grid", "configs"}}}): a kernel's default time the median of the
    workers' (each compiled and timed it), its configurations all the workers measured."""
    if not parts:
        return []
    family = family_of(scenario)
    kernels = {}
    for p in parts:
        for name, k in p["kernels"].items():
            kernels.setdefault(name, k)
    out = []
    for name, k in kernels.items():
        defaults = [p["kernels"][name]["default_ms"] for p in parts if name in p["kernels"]]
        out.append(
            {
                "kind": "kernel",
                "name": f"{step_prefix()}{scenario}/{name}",
                "family": family,
                "gpu": parts[0]["gpu"],
                "sm_count": parts[0]["sm_count"],
                "shape": k["shape"],
                "default_ms": statistics.median(defaults),
                "configs": [e for p in parts for e in p["kernels"].get(name, {}).get("configs", [])],
                "grid": k["grid"],
            }
        )
    return out


def _installed_step(scenario: str, package: str):
    """(the scenario built on the GPU, eager's output of it, the decisions of `package`, installed with
    its kernel configurations)."""
    import torch

    import torch_diode

    from .. import _selector
    from . import models

    sc = models.scenario(scenario, "bf16")
    with torch.no_grad():
        eager = sc.fn(*sc.args)
    if not torch_diode.install(model=package, kernel_configs=True):
        raise RuntimeError(f"cannot install {package}: {torch_diode.get_integration_status()['reason']}")
    return sc, eager, _selector.active().decisions


def _compiled_step(sc, eager, steps: int):
    """(`sc` compiled, its largest relative error against `eager`, its kernels' rows a step over `steps`
    profiled steps): caches off, kernels named from the graph's nodes, every call without gradients as
    the eager reference ran (one graph, checked and timed). The first call compiles, in parallel with
    other workers, and runs Inductor's first-run autotuning of its own configurations, which another
    worker's timing may disturb; the check and the profile hold the GPU's lock."""
    import torch

    from .. import _inductor_compat as compat
    from . import models
    from .ingraph import gpu_lock

    import torch_diode

    # A kernel's default time is Inductor's own, its first-run benchmark among its configurations
    # included, as plain torch.compile runs it (the installed plugin turns that benchmark off).
    first_run = compat.FIRST_RUN_AUTOTUNE
    inductors_own = {first_run: torch_diode._option_before_install(first_run)} if compat.has_config(first_run) else {}
    with compat.config_patch({"force_disable_caches": True, **NAMES, **inductors_own}), torch.no_grad():
        compiled = models.compile_scenario(sc)
        compiled(*sc.args)
        torch.cuda.synchronize()
        with gpu_lock():
            error = models.check_output(sc, compiled, eager)
            rows = models.kernel_breakdown(sc, compiled, steps)
    return compiled, error, rows


def measure_step(scenario, package, extra, shard, nshard, limit, deadline, steps, part_path, match=""):
    """One worker: the scenario's kernels (those whose name `match` finds, a regular expression; "":
    all) with Inductor's configurations and with every nshard-th of the configurations they may be
    given; its part written after each configuration."""
    import torch
    import torch._dynamo

    import torch_diode

    from .. import _native

    started = time.time()
    sc, eager, decisions = _installed_step(scenario, package)
    from torch._inductor import config as inductor_config
    from torch._inductor.utils import get_fused_kernel_name

    fixing = {"config": None}
    shapes: dict = {}  # kernel -> shape
    candidates: dict = {}  # kernel -> the configurations it may be given (after the default compile)
    asked: set = set()  # kernels the configuration was asked for in this compile
    given: set = set()  # ... and Inductor took it (the guards of torch_diode._decisions may refuse one)

    def name_of(features):
        return get_fused_kernel_name(features.node_schedule, inductor_config.triton.descriptive_names)

    def fixed_by(shape, features):
        name = name_of(features)
        shapes[name] = shape
        c = fixing["config"]
        if c is None:
            return None
        mine = candidates.get(name)
        if mine is None:  # a kernel the default compile did not time
            mine = _native.kernel_candidates(shape, extra=extra)
        if c not in mine:
            return None
        asked.add(name)
        return c

    decide = decisions.kernel_kwargs

    def kernel_kwargs(kernel_cls, features, groups, kwargs):
        out = decide(kernel_cls, features, groups, kwargs)
        if out.get("fixed_config") is not None and kwargs.get("fixed_config") is None:
            given.add(name_of(features))
        return out

    decisions.fixed_by = fixed_by
    decisions.kernel_kwargs = kernel_kwargs

    def run(config):
        fixing["config"] = config
        asked.clear()
        given.clear()
        torch._dynamo.reset()
        # Workers compile at once: a kernel's default time is the median of the workers' (lines_of).
        _, error, rows = _compiled_step(sc, eager, steps)
        return kernel_times(rows), error

    default, error0 = run(None)
    kernels = {n: shape for n, shape in shapes.items() if n in default}  # timed in the step
    if len(kernels) < len(shapes):
        log(f"{scenario}: {len(shapes) - len(kernels)} kernels decided but not seen in the profile")
    if match:
        kernels = {n: shape for n, shape in kernels.items() if re.search(match, n)}
        log(f"{scenario}: {len(kernels)} kernels match {match!r}")
        if not kernels:
            log(f"{scenario}: no kernel of the step matches --match {match!r}: nothing is measured or written for it")
    candidates.update({n: _native.kernel_candidates(shape, extra=extra) for n, shape in kernels.items()})
    configs = []
    for cs in candidates.values():
        configs += [c for c in cs if c not in configs]
    if limit:
        configs = configs[:limit]
    results = {n: [] for n in kernels}
    gpu = torch.cuda.get_device_properties(0)

    def write():
        part = {
            "gpu": gpu.name,
            "sm_count": gpu.multi_processor_count,
            "kernels": {
                n: {"shape": s, "default_ms": default[n] / 1000.0, "grid": len(candidates[n]), "configs": results[n]}
                for n, s in kernels.items()
            },
        }
        with open(part_path + ".tmp", "w") as f:
            json.dump(part, f)
        os.replace(part_path + ".tmp", part_path)

    write()
    mine = configs[shard::nshard]
    log(f"{scenario} {shard}/{nshard}: {len(kernels)} kernels, {len(configs)} configurations, {len(mine)} here")
    for c in mine:
        if deadline and time.time() - started > deadline:
            log(f"{scenario} {shard}/{nshard}: deadline reached")
            break
        try:
            times, error = run(c)
            failed = None
        except Exception as e:  # the step did not compile or run with it: an error on every kernel asked
            times, error, failed = {}, math.inf, f"{type(e).__name__}: {str(e)[:200]}"
            log(f"{scenario}: {c}: {failed}")
        wrong = wrong_result(error, error0)
        for n in asked & set(kernels):
            entry = {"config": c}
            if failed:
                entry["error"] = failed
            elif n not in given:
                entry["error"] = "refused by Inductor"
            elif wrong:
                entry["error"] = f"wrong result (max relative error {error:.4f} against {error0:.4f})"
            elif n in times:
                entry["time_ms"] = times[n] / 1000.0
            else:
                continue  # not in this compile's profile: neither timed nor failed
            results[n].append(entry)
        write()
        if failed and "CUDA" in failed:  # the context may be broken: what follows would fail for it
            log(f"{scenario} {shard}/{nshard}: stopping after a CUDA error")
            break
    torch_diode.uninstall()


def _step_lines(path: str, kind: str = "kernel"):
    """(scenario, line) of each step line of `kind` `path` holds (kernel_sweep's reading of a lines file)."""
    from .kernel_sweep import _lines

    prefix = step_prefix()
    for _, entry in _lines(path):
        if entry and entry.get("kind", "kernel") == kind and str(entry.get("name", "")).startswith(prefix):
            yield entry["name"][len(prefix) :].split("/")[0], entry


def _done(path: str, gpu: str = "", kind: str = "kernel") -> set:
    """The scenarios whose lines of `kind` `path` holds (of `gpu` only, when given)."""
    return {s for s, entry in _step_lines(path, kind) if not gpu or entry.get("gpu") == gpu}


def _cut(path: str) -> set:
    """The scenarios of which `path` holds a line with fewer configurations than its grid: measured in part
    (cut short by --limit or --deadline-s, or a worker that failed)."""
    return {s for s, entry in _step_lines(path) if len(entry.get("configs", [])) < entry.get("grid", 0)}


# ---- sites ---------------------------------------------------------------------------------------


def site_name(site: dict) -> str:
    """A site's part of its line's name: op, sizes, grouped-query and concatenation."""
    name = f"{site['op']}-b{site['B']}-m{site['M']}-n{site['N']}-k{site['K']}"
    if site.get("kv_group", 1) != 1:
        name += f"-g{site['kv_group']}"
    return name + ("-cat" if site.get("concat") else "")


def site_times(count, library_rounds, decomposed_rounds, library_kernels, decomposed_kernels) -> tuple:
    """(library_ms, decomposed_ms) of one site from a group of `count` alike sites measured in a step.
    `*_rounds`: the step's ms in each round, its sites in one form and the other (GraphTimer.interleaved);
    `*_kernels`: {kernel name: us a step} of each compile (torch.profiler). library_ms is the time of
    the library's kernels the decomposed form removes (cuBLAS, cuDNN, ATen's copies: every kernel
    Inductor did not generate; a kernel's change counted past the profiler's noise, 2 % of it and 0.05
    us at least), per site; decomposed_ms that plus the step's change (the median of the rounds'
    differences) per site, at least an eighth of library_ms: what the site costs the step in its
    decomposed form, its neighbours' changes included. Inductor's own kernels are left out of
    library_ms: a fusion that changes names them anew. ValueError when no library kernel is told apart."""
    removed = 0.0
    for name, us in library_kernels.items():
        less = us - decomposed_kernels.get(name, 0.0)
        if not name.startswith(INDUCTOR_KERNEL) and less > max(0.02 * us, 0.05):
            removed += less
    if removed <= 0:
        raise ValueError("no library kernel of the library form is told apart in the profile")
    change = statistics.median(d - lib for d, lib in zip(decomposed_rounds, library_rounds))
    library_ms = removed / 1000.0 / count
    return library_ms, max(library_ms + change / count, library_ms / 8)


def _variant(fn, index: int):
    """`fn` called through a function whose code object is its own: Dynamo keeps a compile per code
    object, so compiles of one step that differ in one decision live side by side."""
    import types

    def step(*args):
        return fn(*args)

    code = step.__code__.replace(co_name=f"diode_step_variant_{index}")
    return types.FunctionType(code, step.__globals__, code.co_name, None, step.__closure__)


def measure_step_sites(scenario, package, steps, deadline, part_path):
    """The site lines of one scenario, written to `part_path` as a JSON list; nothing written when the
    deadline (seconds, 0: none) comes before its last group or the GPU fails, so that the step is
    measured again whole."""
    import torch

    import torch_diode

    from . import models
    from .ingraph import GraphTimer, gpu_lock

    started = time.time()
    family = family_of(scenario)
    sc, eager, decisions = _installed_step(scenario, package)
    flip = {"key": None}
    groups: dict = {}  # site key -> {"site", "decompose": the library's answer, "count"}

    def form_by(site, decompose):
        key = json.dumps(site, sort_keys=True)
        if flip["key"] is None:  # the package's own compile: the step's sites, as the library decides them
            group = groups.setdefault(key, {"site": site, "decompose": decompose, "count": 0})
            group["count"] += 1
        return (not decompose) if key == flip["key"] else decompose

    decisions.form_by = form_by
    timer = GraphTimer()

    def build(key, index):
        """(compiled, its error, its kernels, how many sites it wrote in the library form over the KV
        cache as stored)."""
        flip["key"] = key
        variant = models.Scenario(sc.name, sc.kind, _variant(sc.fn, index), sc.args, sc.training, sc.params)
        torch_diode.reset_stats()
        compiled, error, rows = _compiled_step(variant, eager, steps)
        over_cache = torch_diode.get_stats()["decisions"]["small_m_form"]["library_over_cache"]
        return compiled, error, {r["name"]: r["us"] for r in rows}, over_cache

    gpu = torch.cuda.get_device_properties(0)
    head = {"family": family, "gpu": gpu.name, "sm_count": gpu.multi_processor_count}
    lines = []
    base, error0, base_kernels, base_over_cache = build(None, 0)
    if not groups:
        lines.append(
            {
                "kind": "site",
                "name": f"{step_prefix()}{scenario}/sites",
                **head,
                "skipped": "no small-M site in the step",
                "seconds": round(time.time() - started, 2),
            }
        )
    for index, (key, group) in enumerate(groups.items(), 1):
        if deadline and time.time() - started > deadline:
            log(f"{scenario}: deadline reached before its sites were all measured; none kept")
            return
        t0 = time.time()
        site, n = group["site"], group["count"]
        line = {"kind": "site", "name": f"{step_prefix()}{scenario}/{site_name(site)}", **head}
        try:
            other, error, kernels, over_cache = build(key, index)
            if wrong_result(error, error0):
                raise ValueError(f"wrong result (max relative error {error:.4f} against {error0:.4f})")
            with gpu_lock(), timer.stream_ctx(), torch.no_grad():
                rounds = timer.interleaved([lambda: base(*sc.args), lambda: other(*sc.args)])
            if group["decompose"]:  # the package decomposes them: the other compile is the library form
                lib, dec, lib_k, dec_k = rounds[1], rounds[0], kernels, base_kernels
            else:
                lib, dec, lib_k, dec_k = rounds[0], rounds[1], base_kernels, kernels
            library_ms, decomposed_ms = site_times(n, lib, dec, lib_k, dec_k)
            line.update(
                site=site,
                library_ms=library_ms,
                decomposed_ms=decomposed_ms,
                sites=n,
                step_library_ms=statistics.median(lib),
                step_decomposed_ms=statistics.median(dec),
                package_decomposes=group["decompose"],
            )
            # its library form read the KV cache as stored where the library-form compile wrote more
            # sites so than the other
            if (over_cache - base_over_cache) * (1 if group["decompose"] else -1) > 0:
                line["library_over_cache"] = True
        except Exception as e:  # this group is not measured; the others are
            line["skipped"] = f"{type(e).__name__}: {str(e)[:200]}"
            log(f"{scenario}: {site_name(site)}: {line['skipped']}")
            if "CUDA" in str(e):  # the context may be broken: what follows would fail for it
                log(f"{scenario}: stopping after a CUDA error; none of its sites kept")
                return
        finally:
            other = None  # its compile freed before the next group's
        line["seconds"] = round(time.time() - t0, 2)
        lines.append(line)
    torch_diode.uninstall()
    with open(part_path + ".tmp", "w") as f:
        json.dump(lines, f)
    os.replace(part_path + ".tmp", part_path)


def main(argv=None):
    ap = argparse.ArgumentParser(
        prog="python3 -m torch_diode.tools.step_kernels",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument("--steps", required=True, help="model-step scenarios (torch_diode.tools.models), comma-separated")
    ap.add_argument(
        "--package", required=True, help="the .diode package whose GEMM and small-M decisions shape the step"
    )
    ap.add_argument("--out", required=True, help="kernel and site lines are appended here")
    ap.add_argument(
        "--kinds", default="kernel,site", help="what is measured of each step: kernel, site or both (comma-separated)"
    )
    ap.add_argument("--extra-configs-from", default="", help="as torch_diode.tools.kernel_sweep's")
    ap.add_argument(
        "--match", default="", help="only the kernels whose name (their fused operations) this regular expression finds"
    )
    ap.add_argument("--workers", type=int, default=1, help="processes sharing the GPU (they compile in parallel)")
    ap.add_argument("--limit", type=int, default=0, help="only the first N configurations of a step")
    ap.add_argument("--deadline-s", type=float, default=0, help="start no new compile after this many seconds")
    ap.add_argument("--steps-timed", type=int, default=10, help="steps profiled per compile")
    ap.add_argument(
        "--list",
        action="store_true",
        help="print the steps --out lacks and, without --limit, those it holds in part, one a line, and exit",
    )
    ap.add_argument("--worker", default="", help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    scenarios = [s.strip() for s in a.steps.split(",") if s.strip()]
    if not scenarios:
        ap.error(f"--steps {a.steps!r} names no step")
    from .kernel_sweep import match_pattern

    match_pattern(ap, a.match)
    kinds = [k.strip() for k in a.kinds.split(",") if k.strip()]
    if not kinds or any(k not in KINDS for k in kinds):
        ap.error(f"--kinds {a.kinds!r}: give kernel, site or both, comma-separated")
    try:
        for s in scenarios:
            family_of(s)
    except ValueError as e:
        ap.error(str(e))
    if not os.path.exists(a.package):
        ap.error(f"--package {a.package}: no such file")
    if a.list:  # by name alone, as the kernel sweep's --list (no CUDA context started)
        whole = {k: _done(a.out, kind=k) for k in kinds}
        if "kernel" in whole and not a.limit:
            whole["kernel"] -= _cut(a.out)
        for s in scenarios:
            if any(s not in whole[k] for k in kinds):
                print(s)
        return 0
    from .kernel_sweep import extra_configs_from

    try:
        extra = extra_configs_from(a.extra_configs_from)
    except ValueError as e:
        ap.error(str(e))
    if a.worker:  # SCENARIO:I:N (kernels) or SCENARIO:site, writing its part to --out
        scenario, rest = a.worker.split(":", 1)
        if rest == "site":
            measure_step_sites(scenario, a.package, a.steps_timed, a.deadline_s, a.out)
            return 0
        i, n = rest.split(":")
        measure_step(scenario, a.package, extra, int(i), int(n), a.limit, a.deadline_s, a.steps_timed, a.out, a.match)
        return 0
    from .worker import environment_problem

    why = environment_problem()
    if why:
        print(f"error: the step sweep needs a GPU with torch and Triton: {why}", file=sys.stderr)
        return 3
    from .kernel_sweep import _gpu

    gpu = _gpu()["gpu"]
    done = {k: _done(a.out, gpu, k) for k in kinds}
    env = dict(os.environ, TORCHINDUCTOR_COMPILE_THREADS="1")
    env.setdefault("TORCH_DIODE_GPU_LOCK", f"/tmp/torch_diode_step_kernels_{os.getpid()}.lock")
    started = time.time()
    failed = False

    def worker(scenario, part, which, left):
        if os.path.exists(part):  # an earlier run's, killed
            os.remove(part)
        cmd = [sys.executable, "-m", "torch_diode.tools.step_kernels", "--steps", scenario, "--package", a.package]
        cmd += ["--out", part, "--extra-configs-from", a.extra_configs_from, "--limit", str(a.limit)]
        cmd += [f"--match={a.match}"]  # one argument: a pattern may begin with "-"
        cmd += ["--deadline-s", str(left), "--steps-timed", str(a.steps_timed), "--worker", f"{scenario}:{which}"]
        return subprocess.Popen(cmd, env=env), part

    def gathered(scenario, procs):
        nonlocal failed
        parts = []
        for p, part in procs:
            if p.wait() != 0:
                failed = True
                log(f"{scenario}: a worker exited with {p.returncode}")
            if os.path.exists(part):
                with open(part) as f:
                    parts.append(json.load(f))
                os.remove(part)
        return parts

    def append(lines):
        with open(a.out, "a") as out:
            for line in lines:
                out.write(json.dumps(line) + "\n")

    jobs = [(scenario, kind) for scenario in scenarios for kind in kinds if scenario not in done[kind]]
    for scenario in scenarios:
        if all(scenario in done[kind] for kind in kinds):
            log(f"{scenario}: already in {a.out}")
    for scenario, kind in jobs:
        left = a.deadline_s - (time.time() - started) if a.deadline_s else 0
        if a.deadline_s and left <= 0:
            log("deadline reached")
            break
        if kind == "kernel":
            procs = [
                worker(scenario, f"{a.out}.{scenario}.part{w}", f"{w}:{a.workers}", left) for w in range(a.workers)
            ]
            lines = lines_of(scenario, gathered(scenario, procs))
            append(lines)
            measured = sum(len(line["configs"]) for line in lines)
            took = time.time() - started
            log(f"{scenario}: {len(lines)} kernel lines, {measured} configurations measured, {took:.0f} s")
        else:  # one process: its compiles are timed side by side
            parts = gathered(scenario, [worker(scenario, f"{a.out}.{scenario}.sites", "site", left)])
            lines = [line for part in parts for line in part]
            append(lines)
            timed = sum(1 for line in lines if "skipped" not in line)
            log(f"{scenario}: {len(lines)} site lines, {timed} measured, {time.time() - started:.0f} s")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
