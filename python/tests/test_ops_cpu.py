"""CPU tests of the ops' argument checks (PyTorch needed, no GPU)."""
import os
import sys
import unittest

# The checkout's package, unless the tests run against an installed copy
# (scripts/test-install.sh).
if not os.environ.get("ROWRED_TEST_INSTALLED"):
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

try:
    import torch
except ImportError:
    torch = None


@unittest.skipIf(torch is None, "PyTorch is not installed")
class ArgumentTest(unittest.TestCase):
    def setUp(self):
        import rowred
        self.rowred = rowred

    def check(self, x, message, dim=-1, error=ValueError):
        with self.assertRaises(error) as e:
            self.rowred.softmax(x, dim=dim)
        self.assertIn(message, str(e.exception))

    def test_cpu_tensor(self):
        self.check(torch.zeros(4, 8), "expected a CUDA tensor")

    def test_not_a_tensor(self):
        self.check([1.0, 2.0], "expected a torch.Tensor", error=TypeError)

    def test_registered_ops(self):
        for op in ("softmax", "log_softmax", "softmax_backward",
                   "log_softmax_backward", "logsumexp", "cross_entropy"):
            self.assertTrue(hasattr(torch.ops.rowred, op), op)

    def test_label_check(self):
        from rowred.ops import _check_labels
        labels = torch.tensor([0, 9, -100, 3])
        _check_labels(labels, 10, -100)
        labels[1], labels[3] = 10, -1
        with self.assertRaisesRegex(ValueError, r"label 10 of row 1 is "
                                    r"outside \[0, 10\) and is not the "
                                    r"ignore_index -100 \(2 such rows\)"):
            _check_labels(labels, 10, -100)


if __name__ == "__main__":
    unittest.main()
