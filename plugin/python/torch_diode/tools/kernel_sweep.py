"""The kernel sweep behind `diode sweep-kernels`: measures what the decisions beside the GEMM kernel
are trained on, in CUDA graphs (torch_diode.tools.ingraph, warm), as kernel and site lines
(docs/FORMATS.md, "Kernel and site lines"):

- kernel lines: one pointwise or reduction kernel of a model family's layers (a norm, a softmax or
  the row statistics a GEMM template's fused softmax reads, attention's reductions at one query
  token, a decomposed GEMV, an activation, a transpose, a training step's sums over the tokens),
  compiled alone by Inductor with its own heuristics (`default_ms`) and with each configuration
  the library may give it (diode_kernel_candidates, core's portfolio: the same configurations a
  decision chooses among) fixed through InductorChoices.triton_kernel_kwargs; then with the
  neighbours of the fastest so far in the kernel's grid while one is faster (REFINE_STEPS steps at
  most), the coordinate descent max-autotune runs, timed in CUDA graphs, so that a line's fastest
  configuration is near the best the grid holds. With --extra-configs-from, a second sweep
  measures the fastest configurations of an earlier one's kernels on every kernel whose grid holds
  them, so that a package trained on it may offer them (KernelConfigModel::extraConfigs). A
  configuration whose output differs from the default's is recorded as an error and never chosen.
- site lines: a small-M GEMM or one-token attention, compiled whole as the library path (plain
  torch.compile) and decomposed into Inductor's multiply-and-sum (torch_diode._forms), with
  Inductor's own configs and under coordinate descent; `decomposed_ms` is the faster decomposed
  time, the form a well-chosen config reaches.

  python3 -m torch_diode.tools.kernel_sweep --out LINES.jsonl [--workers N] [--families a,b]
      [--kinds kernel,site] [--match REGEX] [--deadline-s S] [--extra-configs-from LINES]

Cases already in --out for this GPU are skipped, so a run cut short continues where it stopped; a
run stopped by SIGTERM or Ctrl-C gathers what its workers measured into --out first.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import signal
import subprocess
import sys
import time
import traceback

os.environ.setdefault("TORCH_DIODE_AUTOREGISTER", "0")
os.environ.setdefault("TORCHINDUCTOR_FORCE_DISABLE_CACHES", "1")

# Model families: the layer sizes whose kernels are measured, and what holds out by family.
FAMILIES = {
    "llama2-7b": dict(d=4096, heads=32, kv=32, hd=128, ff=11008, norm="rms", act="silu"),
    "llama3-8b": dict(d=4096, heads=32, kv=8, hd=128, ff=14336, norm="rms", act="silu"),
    "qwen2-0.5b": dict(d=896, heads=14, kv=2, hd=64, ff=4864, norm="rms", act="silu"),
    "gpt2-medium": dict(d=1024, heads=16, kv=16, hd=64, ff=4096, norm="layer", act="gelu"),
    "vit-l16": dict(d=1024, heads=16, kv=16, hd=64, ff=4096, norm="layer", act="gelu"),
}
DECODE_BATCHES = (1, 8, 32)
CONTEXTS = (512, 2048)
PREFILL_TOKENS = (512, 4096)
# Steps of the descent from the fastest portfolio configuration through its neighbours.
REFINE_STEPS = 4
# The tokens of one partial sum: Inductor splits a column sum over 4,096 tokens into 32 of these; the split cases
# use the same at every token count that is a multiple of it (not ViT's 197 a image).
SPLIT_ROWS = 128


def log(msg):
    print(f"[kernel sweep] {msg}", file=sys.stderr, flush=True)


# ---- the cases ---------------------------------------------------------------------------------


def _kernel_cases(family: str, f: dict) -> list:
    """(name, builder) of the single-kernel cases of one family. A builder returns (fn, args)."""
    import torch
    import torch.nn.functional as F

    from .. import _forms

    bf16, dev = torch.bfloat16, "cuda"
    cases = []

    def rand(*shape, dtype=bf16):
        return torch.randn(*shape, device=dev, dtype=dtype)

    def norm(t):
        d = f["d"]
        w = rand(d)
        if f["norm"] == "rms":

            def fn(x, w):
                xf = x.float()
                return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-6)).to(x.dtype) * w

            return fn, (rand(t, d), w)
        b = rand(d)
        return (lambda x, w, b: F.layer_norm(x, (d,), w, b)), (rand(t, d), w, b)

    def act(t):
        ff = f["ff"]
        if f["act"] == "silu":
            return (lambda g, u: F.silu(g) * u), (rand(t, ff), rand(t, ff))
        return (lambda x: F.gelu(x, approximate="tanh")), (rand(t, ff),)

    def softmax(rows, s):
        return (lambda x: torch.softmax(x.float(), -1).to(x.dtype)), (rand(rows, s),)

    def softmax_stats(rows, s):
        # What is left of an attention softmax when the GEMM template after it fuses the
        # normalisation into its loads: the rows' maximum and sum of exponentials of the scaled
        # scores, read from the score GEMM's output with its rows padded to 16 bytes as Inductor
        # pads them (197 tokens are read with a stride of 200).
        scale = f["hd"] ** -0.5
        scores = rand(rows, -(-s // 8) * 8)[:, :s]

        def fn(x):
            xf = x.float() * scale
            amax = xf.amax(-1, keepdim=True)
            return amax, (xf - amax).exp().sum(-1, keepdim=True)

        return fn, (scores,)

    def residual(t):
        return (lambda x, y: x + y), (rand(t, f["d"]), rand(t, f["d"]))

    def heads_transpose(t):
        h, hd = f["heads"], f["hd"]
        return (lambda x: x.view(1, t, h, hd).transpose(1, 2).contiguous()), (rand(t, h * hd),)

    def kv_cache(b, s, concat):
        """A KV cache of `s` tokens at one query token: the cached part and, with `concat`, the new token."""
        cache = rand(b, f["kv"], s - 1 if concat else s, f["hd"])
        return cache, rand(b, f["kv"], 1, f["hd"])

    def grouped(cache, new, b, concat):
        """The cache as attention reads it: grown by torch.cat when `concat`, each KV head expanded to
        its query heads."""
        h, kv, hd = f["heads"], f["kv"], f["hd"]
        k = torch.cat([cache, new], 2) if concat else cache
        return k[:, :, None].expand(b, kv, h // kv, k.shape[2], hd).reshape(b, h, k.shape[2], hd)

    def value_sum(p, v):
        return (p.unsqueeze(-1) * v.float()).sum(-2).to(v.dtype)

    def qk(b, s, concat):
        q = rand(b, f["heads"], 1, f["hd"])

        def fn(q, cache, new):
            return (q.float() * grouped(cache, new, b, concat).float()).sum(-1)

        return fn, (q, *kv_cache(b, s, concat))

    def pv(b, s, concat):
        p = torch.softmax(rand(b, f["heads"], s, dtype=torch.float32), -1)

        def fn(p, cache, new):
            return value_sum(p, grouped(cache, new, b, concat))

        return fn, (p, *kv_cache(b, s, concat))

    def pv_softmax(b, s, concat):
        """The value product as Inductor fuses it into decomposed attention: the softmax's
        normalisation (exp(score - max) / sum, from the row reductions before it) recomputed in the
        reduction over the cache."""
        scores = rand(b, f["heads"], s, dtype=torch.float32)
        amax = scores.amax(-1, keepdim=True)
        denom = (scores - amax).exp().sum(-1, keepdim=True)

        def fn(scores, amax, denom, cache, new):
            return value_sum((scores - amax).exp() / denom, grouped(cache, new, b, concat))

        return fn, (scores, amax, denom, *kv_cache(b, s, concat))

    def gemv(n, k):
        # A projection at batch 1 written as the small-M form pass writes it (torch_diode._forms).
        x, w = rand(1, k), rand(n, k)
        return (lambda x, w: _forms._mm(x, w.t())), (x, w)

    def gemv_float_out(n, k):
        # A projection whose float32 sum the next kernel reads (a residual add fuses the conversion
        # to bf16 there): the attention output's projection in a batch-1 decode step.
        x, w = rand(1, k), rand(n, k)
        return (lambda x, w: _forms._mm_sum(x, w.t())), (x, w)

    def gemv_after_norm(n, k):
        # A projection after the norm at batch 1 with the norm's weight fused into the GEMV's loads
        # (the norm's scale, a reduction of its own, given): how Inductor's decomposition under
        # coordinate descent leaves it. The plugin's form writes a computed input out once instead
        # (materialise_operand), so this is data on GEMVs with arithmetic in their loads.
        x, scale, g, w = rand(1, k), rand(1, 1, dtype=torch.float32), rand(k), rand(n, k)

        def fn(x, scale, g, w):
            return _forms._mm((x.float() * scale).to(x.dtype) * g, w.t())

        return fn, (x, scale, g, w)

    def gemv_after_activation(n, k):
        # The MLP's down projection at batch 1 with the activation (SwiGLU's gate, or GELU) fused in,
        # as Inductor's decomposition under coordinate descent leaves it (the plugin's form reads the
        # activation written out once: materialise_operand).
        a, b, w = rand(1, k), rand(1, k), rand(n, k)
        if f["act"] == "silu":
            return (lambda a, b, w: _forms._mm(F.silu(a) * b, w.t())), (a, b, w)
        return (lambda a, w: _forms._mm(F.gelu(a, approximate="tanh"), w.t())), (a, w)

    def column_sum(t, n):
        # A bias's or a norm weight's gradient in a training step: the output gradient summed over
        # the tokens (a reduction whose outputs are contiguous, read across rows).
        return (lambda g: g.sum(0)), (rand(t, n),)

    def column_sum_split(t, n, rows):
        # The first of the two kernels Inductor splits a long column sum into: partial sums of
        # `rows` tokens each (the second kernel adds the partial sums).
        return (lambda g: g.view(t // rows, rows, n).sum(1)), (rand(t, n),)

    d, ff = f["d"], f["ff"]
    decoder = family != "vit-l16"
    if decoder:
        for t in DECODE_BATCHES:
            cases += [(f"norm-t{t}", lambda t=t: norm(t)), (f"act-t{t}", lambda t=t: act(t))]
            cases.append((f"residual-t{t}", lambda t=t: residual(t)))
        for b in DECODE_BATCHES:
            for s in CONTEXTS:
                for concat in (True, False):
                    tag = f"b{b}-s{s}" + ("-cat" if concat else "")
                    cases.append((f"attn-qk-{tag}", lambda b=b, s=s, c=concat: qk(b, s, c)))
                    cases.append((f"attn-pv-{tag}", lambda b=b, s=s, c=concat: pv(b, s, c)))
                    cases.append((f"attn-pv-softmax-{tag}", lambda b=b, s=s, c=concat: pv_softmax(b, s, c)))
                cases.append((f"softmax-decode-b{b}-s{s}", lambda b=b, s=s: softmax(b * f["heads"], s)))
        for n in sorted({d, ff, 3 * d}):
            cases.append((f"gemv-n{n}-k{d}", lambda n=n: gemv(n, d)))
        cases.append((f"gemv-n{d}-k{ff}", lambda: gemv(d, ff)))
        cases.append((f"gemv-f32out-n{d}-k{d}", lambda: gemv_float_out(d, d)))
        for n in sorted({ff, 3 * d}):
            cases.append((f"gemv-norm-n{n}-k{d}", lambda n=n: gemv_after_norm(n, d)))
        cases.append((f"gemv-act-n{d}-k{ff}", lambda: gemv_after_activation(d, ff)))
        tokens = PREFILL_TOKENS
    else:
        tokens = tuple(197 * b for b in (1, 8, 32))
    for t in tokens:
        cases += [(f"norm-t{t}", lambda t=t: norm(t)), (f"act-t{t}", lambda t=t: act(t))]
        cases.append((f"residual-t{t}", lambda t=t: residual(t)))
        cases.append((f"transpose-t{t}", lambda t=t: heads_transpose(t)))
        s = min(t, 2048) if decoder else 197
        rows = f["heads"] * (t if decoder else t)
        cases.append((f"softmax-t{t}-s{s}", lambda rows=rows, s=s: softmax(rows, s)))
        cases.append((f"softmax-stats-t{t}-s{s}", lambda rows=rows, s=s: softmax_stats(rows, s)))
        for n in sorted({d, 3 * d, ff}):
            cases.append((f"column-sum-t{t}-n{n}", lambda t=t, n=n: column_sum(t, n)))
            if t % SPLIT_ROWS == 0:
                cases.append((f"column-sum-split-t{t}-n{n}", lambda t=t, n=n: column_sum_split(t, n, SPLIT_ROWS)))
    return [(f"{family}/{name}", family, build) for name, build in cases]


def _site_cases(family: str, f: dict) -> list:
    """(name, family, builder) of the small-M sites of one family."""
    import torch
    import torch.nn.functional as F

    bf16, dev = torch.bfloat16, "cuda"
    cases = []
    if family == "vit-l16":
        return cases
    h, kv, hd, d, ff = f["heads"], f["kv"], f["hd"], f["d"], f["ff"]

    def attention(b, s, concat):
        q = torch.randn(b, h, 1, hd, device=dev, dtype=bf16)
        ck = torch.randn(b, kv, s - 1 if concat else s, hd, device=dev, dtype=bf16)
        cv = torch.randn_like(ck)
        nk, nv = torch.randn(b, kv, 1, hd, device=dev, dtype=bf16), torch.randn(b, kv, 1, hd, device=dev, dtype=bf16)

        def fn(q, ck, cv, nk, nv):
            k = torch.cat([ck, nk], 2) if concat else ck
            v = torch.cat([cv, nv], 2) if concat else cv
            if kv != h:
                k = k[:, :, None].expand(b, kv, h // kv, k.shape[2], hd).reshape(b, h, k.shape[2], hd)
                v = v[:, :, None].expand(b, kv, h // kv, v.shape[2], hd).reshape(b, h, v.shape[2], hd)
            return F.scaled_dot_product_attention(q, k, v)

        return fn, (q, ck, cv, nk, nv)

    def projection(n, k):
        x = torch.randn(1, k, device=dev, dtype=bf16)
        w = torch.randn(n, k, device=dev, dtype=bf16)
        return (lambda x, w: x @ w.t()), (x, w)

    for b in (1, 4, 8, 32):
        for s in (512, 2048, 4096):
            for concat in (True, False):
                tag = f"attention-b{b}-s{s}" + ("-cat" if concat else "")
                cases.append((tag, lambda b=b, s=s, c=concat: attention(b, s, c)))
    for n, k in sorted({(d, d), (ff, d), (d, ff), (3 * d, d)}):
        cases.append((f"mm-m1-n{n}-k{k}", lambda n=n, k=k: projection(n, k)))
    return [(f"{family}/{name}", family, build) for name, build in cases]


def all_cases(kinds, families):
    out = []
    for fam in families:
        f = FAMILIES[fam]
        if "kernel" in kinds:
            out += [("kernel",) + c for c in _kernel_cases(fam, f)]
        if "site" in kinds:
            out += [("site",) + c for c in _site_cases(fam, f)]
    return out


# ---- measuring ---------------------------------------------------------------------------------


class _Recorder:
    """A choices handler for the sweep: records the shape of every kernel Inductor generates and,
    with `fix`, gives each kernel of that shape the configuration."""

    def __new__(cls, fix=None):
        from .. import _inductor_compat as compat
        from .. import _kernels

        base = compat.choices_base_class()

        class Recorder(base):
            def __init__(self):
                super().__init__()
                self.shapes, self.undescribed = [], []

            def triton_kernel_kwargs(self, kernel_cls, features, groups, kernel_kwargs):
                kwargs = super().triton_kernel_kwargs(kernel_cls, features, groups, kernel_kwargs)
                try:
                    shape = _kernels.kernel_shape(kernel_cls, features, groups, kwargs)
                except _kernels.Undescribable as e:
                    self.undescribed.append(e.reason)
                    return kwargs
                shape["default_tuned"] = _kernels.default_tuned_or_one(
                    features,
                    groups,
                    kwargs,
                    shape,
                    lambda e: log(
                        f"cannot ask Inductor's heuristics about a kernel's default ({type(e).__name__}: {e})"
                    ),
                )
                self.shapes.append(shape)
                if fix is not None:
                    fixed = _kernels.fixed_kwargs(kwargs, shape, fix)
                    _kernels.accepted(kernel_cls, groups, fixed)
                    return fixed
                return kwargs

        return Recorder()


def _compile(fn, args, handler=None, options=None, pre_pass=None):
    import torch
    import torch._dynamo

    from .. import _inductor_compat as compat

    torch._dynamo.reset()
    patch = {"force_disable_caches": True, **(options or {})}
    if pre_pass is not None:
        patch["post_grad_custom_pre_pass"] = pre_pass
    ctx = compat.choices_handler(handler) if handler is not None else _null()
    with compat.config_patch(patch), ctx:
        compiled = torch.compile(fn, dynamic=False, fullgraph=True)
        out = compiled(*args)
        torch.cuda.synchronize()
    return compiled, out


class _null:
    def __enter__(self):
        return None

    def __exit__(self, *a):
        return False


def _time(compiled, args, timer):
    from .ingraph import gpu_lock

    with gpu_lock(), timer.stream_ctx():
        warm, _ = timer.time(lambda: compiled(*args), cold=False)
    return warm


def _close(out, ref) -> bool:
    if isinstance(ref, (tuple, list)):
        return len(out) == len(ref) and all(_close(o, r) for o, r in zip(out, ref))
    a, b = out.float(), ref.float()
    scale = float(b.abs().max().clamp_min(1e-6))
    return bool(((a - b).abs().max() / scale) < 2e-2)


def _out_of_memory(e) -> bool:
    import torch

    return isinstance(e, torch.cuda.OutOfMemoryError) or "out of memory" in str(e).lower()


def measure_kernel(name, family, build, timer, gpu, extra=()):
    from .. import _native

    fn, args = build()
    rec = _Recorder()
    compiled, ref = _compile(fn, args, rec)
    line = {"kind": "kernel", "name": name, "family": family, **gpu}
    if len(rec.shapes) != 1 or rec.undescribed:
        line.update(skipped=f"{len(rec.shapes)} described kernels, undescribed {rec.undescribed}")
        return line
    shape = rec.shapes[0]
    line["shape"] = shape
    line["default_ms"] = _time(compiled, args, timer)
    results = []

    def measure(cfg):
        entry = {"config": cfg}
        try:
            compiled_c, out = _compile(fn, args, _Recorder(fix=cfg))
            if not _close(out, ref):
                entry["error"] = "wrong result"
            else:
                entry["time_ms"] = _time(compiled_c, args, timer)
        except Exception as e:  # a configuration that does not compile or run is recorded as such
            if _out_of_memory(e):  # the GPU's memory, not the configuration: not measured
                return None
            entry["error"] = f"{type(e).__name__}: {str(e)[:200]}"
        results.append(entry)
        return entry

    seen = _native.kernel_candidates(shape, extra=extra)
    for cfg in seen:
        measure(cfg)
    # Then the neighbourhood of the fastest so far, while a neighbour is faster (REFINE_STEPS steps at
    # most): coordinate descent over the grid, timed as every configuration is.
    for _ in range(REFINE_STEPS):
        timed = [e for e in results if "time_ms" in e]
        if not timed:
            break
        best = min(timed, key=lambda e: e["time_ms"])
        fresh = [c for c in _native.kernel_candidates(shape, near=best["config"]) if c not in seen]
        seen += fresh
        got = [e for e in (measure(c) for c in fresh) if e is not None]
        if not any(e.get("time_ms", math.inf) < best["time_ms"] for e in got):
            break
    line["configs"] = results
    line["grid"] = len(seen)
    return line


def _Configured(package):
    """A choices handler that gives each kernel the configuration the package's kernel-config model
    decides, as the installed plugin does."""
    from .. import _inductor_compat as compat
    from .. import _native
    from .._decisions import Decisions

    decisions = Decisions(_native.Selector(package), kernel_configs=True, small_m=False)

    class Configured(compat.choices_base_class()):
        def triton_kernel_kwargs(self, kernel_cls, features, groups, kernel_kwargs):
            kwargs = super().triton_kernel_kwargs(kernel_cls, features, groups, kernel_kwargs)
            return decisions.kernel_kwargs(kernel_cls, features, groups, kwargs)

    return Configured()


def measure_site(name, family, build, timer, gpu, package=None):
    import torch
    from torch._inductor.custom_graph_pass import CustomGraphPass

    from .. import _forms

    fn, args = build()
    seen = []

    class Always(CustomGraphPass):
        """Writes every site in one form: decomposed, the form whose time the line records beside the
        library form's, or the library form (the attention as written, or over its KV cache as
        stored where its KV heads are grouped: _forms.Site.library)."""

        def __init__(self, decompose: bool):
            self.decompose = decompose

        def __call__(self, graph):
            replaced = {}
            for site in _forms.find_sites(graph):
                seen.append(site.site)
                _forms.follow(site, replaced)
                replaced.update(_forms.rewrite(graph, site, decompose=self.decompose))

        def uuid(self):
            return f"torch_diode.kernel_sweep.{'decompose' if self.decompose else 'library'}_all.{_forms.FORMS_VERSION}"

    line = {"kind": "site", "name": name, "family": family, **gpu}
    with torch.no_grad():
        ref = fn(*args)
    compiled, out = _compile(fn, args, pre_pass=Always(False))
    if any(s.get("stored_cache") for s in seen):  # written over the KV cache as stored (_forms.Site.library)
        line["library_over_cache"] = True
    if not _close(out, ref):
        line["skipped"] = "the library form's output differs"
        return line
    line["library_ms"] = _time(compiled, args, timer)
    seen.clear()
    always = Always(True)
    compiled_d, out = _compile(fn, args, pre_pass=always)
    if len(seen) != 1:
        line["skipped"] = f"{len(seen)} sites"
        return line
    line["site"] = seen[0]
    if not _close(out, ref):
        line["skipped"] = "the decomposed form's output differs"
        return line
    default_ms = _time(compiled_d, args, timer)
    line["decomposed_default_ms"] = default_ms
    if package is None:
        seen.clear()
        compiled_t, _ = _compile(fn, args, options={"coordinate_descent_tuning": True}, pre_pass=always)
        line["decomposed_tuned_ms"] = _time(compiled_t, args, timer)
        line["decomposed_ms"] = min(default_ms, line["decomposed_tuned_ms"])
        return line
    # The decomposed form as the plugin runs it: its kernels given the package's configurations.
    seen.clear()
    compiled_p, _ = _compile(fn, args, handler=_Configured(package), pre_pass=always)
    line["decomposed_ms"] = _time(compiled_p, args, timer)
    line["configs_from"] = os.path.basename(package.path)
    return line


def _gpu():
    import torch

    p = torch.cuda.get_device_properties(0)
    return {"gpu": p.name, "sm_count": p.multi_processor_count}


def _release():
    """Gives the case's GPU memory back: the workers share one GPU."""
    import gc

    import torch
    import torch._dynamo

    torch._dynamo.reset()
    gc.collect()
    torch.cuda.empty_cache()


def run_shard(cases, out_path, deadline, workers=1, package_path="", extra=()):
    import torch

    from .._native import Model

    from .ingraph import GraphTimer

    if workers > 1:  # each worker keeps to its share of the GPU's memory
        torch.cuda.set_per_process_memory_fraction(0.9 / workers)
    package = Model(package_path) if package_path else None
    started = time.monotonic()
    timer = GraphTimer()
    gpu = _gpu()
    for kind, name, family, build in cases:
        if deadline and time.monotonic() - started > deadline:
            log(f"deadline: stopping before {name}")
            break
        t0 = time.monotonic()
        try:
            if kind == "kernel":
                line = measure_kernel(name, family, build, timer, gpu, extra)
            else:
                line = measure_site(name, family, build, timer, gpu, package)
        except Exception as e:  # one case failing must not end the sweep
            line = {"kind": kind, "name": name, "family": family, "skipped": f"{type(e).__name__}: {e}"}
            log(traceback.format_exc())
        line["seconds"] = round(time.monotonic() - t0, 2)
        _release()
        with open(out_path, "a") as f:
            f.write(json.dumps(line) + "\n")
        log(f"{name}: {line.get('skipped') or 'done'} in {line['seconds']} s")


def _parts(out):
    """Worker files a run stopped before it gathered them (a SIGKILL, a crash)."""
    import glob

    return sorted(glob.glob(glob.escape(out) + ".part*"))


def _lines(path):
    """(text, entry) of each line `path` holds, blank ones left out; entry is None for a line that
    is no JSON (a worker killed while writing it)."""
    if path and os.path.exists(path):
        with open(path) as f:
            for text in f:
                if not text.strip():
                    continue
                try:
                    yield text, json.loads(text)
                except ValueError:
                    yield text, None


def _gather(out, parts):
    """Appends the workers' lines to `out`, a case of a GPU once (a line a killed worker left half
    written is dropped, its case measured again), and removes their files."""
    done = {(e.get("gpu"), e.get("name")) for _, e in _lines(out) if e is not None}
    with open(out, "a") as dst:
        for part in parts:
            for text, entry in _lines(part):
                if entry is None:
                    log(f"{part}: an unfinished line dropped")
                    continue
                key = (entry.get("gpu"), entry.get("name"))
                if key not in done:
                    dst.write(text if text.endswith("\n") else text + "\n")
                    done.add(key)
            os.remove(part)


class _Stopped(Exception):
    pass


def _stop(signum, frame):
    raise _Stopped()


def _done(path, gpu=None):
    """The cases `path` holds lines of (of `gpu` only, when given: another GPU's lines measure
    nothing here; a skipped case, which names no GPU, counts for every GPU)."""
    names = set()
    for _, entry in _lines(path):
        if entry is None or "name" not in entry or (gpu and entry.get("gpu", gpu) != gpu):
            continue
        # A case the GPU's memory stopped is measured again.
        if "out of memory" not in str(entry.get("skipped", "")).lower():
            names.add(entry["name"])
    return names


def extra_configs_from(paths: str) -> list:
    """The configurations --extra-configs-from names (comma-separated kernel line files): the fastest
    beyond its portfolio of each of their kernels (diode_fastest_beyond_portfolio); [] for ""."""
    if not paths:
        return []
    from .._native import fastest_beyond_portfolio

    try:
        return fastest_beyond_portfolio([p for p in paths.split(",") if p])
    except Exception as e:  # the library names the file, line and field
        raise ValueError(f"--extra-configs-from: {e}") from None


def match_pattern(ap: argparse.ArgumentParser, text: str) -> re.Pattern:
    """--match compiled; a pattern that is not a regular expression ends the tool with the parser's
    error naming it (the kernel sweep's and the step sweep's alike)."""
    try:
        return re.compile(text)
    except re.error as e:
        ap.error(f"--match {text!r} is not a regular expression: {e}")


def main(argv=None):
    ap = argparse.ArgumentParser(
        prog="python3 -m torch_diode.tools.kernel_sweep",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument("--out", required=True, help="kernel and site lines are appended here")
    ap.add_argument("--kinds", default="kernel,site", help="kernel, site or both (default)")
    ap.add_argument("--families", default=",".join(FAMILIES), help=f"from {', '.join(FAMILIES)}")
    ap.add_argument("--workers", type=int, default=1, help="processes sharing the GPU (they compile in parallel)")
    ap.add_argument("--shard", default="", help=argparse.SUPPRESS)
    ap.add_argument("--done-from", default="", help=argparse.SUPPRESS)
    ap.add_argument("--deadline-s", type=float, default=0, help="start no new case after this many seconds")
    ap.add_argument("--limit", type=int, default=0, help="only the first N cases still to measure")
    ap.add_argument("--match", default="", help="only the cases whose name (family/case) this regular expression finds")
    ap.add_argument(
        "--package",
        default="",
        help="sites: time the decomposed form with this package's kernel configurations, as the plugin runs it "
        "(default: Inductor's own and coordinate descent's, the faster)",
    )
    ap.add_argument(
        "--extra-configs-from",
        default="",
        help="kernels: also measure, on every kernel whose grid holds it, the fastest configuration beyond its "
        "portfolio of each kernel of these comma-separated kernel line files (a package trained on the result "
        "offers them to its decisions)",
    )
    ap.add_argument("--list", action="store_true", help="print the cases and exit")
    a = ap.parse_args(argv)
    kinds = [k for k in a.kinds.split(",") if k]
    families = [f for f in a.families.split(",") if f]
    bad = [f for f in families if f not in FAMILIES] + [k for k in kinds if k not in ("kernel", "site")]
    if bad:
        ap.error(f"unknown families or kinds: {bad}")
    pattern = match_pattern(ap, a.match)
    try:
        extra = extra_configs_from(a.extra_configs_from)
    except ValueError as e:
        ap.error(str(e))
    cases = [c for c in all_cases(kinds, families) if pattern.search(c[1])]
    leftover = [] if a.shard else _parts(a.out)
    # A worker knows its GPU, and measures what --out lacks of it; the parent and --list count by
    # case name alone (they start no CUDA context).
    gpu = _gpu()["gpu"] if a.shard else None
    done = _done(a.out, gpu) | _done(a.done_from, gpu)
    for part in leftover:
        done |= _done(part)
    todo = [c for c in cases if c[1] not in done]
    if a.limit:
        todo = todo[: a.limit]
    if a.list:
        for c in todo:
            print(c[0], c[1])
        return 0
    if a.shard:
        i, n = (int(x) for x in a.shard.split("/"))
        run_shard(todo[i::n], a.out, a.deadline_s, n, a.package, extra)
        return 0
    from .worker import environment_problem

    why = environment_problem()
    if why:
        print(f"error: the kernel sweep needs a GPU with torch and Triton: {why}", file=sys.stderr)
        return 3
    _gather(a.out, leftover)
    log(f"{len(todo)} of {len(cases)} cases to measure, {a.workers} workers")
    env = dict(os.environ, TORCHINDUCTOR_COMPILE_THREADS="1")
    env.setdefault("TORCH_DIODE_GPU_LOCK", f"/tmp/torch_diode_kernel_sweep_{os.getpid()}.lock")
    procs = []
    for w in range(a.workers):
        part = f"{a.out}.part{w}"
        cmd = [
            sys.executable,
            "-m",
            "torch_diode.tools.kernel_sweep",
            "--out",
            part,
            "--kinds",
            a.kinds,
            "--families",
            a.families,
            "--shard",
            f"{w}/{a.workers}",
            "--deadline-s",
            str(a.deadline_s),
            "--done-from",
            a.out,
            "--limit",
            str(a.limit),
            f"--match={a.match}",  # one argument: a pattern may begin with "-"
            "--package",
            a.package,
            "--extra-configs-from",
            a.extra_configs_from,
        ]
        procs.append((subprocess.Popen(cmd, env=env), part))
    # SIGTERM (a cancel) stops the workers; what they wrote is gathered into --out either way.
    signal.signal(signal.SIGTERM, _stop)
    stopped = False
    try:
        for p, _ in procs:
            p.wait()
    except (_Stopped, KeyboardInterrupt):
        stopped = True
        for p, _ in procs:
            p.terminate()
        for p, _ in procs:
            p.wait()
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        _gather(a.out, [part for _, part in procs if os.path.exists(part)])
    if stopped:
        log("stopped: the lines measured so far are in " + a.out)
        return 128 + signal.SIGTERM
    return 0


if __name__ == "__main__":
    sys.exit(main())
