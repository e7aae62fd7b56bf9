"""Builds libdiode_inductor with the project's own CMake (DIODE_PLUGIN_ONLY) while the wheel is
built, and puts it and the shipped .diode packages inside torch_diode/. Metadata is in
pyproject.toml."""

import glob
import os
import shutil
import subprocess
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.dist import Distribution

REPO = Path(__file__).resolve().parents[2]


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
        for pkg in glob.glob(str(REPO / "trained_models" / "*" / "*.diode")):
            dst = target / "trained_models" / Path(pkg).parent.name
            dst.mkdir(parents=True, exist_ok=True)
            shutil.copy2(pkg, dst / Path(pkg).name)


class NativeDistribution(Distribution):
    def has_ext_modules(self):  # a platform wheel: it carries a shared library
        return True


setup(cmdclass={"build_py": BuildWithLibrary}, distclass=NativeDistribution)
