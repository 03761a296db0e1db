#!/usr/bin/env python3
"""GPU tests of rowred.patch on small Hugging Face models built from their
configs (no download): Llama, Mistral, Qwen2, Qwen3, Gemma (its 1 + weight
norms), Gemma 3, OLMo 2, Granite and GPT-2 (LayerNorm), each trained ten
AdamW steps as it is and patched, from the same weights
(examples/torch/patch_model.py); Llama, Qwen3, Gemma, Gemma 3, OLMo 2 and
GPT-2 also in mixed precision (f32 weights, steps under bf16 autocast);
Llama and Qwen3 (f32) and Gemma 3 (bf16) decoding greedily
(examples/torch/generate.py).

usage: patch_models.py PACK_DIR...

The packs hold bf16 rms_norm, layer_norm, their backwards (eps 1e-5 and
1e-6) and cross-entropy kernels for rows of 128 and 2048 and the models'
vocabularies (32000, 50257, 151936, 256000), and for mixed precision the
norms' f32 kernels and their bf16 kernels of an f32 weight for rows of
128 and 2048: `python3 -m rowred.packs build --preset llm --dtype
f32,bf16` has them. Checks that the
patched model's logits and loss curve match the unpatched model's within
bf16 rounding, that the kernels ran (no PyTorch fallback), and that
unpatch restores the model; prints step time and peak memory both ways.
Exits 77 (skipped) without a GPU, PyTorch or transformers.
"""
import collections
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

import generate  # noqa: E402
import patch_model  # noqa: E402
import rowred  # noqa: E402
from rowred import ops, patching  # noqa: E402

# The kernels each model's patched training step must run, of bf16 (of
# f32 in mixed precision but for the loss, which reads the bf16 logits).
EXPECTED = {
    "llama": {"rms_norm", "rms_norm_backward", "cross_entropy_grad"},
    "gpt2": {"layer_norm", "layer_norm_backward", "cross_entropy_grad"},
}
# Mixed precision: the row length of the norms each model runs on bf16
# activations with an f32 weight (Qwen3's query/key norms, OLMo 2's and
# Gemma 3's after attention and the MLP).
MIXED = {"qwen3": 128, "olmo2": 2048, "gemma3": 2048}
# bf16: the patched norms round once where the models' own round twice.
LOGITS_TOL, LOSS_TOL = 2e-2, 1e-2
RESULTS = []


class PatchedModelTest(unittest.TestCase):
    def check(self, name, amp=False):
        # Every lookup again, so that ops._kernels records what this
        # model's calls ran (a repeated call skips the lookup).
        ops._forget_lookups()
        r = patch_model.compare(name, steps=10, amp=amp)
        ran = {key[:2] for key in ops._kernels}
        norms = torch.float32 if amp else torch.bfloat16
        self.assertEqual(ops._no_kernel, set(), "PyTorch fallbacks ran")
        self.assertLessEqual(
            {(op, torch.bfloat16 if op.startswith("cross") else norms)
             for op in EXPECTED.get(name, EXPECTED["llama"])}, ran)
        if amp and name in MIXED:
            mixed = {key[:3] for key in ops._kernels
                     if key[-1] == torch.float32}
            for op in ("rms_norm", "rms_norm_backward"):
                self.assertIn((op, torch.bfloat16, MIXED[name]), mixed)
        self.assertLess(r["logits_rel_diff"], LOGITS_TOL)
        for step, (a, b) in enumerate(zip(*r["losses"])):
            self.assertLess(abs(a - b), LOSS_TOL * abs(a), f"step {step}")
        RESULTS.append((f"{name} amp" if amp else name, r))

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

    def test_gemma3(self):
        # Gemma 3's norms (1 + weight, and the heads' q and k norms) and
        # OLMo 2's and Granite's: classes patch() has no name for, taken
        # by what they compute (patching._rms_offset).
        self.check("gemma3")
        self.assertIn(("rms_norm", torch.bfloat16, 128),
                      {key[:3] for key in ops._kernels})

    def test_olmo2(self):
        self.check("olmo2")

    def test_granite(self):
        self.check("granite")

    def test_gpt2(self):
        self.check("gpt2")

    def test_mixed_precision(self):
        # f32 norms on the f32 residual stream, the loss on bf16 logits,
        # the norms of bf16 activations on the kernels of an f32 weight.
        for name in ("llama", "qwen3", "gemma", "gemma3", "olmo2", "gpt2"):
            with self.subTest(name):
                self.check(name, amp=True)

    def test_generate(self):
        # Decoding: one row a sequence per step through the norms. In f32
        # the patched model decodes the same tokens; in bf16 its first
        # logits are within bf16's rounding of the model's own.
        for name, dtype in (("llama", torch.float32),
                            ("qwen3", torch.float32),
                            ("gemma3", torch.bfloat16)):
            with self.subTest(name):
                ops._forget_lookups()
                r = generate.compare(name, batch=2, prompt_len=32, new=16,
                                     dtype=dtype, layers=2, rounds=1)
                self.assertEqual(ops._no_kernel, set(),
                                 "PyTorch fallbacks ran")
                self.assertIn(("rms_norm", dtype, 2048),
                              {key[:3] for key in ops._kernels})
                if dtype == torch.float32:
                    self.assertEqual(r["shared"], 16)
                    self.assertLess(r["logits_rel_diff"], 1e-5)
                else:
                    self.assertLess(r["logits_rel_diff"], LOGITS_TOL)
                print(f"\n{name} {dtype}: decoding shares "
                      f"{r['shared']}/16 tokens, ms per token "
                      f"{r['token_s'][0] * 1e3:.2f} as it is, "
                      f"{r['token_s'][1] * 1e3:.2f} patched", end=" ")

    @staticmethod
    def llama_on_tokens():
        """A two-layer Llama and its forward (logits and loss) on a batch
        of 2 x 64 random tokens."""
        model = patch_model.build("llama")
        tokens = torch.randint(0, 32000, (2, 64), device="cuda")
        return model, lambda m: m(input_ids=tokens, labels=tokens)

    def test_compiled(self):
        # Traced by torch.compile, the patched norms are the modules' own
        # code (Inductor's to fuse); the loss stays on rowred's kernel.
        model, forward = self.llama_on_tokens()
        with torch.no_grad():
            want = forward(model)
            rowred.patch(model)
            ops._forget_lookups()
            got = forward(torch.compile(model))
        ran = {key[0] for key in ops._kernels}
        self.assertNotIn("rms_norm", ran)
        self.assertTrue(any(op.startswith("cross_entropy") for op in ran),
                        ran)
        diff = (got.logits - want.logits).float().norm() / \
            want.logits.float().norm()
        self.assertLess(diff.item(), LOGITS_TOL)
        self.assertLess(abs(got.loss.item() - want.loss.item()),
                        LOSS_TOL * want.loss.item())

    def test_unpatch(self):
        model, forward = self.llama_on_tokens()
        with torch.no_grad():
            before = forward(model)
            rowred.patch(model)
            patched = forward(model)
            rowred.unpatch(model)
            after = forward(model)
        self.assertTrue(torch.equal(before.logits, after.logits))
        self.assertEqual(before.loss.item(), after.loss.item())
        self.assertFalse(torch.equal(before.logits, patched.logits))


def transformers_norms():
    """Every class of the installed transformers' modeling modules named
    ...RMSNorm or ...LayerNorm: name -> class."""
    import importlib
    import inspect
    import pkgutil
    import transformers.models
    found = {}
    for info in pkgutil.iter_modules(transformers.models.__path__):
        try:
            module = importlib.import_module(
                f"transformers.models.{info.name}.modeling_{info.name}")
        except Exception:  # noqa: BLE001 - a model whose extras are absent
            continue
        for name, cls in vars(module).items():
            if inspect.isclass(cls) and issubclass(cls, torch.nn.Module) \
                    and cls.__module__ == module.__name__ \
                    and name.endswith(("RMSNorm", "LayerNorm")):
                found[name] = cls
    return found


def built(cls, n, eps):
    """An instance of the norm class `cls` over rows of `n`, or None where
    none of the usual constructor arguments build it."""
    for kwargs in ({"hidden_size": n, "eps": eps}, {"dim": n, "eps": eps},
                   {"normalized_shape": n, "eps": eps}):
        try:
            return cls(**kwargs)
        except Exception:  # noqa: BLE001 - another signature
            continue
    return None


def probed(classes, n, eps, dtype):
    """(name, module, patch()'s (forward, state) or None) of each class of
    `classes` (name -> class) that builds over rows of `n`, on the GPU in
    `dtype` with random parameters."""
    for name, cls in sorted(classes.items()):
        module = built(cls, n, eps)
        if module is None:
            continue
        module = module.to("cuda", dtype)
        with torch.no_grad():
            for p in module.parameters():
                p.normal_(0.3, 0.5)
            found = patching._norm_patch(module)
        yield name, module, found


class TransformersNormsTest(unittest.TestCase):
    def test_every_class_patch_takes_computes_its_forward(self):
        """Each ...RMSNorm/...LayerNorm class of transformers that patch()
        takes (by its probe) gives, on the kernels, what its own forward
        gives, bf16 on the GPU, with a random weight."""
        ops._forget_lookups()
        n, eps = 2048, 1e-6
        x = torch.randn(2, 8, n, device="cuda", dtype=torch.bfloat16) + 0.5
        taken, left = [], []
        for name, module, found in probed(transformers_norms(), n, eps,
                                          torch.bfloat16):
            if found is None:
                left.append(name)
                continue
            with torch.no_grad():
                want = type(module).forward(module, x).float()
                forward, module.__dict__[patching._PATCHED] = found
                got = forward(module, x).float()
            with self.subTest(name):
                self.assertLess(((got - want).norm() / want.norm()).item(),
                                LOGITS_TOL)
            taken.append((name, forward.__name__))
        self.assertEqual(ops._no_kernel, set(), "PyTorch fallbacks ran")
        kinds = collections.Counter(kind for _, kind in taken)
        print(f"\ntransformers {transformers.__version__}: patch() takes "
              f"{len(taken)} norm classes ({dict(kinds)}), leaves "
              f"{len(left)}: {', '.join(left)}")
        self.assertGreater(len(taken), 0)

    def test_mixed_precision_gives_what_each_forward_gives(self):
        """With f32 parameters and bf16 rows, plain and under autocast, the
        patched forward of each class patch() takes (transformers' and
        torch.nn's norms) gives its own forward's dtype and values: on the
        kernels of an f32 weight where the probe found that dtype, else
        through its own forward (an error where that refuses the mix)."""
        ops._forget_lookups()
        n, eps = 2048, 1e-6
        x = torch.randn(2, 8, n, device="cuda", dtype=torch.bfloat16) + 0.5
        classes = dict(transformers_norms())
        classes.update({"torch.nn.RMSNorm": torch.nn.RMSNorm,
                        "torch.nn.LayerNorm": torch.nn.LayerNorm})
        kinds = collections.Counter()
        for name, module, found in probed(classes, n, eps, torch.float32):
            if found is None:
                continue
            with torch.no_grad():
                forward, state = found
                module.__dict__[patching._PATCHED] = state
                promotes = state[-1] if isinstance(state, tuple) else state
                kinds[{None: "own forward", True: "kernel, promoted",
                       False: "kernel"}[promotes]] += 1
                for autocast in (False, True):
                    with self.subTest(name, autocast=autocast), \
                            torch.autocast("cuda", torch.bfloat16,
                                           enabled=autocast):
                        try:
                            want = type(module).forward(module, x)
                        except RuntimeError:
                            with self.assertRaises(RuntimeError):
                                forward(module, x)
                            continue
                        got = forward(module, x)
                        self.assertEqual(got.dtype, want.dtype)
                        want = want.float()
                        self.assertLess(((got.float() - want).norm() /
                                         want.norm()).item(), LOGITS_TOL)
        mixed = {key[:3] for key in ops._kernels if key[-1] == torch.float32}
        self.assertIn(("rms_norm", torch.bfloat16, n), mixed)
        print(f"\nf32 weights, bf16 rows: {dict(kinds)}")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    while len(sys.argv) > 1 and not sys.argv[1].startswith("-"):
        rowred.load_pack(sys.argv.pop(1))
    result = unittest.main(exit=False, verbosity=2).result
    print("model        step as is  patched  speedup  peak as is  patched")
    for name, r in RESULTS:
        (t0, t1), (m0, m1) = r["step_s"], r["peak_bytes"]
        print(f"{name:12s} {t0 * 1e3:7.2f} ms {t1 * 1e3:6.2f} ms "
              f"{t0 / t1:6.2f}x {m0 / 2**20:7.0f} MiB {m1 / 2**20:5.0f} MiB")
    sys.exit(0 if result.wasSuccessful() else 1)
