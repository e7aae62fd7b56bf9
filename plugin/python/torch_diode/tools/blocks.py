"""Real model blocks for `diode demo --blocks`, written in plain PyTorch so that every GEMM is one
Inductor lowers (F.linear: mm/addmm with a column-major weight; attention: two bmm).

- llama: a Llama-3-8B-class decoder layer (RMSNorm, Q/K/V/O projections with grouped KV heads,
  attention through bmm, SiLU-gated MLP), no bias;
- gpt2: a GPT-2-class block (LayerNorm, fused QKV projection with bias, GELU MLP);
- vit: a ViT-L/16 block (LayerNorm, fused QKV with bias, GELU MLP) over 197 tokens an image.

Decode: `tokens` new tokens attend to themselves and a KV cache of CONTEXT earlier ones. Prefill:
`tokens` tokens attend causally to each other (a boolean mask input). ViT: `tokens` images of
197 tokens, full attention.
"""

from __future__ import annotations

import math

CONTEXT = 1024  # KV-cache length at decode
VIT_TOKENS = 197

SHAPES = {
    "llama": dict(d=4096, heads=32, kv_heads=8, ff=14336, bias=False),
    "gpt2": dict(d=768, heads=12, kv_heads=12, ff=3072, bias=True),
    "vit": dict(d=1024, heads=16, kv_heads=16, ff=4096, bias=True),
}


def rmsnorm_class():
    """Llama's RMSNorm (fp32 statistics), shared by these blocks and torch_diode.tools.models."""
    import torch
    from torch import nn

    class RMSNorm(nn.Module):
        def __init__(self, d):
            super().__init__()
            self.weight = nn.Parameter(torch.ones(d))

        def forward(self, x):
            xf = x.float()
            return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-6)).to(x.dtype) * self.weight

    return RMSNorm


def _modules():
    import torch
    import torch.nn.functional as F
    from torch import nn

    class Attention(nn.Module):
        def __init__(self, d, heads, kv_heads, bias):
            super().__init__()
            self.heads, self.kv_heads, self.hd = heads, kv_heads, d // heads
            self.qkv = nn.Linear(d, (heads + 2 * kv_heads) * self.hd, bias=bias)
            self.o = nn.Linear(d, d, bias=bias)

        def forward(self, x, batch, cache_k=None, cache_v=None, mask=None):
            # x: (batch * T, d) -> q (batch*heads, T, hd), k/v (batch*heads, S, hd)
            rows = x.shape[0]
            t = rows // batch
            q, k, v = self.qkv(x).split([self.heads * self.hd, self.kv_heads * self.hd, self.kv_heads * self.hd], -1)

            def heads(y, n):
                return y.view(batch, t, n, self.hd).transpose(1, 2).reshape(batch * n, t, self.hd)

            q, k, v = heads(q, self.heads), heads(k, self.kv_heads), heads(v, self.kv_heads)
            if cache_k is not None:
                k, v = torch.cat([cache_k, k], 1), torch.cat([cache_v, v], 1)
            if self.kv_heads != self.heads:
                rep = self.heads // self.kv_heads
                k = (
                    k.view(batch, self.kv_heads, 1, -1, self.hd)
                    .expand(-1, -1, rep, -1, -1)
                    .reshape(batch * self.heads, -1, self.hd)
                )
                v = (
                    v.view(batch, self.kv_heads, 1, -1, self.hd)
                    .expand(-1, -1, rep, -1, -1)
                    .reshape(batch * self.heads, -1, self.hd)
                )
            scores = torch.bmm(q, k.transpose(1, 2)) * (1.0 / math.sqrt(self.hd))
            if mask is not None:
                scores = scores.masked_fill(mask, float("-inf"))
            p = torch.softmax(scores.float(), -1).to(q.dtype)
            out = torch.bmm(p, v).view(batch, self.heads, t, self.hd).transpose(1, 2).reshape(rows, -1)
            return self.o(out)

    RMSNorm = rmsnorm_class()

    class LlamaLayer(nn.Module):
        def __init__(self, d, heads, kv_heads, ff, bias):
            super().__init__()
            self.norm1, self.norm2 = RMSNorm(d), RMSNorm(d)
            self.attn = Attention(d, heads, kv_heads, bias)
            self.gate = nn.Linear(d, ff, bias=bias)
            self.up = nn.Linear(d, ff, bias=bias)
            self.down = nn.Linear(ff, d, bias=bias)

        def forward(self, x, cache_k=None, cache_v=None, mask=None):
            x = x + self.attn(self.norm1(x), 1, cache_k, cache_v, mask)
            h = self.norm2(x)
            return x + self.down(F.silu(self.gate(h)) * self.up(h))

    class Block(nn.Module):
        """GPT-2 and ViT: pre-LayerNorm, GELU MLP."""

        def __init__(self, d, heads, kv_heads, ff, bias, batch=1):
            super().__init__()
            self.batch = batch
            self.norm1, self.norm2 = nn.LayerNorm(d), nn.LayerNorm(d)
            self.attn = Attention(d, heads, kv_heads, bias)
            self.fc1 = nn.Linear(d, ff, bias=bias)
            self.fc2 = nn.Linear(ff, d, bias=bias)

        def forward(self, x, cache_k=None, cache_v=None, mask=None):
            x = x + self.attn(self.norm1(x), self.batch, cache_k, cache_v, mask)
            return x + self.fc2(F.gelu(self.fc1(self.norm2(x)), approximate="tanh"))

    return LlamaLayer, Block


def block_case(block: str, phase: str, tokens: int, dtype: str):
    """(name, fn, args) of one block at one phase; weights random, on the GPU, eval mode."""
    import torch

    if block not in SHAPES:
        raise ValueError(f"block '{block}' is not one of {sorted(SHAPES)}")
    if phase not in ("decode", "prefill"):
        raise ValueError(f"phase '{phase}' is neither decode nor prefill")
    from .._selector import TORCH_DTYPE_NAMES

    dt = getattr(torch, TORCH_DTYPE_NAMES[dtype])
    s = SHAPES[block]
    LlamaLayer, Block = _modules()
    torch.manual_seed(0)
    batch = tokens if block == "vit" else 1
    model = LlamaLayer(**s) if block == "llama" else Block(**s, batch=batch)
    model = model.to("cuda", dt).eval()
    for prm in model.parameters():  # nn.Linear's init gives tiny outputs in fp16 after a few layers
        prm.requires_grad_(False)
    hd = s["d"] // s["heads"]
    rows = tokens * VIT_TOKENS if block == "vit" else tokens
    x = torch.randn(rows, s["d"], device="cuda", dtype=dt)
    cache_k = cache_v = mask = None
    if block != "vit" and phase == "decode":
        cache_k = torch.randn(s["kv_heads"], CONTEXT, hd, device="cuda", dtype=dt)
        cache_v = torch.randn(s["kv_heads"], CONTEXT, hd, device="cuda", dtype=dt)
    elif block != "vit":
        mask = torch.ones(tokens, tokens, device="cuda", dtype=torch.bool).triu(1)

    def fn(x, cache_k, cache_v, mask):
        with torch.no_grad():
            return model(x, cache_k, cache_v, mask)

    what = (
        f"{tokens} image" + ("s" if tokens != 1 else "")
        if block == "vit"
        else f"{tokens} tokens" + (f", {CONTEXT} cached" if phase == "decode" else "")
    )
    return f"{block} {phase} {dtype} ({what})", fn, (x, cache_k, cache_v, mask)


# The demo's default cases: decode and prefill of each block; fp16 too for the Llama layer.
DEFAULT_CASES = [
    ("llama", "decode", 8, "bf16"),
    ("llama", "prefill", 2048, "bf16"),
    ("llama", "decode", 8, "fp16"),
    ("llama", "prefill", 2048, "fp16"),
    ("gpt2", "decode", 8, "bf16"),
    ("gpt2", "prefill", 1024, "bf16"),
    ("vit", "decode", 1, "bf16"),
    ("vit", "prefill", 8, "bf16"),
]
