#!/usr/bin/env python3
"""GPU tests of rowred.patch on small Hugging Face models built from their
configs (no download): Llama, Mistral, Qwen2, Qwen3, Gemma (its 1 + weight
norms) and GPT-2 (LayerNorm), each trained ten AdamW steps as it is and
patched, from the same weights (examples/torch/patch_model.py).

usage: patch_models.py PACK_DIR...

The packs hold bf16 rms_norm, layer_norm, their backwards (eps 1e-5 and
1e-6) and cross-entropy kernels for rows of 128 and 2048 and the models'
vocabularies (32000, 50257, 151936, 256000): `python3 -m rowred.packs
build --preset llm --dtype bf16` has them. Checks that the
patched model's logits and loss curve match the unpatched model's within
bf16 rounding, that the kernels ran (no PyTorch fallback), and that
unpatch restores the model; prints step time and peak memory both ways.
Exits 77 (skipped) without a GPU, PyTorch or transformers.
"""
import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
sys.path.insert(0, os.path.join(HERE, "..", "..", "examples", "torch"))
try:
    import torch
    import transformers  # noqa: F401
except ImportError as e:
    print(f"skipped: {e.name} is not installed")
    sys.exit(77)
if not torch.cuda.is_available():
    print("skipped: no CUDA device")
    sys.exit(77)

import patch_model  # noqa: E402
import rowred  # noqa: E402
from rowred import ops  # noqa: E402

# The kernels each model's patched training step must run.
EXPECTED = {
    "llama": {"rms_norm", "rms_norm_backward", "cross_entropy_grad"},
    "gpt2": {"layer_norm", "layer_norm_backward", "cross_entropy_grad"},
}
# bf16: the patched norms round once where the models' own round twice.
LOGITS_TOL, LOSS_TOL = 2e-2, 1e-2
RESULTS = []


class PatchedModelTest(unittest.TestCase):
    def check(self, name):
        # Every lookup again, so that ops._kernels records what this
        # model's calls ran (a repeated call skips the lookup).
        ops._forget_lookups()
        r = patch_model.compare(name, steps=10)
        ran = {key[0] for key in ops._kernels}
        self.assertEqual(ops._no_kernel, set(), "PyTorch fallbacks ran")
        self.assertLessEqual(EXPECTED.get(name, EXPECTED["llama"]), ran)
        self.assertLess(r["logits_rel_diff"], LOGITS_TOL)
        for step, (a, b) in enumerate(zip(*r["losses"])):
            self.assertLess(abs(a - b), LOSS_TOL * abs(a), f"step {step}")
        RESULTS.append((name, r))

    def test_llama(self):
        self.check("llama")

    def test_mistral(self):
        self.check("mistral")

    def test_qwen2(self):
        self.check("qwen2")

    def test_qwen3(self):
        self.check("qwen3")
        self.assertIn(("rms_norm", torch.bfloat16, 128),
                      {key[:3] for key in ops._kernels})

    def test_gemma(self):
        self.check("gemma")

    def test_gpt2(self):
        self.check("gpt2")

    def test_unpatch(self):
        model = patch_model.build("llama")
        tokens = torch.randint(0, 32000, (2, 64), device="cuda")
        with torch.no_grad():
            before = model(input_ids=tokens, labels=tokens)
            rowred.patch(model)
            patched = model(input_ids=tokens, labels=tokens)
            rowred.unpatch(model)
            after = model(input_ids=tokens, labels=tokens)
        self.assertTrue(torch.equal(before.logits, after.logits))
        self.assertEqual(before.loss.item(), after.loss.item())
        self.assertFalse(torch.equal(before.logits, patched.logits))


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    while len(sys.argv) > 1 and not sys.argv[1].startswith("-"):
        rowred.load_pack(sys.argv.pop(1))
    result = unittest.main(exit=False, verbosity=2).result
    print("model    step as is  patched  speedup  peak as is  patched")
    for name, r in RESULTS:
        (t0, t1), (m0, m1) = r["step_s"], r["peak_bytes"]
        print(f"{name:8s} {t0 * 1e3:7.2f} ms {t1 * 1e3:6.2f} ms "
              f"{t0 / t1:6.2f}x {m0 / 2**20:7.0f} MiB {m1 / 2**20:5.0f} MiB")
    sys.exit(0 if result.wasSuccessful() else 1)
