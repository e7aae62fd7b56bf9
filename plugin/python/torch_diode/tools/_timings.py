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


def candidate_from_choice(choice):
    """Turn one benchmarked ChoiceCaller into a problem-JSON candidate."""
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
    for key in ("BLOCK_M", "BLOCK_N", "BLOCK_K", "GROUP_M", "num_stages", "num_warps"):
        v = kw.get(key, info.get(key))
        if v is not None:
            cand[key] = int(v)
    for key in ("EVEN_K", "ALLOW_TF32", "USE_FAST_ACCUM", "ACC_TYPE"):
        if key in kw:
            cand[key] = kw[key]
    if "allow_tf32" in info and "ALLOW_TF32" not in cand:
        cand["ALLOW_TF32"] = info["allow_tf32"] in (True, "True")
    extra = {k: v for k, v in kw.items() if k not in cand}
    if extra:
        cand["extra"] = extra
    return cand
