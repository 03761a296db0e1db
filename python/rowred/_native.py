"""The package's native eager ops: librowred_torch.so
(runtime/torch/TorchOps.cpp), rowred_native::softmax, ::rms_norm,
::rms_norm_residual and ::layer_norm, each an autograd Function in C++
over the forward and backward kernels the package passes.

An eager call that may skip the dispatcher (_oplib) and whose kernels the
packs hold runs there: one call into C++ for the forward, none into Python
for the backward. The library is loaded from beside the runtime library
(so that it launches through the same one), where `pip install .` or the
CMake build put it when PyTorch was importable; where it is absent, or
with ROWRED_NATIVE=0, the ops' autograd runs in Python (rowred._oplib).
"""
import contextlib
import os
import threading
import warnings

import torch

from . import _runtime

_lock = threading.Lock()
# torch.ops.rowred_native's functions by name once loaded; {} where the
# library is absent or disabled; None until first asked.
_ops = None
LIBRARY = "librowred_torch.so"


def _load():
    if os.environ.get("ROWRED_NATIVE", "1") == "0":
        return {}
    runtime = _runtime.library_path()
    if not os.path.isabs(runtime):
        return {}
    path = os.path.join(os.path.dirname(runtime), LIBRARY)
    if not os.path.isfile(path):
        return {}
    try:
        torch.ops.load_library(path)
    except (OSError, RuntimeError) as e:
        warnings.warn(f"rowred: cannot load {path} ({e}); the ops' autograd "
                      "runs in Python")
        return {}
    namespace = torch.ops.rowred_native
    ops = {}
    for name in ("softmax", "rms_norm", "rms_norm_residual", "layer_norm"):
        overload = getattr(namespace, name).default
        # The overload's C++ callable, less OpOverload.__call__'s frame.
        ops[name] = getattr(overload, "_op", overload)
    return ops


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
    global _ops
    op("softmax")
    saved, _ops = _ops, {}
    try:
        yield
    finally:
        _ops = saved
