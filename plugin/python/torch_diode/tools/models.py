"""Whole model steps for `diode demo --models`: what users compile, not single GEMMs.

Written in plain PyTorch so that every GEMM is one Inductor lowers (nn.Linear: mm/addmm with a
column-major weight; attention as in Hugging Face's "eager" attention: two matmuls, i.e. bmm,
against the KV cache).

- llama: a Llama-2-7B-shaped decoder of LLAMA_LAYERS layers (RMSNorm, Q/K/V/O projections,
  SiLU-gated MLP, rotary embedding left out: it adds no GEMM), no bias.
  decode: B sequences, one new token each, attending to a KV cache of `context` tokens, kept one of
  two ways: "static" (the new key and value written into a preallocated cache in place, as a
  static cache does) or "cat" (the cache grown by torch.cat, as Hugging Face's dynamic cache and
  most hand-written decode loops do); prefill: B sequences of `context` tokens, causal.
- gqa: one Llama-3-8B-shaped layer (32 query heads, 8 KV heads repeated to the query heads with
  expand and reshape, as Hugging Face's repeat_kv does; SiLU-gated MLP of 14,336).
- Attention is "eager" (two matmuls and a softmax, which Inductor may itself turn into
  scaled_dot_product_attention) or "sdpa" (F.scaled_dot_product_attention, what most models
  now call).
- gpt2-train: a GPT-2-medium block's training step at B x S tokens: forward, backward, and an
  AdamW step (fused, eager: it has no GEMM).
- vit: a ViT-L/16 block over B images of 197 tokens (inference).

Every step is timed as it runs inside a CUDA graph (torch_diode.tools.ingraph, warm and L2-flushed):
the truth the selector is trained on, without the CPU's launch gaps. The training step captures
whole (forward, backward through the compiled AOTAutograd graph, fused AdamW with
capturable=True, gradients zeroed in place), as PyTorch's whole-network capture does; timed per
iteration between CUDA events instead, the same step varied by 8 % between two runs of one mode
on an H200, more than the differences being measured.
"""

from __future__ import annotations

import math
import re

LLAMA = dict(d=4096, heads=32, kv_heads=32, ff=11008)
LLAMA_LAYERS = 2
GQA = dict(d=4096, heads=32, kv_heads=8, ff=14336)
GQA_LAYERS = 1
GPT2_MEDIUM = dict(d=1024, heads=16, ff=4096)
VIT_L = dict(d=1024, heads=16, ff=4096, tokens=197)

# The default scenario set of `diode demo --models`. Any name of the grammar parse_scenario reads is a
# scenario too (another batch or context, say).
SCENARIOS = (
    "llama-decode-b1-s512",
    "llama-decode-b8-s1024",
    "llama-decode-b32-s4096",
    "llama-decode-cat-b1-s512",
    "llama-decode-cat-b8-s1024",
    "llama-decode-cat-b32-s4096",
    "llama-decode-sdpa-b8-s1024",
    "gqa-decode-cat-b1-s4096",
    "gqa-decode-cat-b4-s2048",
    "gqa-decode-cat-b32-s1024",
    "gqa-decode-sdpa-b4-s2048",
    "llama-prefill-b1-s1024",
    "llama-prefill-b1-s4096",
    "gqa-prefill-b1-s2048",
    "gpt2-train-b8-s512",
    "vit-b8",
)
SCENARIO_GRAMMAR = "{llama,gqa}-decode[-cat|-sdpa]-bB-sS, {llama,gqa}-prefill-bB-sS, gpt2-train-bB-sS or vit-bB"
_SCENARIO = re.compile(
    r"^(?:(?P<model>llama|gqa)-(?P<kind>decode|prefill)(?:-(?P<form>cat|sdpa))?|(?P<train>gpt2-train)|(?P<vit>vit))"
    r"-b(?P<batch>[1-9][0-9]*)(?:-s(?P<context>[1-9][0-9]*))?$"
)


def parse_scenario(name: str) -> tuple:
    """(kind, parameters) of a scenario name (SCENARIO_GRAMMAR: the model, the step, how a decode keeps
    its KV cache or computes attention, the batch and the context); ValueError naming what is wrong.
    A decode keeps a static cache unless named "-cat" (grown by torch.cat) or "-sdpa" (grown by
    torch.cat, attention by F.scaled_dot_product_attention)."""
    m = _SCENARIO.match(name)
    form = m and m.group("form")
    if not m or bool(m.group("vit")) == bool(m.group("context")) or (form and m.group("kind") != "decode"):
        raise ValueError(f"model scenario '{name}' is not of the form {SCENARIO_GRAMMAR}")
    p = {"batch": int(m.group("batch"))}
    if m.group("vit"):
        return "vit", p
    p["context"] = int(m.group("context"))
    if m.group("train"):
        return "train", p
    if m.group("model") == "gqa":
        p["model"] = "gqa"
    if form:
        p["cache"] = "cat"
    if form == "sdpa":
        p["attention"] = "sdpa"
    return m.group("kind"), p


# The scenarios of the model-level table (docs/BENCHMARKS.md, "Model steps"): decode with a cache grown
# by torch.cat at batch 1 and 8, grouped-query decode, the same with scaled_dot_product_attention, and
# a grouped-query prefill.
TABLE_SCENARIOS = (
    "llama-decode-cat-b8-s1024",
    "llama-decode-cat-b1-s512",
    "gqa-decode-cat-b4-s2048",
    "llama-decode-sdpa-b8-s1024",
    "gqa-prefill-b1-s2048",
)
DTYPES = ("bf16", "fp16")  # a scenario's dtypes; the first is the default


def _modules():
    import torch
    import torch.nn.functional as F
    from torch import nn

    from .blocks import rmsnorm_class

    RMSNorm = rmsnorm_class()

    def attend(q, k, v, mask, sdpa=False):
        """q (B, H, T, hd), k/v (B, H, S, hd): two matmuls (bmm) and a softmax in fp32, or
        scaled_dot_product_attention."""
        if sdpa:
            return F.scaled_dot_product_attention(q, k, v, attn_mask=None if mask is None else ~mask)
        scores = torch.matmul(q, k.transpose(-1, -2)) * (1.0 / math.sqrt(q.shape[-1]))
        if mask is not None:
            scores = scores.masked_fill(mask, float("-inf"))
        return torch.matmul(torch.softmax(scores.float(), -1).to(q.dtype), v)

    def repeat_kv(x, n):
        """(B, KV, S, hd) -> (B, KV * n, S, hd), as Hugging Face's repeat_kv: expand, then reshape."""
        if n == 1:
            return x
        b, kv, s_, hd = x.shape
        return x[:, :, None].expand(b, kv, n, s_, hd).reshape(b, kv * n, s_, hd)

    class LlamaLayer(nn.Module):
        def __init__(self, d, heads, kv_heads, ff, sdpa=False):
            super().__init__()
            self.heads, self.kv_heads, self.hd, self.sdpa = heads, kv_heads, d // heads, sdpa
            self.norm1, self.norm2 = RMSNorm(d), RMSNorm(d)
            self.q = nn.Linear(d, d, bias=False)
            self.k = nn.Linear(d, kv_heads * self.hd, bias=False)
            self.v = nn.Linear(d, kv_heads * self.hd, bias=False)
            self.o = nn.Linear(d, d, bias=False)
            self.gate = nn.Linear(d, ff, bias=False)
            self.up = nn.Linear(d, ff, bias=False)
            self.down = nn.Linear(ff, d, bias=False)

        def forward(self, x, cache_k=None, cache_v=None, pos=None, mask=None):
            """Decode with a static cache: `pos` is where the new token goes (written in place).
            Decode with a growing cache: `pos` None, the new key and value concatenated to it."""
            b, t, d = x.shape
            h = self.norm1(x)

            def split(y):
                return y.view(b, t, -1, self.hd).transpose(1, 2)

            q, k, v = split(self.q(h)), split(self.k(h)), split(self.v(h))
            if cache_k is not None and pos is not None:
                cache_k[:, :, pos : pos + t] = k
                cache_v[:, :, pos : pos + t] = v
                k, v = cache_k[:, :, : pos + t], cache_v[:, :, : pos + t]
            elif cache_k is not None:
                k, v = torch.cat([cache_k, k], 2), torch.cat([cache_v, v], 2)
            n = self.heads // self.kv_heads
            a = attend(q, repeat_kv(k, n), repeat_kv(v, n), mask, self.sdpa).transpose(1, 2).reshape(b, t, d)
            x = x + self.o(a)
            h = self.norm2(x)
            return x + self.down(F.silu(self.gate(h)) * self.up(h))

    class Block(nn.Module):
        """GPT-2 and ViT: pre-LayerNorm, fused QKV with bias, GELU MLP."""

        def __init__(self, d, heads, ff):
            super().__init__()
            self.heads, self.hd = heads, d // heads
            self.norm1, self.norm2 = nn.LayerNorm(d), nn.LayerNorm(d)
            self.qkv = nn.Linear(d, 3 * d)
            self.proj = nn.Linear(d, d)
            self.fc1, self.fc2 = nn.Linear(d, ff), nn.Linear(ff, d)

        def forward(self, x, mask=None):
            b, t, d = x.shape
            q, k, v = self.qkv(self.norm1(x)).view(b, t, 3, self.heads, self.hd).permute(2, 0, 3, 1, 4)
            x = x + self.proj(attend(q, k, v, mask).transpose(1, 2).reshape(b, t, d))
            return x + self.fc2(F.gelu(self.fc1(self.norm2(x)), approximate="tanh"))

    return LlamaLayer, Block


class Scenario:
    """One model step: `fn(*args)` runs it; `training` says it runs a backward and an optimizer
    step."""

    def __init__(self, name, kind, fn, args, training, params):
        self.name, self.kind, self.fn, self.args, self.training, self.params = name, kind, fn, args, training, params


def scenario(name: str, dtype: str) -> Scenario:
    """Builds the scenario `name` (parse_scenario) in `dtype` on the GPU, weights random (seed 0)."""
    import torch

    kind, p = parse_scenario(name)
    if dtype not in DTYPES:
        raise ValueError(f"dtype '{dtype}' is neither bf16 nor fp16")
    from .._selector import TORCH_DTYPE_NAMES

    dt = getattr(torch, TORCH_DTYPE_NAMES[dtype])
    LlamaLayer, Block = _modules()
    torch.manual_seed(0)
    dev = "cuda"
    params = dict(p, dtype=dtype)
    if kind in ("decode", "prefill"):
        shape, n_layers = (GQA, GQA_LAYERS) if p.get("model") == "gqa" else (LLAMA, LLAMA_LAYERS)
        sdpa = p.get("attention") == "sdpa"
        layers = torch.nn.ModuleList([LlamaLayer(**shape, sdpa=sdpa) for _ in range(n_layers)]).to(dev, dt).eval()
        for prm in layers.parameters():
            prm.requires_grad_(False)
        b, s, hd = p["batch"], p["context"], shape["d"] // shape["heads"]
        params.update(layers=n_layers, **shape)
        if kind == "decode":
            grows = p.get("cache") == "cat"
            # A static cache holds `context` tokens, the new one written at context - 1; a growing one
            # holds context - 1 and gains the new one by torch.cat.
            cache_shape = (b, shape["kv_heads"], s - 1 if grows else s, hd)
            caches = [
                (torch.randn(cache_shape, device=dev, dtype=dt), torch.randn(cache_shape, device=dev, dtype=dt))
                for _ in layers
            ]
            x = torch.randn(b, 1, shape["d"], device=dev, dtype=dt)
            flat = [t for kv in caches for t in kv]
            pos = None if grows else s - 1

            def decode(x, *cache):
                with torch.no_grad():
                    for i, layer in enumerate(layers):
                        x = layer(x, cache[2 * i], cache[2 * i + 1], pos)
                    return x

            return Scenario(name, kind, decode, (x, *flat), False, params)
        x = torch.randn(b, s, shape["d"], device=dev, dtype=dt)
        mask = torch.ones(s, s, device=dev, dtype=torch.bool).triu(1)

        def prefill(x, mask):
            with torch.no_grad():
                for layer in layers:
                    x = layer(x, mask=mask)
                return x

        return Scenario(name, kind, prefill, (x, mask), False, params)
    if kind == "vit":
        block = Block(VIT_L["d"], VIT_L["heads"], VIT_L["ff"]).to(dev, dt).eval()
        for prm in block.parameters():
            prm.requires_grad_(False)
        x = torch.randn(p["batch"], VIT_L["tokens"], VIT_L["d"], device=dev, dtype=dt)
        params.update(VIT_L)

        def vit(x):
            with torch.no_grad():
                return block(x)

        return Scenario(name, kind, vit, (x,), False, params)
    # Training: the block in the working dtype (as a bf16/fp16 model trains without autocast), AdamW.
    block = Block(GPT2_MEDIUM["d"], GPT2_MEDIUM["heads"], GPT2_MEDIUM["ff"]).to(dev, dt).train()
    params.update(GPT2_MEDIUM)
    b, s = p["batch"], p["context"]
    x = torch.randn(b, s, GPT2_MEDIUM["d"], device=dev, dtype=dt)
    target = torch.randn_like(x)
    mask = torch.ones(s, s, device=dev, dtype=torch.bool).triu(1)
    # capturable: the step counters live on the GPU, so the step captures into a CUDA graph.
    opt = torch.optim.AdamW(block.parameters(), lr=1e-5, fused=True, capturable=True)
    holder = {"model": block}

    def step(x, target, mask):
        out = holder["model"](x, mask)
        loss = torch.nn.functional.mse_loss(out.float(), target.float())
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=False)  # in place: a graph replays into the same gradients
        return loss

    s_ = Scenario(name, kind, step, (x, target, mask), True, params)
    s_.module_holder = holder  # the demo compiles the module, not the optimizer step
    return s_


def compile_scenario(sc: Scenario, **compile_kwargs):
    """The compiled step: the forward function, or for training the module (forward and its
    backward through AOTAutograd) inside an eager step with the optimizer."""
    import torch

    if not sc.training:
        return torch.compile(sc.fn, dynamic=False, fullgraph=True, **compile_kwargs)
    holder = sc.module_holder
    eager = holder.get("eager") or holder["model"]
    holder["eager"] = eager
    holder["model"] = torch.compile(eager, dynamic=False, fullgraph=True, **compile_kwargs)
    return sc.fn


def step_times(sc: Scenario, compiled, timer) -> tuple:
    """(warm_ms, cold_ms) of one step, run inside a CUDA graph (torch_diode.tools.ingraph). The training
    step's first calls (on the timer's stream, before capture) compile its backward and create the
    optimizer's state."""
    with timer.stream_ctx():
        return timer.time(lambda: compiled(*sc.args))


def check_output(sc: Scenario, compiled, eager_out) -> float:
    """Largest |compiled - eager| relative to eager's largest value (forward scenarios). Called in the
    grad mode the step was compiled in: Dynamo guards it at the call, so another would compile the
    step again (a second max-autotune compile); a forward scenario turns gradients off inside."""
    got = compiled(*sc.args).float()
    ref = eager_out.float()
    return float((got - ref).abs().max() / ref.abs().max().clamp_min(1e-6))


# Where a step's time goes: each kernel's name says what it is (cuBLAS's nvjet/cutlass GEMMs,
# cuDNN's and flash attention, Inductor's triton_{poi,red,per,tem,unk}_fused_<original ops>).
_ATTENTION_WORDS = ("scaled_dot_product", "flash", "fmha", "sdpa", "attention", "softmax", "bmm")
_GEMM_PREFIXES = ("nvjet", "sm90_", "sm80_", "cutlass", "ampere", "gemm", "cublas", "triton_tem", "void cublaslt")


def kernel_category(name: str) -> str:
    """ "gemm", "attention", "reduction", "pointwise", "copy" or "other" for a kernel's name."""
    import re

    n = name.lower()
    if any(w in n for w in _ATTENTION_WORDS):
        return "attention"
    if n.startswith(_GEMM_PREFIXES) or "splitkreduce" in n or re.search(r"(^|_)(mm|addmm)(_|$)", n):
        return "gemm"
    if "memcpy" in n or "memset" in n or n.startswith("void at::native::") and "copy" in n:
        return "copy"
    if n.startswith(("triton_red", "triton_per")) or (
        n.startswith("triton_unk") and re.search(r"_(sum|mean|amax|max|var)", n)
    ):
        return "reduction"
    if n.startswith("triton"):
        return "pointwise"
    return "other"


def kernel_breakdown(sc: Scenario, compiled, steps: int = 10) -> list:
    """[{"name", "category", "us"}] per step, largest first: the compiled step run `steps` times
    under torch.profiler (CUDA activity), each kernel's GPU time divided by the steps."""
    import torch
    from torch.profiler import ProfilerActivity, profile

    for _ in range(3):
        compiled(*sc.args)
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(steps):
            compiled(*sc.args)
        torch.cuda.synchronize()
    totals: dict = {}
    for e in prof.key_averages():
        us = getattr(e, "self_device_time_total", 0) or getattr(e, "self_cuda_time_total", 0)
        if us > 0:
            totals[e.key] = totals.get(e.key, 0.0) + us / steps
    rows = [{"name": k, "category": kernel_category(k), "us": round(v, 2)} for k, v in totals.items()]
    return sorted(rows, key=lambda r: -r["us"])
