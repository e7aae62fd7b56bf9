"""Small-M GEMMs and one-token attention in the graph Inductor lowers, translated for the library's
form decision, and rewritten where the library says so.

A GEMM whose M is 1 (a decode step's projections at batch 1, attention's two products at one query
token) and attention at one query token can run as a library kernel (cuBLAS, cuDNN or flash
attention, with whatever copies its layout needs: a KV cache grown by torch.cat is materialised
first) or as a multiply-and-sum that Inductor generates and fuses with its neighbours (the
concatenation, the expansion of grouped-query KV heads, an activation after; a projection's computed
input, a norm's or an activation's output, is written out once rather than recomputed in each program
of the sum, when the library says materialise_operand).
Inductor itself decomposes bmm and mm with a dimension of 1 only under coordinate-descent tuning
(torch/_inductor/decomposition.py, bmm and mm); this pass makes that choice per site, from the
package's measured model (diode_decide "small_m_form"), in plain torch.compile.

Attention whose KV heads are expanded for grouped queries (repeat_kv), over a cache perhaps grown by
torch.cat, keeps a library kernel in its library form, but not the copies, where the library says
library_over_cache (the package's library times were measured so): FlashAttention reads the cache as
stored, each KV head once for its query heads, and the new tokens' scores join its log-sum-exp
afterwards, an exact softmax over both. Where FlashAttention cannot run (its dtypes, head sizes, a
GPU before sm80, an attention bias) the library form is the attention as written. It runs as
Inductor's post-grad custom pre-pass (config.post_grad_custom_pre_pass, a CustomGraphPass), after
Inductor has turned matmul-softmax-matmul patterns into scaled_dot_product_attention, so the
attention a model writes out by hand and the one it calls are seen alike.

The decomposed forms accumulate in float32, as Inductor's own decompositions do
(pw_cast_for_opmath).
"""

from __future__ import annotations

import functools
import math
from typing import Optional

from . import _native

# How the decomposed forms are written; Inductor's FX graph cache keys on it (the pass's uuid), so a
# graph compiled by a torch_diode that wrote them otherwise is not served again. 2: a projection's
# computed input written out once (materialise_operand). 3: attention's library form reads a KV
# cache with grouped heads as stored (FlashAttention, new tokens merged by log-sum-exp).
FORMS_VERSION = 3


class Form:
    """How one form of a site is written: the function standing for the site (traced with Inductor's
    decompositions) and the graph values it reads."""

    def __init__(self, tensors: list, replacement):
        self.tensors, self.replacement = tensors, replacement


class Site:
    """One place the pass may rewrite: what the library is asked about (`site`, core's SmallMSite)
    and how to rewrite it: `decomposed` always, `library` where the library form is not the site as
    written (attention over a concatenated or grouped KV cache, FlashAttention over it as stored)."""

    def __init__(self, node, site: dict, tensors: list, replacement, users: list, library: Optional[Form] = None):
        self.node, self.site, self.users = node, site, users
        self.decomposed, self.library = Form(tensors, replacement), library

    @property
    def tensors(self) -> list:
        return self.decomposed.tensors

    def form(self, decompose: bool) -> Optional[Form]:
        """The form to write in place of the site; None: the site stays as written."""
        return self.decomposed if decompose else self.library


def _val(node):
    return node.meta.get("val") if hasattr(node, "meta") else None


def _dtype_name(val) -> Optional[str]:
    return _native.dtype_names().get(str(val.dtype))


# ---- what a site's operands came from ----------------------------------------------------------

_VIEWS = None


def _view_ops():
    global _VIEWS
    if _VIEWS is None:
        import torch

        aten = torch.ops.aten
        _VIEWS = {
            aten.view.default,
            aten._unsafe_view.default,
            aten.reshape.default,
            aten.clone.default,
            aten.permute.default,
            aten.transpose.int,
            aten.expand.default,
            aten.unsqueeze.default,
            aten.squeeze.dim,
            aten.slice.Tensor,
            aten.alias.default,
        }
    return _VIEWS


def _origins(node, depth=12):
    """The chain of views, copies and expansions `node` was made through, back to what made it."""
    import torch

    aten = torch.ops.aten
    chain = []
    while depth and getattr(node, "op", None) == "call_function":
        chain.append(node)
        if node.target in _view_ops() or node.target is aten.expand.default:
            node = node.args[0]
            depth -= 1
            continue
        break
    return chain


def _kv_facts(node) -> tuple[int, bool]:
    """(query heads per KV head, whether the operand is a concatenation) of an attention operand."""
    import torch

    aten = torch.ops.aten
    group, concat = 1, False
    for n in _origins(node):
        if n.target is aten.cat.default:
            concat = True
        elif n.target is aten.expand.default:
            src, dst = _val(n.args[0]), _val(n)
            if src is not None and dst is not None and src.dim() == dst.dim():
                for a, b in zip(src.shape, dst.shape):
                    if int(a) == 1 and int(b) > 1:
                        group *= int(b)
    return group, concat


def _kv_as_stored(node, batch: int, heads: int, head_dim: int) -> Optional[list]:
    """The tensors an attention operand (B, H, S, D) was made of, as stored, when it is exactly
    Hugging Face's repeat_kv of a KV cache: stored (B, KV, S, D) or grown by torch.cat along its
    tokens, then unsqueezed to (B, KV, 1, S, D), expanded to (B, KV, H / KV, S, D) and reshaped, each
    KV head shared by the H / KV query heads that follow it (FlashAttention's grouping). Returns
    [cache] or [cache, new], each (B, KV, tokens, D); None for any other making, which the library
    form reads as written."""
    import torch

    aten = torch.ops.aten
    reshapes = {aten.view.default, aten._unsafe_view.default, aten.reshape.default, aten.clone.default}
    n = node
    while getattr(n, "op", None) == "call_function" and n.target in reshapes:
        n = n.args[0]
    if getattr(n, "op", None) != "call_function" or n.target is not aten.expand.default:
        return None
    # the group's dimension inserted right after the KV heads: unsqueeze(2), or a view to that shape
    unsqueezed = n.args[0]
    if getattr(unsqueezed, "op", None) != "call_function":
        return None
    if unsqueezed.target is aten.unsqueeze.default:
        if unsqueezed.args[1] not in (2, -3):
            return None
    elif unsqueezed.target not in (aten.view.default, aten._unsafe_view.default, aten.reshape.default):
        return None
    base = unsqueezed.args[0]
    vb, src, dst, out = _val(base), _val(unsqueezed), _val(n), _val(node)
    if any(v is None for v in (vb, src, dst, out)) or vb.dim() != 4 or dst.dim() != 5:
        return None
    b, kv, s_, d = (int(x) for x in vb.shape)
    if kv == 0 or heads % kv or kv == heads or (b, d) != (batch, head_dim):
        return None
    if tuple(int(x) for x in src.shape) != (b, kv, 1, s_, d):
        return None
    if tuple(int(x) for x in dst.shape) != (b, kv, heads // kv, s_, d):
        return None
    if tuple(int(x) for x in out.shape) != (b, heads, s_, d):
        return None
    if getattr(base, "op", None) == "call_function" and base.target is aten.cat.default:
        pieces = list(base.args[0])
        dim = base.args[1] if len(base.args) > 1 else base.kwargs.get("dim", 0)
        if len(pieces) != 2 or dim not in (2, -2):
            return None
    else:
        pieces = [base]
    vals = [_val(p) for p in pieces]
    if any(v is None or v.dim() != 4 for v in vals):
        return None
    for v in vals:
        if (int(v.shape[0]), int(v.shape[1]), int(v.shape[3])) != (b, kv, d):
            return None
    if int(vals[0].shape[2]) == 0:  # an empty cache: FlashAttention's log-sum-exp over no key is inf
        return None
    return pieces


def _flash_runs(q) -> bool:
    """Whether FlashAttention runs on a query of these metadata (its dtypes, head sizes, sm80 and
    later, enabled)."""
    import torch

    if q.device.type != "cuda" or torch.version.hip is not None or q.dtype not in (torch.float16, torch.bfloat16):
        return False
    d = int(q.shape[-1])
    if d % 8 or d > 256 or not torch.backends.cuda.flash_sdp_enabled():
        return False
    if not torch.backends.cuda.is_flash_attention_available():
        return False
    return torch.cuda.get_device_capability(q.device) >= (8, 0)


def _library_attention(q, k, v, bias, scale: float, vq) -> Optional[Form]:
    """The library form of an attention site whose key and value are a cache with grouped KV heads:
    FlashAttention over what is stored (_attention_over_cache). None where the attention as written
    is the library form."""
    if bias is not None or not _flash_runs(vq):
        return None
    batch, heads, head_dim = int(vq.shape[0]), int(vq.shape[1]), int(vq.shape[-1])
    ks, vs = _kv_as_stored(k, batch, heads, head_dim), _kv_as_stored(v, batch, heads, head_dim)
    if ks is None or vs is None or len(ks) != len(vs):
        return None
    vk, vv = _val(ks[0]), _val(vs[0])
    if tuple(vk.shape) != tuple(vv.shape) or vk.dtype != vq.dtype or vv.dtype != vq.dtype:
        return None
    if len(ks) == 2 and tuple(_val(ks[1]).shape) != tuple(_val(vs[1]).shape):
        return None
    tensors = [q, ks[0], vs[0]] + ([ks[1], vs[1]] if len(ks) == 2 else [])
    return Form(tensors, functools.partial(_attention_over_cache, scale=scale))


# ---- the decomposed forms ------------------------------------------------------------------------


def _attention(q, k, v, *bias, scale):
    import torch

    s = (q.float() * k.float()).sum(-1).unsqueeze(-2) * scale
    if bias:
        s = s + bias[0].float()
    p = torch.softmax(s, -1)
    return (p.transpose(-1, -2) * v.float()).sum(-2, keepdim=True).to(q.dtype)


def _attention_over_cache(q, cache_k, cache_v, *new, scale):
    """Attention of q (B, H, 1, D) over a KV cache as stored, (B, KV, S, D) with H a multiple of KV,
    and the new tokens `new` = (key, value), each (B, KV, T, D), when the attention reads the two
    concatenated: FlashAttention over the cache, then its softmax extended to the new tokens through
    its log-sum-exp (float32), which is the softmax over the concatenation."""
    import torch

    attention = torch.ops.aten._scaled_dot_product_flash_attention
    out, lse = attention(q, cache_k, cache_v, 0.0, False, False, scale=scale)[:2]
    if not new:
        return out
    new_k, new_v = new
    b, h, _, d = q.shape
    kv, t = cache_k.shape[1], new_k.shape[2]
    g = h // kv
    scores = (q.float().reshape(b, kv, g, 1, d) * new_k.float().reshape(b, kv, 1, t, d)).sum(-1) * scale
    lse = lse.float().reshape(b, kv, g, 1)
    top = torch.maximum(lse, scores.amax(-1, keepdim=True))
    w_cache, w_new = torch.exp(lse - top), torch.exp(scores - top)
    num = out.float().reshape(b, kv, g, d) * w_cache
    num = num + (w_new.unsqueeze(-1) * new_v.float().reshape(b, kv, 1, t, d)).sum(-2)
    return (num / (w_cache + w_new.sum(-1, keepdim=True))).reshape(b, h, 1, d).to(q.dtype)


def _bmm(a, b):
    return (a.float().unsqueeze(-1) * b.float().unsqueeze(1)).sum(2).to(a.dtype)


def _mm_sum(a, b):
    """a @ b as a float32 multiply-and-sum."""
    return (a.float().unsqueeze(2) * b.float().unsqueeze(0)).sum(1)


def _mm(a, b):
    return _mm_sum(a, b).to(a.dtype)


def _addmm(bias, a, b, beta=1, alpha=1):
    return (alpha * _mm_sum(a, b) + beta * bias.float()).to(a.dtype)


def _attention_targets():
    import torch

    aten = torch.ops.aten
    names = (
        "_scaled_dot_product_flash_attention",
        "_scaled_dot_product_efficient_attention",
        "_scaled_dot_product_cudnn_attention",
    )
    return {getattr(aten, n).default for n in names if hasattr(aten, n)}


def _normalized(node) -> Optional[dict]:
    from torch.fx.operator_schemas import normalize_function

    got = normalize_function(node.target, node.args, node.kwargs, normalize_to_only_use_kwargs=True)
    return None if got is None else dict(got.kwargs)


def _attention_site(node) -> Optional[Site]:
    import operator

    kw = _normalized(node)
    if kw is None:
        return None
    q, k, v = kw["query"], kw["key"], kw["value"]
    vq, vk = _val(q), _val(k)
    if vq is None or vk is None or vq.dim() != 4 or int(vq.shape[-2]) != 1:
        return None
    if kw.get("dropout_p", 0.0) or kw.get("is_causal", False) or kw.get("return_debug_mask", False):
        return None
    dtype = _dtype_name(vq)
    if dtype is None:
        return None
    # Only the attention's output may be used: a training graph also keeps its log-sum-exp.
    users = list(node.users)
    if not all(u.target is operator.getitem and u.args[1] == 0 for u in users):
        return None
    bias = kw.get("attn_bias")
    scale = kw.get("scale")
    if scale is None:
        scale = 1.0 / math.sqrt(int(vq.shape[-1]))
    group, concat = _kv_facts(k)
    site = {
        "op": "attention",
        "dtype": dtype,
        "B": int(vq.shape[0]) * int(vq.shape[1]),
        "M": 1,
        "N": int(vk.shape[-2]),
        "K": int(vq.shape[-1]),
        "kv_group": group,
        "concat": concat,
    }
    tensors = [q, k, v] + ([bias] if bias is not None else [])
    library = _library_attention(q, k, v, bias, float(scale), vq)
    if library is not None:  # the library can say whether to read it so (core's readsCacheAsStored)
        site["stored_cache"] = True
    return Site(node, site, tensors, functools.partial(_attention, scale=float(scale)), users, library)


def _gemm_site(node, op: str) -> Optional[Site]:
    args = list(node.args)
    if op == "addmm":
        if node.kwargs.get("beta", 1) != 1 or node.kwargs.get("alpha", 1) != 1:
            return None
        bias, a, b = args[:3]
        tensors, fn = [bias, a, b], _addmm
    else:
        a, b = args[:2]
        tensors, fn = [a, b], (_bmm if op == "bmm" else _mm)
    va, vb = _val(a), _val(b)
    if va is None or vb is None:
        return None
    m = int(va.shape[-2])
    if m != 1:
        return None
    dtype = _dtype_name(va)
    if dtype is None or va.dtype != vb.dtype:
        return None
    _group, concat = _kv_facts(b)
    site = {
        "op": op,
        "dtype": dtype,
        "B": int(va.shape[0]) if op == "bmm" else 1,
        "M": m,
        "N": int(vb.shape[-1]),
        "K": int(va.shape[-1]),
        "kv_group": 1,
        "concat": concat,
    }
    return Site(node, site, tensors, fn, [node])


def find_sites(graph) -> list:
    """The sites of `graph` the form decision covers."""
    import torch

    aten = torch.ops.aten
    gemms = {aten.bmm.default: "bmm", aten.mm.default: "mm", aten.addmm.default: "addmm"}
    attention = _attention_targets()
    sites = []
    for node in graph.nodes:
        if node.op != "call_function":
            continue
        site = None
        if node.target in attention:
            site = _attention_site(node)
        elif node.target in gemms:
            site = _gemm_site(node, gemms[node.target])
        if site is not None:
            sites.append(site)
    return sites


def _trace_key(form: Form, vals: list):
    """What a traced replacement depends on: the function and its operands' metadata. None when an
    operand's sizes are symbolic (reading them as integers would add a guard): traced anew then."""
    fn = form.replacement
    if isinstance(fn, functools.partial):
        fn_key = (fn.func, fn.args, tuple(sorted(fn.keywords.items())))
    else:
        fn_key = fn
    metas = []
    for v in vals:
        if v is None:
            return None
        shape, stride = tuple(v.shape), tuple(v.stride())
        if not all(type(d) is int for d in shape + stride):
            return None
        metas.append((shape, stride, v.dtype, str(v.device), bool(v.requires_grad)))
    return fn_key, tuple(metas)


def rewrite(
    graph, site: Site, traces: Optional[dict] = None, materialise: bool = False, decompose: bool = True
) -> dict:
    """Replaces the site by its decomposed form (its library form with `decompose` False: nothing
    where that is the site as written), traced with Inductor's decompositions. `traces`, kept
    by the caller across the sites of one graph, holds each form traced once per operand metadata:
    a decode step repeats a few shapes across its layers, and tracing is most of the pass's time.
    `materialise` (the library's materialise_operand) has Inductor write a computed activation
    operand of an mm or addmm out once, rather than inline it into every program of the sum.
    Returns {node erased: the node that now stands for it}: a later site whose operand was one of them
    (two M = 1 GEMMs in a row, a low-rank adapter's) reads the replacement instead (`follow`)."""
    import torch
    from torch._inductor.pattern_matcher import fwd_only
    from torch._subclasses.fake_tensor import FakeTensor

    form = site.form(decompose)
    if form is None:
        return {}
    vals = [_val(t) for t in form.tensors]
    fake = next((v.fake_mode for v in vals if isinstance(v, FakeTensor)), None)
    context = fake if fake is not None else torch.no_grad()
    trace_key = _trace_key(form, vals) if traces is not None else None
    gm = traces.get(trace_key) if trace_key is not None else None
    retraced = gm is None
    if retraced:
        with context:
            gm = fwd_only(form.replacement, vals)
        if trace_key is not None:
            traces[trace_key] = gm
    env = {}
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    for p, t in zip(placeholders, form.tensors):
        env[p] = t
    result = None
    inserted = []
    try:
        with graph.inserting_before(site.node):
            for n in gm.graph.nodes:
                if n.op == "placeholder":
                    continue
                if n.op == "output":
                    out = n.args[0]
                    result = out[0] if isinstance(out, (tuple, list)) else out
                    result = env[result]
                    continue
                env[n] = graph.node_copy(n, lambda x: env[x])
                inserted.append(env[n])
                if not retraced and n.op == "call_function":  # its value is of this site's operands
                    _propagate(env[n], context)
                # Inductor names a kernel after the original ops of its nodes (original_aten): the
                # decomposed form keeps the name of what it replaced ("bmm", "scaled_dot_product...").
                for key in ("original_aten", "stack_trace", "nn_module_stack", "source_fn_stack"):
                    if key in site.node.meta:
                        env[n].meta[key] = site.node.meta[key]
                env[n].meta.setdefault("original_aten", site.node.target)
    except Exception:  # the graph is left as it was: the site keeps its library kernel
        for node in reversed(inserted):
            graph.erase_node(node)
        raise
    replaced = {}
    for user in site.users:
        user.replace_all_uses_with(result)
        replaced[user] = result
        if user is not site.node:
            graph.erase_node(user)
    if not site.node.users:
        graph.erase_node(site.node)
        replaced[site.node] = result
    if materialise and decompose:
        operand = activation_operand(site)
        if operand is not None and operand.op == "call_function":  # a graph input is in memory already
            from ._inductor_compat import REALIZE_META

            operand.meta[REALIZE_META] = True
    return replaced


def follow(site: Site, replaced: dict) -> None:
    """Points `site`'s operands at what stands for them now, after the rewrites of earlier sites."""
    for form in (site.decomposed, site.library):
        if form is not None:
            form.tensors = [replaced.get(t, t) if isinstance(t, type(site.node)) else t for t in form.tensors]


def activation_operand(site: Site):
    """The FX node of a GEMM site's activation operand (the rows of A); None for attention."""
    op = site.site["op"]
    if op == "attention":
        return None
    return site.tensors[1] if op == "addmm" else site.tensors[0]


def _propagate(node, context) -> None:
    """Sets `node`'s fake value by running its op on its arguments' values: a view then aliases its
    own operand, as Inductor's later passes (reinplacing) assume."""
    from torch.fx.node import map_arg

    def value(a):
        return a.meta["val"]

    with context:
        node.meta["val"] = node.target(*map_arg(node.args, value), **map_arg(node.kwargs, value))
