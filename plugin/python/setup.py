"""Builds libdiode_inductor with the project's own CMake (DIODE_PLUGIN_ONLY) while the wheel is
built, and puts it and the shipped .diode packages inside torch_diode/. Metadata is in
pyproject.toml."""

import glob
import os
import re
import shutil
import subprocess
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.dist import Distribution

REPO = Path(__file__).resolve().parents[2]


def core_constant(header: str, name: str) -> str:
    """A constant of core's headers (core/infer/diode/infer/HEADER), read where it is defined."""
    text = (REPO / "core" / "infer" / "diode" / "infer" / header).read_text()
    found = re.search(rf"\b{name}\s*=\s*\"?([^\";]+)\"?;", text)
    if not found:
        raise RuntimeError(f"{header} defines no {name}: is {REPO} a Diode Workbench checkout?")
    return found.group(1).strip()


# The oldest torch the selector runs on, and the shipped packages' folder: core's.
MIN_TORCH = core_constant("torchversion.h", "kMinTorchMajor") + "." + core_constant("torchversion.h", "kMinTorchMinor")
MODEL_DIRECTORY = core_constant("shippeddata.h", "kModelDirectory")


class BuildWithLibrary(build_py):
    def run(self):
        super().run()
        if not (REPO / "plugin" / "include" / "diode_inductor.h").is_file():
            raise RuntimeError(f"{REPO} is not a Diode Workbench checkout: build from plugin/python inside one")
        build = Path(self.build_lib).parent / "diode-cmake"
        generator = ["-G", "Ninja"] if shutil.which("ninja") else []
        subprocess.check_call(
            [
                "cmake",
                "-S",
                str(REPO),
                "-B",
                str(build),
                *generator,
                "-DDIODE_PLUGIN_ONLY=ON",
                "-DCMAKE_BUILD_TYPE=Release",
            ]
        )
        subprocess.check_call(
            ["cmake", "--build", str(build), "--target", "diode_inductor", "--parallel", str(os.cpu_count() or 2)]
        )
        target = Path(self.build_lib) / "torch_diode"
        shutil.copy2(build / "plugin" / "libdiode_inductor.so", target / "libdiode_inductor.so")
        for pkg in glob.glob(str(REPO / MODEL_DIRECTORY / "*" / "*.diode")):
            dst = target / MODEL_DIRECTORY / Path(pkg).parent.name
            dst.mkdir(parents=True, exist_ok=True)
            shutil.copy2(pkg, dst / Path(pkg).name)


class NativeDistribution(Distribution):
    def has_ext_modules(self):  # a platform wheel: it carries a shared library
        return True


setup(
    cmdclass={"build_py": BuildWithLibrary},
    distclass=NativeDistribution,
    extras_require={"torch": [f"torch>={MIN_TORCH}"]},
)
