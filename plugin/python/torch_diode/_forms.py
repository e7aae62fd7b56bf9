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
package's measured model (diode_decide "small_m_form"), in plain torch.compile. It runs as
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
# computed input written out once (materialise_operand).
FORMS_VERSION = 2


class Site:
    """One place the pass may rewrite: what the library is asked about (`site`, core's SmallMSite)
    and how to rewrite it."""

    def __init__(self, node, site: dict, tensors: list, replacement, users: list):
        self.node, self.site, self.tensors, self.replacement, self.users = node, site, tensors, replacement, users


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


# ---- the decomposed forms ------------------------------------------------------------------------


def _attention(q, k, v, *bias, scale):
    import torch

    s = (q.float() * k.float()).sum(-1).unsqueeze(-2) * scale
    if bias:
        s = s + bias[0].float()
    p = torch.softmax(s, -1)
    return (p.transpose(-1, -2) * v.float()).sum(-2, keepdim=True).to(q.dtype)


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
    return Site(node, site, tensors, functools.partial(_attention, scale=float(scale)), users)


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


def _trace_key(site: Site, vals: list):
    """What a traced replacement depends on: the function and its operands' metadata. None when an
    operand's sizes are symbolic (reading them as integers would add a guard): traced anew then."""
    fn = site.replacement
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


def rewrite(graph, site: Site, traces: Optional[dict] = None, materialise: bool = False) -> dict:
    """Replaces the site by its decomposed form, traced with Inductor's decompositions. `traces`, kept
    by the caller across the sites of one graph, holds each form traced once per operand metadata:
    a decode step repeats a few shapes across its layers, and tracing is most of the pass's time.
    `materialise` (the library's materialise_operand) has Inductor write a computed activation
    operand of an mm or addmm out once, rather than inline it into every program of the sum.
    Returns {node erased: the node that now stands for it}: a later site whose operand was one of them
    (two M = 1 GEMMs in a row, a low-rank adapter's) reads the replacement instead (`follow`)."""
    import torch
    from torch._inductor.pattern_matcher import fwd_only
    from torch._subclasses.fake_tensor import FakeTensor

    vals = [_val(t) for t in site.tensors]
    fake = next((v.fake_mode for v in vals if isinstance(v, FakeTensor)), None)
    context = fake if fake is not None else torch.no_grad()
    trace_key = _trace_key(site, vals) if traces is not None else None
    gm = traces.get(trace_key) if trace_key is not None else None
    retraced = gm is None
    if retraced:
        with context:
            gm = fwd_only(site.replacement, vals)
        if trace_key is not None:
            traces[trace_key] = gm
    env = {}
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    for p, t in zip(placeholders, site.tensors):
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
    if materialise:
        operand = activation_operand(site)
        if operand is not None and operand.op == "call_function":  # a graph input is in memory already
            from ._inductor_compat import REALIZE_META

            operand.meta[REALIZE_META] = True
    return replaced


def follow(site: Site, replaced: dict) -> None:
    """Points `site`'s operands at what stands for them now, after the rewrites of earlier sites."""
    site.tensors = [replaced.get(t, t) if isinstance(t, type(site.node)) else t for t in site.tensors]


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
