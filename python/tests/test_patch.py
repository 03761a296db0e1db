"""CPU tests of rowred.patch and rowred.unpatch (PyTorch needed, no GPU):
which modules are patched, what is left and named, and that unpatch
restores the model. The kernels' results are checked on the GPU
(test/GPU/patch_models.py)."""
import os
import sys
import unittest
import unittest.mock
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
        """A class patch() has no name for, computing Llama's formula."""

    class GemmaRMSNorm(LlamaRMSNorm):
        """Gemma's: 1 + weight, the weight starting at zero."""

        def __init__(self, n, eps=1e-6):
            super().__init__(n, eps)
            self.weight.data.zero_()
            self.eps = self.__dict__.pop("variance_epsilon")

        def forward(self, x):
            rstd = torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True) +
                               self.eps)
            return (x.float() * rstd * (1.0 + self.weight.float())).to(x.dtype)

    class T5LayerNorm(LlamaRMSNorm):
        """T5's: an RMSNorm named LayerNorm, no bias; its result in a
        half-precision weight's dtype."""

        def forward(self, x):
            rstd = torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True) +
                               self.variance_epsilon)
            x = x.float() * rstd
            if self.weight.dtype in (torch.float16, torch.bfloat16):
                x = x.to(self.weight.dtype)
            return self.weight * x

    class ResidualRMSNorm(LlamaRMSNorm):
        """Llama's formula with an optional residual its callers may pass."""

        def forward(self, x, residual=None):
            return super().forward(x if residual is None else x + residual)

    class OtherEpsRMSNorm(LlamaRMSNorm):
        """Reads an eps of its own, not variance_epsilon."""

        def forward(self, x):
            rstd = torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True) + 1e-3)
            return self.weight * (x.float() * rstd).to(x.dtype)

    class CenteredRMSNorm(LlamaRMSNorm):
        """Subtracts the mean: a LayerNorm without a bias."""

        def forward(self, x):
            return super().forward(x - x.mean(-1, keepdim=True))

    class GatedRMSNorm(LlamaRMSNorm):
        """Needs a gate with every call."""

        def forward(self, x, gate):
            return super().forward(x) * torch.sigmoid(gate)

    class CohereLayerNorm(LlamaRMSNorm):
        """Cohere's: a LayerNorm without a bias, computed in f32 (its
        weight and eps as Llama's, its forward its own)."""

        def __init__(self, n, eps=1e-5):
            super().__init__(n, eps)

        def forward(self, x):
            h = x.float()
            h = h - h.mean(-1, keepdim=True)
            h = h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) +
                                self.variance_epsilon)
            return (self.weight.float() * h).to(x.dtype)

    class ViTLayerNorm(torch.nn.LayerNorm):
        """A subclass of torch.nn.LayerNorm over the last dimension."""

        def forward(self, x):
            return super().forward(x)

    class ChannelsFirstLayerNorm(torch.nn.LayerNorm):
        """Normalizes (batch, channels, ...) over the channels."""

        def forward(self, x):
            return super().forward(x.movedim(1, -1)).movedim(-1, 1)

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
            self.probed = torch.nn.ModuleList([
                GemmaRMSNorm(8), T5LayerNorm(8), ResidualRMSNorm(8),
                OtherEpsRMSNorm(8), CenteredRMSNorm(8), GatedRMSNorm(8),
                CohereLayerNorm(8), ViTLayerNorm(8),
                ChannelsFirstLayerNorm(8)])

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

    def test_patches_the_norms_and_the_loss(self):
        messages = self.patch()
        for module in (self.model.norm, self.model.other, self.model.ln):
            self.assertIn("forward", module.__dict__)
        self.assertIs(self.model.loss_function,
                      self.patching.causal_lm_loss)
        self.assertEqual(messages, [
            "rowred.patch: left on their own code (not a norm or loss "
            "rowred computes): CenteredRMSNorm, ChannelsFirstLayerNorm, "
            "GatedRMSNorm, OtherEpsRMSNorm"])

    def test_the_probe_finds_the_offset_and_eps(self):
        self.patch()
        state = {type(m).__name__: m.__dict__.get(self.patching._PATCHED)
                 for m in self.model.probed}
        self.assertEqual(state, {
            "GemmaRMSNorm": (1.0, 1e-6), "T5LayerNorm": (0.0, 1e-6),
            "ResidualRMSNorm": (0.0, 1e-6), "OtherEpsRMSNorm": None,
            "CenteredRMSNorm": None, "GatedRMSNorm": None,
            "CohereLayerNorm": 1e-5, "ViTLayerNorm": 1e-5,
            "ChannelsFirstLayerNorm": None})
        # Within bf16's rounding: a bf16 module that rounds its result.
        t5 = T5LayerNorm(4096).to(torch.bfloat16)
        with torch.no_grad():
            t5.weight.normal_()
        self.assertEqual(self.patching._norm_patch(t5)[1], (0.0, 1e-6))
        # A weight on the meta device cannot be probed: left alone.
        with torch.device("meta"):
            self.assertIsNone(self.patching._norm_patch(LlamaRMSNorm(8)))

    def test_calls_the_kernels_take_go_to_rms_norm(self):
        self.patch()
        calls = []

        def fake(x, shape, w, eps):
            calls.append((shape, w, eps))
            return x

        def fake_layer_norm(x, shape, w, bias, eps):
            calls.append((shape, w, bias, eps))
            return x
        gemma, _, residual = self.model.probed[:3]
        with unittest.mock.patch.object(self.patching, "_takes",
                                        lambda m, x: True), \
                unittest.mock.patch.object(self.patching, "rms_norm", fake), \
                unittest.mock.patch.object(self.patching, "layer_norm",
                                           fake_layer_norm):
            gemma(self.x)
            residual(self.x)
            # More arguments than the input: the module's own code.
            own = residual(self.x, self.x)
            cohere, vit = self.model.probed[6:8]
            cohere(self.x)
            vit(self.x)
        self.assertEqual([(c[0], c[-1]) for c in calls],
                         [((8,), 1e-6)] * 2 + [((8,), 1e-5)] * 2)
        self.assertTrue(torch.equal(calls[0][1], gemma.weight + 1.0))
        self.assertIsNone(calls[2][2])  # Cohere's: no bias
        self.assertIs(calls[3][1], vit.weight)
        self.assertIs(calls[3][2], vit.bias)
        self.assertTrue(torch.equal(
            own, ResidualRMSNorm.forward(residual, self.x, self.x)))

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
