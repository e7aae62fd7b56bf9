"""Finding model packages and choosing the one for this GPU.

Searched in order: $TORCH_DIODE_MODEL_PATH (files or directories, ':'-separated), the user
directory ($XDG_DATA_HOME/torch_diode/models, by default ~/.local/share/torch_diode/models), the
packages shipped with this package (torch_diode/trained_models after pip install) and, when run
from a source checkout, its trained_models/ directory.
"""

from __future__ import annotations

import os
from typing import Optional


def search_locations() -> list[tuple[str, str]]:
    """(source, path) pairs in the order they are searched: core's user locations (_native), then
    the shipped packages."""
    from ._native import model_locations, vocabulary

    shipped = vocabulary()["model_directory"]  # core's shipped::kModelDirectory
    locs = model_locations()
    here = os.path.dirname(os.path.abspath(__file__))
    locs.append(("shipped", os.path.join(here, shipped)))
    repo = os.path.abspath(os.path.join(here, "..", "..", ".."))
    if os.path.isdir(os.path.join(repo, shipped)) and os.path.isdir(os.path.join(repo, "plugin")):
        locs.append(("shipped", os.path.join(repo, shipped)))
    return locs


# How far one search location is walked. A folder of packages is small; a mistyped
# TORCH_DIODE_MODEL_PATH (/, $HOME, a dataset mount) walked the whole tree at import time: 34 s
# for / on a 2-core machine, far longer on network filesystems.
MAX_SEARCH_DEPTH = 4  # folders below the location
MAX_SEARCH_ENTRIES = 10_000  # files and folders seen in one location


def _package_files(path: str) -> list[str]:
    if os.path.isfile(path):
        return [path]
    out = []
    if os.path.isdir(path):
        base = os.path.normpath(path).count(os.sep)
        seen = 0
        for root, dirs, files in os.walk(path):
            seen += len(dirs) + len(files)
            out.extend(os.path.join(root, f) for f in files if f.endswith(".diode"))
            if seen > MAX_SEARCH_ENTRIES:
                import logging

                logging.getLogger("torch_diode").warning(
                    "model search stopped in %s after %d files and folders: point TORCH_DIODE_MODEL_PATH at "
                    "the folder (or files) of your packages",
                    path,
                    MAX_SEARCH_ENTRIES,
                )
                break
            if os.path.normpath(root).count(os.sep) - base >= MAX_SEARCH_DEPTH:
                dirs[:] = []  # no deeper
            dirs.sort()
    return sorted(out)


def describe(path: str, source: str, device: Optional[dict]) -> dict:
    """One package as list_available_models() reports it; opening it checks every checksum.
    `device` is what _hardware.detect() found ({"gpu", "cc", "sm_count"}), or None."""
    from ._native import Model, NativeError, gpu_transfer

    info = {"path": os.path.abspath(path), "name": os.path.splitext(os.path.basename(path))[0], "source": source}
    try:
        model = Model(path)
    except NativeError as e:
        info["error"] = str(e)
        return info
    m = model.manifest
    facts = model.facts()
    model.close()
    hw = m.get("hardware", {}) or {}
    info.update(
        gpu=hw.get("gpu", ""),
        sm_count=hw.get("sm_count"),
        ops=m.get("ops", []),
        dtypes=m.get("dtypes", []),
        created_at=m.get("created_at", ""),
        feature_schema=m.get("feature_schema_version"),
    )
    # The package's truth, its fit to each regime and whether the plugin may load it: core's rules
    # (diode_model_facts; core/infer/diode/infer/packagechoice.h, regimeRank and pluginRefusal).
    info["timing_method"] = facts["timing_method"]
    info["regime_rank"] = facts["regime_rank"]
    if m.get("name"):
        info["name"] = m["name"]
    if facts["refused"]:
        info["error"] = facts["refused"]  # listed, never loaded
        return info
    info["matches_hardware"] = False
    if device and device.get("gpu"):
        # The same GPU model, a similar one (same architecture: a transfer, with its distance), or
        # another: core's one rule (gputable.h, gpuTransfer).
        info["transfer"] = gpu_transfer(info["gpu"], device["gpu"], device.get("cc", ""), device.get("sm_count", 0))
        info["matches_hardware"] = info["transfer"]["kind"] == "same"
    return info


def available(device: Optional[dict]) -> list[dict]:
    seen = set()
    out = []
    for source, loc in search_locations():
        for f in _package_files(loc):
            real = os.path.realpath(f)
            if real in seen:
                continue
            seen.add(real)
            out.append(describe(f, source, device))
    return out


def best_for(device: dict, models: list[dict], regime: str) -> tuple[Optional[dict], str]:
    """The package to load automatically and, when there is none, why. A package made on this GPU
    model first; with none, the nearest package of a similar GPU (same vendor and architecture,
    then SM count, L2 and memory bandwidth: core's gpuTransfer), marked "transferred"; never one
    of another architecture (register_model() loads any package on request). Among those the
    earlier search location (the user's path before shipped packages), then the package trained on
    the regime's in-graph times, then the newest: core's choosePackage decides (packagechoice.h),
    for the workbench and `diode characterise` too; this function says why when nothing fits."""
    from ._native import choose_package

    usable = [m for m in models if "error" not in m]
    locations = search_locations()  # the shipped packages come last
    order = {s: i for i, (s, _) in enumerate(locations)}
    ranked = [dict(m, source_rank=order.get(m["source"], len(locations))) for m in usable]
    index, transferred = choose_package(ranked, device, regime)
    if index is not None:
        return (dict(usable[index], transferred=True) if transferred else usable[index]), ""
    detected_gpu = device.get("gpu", "?")
    broken = [m for m in models if "error" in m]
    if broken and not usable:
        return None, "no usable model package: " + "; ".join(f"{m['path']}: {m['error']}" for m in broken)
    if not models:
        return None, "no model package found in " + ", ".join(p for _, p in search_locations())
    gpus = sorted({m.get("gpu", "?") for m in usable})
    why = f"no model package for {detected_gpu} (packages found are for {', '.join(gpus) or 'unknown GPUs'})"
    refused = sorted({m["transfer"]["why"] for m in usable if m.get("transfer")})
    if refused:
        why += "; none transfers: " + "; ".join(refused)
    if broken:
        why += "; unusable: " + "; ".join(f"{m['path']}: {m['error']}" for m in broken)
    return None, why


def resolve(name_or_path: str, device: Optional[dict]) -> dict:
    """A package given by path, or by name (file stem or manifest name) among the available ones."""
    if os.path.exists(name_or_path):
        return describe(name_or_path, "register_model", device)
    for m in available(device):
        if name_or_path in (m["name"], os.path.basename(m["path"])):
            return m
    raise FileNotFoundError(f"model '{name_or_path}' is neither a file nor the name of an available package")
