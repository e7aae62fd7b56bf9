"""Turning Inductor's benchmarked choices into problem-JSON candidates: shared by the sweep
worker and the collector."""

from __future__ import annotations

import re

from .. import _inductor_compat as compat

_TEMPLATE_RE = re.compile(r"^(?:triton_)?(.*?)(?:_\d+)?$")
_KWARG_RE = re.compile(r"(\w+)=('[^']*'|[^,]+)")


def _parse_description(desc):
    out = {}
    for k, v in _KWARG_RE.findall(desc or ""):
        v = v.strip().strip("'")
        if v in ("True", "False"):
            out[k] = v == "True"
        elif re.fullmatch(r"-?\d+", v):
            out[k] = int(v)
        else:
            out[k] = v
    return out


# Inductor's template kwargs kept beside the candidate key's fields: they do not name the kernel
# for the model, yet a lookup table or a reader may want them.
_KEPT_KWARGS = ("USE_FAST_ACCUM", "ACC_TYPE")


def candidate_from_choice(choice, vocabulary):
    """Turn one benchmarked ChoiceCaller into a problem-JSON candidate, with the candidate key's
    fields as core's `vocabulary` names them (diode_vocabulary, or the runner's request)."""
    key, flags = vocabulary["candidate_key"], vocabulary["candidate_flags"]
    params = key[2 : len(key) - len(flags)]
    info = compat.choice_info(choice)
    call_name = info.get("kernel_call_name")
    if call_name:
        return {"kind": "aten", "name": str(call_name)}
    name = compat.choice_name(choice)
    desc = compat.choice_description(choice)
    kw = _parse_description(desc)
    cand = {"kind": "triton", "template": _TEMPLATE_RE.match(name).group(1) if name else "unknown"}
    tile = info.get("tile_shape")
    if isinstance(tile, str):
        dims = [int(x) for x in re.findall(r"\d+", tile)]
        if len(dims) == 3:  # Inductor writes (BLOCK_M, BLOCK_K, BLOCK_N)
            kw.setdefault("BLOCK_M", dims[0])
            kw.setdefault("BLOCK_K", dims[1])
            kw.setdefault("BLOCK_N", dims[2])
    for field in params:
        v = kw.get(field, info.get(field))
        if v is not None:
            cand[field] = int(v)
    for field in tuple(flags) + _KEPT_KWARGS:
        if field in kw:
            cand[field] = kw[field]
    if "allow_tf32" in info and "ALLOW_TF32" not in cand:
        cand["ALLOW_TF32"] = info["allow_tf32"] in (True, "True")
    extra = {k: v for k, v in kw.items() if k not in cand}
    if extra:
        cand["extra"] = extra
    return cand
