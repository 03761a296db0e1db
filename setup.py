"""Builds the rowred package's native parts during `pip install .`.

The metadata is in pyproject.toml. This file adds two build steps:
librowred_runtime.so, built by the project's runner-only CMake build
(SOFTMAX_RUNNER_ONLY: the runtime without LLVM/MLIR; needs CMake, a C++17
compiler and the CUDA toolkit's cuda.h, found through $CUDA_PATH or
/usr/local/cuda), is copied into the package, where rowred._runtime finds
it; and the extension module rowred._launch, the package's launch call
(optional: without Python's headers the package launches through ctypes);
and, where the Python that runs the build imports torch, the extension
module rowred._native_ops, the package's eager ops with their autograd in
C++ (runtime/torch/TorchOps.cpp; without it their autograd runs in
Python).
With ROWRED_BUNDLE_PACK=DIR the pack in DIR is copied into the package
as its default pack (rowred/pack), which `import rowred` loads.
"""
import importlib.util
import os
import shutil
import subprocess
import sys
import sysconfig

from setuptools import Extension, setup
from setuptools.command.build_py import build_py

ROOT = os.path.dirname(os.path.abspath(__file__))
LIBRARY = "librowred_runtime.so"


class BuildPyWithRuntime(build_py):
    """build_py, then the runtime library (and a bundled pack) into the
    package."""

    def run(self):
        super().run()
        build_temp = os.path.join(
            self.get_finalized_command("build").build_temp, "runtime")
        cmake = ["cmake", "-S", ROOT, "-B", build_temp,
                 "-DSOFTMAX_RUNNER_ONLY=ON", "-DCMAKE_BUILD_TYPE=Release",
                 f"-DPython3_EXECUTABLE={sys.executable}"]
        subprocess.run(cmake, check=True)
        built = [LIBRARY]
        self._cmake_build(build_temp, "rowred_runtime", check=True)
        # The native ops where this Python imports torch (pip install
        # --no-build-isolation: an isolated build has no torch); optional,
        # as the launch module is.
        native = "_native_ops" + sysconfig.get_config_var("EXT_SUFFIX")
        if importlib.util.find_spec("torch") is not None:
            if self._cmake_build(build_temp, "rowred_native_ops"):
                built.append(native)
            else:
                print("rowred: the native ops (rowred._native_ops) were not "
                      "built (see above); the ops' autograd runs in Python")
        package = os.path.join(self.build_lib, "rowred")
        if native not in built and os.path.exists(
                os.path.join(package, native)):
            # An earlier build's, for another torch.
            os.remove(os.path.join(package, native))
        for name in built:
            shutil.copy2(os.path.join(build_temp, "lib", name), package)
        pack = os.environ.get("ROWRED_BUNDLE_PACK")
        if pack:
            if not os.path.isfile(os.path.join(pack, "manifest.json")):
                raise SystemExit(f"ROWRED_BUNDLE_PACK={pack}: no "
                                 "manifest.json there")
            shutil.copytree(pack, os.path.join(package, "pack"),
                            dirs_exist_ok=True)

    @staticmethod
    def _cmake_build(build_temp, target, check=False):
        """Builds CMake `target`; whether it was built."""
        return subprocess.run(["cmake", "--build", build_temp, "--parallel",
                               "--target", target],
                              check=check).returncode == 0


# build-pip, not setuptools' default build/, which is the CMake build's.
setup(cmdclass={"build_py": BuildPyWithRuntime},
      ext_modules=[Extension("rowred._launch",
                             ["runtime/python/LaunchModule.c"],
                             optional=True)],
      options={"build": {"build_base": "build-pip"}})
