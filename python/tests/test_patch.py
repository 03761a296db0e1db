"""CPU tests of rowred.patch and rowred.unpatch (PyTorch needed, no GPU):
which modules are patched, what is left and named, and that unpatch
restores the model. The kernels' results are checked on the GPU
(test/GPU/patch_models.py)."""
import os
import sys
import unittest
import warnings

# The checkout's package, unless the tests run against an installed copy
# (scripts/test-install.sh).
if not os.environ.get("ROWRED_TEST_INSTALLED"):
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

try:
    import torch
except ImportError:
    torch = None

if torch is not None:
    class LlamaRMSNorm(torch.nn.Module):
        """transformers' LlamaRMSNorm, as far as patch() reads it."""

        def __init__(self, n, eps=1e-6):
            super().__init__()
            self.weight = torch.nn.Parameter(torch.ones(n))
            self.variance_epsilon = eps

        def forward(self, x):
            rstd = torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True) +
                               self.variance_epsilon)
            return self.weight * (x.float() * rstd).to(x.dtype)

    class FooRMSNorm(LlamaRMSNorm):
        pass

    def ForCausalLMLoss(logits, labels, vocab_size, **kwargs):  # noqa: N802
        return torch.nn.functional.cross_entropy(
            logits[:, :-1].reshape(-1, vocab_size),
            labels[:, 1:].reshape(-1))

    class TinyLM(torch.nn.Module):
        """A causal LM with transformers' loss_function property."""

        def __init__(self):
            super().__init__()
            self.norm = LlamaRMSNorm(8)
            self.other = FooRMSNorm(8)
            self.ln = torch.nn.LayerNorm(8)
            self.head = torch.nn.Linear(8, 16)

        @property
        def loss_function(self):
            return getattr(self, "_loss_function", ForCausalLMLoss)

        @loss_function.setter
        def loss_function(self, value):
            self._loss_function = value

        def forward(self, x, labels):
            logits = self.head(self.ln(self.other(self.norm(x))))
            return logits, self.loss_function(logits, labels, 16)


@unittest.skipIf(torch is None, "PyTorch is not installed")
class PatchTest(unittest.TestCase):
    def setUp(self):
        import rowred
        from rowred import patching
        self.rowred = rowred
        self.patching = patching
        torch.manual_seed(0)
        self.model = TinyLM()
        self.x = torch.randn(2, 5, 8)
        self.labels = torch.randint(0, 16, (2, 5))

    def patch(self):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            self.rowred.patch(self.model)
        return [str(w.message) for w in caught]

    def test_patches_known_norms_and_the_loss(self):
        messages = self.patch()
        self.assertIn("forward", self.model.norm.__dict__)
        self.assertIn("forward", self.model.ln.__dict__)
        self.assertNotIn("forward", self.model.other.__dict__)
        self.assertIs(self.model.loss_function,
                      self.patching.causal_lm_loss)
        self.assertEqual(messages, [
            "rowred.patch: left on their own code (rowred does not know "
            "them): FooRMSNorm"])

    def test_cpu_tensors_run_the_modules_own_code(self):
        before = self.model.norm(self.x), self.model.ln(self.x)
        self.patch()
        after = self.model.norm(self.x), self.model.ln(self.x)
        for a, b in zip(before, after):
            self.assertTrue(torch.equal(a, b))

    def test_unpatch_restores(self):
        params = [id(p) for p in self.model.parameters()]
        keys = list(self.model.state_dict())
        first = self.patch()
        self.assertEqual(self.patch(), first)  # twice: the same, once
        self.rowred.unpatch(self.model)
        for module in self.model.modules():
            self.assertNotIn("forward", module.__dict__)
        self.assertIs(self.model.loss_function, ForCausalLMLoss)
        self.assertEqual([id(p) for p in self.model.parameters()], params)
        self.assertEqual(list(self.model.state_dict()), keys)

    def test_unknown_loss_is_named(self):
        self.model._loss_function = lambda *a, **k: None
        self.model._loss_function.__name__ = "ForMaskedLMLoss"
        self.assertIn("loss ForMaskedLMLoss", self.patch()[0])

    def test_not_a_module(self):
        with self.assertRaises(TypeError):
            self.rowred.patch(object())


if __name__ == "__main__":
    unittest.main()
