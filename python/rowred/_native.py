"""The package's native eager ops: the extension module rowred._native_ops
(runtime/torch/TorchOps.cpp), softmax, rms_norm, rms_norm_residual and
layer_norm, each an autograd Function in C++ over the forward and backward
kernels the package passes; cross_entropy_train, whose forward's kernel
writes the gradient and whose backward scales it (through
rowred._scale.scale_rows_ for the mean and the sum); and cross-entropy's
reduced loss without a gradient: cross_entropy_total (summed over the rows
in the kernel) and cross_entropy_loss (the per-row kernel's loss reduced in
C++).

An eager call that may skip the dispatcher (_oplib) and whose kernels the
packs hold runs there: one call into C++ for the forward, none into Python
for the backward. The module is loaded from beside the runtime library (so
that it launches through the same one), where `pip install .` or the CMake
build put it when PyTorch was importable; where it is absent, or with
ROWRED_NATIVE=0, the ops' autograd runs in Python (rowred._oplib).
"""
import contextlib
import importlib.util
import os
import sysconfig
import threading
import warnings

from . import _runtime, _scale

_lock = threading.Lock()
# The module's functions by name once loaded; {} where it is absent or
# disabled; None until first asked.
_ops = None
# (native op, its arguments after the tensors: the call's own, then the
# kernel handles) by the key of an eager call that reached them (the public
# functions' argument types, dtypes, devices and shapes, which the checks
# passed): later calls of the same key skip the checks and the kernel
# lookup. Cleared when a pack is loaded (rowred.load_pack).
fast_calls = {}
MODULE = "_native_ops" + sysconfig.get_config_var("EXT_SUFFIX")
NAMES = ("softmax", "rms_norm", "rms_norm_residual", "layer_norm",
         "cross_entropy_train", "cross_entropy_total", "cross_entropy_loss")


def _load():
    if os.environ.get("ROWRED_NATIVE", "1") == "0":
        return {}
    runtime = _runtime.library_path()
    if not os.path.isabs(runtime):
        return {}
    path = os.path.join(os.path.dirname(runtime), MODULE)
    if not os.path.isfile(path):
        return {}
    try:
        spec = importlib.util.spec_from_file_location("rowred._native_ops",
                                                      path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    except ImportError as e:
        warnings.warn(f"rowred: cannot load {path} ({e}); the ops' autograd "
                      "runs in Python")
        return {}
    module.set_scale_rows(_scale.scale_rows_)
    return {name: getattr(module, name) for name in NAMES}


def op(name):
    """The native op `name`, or None where the library is not loaded."""
    global _ops
    if _ops is None:
        with _lock:
            if _ops is None:
                _ops = _load()
    return _ops.get(name)


@contextlib.contextmanager
def python_autograd():
    """The ops with their autograd in Python within the block, as without
    the library (for tests and benchmarks, one thread)."""
    global _ops, fast_calls
    op("softmax")
    saved, _ops = _ops, {}
    saved_calls, fast_calls = fast_calls, {}
    try:
        yield
    finally:
        _ops, fast_calls = saved, saved_calls
