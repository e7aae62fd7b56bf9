"""`pip install plugin/python` (offline: --no-build-isolation) builds libdiode_inductor with CMake
and installs it, with the shipped model packages, inside torch_diode/; the installed package then
works on its own, away from the source tree. Exits 77 (skipped) where no pip with setuptools and
wheel is at hand."""

import glob
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
PIP_PYTHON = os.environ.get("DIODE_PIP_PYTHON", "/usr/bin/python3")

probe = subprocess.run([PIP_PYTHON, "-c", "import setuptools, wheel, pip"], capture_output=True)
if probe.returncode != 0:
    print(f"skipped: {PIP_PYTHON} has no pip, setuptools and wheel")
    sys.exit(77)

with tempfile.TemporaryDirectory() as target:
    r = subprocess.run(
        [
            PIP_PYTHON,
            "-m",
            "pip",
            "install",
            "--no-build-isolation",
            "--no-deps",
            "--no-cache-dir",
            "--disable-pip-version-check",
            "--target",
            target,
            os.path.join(ROOT, "plugin", "python"),
        ],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    pkg = os.path.join(target, "torch_diode")
    assert os.path.isfile(os.path.join(pkg, "libdiode_inductor.so")), os.listdir(pkg)
    # The measuring tools ship too, as their own subpackage (`diode sweep` runs torch_diode.tools.worker).
    assert os.path.isfile(os.path.join(pkg, "tools", "worker.py")), os.listdir(pkg)
    code = """
import json, torch_diode
from torch_diode import _native
_native.load_library()
m = _native.Model(torch_diode.list_available_models()[0]["path"])
p = ("mm", "bf16", 1, 1024, 4096, 4096, 0, 1)
keys = [("aten", "extern_kernels.mm", 0, 0, 0, 0, 0, 0, -1, -1), ("triton", "mm", 128, 128, 64, 8, 3, 4, -1, -1)]
print(json.dumps({"library": _native.library_path(), "models": torch_diode.list_available_models(),
                  "scores": _native.Selector(m, {"top_k": 2, "margin": 0}).decide_gemm(p, keys)[2],
                  "status": torch_diode.get_integration_status()}))
"""
    env = {
        k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "TORCH_DIODE_LIBRARY", "TORCH_DIODE_MODEL_PATH")
    }
    env.update(PYTHONPATH=target, TORCH_DIODE_AUTOREGISTER="0", XDG_DATA_HOME=os.path.join(target, "no-user-models"))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=target)
    assert out.returncode == 0, out.stderr
    info = json.loads(out.stdout)
    assert info["library"].startswith(pkg), info["library"]
    shipped = [m for m in info["models"] if m["source"] == "shipped"]
    assert shipped and all(m["path"].startswith(pkg) for m in shipped), info["models"]
    # Every shipped package came along, each GPU's (the H100's and the H200's), read from inside it.
    gpus = {m["gpu"] for m in shipped}
    assert {"NVIDIA H200", "NVIDIA H100 80GB HBM3"} <= gpus, gpus
    assert len(shipped) == len(glob.glob(os.path.join(ROOT, "trained_models", "*", "*.diode"))), shipped
    assert len(info["scores"]) == 2 and all(s > 0 for s in info["scores"]), info["scores"]
    print(f"installed into {target}: library and {len(shipped)} shipped model(s) found there; scores {info['scores']}")
print("1 passed, 0 failed")
