"""Whole model steps for `diode demo --models`: what users compile, not single GEMMs.

Written in plain PyTorch so that every GEMM is one Inductor lowers (nn.Linear: mm/addmm with a
column-major weight; attention as in Hugging Face's "eager" attention: two matmuls, i.e. bmm,
against the KV cache).

- llama: a Llama-2-7B-shaped decoder of LLAMA_LAYERS layers (RMSNorm, Q/K/V/O projections,
  SiLU-gated MLP, rotary embedding left out: it adds no GEMM), no bias.
  decode: B sequences, one new token each, attending to a static KV cache of `context` tokens
  (the new key and value written into the cache in place, as a static cache does); prefill: B
  sequences of `context` tokens, causal.
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

LLAMA = dict(d=4096, heads=32, kv_heads=32, ff=11008)
LLAMA_LAYERS = 2
GPT2_MEDIUM = dict(d=1024, heads=16, ff=4096)
VIT_L = dict(d=1024, heads=16, ff=4096, tokens=197)

# name -> (kind, parameters). The default scenario set of `diode demo --models`.
SCENARIOS = {
    "llama-decode-b1-s512": ("decode", dict(batch=1, context=512)),
    "llama-decode-b8-s1024": ("decode", dict(batch=8, context=1024)),
    "llama-decode-b32-s4096": ("decode", dict(batch=32, context=4096)),
    "llama-prefill-b1-s1024": ("prefill", dict(batch=1, context=1024)),
    "llama-prefill-b1-s4096": ("prefill", dict(batch=1, context=4096)),
    "gpt2-train-b8-s512": ("train", dict(batch=8, context=512)),
    "vit-b8": ("vit", dict(batch=8)),
}
DTYPES = ("bf16", "fp16")  # a scenario's dtypes; the first is the default


def _modules():
    import torch
    import torch.nn.functional as F
    from torch import nn

    from .blocks import rmsnorm_class

    RMSNorm = rmsnorm_class()

    def attend(q, k, v, mask):
        """q (B, H, T, hd), k/v (B, H, S, hd): two matmuls (bmm) and a softmax in fp32."""
        scores = torch.matmul(q, k.transpose(-1, -2)) * (1.0 / math.sqrt(q.shape[-1]))
        if mask is not None:
            scores = scores.masked_fill(mask, float("-inf"))
        return torch.matmul(torch.softmax(scores.float(), -1).to(q.dtype), v)

    class LlamaLayer(nn.Module):
        def __init__(self, d, heads, kv_heads, ff):
            super().__init__()
            self.heads, self.hd = heads, d // heads
            self.norm1, self.norm2 = RMSNorm(d), RMSNorm(d)
            self.q = nn.Linear(d, d, bias=False)
            self.k = nn.Linear(d, kv_heads * self.hd, bias=False)
            self.v = nn.Linear(d, kv_heads * self.hd, bias=False)
            self.o = nn.Linear(d, d, bias=False)
            self.gate = nn.Linear(d, ff, bias=False)
            self.up = nn.Linear(d, ff, bias=False)
            self.down = nn.Linear(ff, d, bias=False)

        def forward(self, x, cache_k=None, cache_v=None, pos=0, mask=None):
            b, t, d = x.shape
            h = self.norm1(x)

            def split(y):
                return y.view(b, t, -1, self.hd).transpose(1, 2)

            q, k, v = split(self.q(h)), split(self.k(h)), split(self.v(h))
            if cache_k is not None:  # decode: write the new token into the static cache, attend to all
                cache_k[:, :, pos : pos + t] = k
                cache_v[:, :, pos : pos + t] = v
                k, v = cache_k[:, :, : pos + t], cache_v[:, :, : pos + t]
            a = attend(q, k, v, mask).transpose(1, 2).reshape(b, t, d)
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
    """Builds one of SCENARIOS in `dtype` on the GPU, weights random (seed 0)."""
    import torch

    if name not in SCENARIOS:
        raise ValueError(f"model scenario '{name}' is not one of {', '.join(SCENARIOS)}")
    if dtype not in DTYPES:
        raise ValueError(f"dtype '{dtype}' is neither bf16 nor fp16")
    kind, p = SCENARIOS[name]
    from .._selector import TORCH_DTYPE_NAMES

    dt = getattr(torch, TORCH_DTYPE_NAMES[dtype])
    LlamaLayer, Block = _modules()
    torch.manual_seed(0)
    dev = "cuda"
    params = dict(p, dtype=dtype)
    if kind in ("decode", "prefill"):
        layers = torch.nn.ModuleList([LlamaLayer(**LLAMA) for _ in range(LLAMA_LAYERS)]).to(dev, dt).eval()
        for prm in layers.parameters():
            prm.requires_grad_(False)
        b, s, hd = p["batch"], p["context"], LLAMA["d"] // LLAMA["heads"]
        params.update(layers=LLAMA_LAYERS, **LLAMA)
        if kind == "decode":
            # The cache holds `context` tokens; the new one goes to position context - 1.
            shape = (b, LLAMA["kv_heads"], s, hd)
            caches = [
                (torch.randn(shape, device=dev, dtype=dt), torch.randn(shape, device=dev, dtype=dt)) for _ in layers
            ]
            x = torch.randn(b, 1, LLAMA["d"], device=dev, dtype=dt)
            flat = [t for kv in caches for t in kv]

            def decode(x, *cache):
                with torch.no_grad():
                    for i, layer in enumerate(layers):
                        x = layer(x, cache[2 * i], cache[2 * i + 1], s - 1)
                    return x

            return Scenario(name, kind, decode, (x, *flat), False, params)
        x = torch.randn(b, s, LLAMA["d"], device=dev, dtype=dt)
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
    """Largest |compiled - eager| relative to eager's largest value (forward scenarios)."""
    import torch

    with torch.no_grad():
        got = compiled(*sc.args).float()
        ref = eager_out.float()
        return float((got - ref).abs().max() / ref.abs().max().clamp_min(1e-6))
