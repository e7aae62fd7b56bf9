"""Every private Inductor interface torch_diode touches, behind one door.

Inductor's private attributes and signatures change with every torch release. The worker, the
collector and the selector reach them only through this module, so a new torch breaks here,
loudly (`InductorIncompatible` names what is missing), instead of in many places silently.
Checked against torch 2.11 (`tests/plugin/test_compat.py` runs these functions against fakes
shaped like 2.11's objects; the GPU tests run them against the real thing).
"""

from __future__ import annotations

import contextlib
from typing import Any, Callable, Iterable, Optional

from . import _native

# The hook the selector overrides; older torch called it `_finalize_mm_configs`.
FINALIZE_HOOK = "_finalize_template_configs"
# The FX node meta key that makes Inductor write a node's value out (GraphLowering.run_node realizes
# it, torch/_inductor/graph.py) instead of inlining its computation into each kernel that reads it;
# Inductor's own decomposition of memory-bound mm sets it on its operands.
REALIZE_META = "inductor_realize_to_strides"
# Inductor's feedback saver names for the GEMMs we measure, mapped to problem-JSON ops.
SAVER_OPS = {"mm": "mm", "addmm": "addmm", "bias_addmm": "addmm", "bmm": "bmm", "baddbmm": "baddbmm"}


class InductorIncompatible(RuntimeError):
    """This torch's Inductor lacks an interface torch_diode needs; the message names it."""


def _need(obj: Any, attr: str, where: str) -> Any:
    try:
        return getattr(obj, attr)
    except AttributeError:
        raise InductorIncompatible(
            f"{where} has no '{attr}' in this torch; torch_diode was checked against 2.11"
        ) from None


# ---- the choices handler (selection) ----------------------------------------------------------


def choices_base_class():
    from torch._inductor.choices import InductorChoices

    _need(InductorChoices, FINALIZE_HOOK, "torch._inductor.choices.InductorChoices")
    return InductorChoices


def hook_problem() -> Optional[str]:
    """Why the selection hook cannot be installed in this torch, or None."""
    try:
        from torch._inductor.choices import InductorChoices
        from torch._inductor.virtualized import V
    except Exception as e:  # another torch's layout: the returned reason
        return f"Inductor cannot be imported: {e}"
    if not hasattr(InductorChoices, FINALIZE_HOOK):
        return f"this torch's InductorChoices has no {FINALIZE_HOOK} hook"
    if not hasattr(V, "set_choices_handler"):
        return "this torch's Inductor has no V.set_choices_handler"
    import torch._inductor.config as cfg

    if not hasattr(cfg, CHOICES_FACTORY):
        return f"this torch's Inductor has no config.{CHOICES_FACTORY} (process-wide choices handler)"
    from torch._inductor import virtualized

    if not isinstance(getattr(getattr(virtualized, "_choices", None), "_key", None), str):
        return "this torch's Inductor keeps no per-thread choices handler at virtualized._choices._key"
    return None


def current_choices_handler():
    """The handler this thread has set, or None; never makes one (V.choices would make the
    default, which uninstall() would then pin in this thread over config.inductor_choices_class)."""
    from torch._inductor import virtualized

    holder = getattr(virtualized, "_choices", None)
    key = getattr(holder, "_key", None)
    if isinstance(key, str) and hasattr(virtualized, "threadlocal"):
        return getattr(virtualized.threadlocal, key, None)
    try:
        return virtualized.V.choices
    except Exception:  # no handler set
        return None


def set_choices_handler(handler) -> None:
    from torch._inductor.virtualized import V

    _need(V, "set_choices_handler", "torch._inductor.virtualized.V")(handler)


# Inductor keeps one choices handler per thread (V.choices is thread-local); a thread that has none
# makes it from config.inductor_choices_class. Setting only V.set_choices_handler (torch_diode
# before 0.3) left every other thread, AOTAutograd's backward compile on autograd's device thread
# among them, with Inductor's default handler: measured on a GPT-2 training step, the selector saw
# the forward's 6 GEMMs and none of the backward's.
CHOICES_FACTORY = "inductor_choices_class"


def process_choices_factory():
    """The factory Inductor uses for a thread's first handler (None: its own InductorChoices)."""
    return get_config(CHOICES_FACTORY)


def set_process_choices_factory(factory) -> None:
    set_config(CHOICES_FACTORY, factory)


_handler_generation = [0]


def forget_thread_choices_handlers() -> None:
    """Makes every thread build its next choices handler anew from config.inductor_choices_class.

    A thread that lowered before keeps the handler it made then (V.choices is a thread-local,
    made once), and no API reaches another thread's locals: measured in one process, a training
    step compiled plainly and then with the selector had every backward GEMM fully autotuned,
    because autograd's device thread still held Inductor's default handler. Inductor finds a
    thread's handler under `virtualized._choices._key`; a new key leaves every cached handler
    unused, so the next lowering in any thread asks the factory."""
    from torch._inductor import virtualized

    holder = _need(virtualized, "_choices", "torch._inductor.virtualized")
    key = _need(holder, "_key", "torch._inductor.virtualized._choices")
    if not isinstance(key, str):
        raise InductorIncompatible("torch._inductor.virtualized._choices._key is not a string in this torch")
    _handler_generation[0] += 1
    holder._key = f"{key.split('#')[0]}#diode{_handler_generation[0]}"


@contextlib.contextmanager
def choices_handler(handler):
    """Installs `handler` for the duration of the block, then restores what was there."""
    previous = current_choices_handler()
    set_choices_handler(handler)
    try:
        yield handler
    finally:
        set_choices_handler(previous if previous is not None else choices_base_class()())


def fresh_template_choices(handler, kernel_inputs, templates, op_name, kwarg_overrides):
    """Inductor's own candidate generators again (for a fallback after a failed selection)."""
    overrides = kwarg_overrides or {}
    return {t.uid: handler.get_ktc(kernel_inputs, t, op_name, overrides.get(t.uid, {})) for t in templates}


# ---- KernelTemplateChoice (what the selector sees) --------------------------------------------


def _params_dict(params) -> dict:
    """A KernelTemplateParams' kwargs without copying them where it keeps a dict (2.11's
    DictKernelTemplateParams, what make_ktc_generator yields), else its to_kwargs()."""
    kw = getattr(params, "kwargs", None)
    if type(kw) is dict:
        return kw
    return params.to_kwargs() if params is not None and hasattr(params, "to_kwargs") else {}


def _key_layout() -> tuple:
    """(integer parameters, flags, Inductor's default GROUP_M) of the library's candidate key."""
    v = _native.vocabulary()
    key, flags = v["candidate_key"], v["candidate_flags"]
    return tuple(key[2 : len(key) - len(flags)]), tuple(flags), v["default_group_m"]


def ktc_keys(ktcs) -> list:
    """The library's candidate key (its packed row: kind, name, the parameters, the flags; -1 for
    a flag not given) of each KernelTemplateChoice, in order: "aten::X" is ATen's extern_kernels.X,
    "triton::X" the Triton template X with its parameters (params first, then extra kwargs, as
    KernelTemplateChoice.choice passes them), and anything else, or a Triton choice missing a
    parameter, "other" under its uid (the library says which the model describes). The selector's
    path: a template's kind and name are worked out once per run of choices sharing it."""
    params, flags, group_m = _key_layout()
    blank = (0,) * len(params) + (-1,) * len(flags)
    out = []
    last_template, fixed, head = object(), None, None
    for ktc in ktcs:
        template = getattr(ktc, "template", None)
        if template is not last_template:
            last_template = template
            uid = str(getattr(template, "uid", "") or "")
            kind, _, name = uid.partition("::")
            head = ("triton", name) if kind == "triton" and name else None
            fixed = None if head else (("aten", "extern_kernels." + name) if kind == "aten" else ("other", uid)) + blank
        if fixed is not None:
            out.append(fixed)
            continue
        extra = getattr(ktc, "extra_kwargs", None) or {}
        kw = _params_dict(getattr(ktc, "params", None))
        try:
            values = []
            for f in params:
                v = kw.get(f)
                if v is None:
                    v = extra[f] if f in extra or f != "GROUP_M" else group_m
                values.append(int(v))
            for f in flags:
                v = kw.get(f, extra.get(f))
                values.append(-1 if v is None else int(v))
            out.append(head + tuple(values))
        except (KeyError, TypeError, ValueError):  # a parameter missing or not a number
            out.append(("other", uid) + blank)
    return out


_lookup_keyer = None


def lookup_table_entry(kernel_inputs, op_name: str, kept) -> Optional[dict]:
    """The decision as Inductor's own lookup table has it (torch._inductor.lookup_table, torch
    >= 2.10): {"key": its device-specific key for this lowering, "configs": [{"template_id",
    the kept choice's kwargs..., "template_hash"}]}; None where this torch has no lookup table.
    A table made of these entries (diode lookup-table) gives a compile the same kernels with no
    selector; Inductor itself refuses an entry whose template source changed (template_hash)
    and uses none made on another device kind (the key's device part)."""
    global _lookup_keyer
    try:
        from torch._inductor.lookup_table import LookupTableChoices
    except ImportError:
        return None
    if _lookup_keyer is None:
        _lookup_keyer = LookupTableChoices()
    try:
        key = _lookup_keyer.make_lookup_key(kernel_inputs, op_name, include_device=True)
    except Exception:  # a recording aid must never cost a decision (symbolic sizes)
        return None
    if key is None:
        return None
    configs = []
    for ktc in kept:
        template = getattr(ktc, "template", None)
        entry = {"template_id": str(getattr(template, "uid", "")), **_params_dict(getattr(ktc, "params", None))}
        src_hash = getattr(template, "src_hash", None)
        if src_hash is not None:
            entry["template_hash"] = src_hash
        configs.append(entry)
    return {"key": key, "configs": configs}


def ktc_key(ktc) -> tuple:
    """ktc_keys of one KernelTemplateChoice."""
    return ktc_keys((ktc,))[0]


def _ints(values) -> Optional[tuple]:
    """Static sizes or strides as ints without the size-hint machinery; None when symbolic."""
    try:
        return tuple(int(v) for v in values)
    except TypeError:  # sympy refuses int() of an expression with free symbols
        return None


def _hinted(dims) -> list:
    static = [_ints(d) for d in dims]
    if any(d is None for d in static):  # symbolic: their hints
        from torch._inductor.virtualized import V

        sizes = V.graph.sizevars
        static = [tuple(int(x) for x in sizes.size_hints(d)) for d in dims]
    return static


def addend_broadcast_over_m(kernel_inputs) -> bool:
    """Whether a baddbmm's addend (the first input node; tuned_baddbmm expands it to (B, M, N)) is
    the same for every row m: stride 0 along M, as ALiBi's (B, 1, N), or M = 1."""
    nodes = _need(kernel_inputs, "nodes", "MMKernelInputs")()
    inp = nodes[0]
    size, stride = _hinted([inp.get_size(), inp.get_stride()])
    return len(size) < 2 or size[-2] == 1 or stride[-2] == 0


def kernel_inputs_problem(kernel_inputs) -> tuple:
    """((mat1 size, stride), (mat2 size, stride), dtype) with sizes as integer hints."""
    mat1, mat2 = _need(kernel_inputs, "mat1mat2", "MMKernelInputs")()
    s1, t1, s2, t2 = _hinted([mat1.get_size(), mat1.get_stride(), mat2.get_size(), mat2.get_stride()])
    return (s1, t1), (s2, t2), mat1.get_dtype()


def node_size_stride(node) -> tuple:
    from torch._inductor.virtualized import V

    sizes = V.graph.sizevars
    return tuple(int(x) for x in sizes.size_hints(node.get_size())), tuple(
        int(x) for x in sizes.size_hints(node.get_stride())
    )


# ---- ChoiceCaller (what max-autotune benchmarks) ----------------------------------------------


def choice_info(choice) -> dict:
    """info_dict() reduced to plain values: kernel_call_name for ATen, tile_shape, BLOCK_*,
    num_stages, num_warps, allow_tf32 for Triton."""
    try:
        info = dict(choice.info_dict())
    except Exception:  # a choice without info: no fields, no failure
        return {}
    return {k: v for k, v in info.items() if isinstance(v, (str, int, float, bool))}


def choice_name(choice) -> str:
    return str(getattr(choice, "name", "") or "")


def choice_description(choice) -> str:
    return str(getattr(choice, "description", "") or "")


def is_extern(choice) -> bool:
    from torch._inductor.select_algorithm import ExternKernelCaller

    return isinstance(choice, ExternKernelCaller)


def benchmark_tensors(choices, input_nodes) -> Callable[[Any], tuple]:
    """The input and output tensors Inductor's own autotuning hands each choice (ATen choices get
    views with offsets, Triton ones base tensors), made the way Inductor makes them. Returns a
    function choice -> (inputs, out). Must run inside the compile (V.graph set)."""
    from torch._inductor.select_algorithm import AlgorithmSelectorCache

    get_inputs = _need(AlgorithmSelectorCache, "get_inputs", "AlgorithmSelectorCache")
    layout = _need(choices[0], "layout", "ChoiceCaller")
    args = get_inputs(list(choices), list(input_nodes), layout, None)

    def for_choice(choice):
        return args.get_benchmark_tensors(is_extern(choice)).unpack()

    return for_choice


def choice_run_fn(choice, inputs, out) -> Callable[[], Any]:
    """A no-argument callable that launches the choice's kernel once on the current stream, as
    max-autotune's benchmark does (bmreq.make_run_fn). Create it on the stream it will run on."""
    bmreq = _need(choice, "bmreq", type(choice).__name__)
    if bmreq is None:
        raise InductorIncompatible(f"{type(choice).__name__} has no benchmark request")
    return _need(bmreq, "make_run_fn", type(bmreq).__name__)(*inputs, out=out)


def precompile_choice(choice) -> None:
    """Builds the choice's kernel launchers now (Triton: compiles it, or loads it from Triton's
    cache), so that its first launch compiles nothing. Measured in 2.11: Inductor's precompile
    leaves the run function's kernel without launchers, and its first launch compiled it again,
    inside the GPU lock (80 % of the lock's held time in stack samples). ATen has nothing to build."""
    bmreq = getattr(choice, "bmreq", None)
    build = getattr(bmreq, "precompile", None)
    if callable(build):
        build()


def precompile_choices(choices) -> dict:
    """precompile_choice for each of `choices` on Inductor's compile threads
    (TORCHINDUCTOR_COMPILE_THREADS, default 4), as Inductor's own precompile does. Returns
    {index: exception} of those that failed; the others are built."""
    import os
    from concurrent.futures import ThreadPoolExecutor

    threads = int(os.environ.get("TORCHINDUCTOR_COMPILE_THREADS") or 4)

    def build(i):
        try:
            precompile_choice(choices[i])
            return i, None
        except Exception as e:  # the caller decides what a failure means
            return i, e

    with ThreadPoolExecutor(max_workers=max(1, threads)) as pool:
        return {i: e for i, e in pool.map(build, range(len(choices))) if e is not None}


def cleanup_run_fn(choice) -> None:
    bmreq = getattr(choice, "bmreq", None)
    if bmreq is not None and hasattr(bmreq, "cleanup_run_fn"):
        bmreq.cleanup_run_fn()


# ---- the feedback saver (collection) ----------------------------------------------------------


def add_feedback_saver(fn) -> None:
    """`fn(timings, name, input_nodes, choices, profiled_time_fn, precompile_times)`: six
    positional arguments in 2.11 (a five-argument callback crashes the compile)."""
    from torch._inductor import select_algorithm as sa

    _need(sa, "add_feedback_saver", "torch._inductor.select_algorithm")(fn)


def saver_problem() -> Optional[str]:
    """Why this torch offers no feedback saver to collect timings through, or None."""
    try:
        from torch._inductor import select_algorithm as sa
    except Exception as e:  # another torch's layout: the returned reason
        return f"Inductor's select_algorithm cannot be imported: {e}"
    if not hasattr(sa, "add_feedback_saver"):
        return "this torch's Inductor has no add_feedback_saver"
    return None


def _saver_lists(fn) -> Iterable[list]:
    import torch._inductor.select_algorithm as sa

    holders = [getattr(sa, "_ALGORITHM_SELECTOR_CACHE", None), sa, getattr(sa, "AlgorithmSelectorCache", None)]
    for holder in filter(lambda h: h is not None, holders):
        for attr in ("feedback_saver_fns", "_feedback_savers", "feedback_savers"):
            val = getattr(holder, attr, None)
            if isinstance(val, list) and any(x is fn for x in val):
                yield val


def remove_feedback_saver(fn) -> bool:
    """Removes only `fn` (Inductor's clear_feedback_savers() removes every saver). False when
    this torch keeps its savers somewhere we cannot find."""
    removed = False
    for lst in _saver_lists(fn):
        lst[:] = [x for x in lst if x is not fn]
        removed = True
    return removed


# ---- configuration ----------------------------------------------------------------------------


def max_autotune_options(search_space: str) -> dict:
    """Inductor config for one max-autotune compile of a GEMM in `search_space`."""
    return {
        "max_autotune": True,
        "max_autotune_gemm": True,
        "max_autotune_gemm_backends": "ATEN,TRITON",
        "max_autotune_gemm_search_space": search_space.upper(),
    }


def plain_options() -> dict:
    """Inductor config of plain `torch.compile` (no autotune: ATen/cuBLAS for GEMMs)."""
    return {"max_autotune": False, "max_autotune_gemm": False}


def fresh_cache():
    """Empty Inductor and Triton caches for one compile, as a user's first compile sees them.
    Not `force_disable_caches`: with it the main process compiles every Triton candidate a
    second time, single-threaded, after the parallel precompile (measured: 8-27 s a problem).

    With TORCH_DIODE_WORKER_CACHE=1 (the sweep script sets it, with a cache directory per worker
    process set before Inductor's compile pool starts): no new directory per compile, and no
    FX-graph or autotune caches. A new directory per compile leaves the pool's workers writing
    where the main process no longer looks, so it compiled kernels again inside the benchmark
    (a third of the GPU lock's held time in stack samples on 2 H200s)."""
    import os

    if os.environ.get("TORCH_DIODE_WORKER_CACHE") == "1":
        return config_patch(
            {
                "fx_graph_cache": False,
                "autotune_local_cache": False,
                "autotune_remote_cache": False,
                "fx_graph_remote_cache": False,
            }
        )
    import torch._inductor.utils as iu

    for name in ("fresh_cache", "fresh_inductor_cache"):
        if hasattr(iu, name):
            return getattr(iu, name)()
    raise InductorIncompatible("torch._inductor.utils has neither fresh_cache nor fresh_inductor_cache")


def config_patch(options: dict):
    import torch._inductor.config as cfg

    return cfg.patch(**options)


# Placeholder times a skipped benchmark hands Inductor: ATen looks fastest, so the compile keeps
# what plain torch.compile runs, and no Triton candidate is ever dropped for a slow placeholder.
SKIPPED_BENCHMARK_MS = {"extern": 1.0, "template": 2.0}


@contextlib.contextmanager
def autotune_benchmark(lock=None, skip=False):
    """Changes Inductor's in-process autotune benchmark for the length of the block:
    - `lock` (a context manager factory): the benchmark runs holding it, so workers sharing a GPU
      never benchmark while another times (only with TORCH_DIODE_GPU_LOCK set); the choices'
      kernels are built first, outside the lock (precompile_choices: otherwise their first
      launch inside the benchmark compiles them, holding the GPU idle);
    - `skip`: the benchmark does not run at all; each choice gets a placeholder time
      (SKIPPED_BENCHMARK_MS). The compile still precompiles every candidate, in parallel, and the
      feedback saver still sees every choice, so a sweep can time them in CUDA graphs without
      spending GPU time on Inductor's own number; the placeholders must never be stored.
    Without either, nothing is patched."""
    import os

    lock = lock if lock is not None and os.environ.get("TORCH_DIODE_GPU_LOCK") else None
    if lock is None and not skip:
        yield
        return
    from torch._inductor.select_algorithm import AlgorithmSelectorCache

    name = "benchmark_in_current_process"
    original = AlgorithmSelectorCache.__dict__.get(name)
    if not isinstance(original, classmethod):
        raise InductorIncompatible(f"AlgorithmSelectorCache.{name} is not a classmethod in this torch")

    def placeholders(cls, choices, *args, **kwargs):
        return {c: SKIPPED_BENCHMARK_MS["extern" if is_extern(c) else "template"] for c in choices}

    def locked(cls, choices, *args, **kwargs):
        # Failures are left for Inductor's benchmark to meet and report as it always does.
        precompile_choices(list(choices))
        with lock():
            return original.__func__(cls, choices, *args, **kwargs)

    setattr(AlgorithmSelectorCache, name, classmethod(placeholders if skip else locked))
    try:
        yield
    finally:
        setattr(AlgorithmSelectorCache, name, original)


def sampling_choices_handler(keep: int, seed: int):
    """An InductorChoices whose candidates are every non-Triton one (ATen) plus, of each Triton
    template offering more than `keep` configs, `keep` drawn at random (seeded). For sweeping the
    EXHAUSTIVE space (over 1,000 configs a GEMM) at a cost a sweep can pay."""
    import random

    base = choices_base_class()
    hook = getattr(base, FINALIZE_HOOK)

    def finalize(self, template_choices, kernel_inputs, templates, op_name, kwarg_overrides=None):
        rng = random.Random(seed)
        sampled = {}
        for uid, gen in template_choices.items():
            ktcs = list(gen)
            if not str(uid).startswith("aten") and len(ktcs) > keep:
                ktcs = [ktcs[i] for i in sorted(rng.sample(range(len(ktcs)), keep))]
            sampled[uid] = iter(ktcs)
        return hook(self, sampled, kernel_inputs, templates, op_name, kwarg_overrides)

    cls = type("DiodeConfigSampler", (base,), {FINALIZE_HOOK: finalize})
    return cls()


_smem_limits: dict = {}


def shared_memory_limit(kernel_inputs) -> Optional[int]:
    """Bytes of shared memory one block may opt into on the lowering's CUDA device (what Inductor's
    own pruning reads, shared_memory_per_block_optin), or None where the device does not say."""
    try:
        device = kernel_inputs.device()
        if device.type != "cuda":
            return None
        index = device.index
        if index is None or index not in _smem_limits:
            import torch

            index = torch.cuda.current_device() if index is None else index
            if index not in _smem_limits:
                props = torch.cuda.get_device_properties(index)
                _smem_limits[index] = int(getattr(props, "shared_memory_per_block_optin", 0)) or None
        return _smem_limits[index]
    except Exception:  # no limit known: nothing is excluded for it
        return None


# Inductor's option to benchmark several configurations of a pointwise kernel (and of some
# reductions) at its first run: on in plain torch.compile.
FIRST_RUN_AUTOTUNE = "triton.autotune_pointwise"


def _config_holder(name: str):
    """(the object holding Inductor's option `name`, its last part): "triton.autotune_pointwise" is
    held by torch._inductor.config.triton."""
    import torch._inductor.config as cfg

    *path, last = name.split(".")
    holder, where = cfg, "torch._inductor.config"
    for part in path:
        holder, where = _need(holder, part, where), f"{where}.{part}"
    _need(holder, last, where)
    return holder, last


def has_config(name: str) -> bool:
    """Whether this torch's Inductor has the option `name`."""
    try:
        _config_holder(name)
    except InductorIncompatible:
        return False
    return True


def get_config(name: str):
    holder, last = _config_holder(name)
    return getattr(holder, last)


def set_config(name: str, value) -> None:
    holder, last = _config_holder(name)
    setattr(holder, last, value)


def current_search_space() -> str:
    return str(get_config("max_autotune_gemm_search_space")).upper()
