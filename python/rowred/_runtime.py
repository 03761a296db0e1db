"""ctypes binding of the rowred runtime's C API (runtime/include/rowred_runtime.h).

The library is found, in order, at $ROWRED_RUNTIME_LIBRARY, in the
package's directory (where `pip install .` puts it), in the build trees of
this checkout (build/lib, then the runner-only build), and by the system's
library search. Launches go through the extension module rowred._launch
(runtime/python/LaunchModule.c: in the package, or beside the library
found) bound to that library; where it was not built, through ctypes, at
about 3 us more of the host's time per launch.
"""
import ctypes
import ctypes.util
import importlib.util
import os
import sysconfig
import threading

# The kernel ABI (docs/abi.md) that the runtime library and the packs speak.
ABI_VERSION = 7

_lock = threading.Lock()
_lib = None
# The path _lib was loaded from.
_path = None
# rowred._launch bound to _lib, or None.
_launcher = None


class RowredError(RuntimeError):
    """A failure reported by the rowred runtime."""


def _candidates():
    env = os.environ.get("ROWRED_RUNTIME_LIBRARY")
    if env:
        yield env
        return
    package = os.path.dirname(os.path.abspath(__file__))
    yield os.path.join(package, "librowred_runtime.so")
    root = os.path.dirname(os.path.dirname(package))
    for build in ("build", "build-runner"):
        yield os.path.join(root, build, "lib", "librowred_runtime.so")
    found = ctypes.util.find_library("rowred_runtime")
    if found:
        yield found


def library():
    """The loaded runtime library (loaded once)."""
    global _lib, _launcher, _path
    with _lock:
        if _lib is not None:
            return _lib
        tried = []
        for path in _candidates():
            tried.append(path)
            if os.path.sep in path and not os.path.exists(path):
                continue
            lib = ctypes.CDLL(path)
            break
        else:
            raise RowredError(
                "cannot find librowred_runtime.so (tried: " +
                ", ".join(tried) + "); build it with ./scripts/build.sh, or "
                "set ROWRED_RUNTIME_LIBRARY to its path")
        _declare(lib)
        if lib.rowred_runtime_abi_version() != ABI_VERSION:
            raise RowredError(
                f"{path} launches kernel ABI "
                f"{lib.rowred_runtime_abi_version()}, this package ABI "
                f"{ABI_VERSION}; rebuild them together")
        _launcher = _bind_launcher(lib, path)
        _lib, _path = lib, path
        return lib


def library_path():
    """Where the runtime library was loaded from."""
    library()
    return _path


def _bind_launcher(lib, path):
    """rowred._launch (the package's, else the one beside the library at
    `path`) bound to `lib`'s launch function, or None where neither
    exists."""
    try:
        from . import _launch as module
    except ImportError:
        built = os.path.join(os.path.dirname(path),
                             "_launch" + sysconfig.get_config_var("EXT_SUFFIX"))
        if not os.path.isfile(built):
            return None
        spec = importlib.util.spec_from_file_location("rowred._launch", built)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    module.bind(ctypes.cast(lib.rowred_kernel_launch_operands,
                            ctypes.c_void_p).value)
    return module


def launcher():
    """The extension module that launches kernels (rowred._launch), or None
    where launches go through ctypes."""
    library()
    return _launcher


def _declare(lib):
    c = ctypes
    sigs = {
        "rowred_runtime_abi_version": (c.c_int, []),
        "rowred_last_error": (c.c_char_p, []),
        "rowred_kernel_load": (c.c_void_p, [c.c_char_p, c.c_int]),
        "rowred_kernel_unload": (None, [c.c_void_p]),
        "rowred_kernel_name": (c.c_char_p, [c.c_void_p]),
        "rowred_kernel_op": (c.c_char_p, [c.c_void_p]),
        "rowred_kernel_input_type": (c.c_char_p, [c.c_void_p]),
        "rowred_kernel_output_type": (c.c_char_p, [c.c_void_p]),
        "rowred_kernel_min_cols": (c.c_int64, [c.c_void_p]),
        "rowred_kernel_max_cols": (c.c_int64, [c.c_void_p]),
        "rowred_kernel_workspace_bytes":
            (c.c_int, [c.c_void_p, c.c_int64, c.c_int64,
                       c.POINTER(c.c_uint64)]),
        "rowred_kernel_grid":
            (c.c_int, [c.c_void_p, c.c_int64, c.c_int64,
                       c.POINTER(c.c_int64)]),
        "rowred_kernel_occupancy":
            (c.c_int, [c.c_void_p, c.POINTER(c.c_int),
                       c.POINTER(c.c_int64), c.POINTER(c.c_int64)]),
        "rowred_kernel_launch":
            (c.c_int, [c.c_void_p, c.c_void_p, c.c_uint64, c.c_uint64,
                       c.c_int64, c.c_int64, c.c_int64, c.c_int64,
                       c.c_uint64]),
        "rowred_kernel_launch_grid":
            (c.c_int, [c.c_void_p, c.c_void_p, c.c_uint64, c.c_uint64,
                       c.c_int64, c.c_int64, c.c_int64, c.c_int64,
                       c.c_uint64, c.c_int64]),
        "rowred_kernel_num_operands": (c.c_int, [c.c_void_p]),
        "rowred_kernel_operand":
            (c.c_int, [c.c_void_p, c.c_int, c.POINTER(c.c_char_p),
                       c.POINTER(c.c_char_p), c.POINTER(c.c_char_p)]),
        "rowred_kernel_launch_operands":
            (c.c_int, [c.c_void_p, c.c_void_p, c.POINTER(c.c_uint64),
                       c.c_int, c.POINTER(c.c_int64), c.c_int, c.c_int64,
                       c.c_int64, c.c_uint64, c.c_int64]),
    }
    for name, (res, args) in sigs.items():
        fn = getattr(lib, name)
        fn.restype = res
        fn.argtypes = args


def _error(lib):
    return lib.rowred_last_error().decode()


# ctypes array types of the lengths launches pass (operands' addresses, row
# strides), made once rather than per launch.
_U64_ARRAYS = [ctypes.c_uint64 * n for n in range(17)]
_I64_ARRAYS = [ctypes.c_int64 * n for n in range(17)]


def _array(types, element, values):
    n = len(values)
    return (types[n] if n < len(types) else element * n)(*values)


class Kernel:
    """A kernel loaded into a CUDA device's primary context."""

    def __init__(self, metadata_path, device):
        lib = library()
        self._lib = lib
        self.path = metadata_path
        self._handle = lib.rowred_kernel_load(metadata_path.encode(), device)
        if not self._handle:
            raise RowredError(_error(lib))
        # The handle as an int, for the native ops (rowred._native).
        self.handle = self._handle
        self.name = lib.rowred_kernel_name(self._handle).decode()
        self.op = lib.rowred_kernel_op(self._handle).decode()
        self.input_type = lib.rowred_kernel_input_type(self._handle).decode()
        self._workspace_bytes = {}
        self.min_cols = lib.rowred_kernel_min_cols(self._handle)
        self.max_cols = lib.rowred_kernel_max_cols(self._handle)
        # (name, role, type) of each operand, in launch order: inputs,
        # outputs, then per-column operands.
        self.operands = []
        for i in range(lib.rowred_kernel_num_operands(self._handle)):
            name, role, dtype = (ctypes.c_char_p(), ctypes.c_char_p(),
                                 ctypes.c_char_p())
            if lib.rowred_kernel_operand(self._handle, i, ctypes.byref(name),
                                         ctypes.byref(role),
                                         ctypes.byref(dtype)):
                raise RowredError(_error(lib))
            self.operands.append((name.value.decode(), role.value.decode(),
                                  dtype.value.decode()))

    def workspace_bytes(self, rows, cols):
        """The workspace a launch over rows x cols needs, remembered per
        shape (a call into the library costs the host more than the
        lookup)."""
        nbytes = self._workspace_bytes.get((rows, cols))
        if nbytes is not None:
            return nbytes
        out = ctypes.c_uint64()
        if self._lib.rowred_kernel_workspace_bytes(self._handle, rows, cols,
                                                   ctypes.byref(out)):
            raise RowredError(_error(self._lib))
        if len(self._workspace_bytes) >= 1024:
            self._workspace_bytes.clear()
        self._workspace_bytes[(rows, cols)] = out.value
        return out.value

    def grid(self, rows, cols):
        out = ctypes.c_int64()
        if self._lib.rowred_kernel_grid(self._handle, rows, cols,
                                        ctypes.byref(out)):
            raise RowredError(_error(self._lib))
        return out.value

    def occupancy(self):
        """(blocks per SM, resident blocks on the device, resident clusters
        of a cluster kernel or 0)."""
        per_sm, resident = ctypes.c_int(), ctypes.c_int64()
        clusters = ctypes.c_int64()
        self._lib.rowred_kernel_occupancy(self._handle, ctypes.byref(per_sm),
                                          ctypes.byref(resident),
                                          ctypes.byref(clusters))
        return per_sm.value, resident.value, clusters.value

    def launch(self, stream, x, y, rows, cols, x_stride, y_stride,
               workspace=0, grid=None):
        """Launches on `stream` (a CUstream as an int; 0: the default
        stream), on the derived grid or on `grid` blocks."""
        if grid is None:
            rc = self._lib.rowred_kernel_launch(
                self._handle, stream, x, y, rows, cols, x_stride, y_stride,
                workspace)
        else:
            rc = self._lib.rowred_kernel_launch_grid(
                self._handle, stream, x, y, rows, cols, x_stride, y_stride,
                workspace, grid)
        if rc:
            raise RowredError(_error(self._lib))

    def launch_operands(self, stream, pointers, row_strides, rows, cols,
                        workspace=0, grid=None):
        """Launches on `stream` with the device address of each operand
        (self.operands' order, a list or tuple) and the row stride of each
        input and output, on the derived grid or on `grid` blocks."""
        if _launcher is not None:
            rc = _launcher.launch(self._handle, stream, pointers, row_strides,
                                  rows, cols, workspace, grid or 0)
        else:
            rc = self._lib.rowred_kernel_launch_operands(
                self._handle, stream,
                _array(_U64_ARRAYS, ctypes.c_uint64, pointers),
                len(pointers),
                _array(_I64_ARRAYS, ctypes.c_int64, row_strides),
                len(row_strides), rows, cols, workspace, grid or 0)
        if rc:
            raise RowredError(_error(self._lib))

    def __del__(self):
        handle = getattr(self, "_handle", None)
        if handle:
            self._lib.rowred_kernel_unload(handle)
            self._handle = None
