"""Inductor's pointwise and reduction kernels, translated for the library's kernel-config decision.

Inductor calls InductorChoices.triton_kernel_kwargs for every pointwise and reduction kernel it
generates (torch/_inductor/codegen/triton.py, TritonScheduling.create_kernel_choices), with the
kernel's SIMDKernelFeatures, its tiling and the keyword arguments of the TritonKernel it is about
to make. This module reads those into a kernel shape (core's TritonKernelShape, docs/FORMATS.md),
and turns a configuration the library decided into the arguments Inductor takes for it: a
FixedTritonConfig and the persistence the configuration assumes. Inductor then emits the kernel
with that one configuration, which neither its first-run autotuning nor coordinate descent
touches. The decision itself is the library's (diode_decide "kernel_config").

Every Inductor attribute read here is read through `_read`, so that a torch whose objects changed
shape raises Undescribable (the kernel keeps Inductor's default) rather than failing a compile.
"""

from __future__ import annotations

import math
from typing import Any, Callable, Optional

# The reduction hints the library knows (core ReductionHint), by Inductor's enum member name.
HINTS = {"INNER": "inner", "OUTER": "outer", "OUTER_TINY": "outer_tiny", "DEFAULT": "default"}
_HINT_NAMES = {name: member for member, name in HINTS.items()}
# LoopBody op counts that are not arithmetic (indexing, constants, masks).
_BOOKKEEPING = frozenset(
    {
        "load",
        "store",
        "store_reduction",
        "reduction",
        "index_expr",
        "constant",
        "masked",
        "load_seed",
        "indirect_indexing",
    }
)


class Undescribable(LookupError):
    """A kernel the library's kernel shape cannot describe; `reason` names what, for get_stats()."""

    def __init__(self, reason: str, message: str = ""):
        super().__init__(message or reason)
        self.reason = reason


def _read(obj, attr):
    try:
        return getattr(obj, attr)
    except AttributeError:
        raise Undescribable("inductor_changed", f"Inductor's {type(obj).__name__} has no '{attr}'") from None


def _hint(expr) -> int:
    """A size as an integer: its value when static, Inductor's hint otherwise."""
    from torch._inductor.virtualized import V

    try:
        return int(expr)
    except TypeError:
        pass
    sizevars = V.graph.sizevars
    for name in ("optimization_hint", "size_hint"):
        fn = getattr(sizevars, name, None)
        if fn is not None:
            try:
                return int(fn(expr, fallback=8192))
            except TypeError:
                return int(fn(expr))
    raise Undescribable("inductor_changed", "Inductor's sizevars has neither optimization_hint nor size_hint")


def _dep_bytes(deps, seen: set) -> tuple[float, int]:
    """Bytes of the memory ranges `deps` touch (each buffer and index once) and the widest element."""
    from torch._inductor.dependencies import MemoryDep
    from torch._inductor.virtualized import V

    total, widest = 0.0, 0
    for dep in deps:
        if not isinstance(dep, MemoryDep):  # StarDep (a mutated buffer: a cache written in place), WeakDep
            continue
        key = (dep.name, str(dep.index))
        if key in seen:
            continue
        seen.add(key)
        try:
            itemsize = V.graph.get_dtype(dep.name).itemsize
        except Exception:  # a buffer Inductor cannot type (removed, a symbolic input): not counted
            continue
        total += _hint(dep.get_numel()) * itemsize
        widest = max(widest, itemsize)
    return total, widest


def kernel_shape(kernel_cls, features, groups, kernel_kwargs) -> dict:
    """The kernel shape (docs/FORMATS.md) of the kernel Inductor is about to generate. Raises
    Undescribable for kernels the decision does not cover: scans and sorts, cooperative and
    mix-order reductions, native matmul, tilings with a z or a second reduction dimension, and
    kernels already given a fixed configuration."""
    from torch._inductor.codegen.triton import TritonKernel
    from torch._inductor.virtualized import V

    if kernel_cls is not TritonKernel:
        raise Undescribable("kernel_class", f"{getattr(kernel_cls, '__name__', kernel_cls)} kernels are not decided")
    if kernel_kwargs.get("fixed_config") is not None:
        raise Undescribable("already_fixed")
    if kernel_kwargs.get("mix_order_reduction") or kernel_kwargs.get("override_cooperative_reduction"):
        raise Undescribable("special_reduction")
    for op in ("scan", "sort"):
        if features.contains_op(op):
            raise Undescribable(f"op_{op}")
    if not groups or not isinstance(groups[0], dict):
        raise Undescribable("tiling")
    tiling = groups[0]
    if set(tiling) - {"x", "y", "r0_"} or "x" not in tiling:
        raise Undescribable("tiling", f"tiling {sorted(tiling)}")
    reduction = bool(features.is_reduction())
    shape: dict[str, Any] = {
        "reduction": reduction,
        "x": _hint(tiling["x"]),
        "y": _hint(tiling["y"]) if "y" in tiling else 1,
        "r": _hint(tiling["r0_"]) if reduction and "r0_" in tiling else 1,
    }
    scores = kernel_kwargs.get("tiling_scores") or {}
    if reduction:
        choices = V.choices
        cooperative = bool(choices.should_use_cooperative_reduction(features))
        if cooperative:
            raise Undescribable("special_reduction", "a cooperative reduction")
        hint = features.get_reduction_hint(scores or None)
        shape["hint"] = HINTS.get(getattr(hint, "name", str(hint)), "default")
        persistent = kernel_kwargs.get("override_persistent_reduction")
        if persistent is None:
            persistent = choices.should_use_persistent_reduction(features, cooperative)
        shape["persistent_default"] = bool(persistent)
        # Inductor refuses a persistent reduction whose size is not static (it sets the override to
        # False before the hook): no persistent configuration may be offered then.
        shape["persistent_possible"] = kernel_kwargs.get("override_persistent_reduction") is not False and bool(
            TritonKernel.has_persistent_RBLOCK(features.reduction_numel)
        )
    else:
        shape["hint"] = "none"
    counts = features.op_counts()
    shape["loads"] = int(counts.get("load", 0))
    shape["stores"] = int(counts.get("store", 0) + counts.get("store_reduction", 0))
    shape["reductions"] = int(counts.get("reduction", 0))
    shape["other_ops"] = int(sum(n for op, n in counts.items() if op not in _BOOKKEEPING))
    read_seen: set = set()
    write_seen: set = set()
    bytes_read = bytes_written = 0.0
    widest = 0
    for node in features.scheduler_nodes():
        rw = _read(node, "read_writes")
        r, w = _dep_bytes(rw.reads, read_seen)
        bytes_read += r
        widest = max(widest, w)
        bytes_written += _dep_bytes(rw.writes, write_seen)[0]
    shape["bytes_read"] = bytes_read
    shape["bytes_written"] = bytes_written
    shape["itemsize"] = widest or 4
    x_score, r_score = scores.get("x", 0), scores.get("r0_", 0)
    shape["contiguity"] = math.log2(r_score / x_score) if x_score > 0 and r_score > 0 else 0.0
    return shape


class CodegenView:
    """What Inductor's code generation adds to a kernel's shape when it makes the kernel, read from the
    kernel's memory statistics (SIMDKernelFeatures.memory_stats, Inductor's own estimate of the
    generated code, which torch 2.11 computes for its heuristics after the triton_kernel_kwargs hook
    has run; a tiling with y gets none, and neither field then):
    - `loads`: the estimate's loads of the kernel's persistent or looped form, for the count code
      generation passes the heuristics as num_load (the loads it emits, less those shared or read
      from its own stores; on an H200 the two agreed on every reduction of ten model steps). The
      shape's `loads`, a model feature, counts the load ops of its nodes.
    - `persistent_block`: whether code generation adds a configuration covering the whole row to a
      looped reduction (`add_persistent_rblock`: a decoder layer's RMSNorm), decided inline in
      TritonKernel.codegen_kernel (codegen/triton.py:5505-5551): a looped reduction of two
      dimensions (x and the reduction), its reduction contiguous (the tiling scores' ratio at least
      Inductor's threshold, else its hint inner), the persistent form moving 1.3x fewer bytes,
      2,048 < reduction size <= 32,768, and at most 10 memory operations a thread."""

    def __init__(self, features, groups, kernel_kwargs, shape: dict):
        self.loads, self.persistent_block = None, False
        if not shape["reduction"] or shape["y"] > 1:
            return
        stats = features.memory_stats(groups[0])
        self.loads = int(stats.get(shape["persistent_default"]).reads.count_per_thread)
        self.persistent_block = not shape["persistent_default"] and self._adds_block(
            features, stats, kernel_kwargs, shape
        )

    @staticmethod
    def _adds_block(features, stats, kernel_kwargs, shape: dict) -> bool:
        from torch._inductor.codegen import triton as codegen
        from torch._inductor.virtualized import V

        sizevars = V.graph.sizevars
        numel = features.reduction_numel
        if not (sizevars.statically_known_gt(numel, 2048) and sizevars.statically_known_leq(numel, 32768)):
            return False
        if stats.persistent.memory.dim[0].count_per_thread > 10:
            return False
        scores = kernel_kwargs.get("tiling_scores")
        if scores is not None and "x" in scores and "r0_" in scores:
            threshold = _read(codegen, "INNER_REDUCTION_RATIO_THRESHOLD")
            contiguous = scores["r0_"] / max(scores["x"], 1) >= threshold
        else:  # the hint kernel_shape read with the same scores
            contiguous = shape["hint"] == "inner"
        saved = _hint(stats.looped.memory.bytes) / max(_hint(stats.persistent.memory.bytes), 1)
        return bool(contiguous and saved >= 1.3)


def default_tuned_or_one(features, groups, kernel_kwargs, shape: dict, on_error: Callable[[Exception], None]) -> bool:
    """The kernel shape's `default_tuned`: whether Inductor, compiling as the plugin has it compile,
    gives the kernel several configurations (default_configs, with what its code generation adds:
    CodegenView), which it benchmarks at its first run. Where the view cannot be read (another
    torch's objects), the heuristics are asked without it; where they cannot be asked either, False:
    the kernel is then decided, and recorded, as if its default were one configuration. `on_error`
    is told each failure. The plugin's hook and the kernel sweep's recorder both ask so, with the
    arguments of Inductor's triton_kernel_kwargs."""
    try:
        view = CodegenView(features, groups, kernel_kwargs, shape)
    except Exception as e:
        on_error(e)
        view = None
    try:
        return default_configs(shape, kernel_kwargs.get("tiling_scores"), view) > 1
    except Exception as e:
        on_error(e)
        return False


def default_configs(shape: dict, tiling_scores: Optional[dict] = None, view: Optional[CodegenView] = None) -> int:
    """How many configurations Inductor's heuristics give the kernel `shape` describes when it keeps
    its default, with Inductor's first-run tuning of pointwise kernels off, as the plugin has it while
    it decides kernel configurations (the same answer in a sweep, which runs with Inductor's own
    options); more than one, Inductor benchmarks them at the kernel's first run. Asked of Inductor's
    own heuristic functions (torch/_inductor/runtime/triton_heuristics.py: pointwise, reduction,
    persistent_reduction, each with return_configs), with the other options its code generation
    passes them (TritonKernel.inductor_meta_common) and the kernel's sizes rounded up to powers of two
    as its size hints. `view`: what code generation adds (CodegenView: the loads it issues, a block
    covering the row), as the heuristics are then told; without it the shape's load count stands in.
    Other hints code generation adds beyond them (autotune hints) are not seen here.
    `tiling_scores`: the kernel's own (its TritonKernel arguments'), given for a kernel tiled in y, as
    Inductor's code generation gives them: its heuristics divide the blocks by them, and for a
    reduction tiled in y torch 2.11 asserts they are given."""
    from torch._inductor.codegen.triton import TritonKernel
    from torch._inductor.runtime import triton_heuristics as heuristics
    from torch._inductor.runtime.hints import ReductionHint
    from torch._inductor.runtime.runtime_utils import next_power_of_2

    meta = dict(TritonKernel.inductor_meta_common())
    loads = shape["loads"] if view is None or view.loads is None else view.loads
    meta.update(num_load=loads, num_store=shape["stores"], num_reduction=shape["reductions"])
    meta["autotune_pointwise"] = False
    if view is not None and view.persistent_block:
        meta["add_persistent_rblock"] = True
    triton_meta = {"signature": {}, "device": None, "native_matmul": False}
    # Size hints in Inductor's order (y, x, then the reduction); a kernel tiled in y with its scores.
    sizes = {"y": next_power_of_2(shape["y"])} if shape["y"] > 1 else {}
    sizes["x"] = next_power_of_2(shape["x"])
    if shape["reduction"]:
        sizes["r0_"] = next_power_of_2(shape["r"])
    if "y" in sizes:
        meta["tiling_scores"] = tiling_scores or dict.fromkeys(sizes, 1)
    if shape["reduction"]:
        hint = ReductionHint[_HINT_NAMES[shape["hint"]]]
        heuristic = heuristics.persistent_reduction if shape["persistent_default"] else heuristics.reduction
        configs = heuristic(
            sizes, reduction_hint=hint, triton_meta=triton_meta, inductor_meta=meta, return_configs=True
        )
    else:
        configs = heuristics.pointwise(sizes, triton_meta=triton_meta, inductor_meta=meta, return_configs=True)
    return len(heuristics.unique_configs(configs))


def fixed_kwargs(kernel_kwargs: dict, shape: dict, config: dict) -> dict:
    """Inductor's TritonKernel arguments for `config` (the library's answer): its FixedTritonConfig and,
    for a reduction, the persistence the configuration assumes."""
    from torch._inductor.codegen.triton import FixedTritonConfig

    fixed = {k: v for k, v in config.items() if k != "persistent"}
    out = dict(kernel_kwargs)
    if shape["reduction"]:
        out["override_persistent_reduction"] = bool(config.get("persistent"))
        out["override_cooperative_reduction"] = False
    out["fixed_config"] = FixedTritonConfig(fixed)
    return out


def accepted(kernel_cls, groups, kwargs) -> None:
    """Makes the kernel Inductor would make with `kwargs`, and drops it: a configuration Inductor
    refuses (a block smaller than an index needs, an impossible persistence) raises here, inside
    the hook, where the caller can keep Inductor's default, rather than later in its code generation."""
    kernel_cls(*groups, **kwargs)
