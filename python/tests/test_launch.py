"""The package's launch call into the runtime library (no GPU needed):
rowred._launch hands each argument to rowred_kernel_launch_operands as it
was given, rejects what it cannot pass, and a failed launch is a
RowredError, through the extension and through ctypes alike."""
import ctypes
import os
import sys
import sysconfig
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                ".."))
from rowred import _runtime  # noqa: E402

# rowred_kernel_launch_operands' signature (rowred_runtime.h).
_LAUNCH = ctypes.CFUNCTYPE(
    ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p,
    ctypes.POINTER(ctypes.c_uint64), ctypes.c_int,
    ctypes.POINTER(ctypes.c_int64), ctypes.c_int, ctypes.c_int64,
    ctypes.c_int64, ctypes.c_uint64, ctypes.c_int64)


def _runtime_library():
    try:
        return _runtime.library()
    except _runtime.RowredError as e:
        raise unittest.SkipTest(f"no runtime library: {e}")


class Launch(unittest.TestCase):
    def setUp(self):
        self.lib = _runtime_library()
        self.module = _runtime.launcher()
        if self.module is None:
            # Not built (no Python headers where the library was built).
            beside = os.path.join(
                os.path.dirname(self.lib._name),
                "_launch" + sysconfig.get_config_var("EXT_SUFFIX"))
            self.assertFalse(os.path.exists(beside),
                             f"{beside} exists but was not loaded")
            if os.environ.get("ROWRED_TEST_INSTALLED"):
                self.fail("the installed package has no rowred._launch")
            self.skipTest("rowred._launch is not built")

    def _recorded(self, *args):
        """The arguments the runtime's launch function receives for
        launch(*args), and the return code, through a stand-in for it."""
        seen = []

        def record(kernel, stream, operands, num_operands, strides,
                   num_strides, rows, cols, workspace, grid):
            seen.append((kernel, stream,
                         [operands[i] for i in range(num_operands)],
                         [strides[i] for i in range(num_strides)], rows,
                         cols, workspace, grid))
            return 7

        stand_in = _LAUNCH(record)
        self.module.bind(ctypes.cast(stand_in, ctypes.c_void_p).value)
        try:
            rc = self.module.launch(*args)
        finally:
            self.module.bind(ctypes.cast(
                self.lib.rowred_kernel_launch_operands,
                ctypes.c_void_p).value)
        return seen, rc

    def test_arguments_reach_the_runtime_unchanged(self):
        seen, rc = self._recorded(0x1234, 0x5678, [2**64 - 1, 5, 0],
                                  (4096, -3), 9, 4096, 2**40, 132)
        self.assertEqual(rc, 7)
        self.assertEqual(seen, [(0x1234, 0x5678, [2**64 - 1, 5, 0],
                                 [4096, -3], 9, 4096, 2**40, 132)])
        seen, rc = self._recorded(1, 0, [], [], 0, 1, 0, 0)
        self.assertEqual(seen, [(1, None, [], [], 0, 1, 0, 0)])

    def test_what_it_cannot_pass_is_refused(self):
        launch = self.module.launch
        with self.assertRaisesRegex(TypeError, "8 arguments"):
            launch(1, 0, [1], [1], 1, 1, 0)
        with self.assertRaisesRegex(TypeError, "operands must be a list"):
            launch(1, 0, iter([1]), [1], 1, 1, 0, 0)
        with self.assertRaises(OverflowError):
            launch(1, 0, [-1], [1], 1, 1, 0, 0)
        with self.assertRaises(TypeError):
            launch(1, 0, [1.5], [1], 1, 1, 0, 0)
        with self.assertRaisesRegex(ValueError, "more than 64"):
            launch(1, 0, list(range(1, 66)), [1], 1, 1, 0, 0)
        with self.assertRaisesRegex(ValueError, "null address"):
            self.module.bind(0)

    def test_a_failed_launch_is_a_rowred_error(self):
        # A null handle: the runtime's own check, through the extension and
        # through ctypes.
        kernel = _runtime.Kernel.__new__(_runtime.Kernel)
        kernel._lib, kernel._handle = self.lib, 0
        with self.assertRaisesRegex(_runtime.RowredError, r"no kernel \(NULL"):
            kernel.launch_operands(0, [1, 2], [4, 4], 1, 4)
        saved = _runtime._launcher
        _runtime._launcher = None
        try:
            with self.assertRaisesRegex(_runtime.RowredError,
                                        r"no kernel \(NULL"):
                kernel.launch_operands(0, [1, 2], [4, 4], 1, 4)
        finally:
            _runtime._launcher = saved


if __name__ == "__main__":
    unittest.main()
