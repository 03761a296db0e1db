#!/usr/bin/env python3
"""GPU tests of the rowred PyTorch package (python/rowred) against PyTorch.

usage: torch_ops.py PACK_DIR

PACK_DIR is a pack built by `python3 -m rowred.packs build --dtype
f32,f16,bf16 --cols streamed,1024,4096,32000,131072,1048576`: softmax
and log_softmax kernels (plain and safe), logsumexp and cross-entropy
kernels for rows of any length (the streamed kernel alone) and for the
exact lengths in EXACT_COLS, and their gradient, cross-entropy's gradient,
rms_norm and layer_norm (eps 1e-5 and 1e-6) kernels for those lengths. Checks each op against
torch's on the GPU (values, gradients),
torch.compile(fullgraph=True), CUDA graph capture and replay, two streams
at once, strided and empty inputs, and the errors a user sees. Exits 77
(skipped) without a GPU or PyTorch.
"""
import os
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..",
                                "python"))
try:
    import torch
except ImportError:
    print("skipped: PyTorch is not installed")
    sys.exit(77)
if not torch.cuda.is_available():
    print("skipped: no CUDA device")
    sys.exit(77)

import rowred  # noqa: E402
from autograd_sink import extra_memory  # noqa: E402
from native_ops import Native  # noqa: E402,F401  (run with these tests)

EXACT_COLS = (1024, 4096, 32000, 131072, 1048576)
DTYPES = (torch.float32, torch.float16, torch.bfloat16)
# Tolerances against torch's own result in the same dtype.
TOL = {torch.float32: (2e-6, 1e-5), torch.float16: (2e-3, 2e-3),
       torch.bfloat16: (1.6e-2, 1.6e-2)}


def ref(op, x):
    f = torch.softmax if op == "softmax" else torch.log_softmax
    return f(x.double(), dim=-1)


class Values(unittest.TestCase):
    def check(self, op, x, y):
        atol, rtol = TOL[x.dtype]
        r = ref(op, x)
        if op == "log_softmax":
            atol *= 16
        torch.testing.assert_close(y.double(), r, atol=atol, rtol=rtol,
                                   msg=lambda m: f"{op} {tuple(x.shape)} "
                                   f"{x.dtype}: {m}")

    def test_shapes_and_dtypes(self):
        shapes = [(4096, 1024), (512, 4096), (64, 32000), (8, 131072),
                  (37, 5000), (3, 7, 50257), (1, 256000), (2, 1)]
        for op, fn in (("softmax", rowred.softmax),
                       ("log_softmax", rowred.log_softmax)):
            for dtype in DTYPES:
                for shape in shapes:
                    x = torch.randn(shape, device="cuda", dtype=dtype) * 4
                    self.check(op, x, fn(x))

    def test_strided_rows(self):
        wide = torch.randn(300, 5000, device="cuda")
        x = wide[:, :4096]
        self.assertFalse(x.is_contiguous())
        self.check("softmax", x, rowred.softmax(x))
        # Leading dimensions that flatten to evenly strided rows.
        base = torch.randn(4, 6, 1100, device="cuda", dtype=torch.bfloat16)
        x = base[..., :1024]
        self.check("softmax", x, rowred.softmax(x))

    def test_rows_longer_than_the_kernels(self):
        # Rows of 2^24 and 2^23 + 5 take the kernel for 1048576 (chunks):
        # its variant for a few rows, of smaller chunks, would cut them into
        # more blocks than the device holds at once, so the launch takes
        # the main kernel.
        for shape in ((1, 1 << 24), (2, (1 << 23) + 5)):
            x = torch.randn(shape, device="cuda") * 4
            self.check("softmax", x, rowred.softmax(x))

    def test_empty(self):
        for shape in ((0, 1024), (5, 0), (0,)):
            x = torch.empty(shape, device="cuda")
            y = rowred.softmax(x)
            self.assertEqual(y.shape, x.shape)

    def test_masked_row(self):
        x = torch.randn(8, 4096, device="cuda")
        x[3, 100:] = float("-inf")
        y = rowred.softmax(x)
        self.check("softmax", x, y)

    def test_safe_rows_of_minus_infinity(self):
        # Rows entirely -inf give zeros (NaN without `safe`); the others, a
        # partly masked one among them, are torch's. On the kernels for any
        # length and for an exact one (4096).
        for op in ("softmax", "log_softmax"):
            for dtype in (torch.float32, torch.bfloat16):
                for n in (4096, 5000):
                    x = torch.randn(6, n, device="cuda", dtype=dtype)
                    x[1] = float("-inf")
                    x[4, 7:] = float("-inf")
                    y = getattr(rowred, op)(x, safe=True)
                    self.assertTrue(torch.all(y[1] == 0), f"{op} {dtype}")
                    rows = [0, 2, 3, 4, 5]
                    self.check(op, x[rows], y[rows])
                    plain = getattr(rowred, op)(x)
                    self.assertTrue(torch.all(plain[1].isnan()))


class Autograd(unittest.TestCase):
    def test_safe_gradients(self):
        # A row of -inf has gradient 0; the others are torch's.
        for op in ("softmax", "log_softmax"):
            x = torch.randn(8, 4096, device="cuda", requires_grad=True)
            with torch.no_grad():
                x[2] = float("-inf")
            g = torch.randn(8, 4096, device="cuda")
            getattr(rowred, op)(x, safe=True).backward(g)
            self.assertTrue(torch.all(x.grad[2] == 0), op)
            rows = [0, 1, 3, 4, 5, 6, 7]
            xr = x.detach()[rows].double().requires_grad_()
            getattr(torch, op)(xr, dim=-1).backward(g[rows].double())
            torch.testing.assert_close(x.grad[rows].double(), xr.grad,
                                       atol=1e-5, rtol=1e-5)

    def test_gradients(self):
        for op in ("softmax", "log_softmax"):
            for dtype in (torch.float32, torch.bfloat16):
                x = torch.randn(64, 4096, device="cuda", dtype=dtype,
                                requires_grad=True)
                g = torch.randn(64, 4096, device="cuda", dtype=dtype)
                getattr(rowred, op)(x).backward(g)
                xr = x.detach().double().requires_grad_()
                getattr(torch, op)(xr, dim=-1).backward(g.double())
                atol = 1e-5 if dtype == torch.float32 else 3e-2
                torch.testing.assert_close(x.grad.double(), xr.grad,
                                           atol=atol, rtol=atol)

    def test_compiled_gradient_kernels(self):
        # Rows of the pack's exact lengths (a block per row, and clusters at
        # 131072) take the compiled gradient kernels; 5000 has none in the
        # pack and runs PyTorch's. Every gradient against float64.
        for op in ("softmax", "log_softmax"):
            for dtype in DTYPES:
                for shape in ((3, 7, 1024), (8, 131072), (5, 5000)):
                    x = torch.randn(shape, device="cuda", dtype=dtype,
                                    requires_grad=True)
                    g = torch.randn(shape, device="cuda", dtype=dtype)
                    getattr(rowred, op)(x).backward(g)
                    xr = x.detach().double().requires_grad_()
                    getattr(torch, op)(xr, dim=-1).backward(g.double())
                    atol = 1e-5 if dtype == torch.float32 else 3e-2
                    torch.testing.assert_close(
                        x.grad.double(), xr.grad, atol=atol, rtol=atol,
                        msg=lambda m: f"{op} {shape} {dtype}: {m}")
        used = {os.path.basename(path) for path, _ in rowred.ops._loaded}
        for op in ("softmax_backward", "log_softmax_backward"):
            self.assertIn(f"{op}_f32_n131072_kernel0.json", used)
            self.assertIn(f"{op}_bf16_n1024_kernel0.json", used)

    def test_opcheck(self):
        x = torch.randn(16, 1024, device="cuda", requires_grad=True)
        torch.library.opcheck(torch.ops.rowred.softmax.default, (x,))
        torch.library.opcheck(torch.ops.rowred.log_softmax.default, (x,))
        torch.library.opcheck(torch.ops.rowred.softmax_safe.default, (x,))
        torch.library.opcheck(torch.ops.rowred.log_softmax_safe.default,
                              (x,))
        y = torch.softmax(torch.randn(16, 1024, device="cuda"), -1)
        dy = torch.randn(16, 1024, device="cuda")
        torch.library.opcheck(torch.ops.rowred.softmax_backward.default,
                              (y, dy))
        torch.library.opcheck(torch.ops.rowred.log_softmax_backward.default,
                              (y.log(), dy))


class PerRowResults(unittest.TestCase):
    """rowred.logsumexp and rowred.cross_entropy on the pack's kernels:
    those for EXACT_COLS (clusters or chunks at 131072), and for 5000 the
    one for any length (no exact kernel's fast range holds 5000)."""

    def test_values_and_gradients(self):
        for dtype in DTYPES:
            for rows, n in ((64, 1024), (33, 32000), (8, 131072), (5, 5000)):
                x = torch.randn(rows, n, device="cuda", dtype=dtype) * 3
                for op in ("logsumexp", "cross_entropy"):
                    kernel = rowred.ops._exact_kernel(op, x, n)
                    self.assertIsNotNone(kernel, f"{op} {dtype} {n}")
                x[1, 7] = float("inf") if rows > 8 else x[1, 7]
                labels = torch.randint(0, n, (rows,), device="cuda")
                labels[2] = -100
                xr = x.double().requires_grad_()
                xo = x.clone().requires_grad_()
                for reduction in ("none", "mean", "sum"):
                    got = rowred.cross_entropy(xo, labels,
                                               reduction=reduction)
                    want = torch.nn.functional.cross_entropy(
                        xr, labels, reduction=reduction)
                    self.assertEqual(got.dtype, dtype)
                    torch.testing.assert_close(
                        got.double(), want.detach(), equal_nan=True,
                        atol=1e-4 if dtype == torch.float32 else 2e-2,
                        rtol=1e-4 if dtype == torch.float32 else 2e-2,
                        msg=lambda m: f"cross_entropy {reduction} {rows}x{n}"
                        f" {dtype}: {m}")
                lse = rowred.logsumexp(x)
                torch.testing.assert_close(
                    lse.double(), torch.logsumexp(x.double(), -1),
                    atol=1e-5 if dtype == torch.float32 else 3e-2,
                    rtol=1e-5 if dtype == torch.float32 else 1e-2,
                    msg=lambda m: f"logsumexp {rows}x{n} {dtype}: {m}")
                # Gradients of finite rows, against float64.
                xf = x.clone()
                xf[1, 7] = 0
                xo = xf.clone().requires_grad_()
                xr = xf.double().requires_grad_()
                rowred.cross_entropy(xo, labels).backward()
                torch.nn.functional.cross_entropy(xr, labels).backward()
                tol = 1e-6 if dtype == torch.float32 else 2e-3
                torch.testing.assert_close(
                    xo.grad.double(), xr.grad, atol=tol, rtol=1e-2,
                    msg=lambda m: f"cross_entropy grad {rows}x{n} {dtype}: "
                    f"{m}")
        used = {os.path.basename(path) for path, _ in rowred.ops._loaded}
        self.assertIn("cross_entropy_bf16_n131072_kernel0.json", used)
        self.assertIn("logsumexp_f32_n32000_kernel0.json", used)
        # The default training path: the forward's kernel wrote the
        # gradient into a buffer of its own.
        self.assertIn("cross_entropy_grad_f16_n32000_kernel0.json", used)

    def test_logsumexp_gradient(self):
        """logsumexp's backward on its compiled kernel (the exact length's,
        the one for any length for 5000 and for rows longer than the
        pack's), with an incoming gradient
        that is not contiguous (a sum's, expanded), against float64."""
        for dtype in DTYPES:
            for shape in ((64, 1024), (3, 11, 32000), (5, 5000), (2, 140001)):
                x = torch.randn(shape, device="cuda", dtype=dtype) * 3
                xo = x.clone().requires_grad_()
                xr = x.double().requires_grad_()
                g = torch.rand(shape[:-1], device="cuda") + 0.5
                (rowred.logsumexp(xo).float() * g).sum().backward()
                (torch.logsumexp(xr, -1) * g.double()).sum().backward()
                tol = 1e-6 if dtype == torch.float32 else 4e-3
                torch.testing.assert_close(
                    xo.grad.double(), xr.grad, atol=tol, rtol=2e-2,
                    msg=lambda m: f"logsumexp grad {shape} {dtype}: {m}")
                xo.grad = None
                rowred.logsumexp(xo).sum().backward()
                torch.testing.assert_close(
                    xo.grad.double(), torch.softmax(x.double(), -1),
                    atol=tol, rtol=2e-2)
        used = {os.path.basename(path) for path, _ in rowred.ops._loaded}
        self.assertIn("logsumexp_backward_bf16_n32000_kernel0.json", used)
        self.assertIn("logsumexp_backward_f32_any_kernel0.json", used)

    def test_other_parameters_run_on_pytorch(self):
        x = torch.randn(16, 1024, device="cuda")
        labels = torch.randint(0, 1024, (16,), device="cuda")
        for kwargs in ({"label_smoothing": 0.1}, {"ignore_index": 3}):
            torch.testing.assert_close(
                rowred.cross_entropy(x, labels, **kwargs),
                torch.nn.functional.cross_entropy(x, labels, **kwargs))

    def test_errors(self):
        x = torch.randn(16, 1024, device="cuda")
        with self.assertRaisesRegex(ValueError, "int64 labels"):
            rowred.cross_entropy(x, torch.zeros(16, device="cuda"))
        with self.assertRaisesRegex(ValueError, r"shape \(N, C\)"):
            rowred.cross_entropy(x.view(4, 4, 1024),
                                 torch.zeros(16, dtype=torch.int64,
                                             device="cuda"))
        with self.assertRaisesRegex(ValueError, "reduction"):
            rowred.cross_entropy(x, torch.zeros(16, dtype=torch.int64,
                                                device="cuda"),
                                 reduction="avg")

    def test_labels_out_of_range(self):
        """A label outside [0, C) other than the ignore index: a NaN loss
        for its row (the others exact), or with check_labels a ValueError
        naming the first such row; ignored rows pass the check."""
        x = torch.randn(16, 1024, device="cuda")
        labels = torch.randint(0, 1024, (16,), device="cuda")
        labels[3], labels[5], labels[7] = 1024, -100, -2
        loss = rowred.cross_entropy(x, labels, reduction="none")
        self.assertTrue(torch.isnan(loss[3]) and torch.isnan(loss[7]))
        fine = torch.tensor([i not in (3, 7) for i in range(16)],
                            device="cuda")
        torch.testing.assert_close(
            loss[fine], torch.nn.functional.cross_entropy(
                x[fine], labels[fine], reduction="none"))
        for requires_grad in (False, True):
            with self.assertRaisesRegex(
                    ValueError, r"label 1024 of row 3 is outside \[0, 1024\)"
                    r".*\(2 such rows\)"):
                rowred.cross_entropy(x.clone().requires_grad_(requires_grad),
                                     labels, check_labels=True)
        labels[3] = labels[7] = 0
        torch.testing.assert_close(
            rowred.cross_entropy(x, labels, check_labels=True),
            torch.nn.functional.cross_entropy(x, labels))

    def test_opcheck(self):
        x = torch.randn(16, 1024, device="cuda", requires_grad=True)
        labels = torch.randint(0, 1024, (16,), device="cuda")
        torch.library.opcheck(torch.ops.rowred.logsumexp.default, (x,))
        torch.library.opcheck(torch.ops.rowred.cross_entropy.default,
                              (x, labels))
        torch.library.opcheck(torch.ops.rowred.logsumexp_backward.default,
                              (x.detach(), torch.logsumexp(x.detach(), -1),
                               torch.rand(16, device="cuda")))
        for reduction in range(3):
            torch.library.opcheck(
                torch.ops.rowred.cross_entropy_train.default,
                (x, labels, reduction),
                test_utils=("test_schema", "test_faketensor",
                            "test_aot_dispatch_dynamic"))


class Norms(unittest.TestCase):
    """rowred.rms_norm and rowred.layer_norm on the pack's kernels for
    EXACT_COLS and its epsilons (1e-5, 1e-6), PyTorch's elsewhere (5000
    columns, PyTorch's default eps for rms_norm), against float64."""

    # 56 x 131072: more rows than bf16 rms_norm's few-rows cluster takes,
    # on its generic chunks.
    CASES = ((64, 1024), (33, 4096), (8, 131072), (56, 131072), (5, 5000))

    def check(self, name, got, want, dtype, grad=False):
        tol = (1e-4 if grad else 1e-5) if dtype == torch.float32 else 2e-2
        torch.testing.assert_close(got.double(), want.detach(), atol=tol,
                                   rtol=tol, msg=lambda m: f"{name}: {m}")

    def test_values_and_gradients(self):
        f32_eps = torch.finfo(torch.float32).eps
        for dtype in DTYPES:
            for rows, n in self.CASES:
                for eps in (1e-5, 1e-6, None):
                    x = torch.randn(rows, n, device="cuda", dtype=dtype) + 1
                    w = torch.rand(n, device="cuda", dtype=dtype) + 0.5
                    b = torch.randn(n, device="cuda", dtype=dtype)
                    dy = torch.randn(rows, n, device="cuda", dtype=dtype)
                    xr, wr, br = (t.double().requires_grad_()
                                  for t in (x, w, b))
                    xo, wo, bo = (t.clone().requires_grad_()
                                  for t in (x, w, b))
                    name = f"{rows}x{n} {dtype} eps {eps}"
                    got = rowred.rms_norm(xo, (n,), wo, eps)
                    want = torch.nn.functional.rms_norm(
                        xr, (n,), wr, f32_eps if eps is None else eps)
                    self.assertEqual(got.dtype, dtype)
                    self.check("rms_norm " + name, got, want, dtype)
                    got.backward(dy)
                    want.backward(dy.double())
                    self.check("rms_norm dx " + name, xo.grad, xr.grad,
                               dtype, True)
                    self.check("rms_norm dw " + name, wo.grad / rows,
                               wr.grad / rows, dtype, True)
                    if eps is None:
                        continue
                    for t in (xo, wo, xr, wr):
                        t.grad = None
                    got = rowred.layer_norm(xo, (n,), wo, bo, eps)
                    want = torch.nn.functional.layer_norm(xr, (n,), wr, br,
                                                          eps)
                    self.check("layer_norm " + name, got, want, dtype)
                    got.backward(dy)
                    want.backward(dy.double())
                    for what, g, r in (("dx", xo.grad, xr.grad),
                                       ("dw", wo.grad / rows, wr.grad / rows),
                                       ("db", bo.grad / rows,
                                        br.grad / rows)):
                        self.check(f"layer_norm {what} {name}", g, r, dtype,
                                   True)
        used = {os.path.basename(path) for path, _ in rowred.ops._loaded}
        for op in ("rms_norm", "layer_norm"):
            self.assertIn(f"{op}_bf16_n131072_eps1p000em05_kernel0.json",
                          used)
            self.assertIn(f"{op}_f32_n1024_eps1p000em06_kernel0.json", used)
        # The compiled backward (rows of 131072 have none: PyTorch's ran).
        self.assertIn("rms_norm_backward_bf16_n4096_kernel0.json", used)
        self.assertIn("rms_norm_backward_f32_n1024_kernel0.json", used)
        self.assertIn("layer_norm_backward_bf16_n4096_kernel0.json", used)

    def test_weight_gradient_is_deterministic(self):
        """The weight's gradient, summed down the columns by the backward's
        kernel, has the same bits on every run (no float atomics)."""
        for dtype in (torch.float32, torch.bfloat16):
            x = torch.randn(3000, 4096, device="cuda", dtype=dtype)
            dy = torch.randn_like(x)
            grads = []
            for _ in range(3):
                w = torch.ones(4096, device="cuda", dtype=dtype,
                               requires_grad=True)
                rowred.rms_norm(x, (4096,), w, 1e-5).backward(dy)
                grads.append(w.grad)
            for g in grads[1:]:
                self.assertTrue(torch.equal(g, grads[0]), dtype)

    def test_residual(self):
        # h = x + r in the input's dtype, y = rms_norm(h); the gradients of
        # a loss of both reach x and r alike.
        for dtype in (torch.float32, torch.bfloat16):
            for shape in ((3, 11, 4096), (5, 5000)):
                n = shape[-1]
                x, r, gy, gh = (torch.randn(shape, device="cuda",
                                            dtype=dtype) for _ in range(4))
                w = torch.rand(n, device="cuda", dtype=dtype) + 0.5
                xo, ro, wo = (t.clone().requires_grad_() for t in (x, r, w))
                y, h = rowred.rms_norm(xo, (n,), wo, 1e-5, residual=ro)
                name = f"{shape} {dtype}"
                torch.testing.assert_close(h, x + r, atol=0, rtol=0)
                hr = (x + r).double().requires_grad_()
                wr = w.double().requires_grad_()
                want = torch.nn.functional.rms_norm(hr, (n,), wr, 1e-5)
                self.check("rms_norm residual y " + name, y, want, dtype)
                ((y * gy).sum() + (h * gh).sum()).backward()
                ((want * gy.double()).sum() + (hr * gh.double()).sum()
                 ).backward()
                self.check("residual dx " + name, xo.grad, hr.grad, dtype,
                           True)
                self.check("residual dr " + name, ro.grad, hr.grad, dtype,
                           True)
                self.check("residual dw " + name, wo.grad / x.numel() * n,
                           wr.grad / x.numel() * n, dtype, True)
        used = {os.path.basename(path) for path, _ in rowred.ops._loaded}
        self.assertIn("rms_norm_residual_bf16_n4096_eps1p000em05_kernel0.json",
                      used)
        # The gradients of y and of h itself summed in one kernel.
        self.assertIn("rms_norm_residual_backward_bf16_n4096_kernel0.json",
                      used)
        with self.assertRaisesRegex(ValueError, "residual of the input's"):
            rowred.rms_norm(x, (n,), w, residual=x[:1])

    def test_leading_dimensions_and_defaults(self):
        x = torch.randn(4, 6, 4096, device="cuda", dtype=torch.bfloat16)
        torch.testing.assert_close(
            rowred.rms_norm(x, 4096, eps=1e-6),
            torch.nn.functional.rms_norm(x, (4096,), eps=1e-6))
        torch.testing.assert_close(
            rowred.layer_norm(x, (4096,)),
            torch.nn.functional.layer_norm(x, (4096,)))

    def test_f32_weight_beside_16_bit_rows(self):
        """Mixed precision: f16 or bf16 rows with an f32 weight (and bias)
        run on the pack's kernels of an f32 weight (the weight's gradients
        summed in f32), y of the rows' dtype as F.rms_norm's (F.layer_norm
        refuses the mix); the residual form likewise; where the pack has no
        kernel (rows of 131072 for the backwards) PyTorch expressions."""
        f = torch.nn.functional
        for dtype in (torch.float16, torch.bfloat16):
            # Rows of 131072: the forward's chunks or cluster kernel, the
            # backward PyTorch's (no pack kernel holds the row).
            for rows, n in ((64, 1024), (33, 4096), (8, 131072)):
                x, r, dy = (torch.randn(rows, n, device="cuda", dtype=dtype)
                            + 1 for _ in range(3))
                w = torch.rand(n, device="cuda") + 0.5
                b = torch.randn(n, device="cuda")
                name = f"{rows}x{n} {dtype}"
                for op in ("rms_norm", "rms_norm residual", "layer_norm"):
                    xo, ro, wo, bo = (t.clone().requires_grad_()
                                      for t in (x, r, w, b))
                    xr, wr, br = (t.double().requires_grad_()
                                  for t in (x, w, b))
                    if op == "layer_norm":
                        # F.layer_norm refuses the mix: y of x's dtype.
                        got = rowred.layer_norm(xo, (n,), wo, bo, 1e-5)
                        want = f.layer_norm(xr, (n,), wr, br, 1e-5)
                        like = x
                    elif op == "rms_norm":
                        got = rowred.rms_norm(xo, (n,), wo, 1e-5)
                        want = f.rms_norm(xr, (n,), wr, 1e-5)
                        like = f.rms_norm(x, (n,), w, 1e-5)
                    else:
                        got, h = rowred.rms_norm(xo, (n,), wo, 1e-5,
                                                 residual=ro)
                        torch.testing.assert_close(h, x + r, atol=0, rtol=0)
                        # h is rounded to the rows' dtype: the reference
                        # normalizes that h.
                        xr = (x + r).double().requires_grad_()
                        want = f.rms_norm(xr, (n,), wr, 1e-5)
                        like = f.rms_norm(x + r, (n,), w, 1e-5)
                    self.assertEqual(got.dtype, like.dtype, op)
                    self.check(f"{op} {name}", got, want, dtype)
                    got.backward(dy)
                    want.backward(dy.double())
                    self.check(f"{op} dx {name}", xo.grad, xr.grad, dtype,
                               True)
                    self.assertEqual(wo.grad.dtype, torch.float32)
                    # The columns' sums in f32 of the exact 16-bit x and
                    # dy (rstd from f32 arithmetic): f32's tolerance.
                    self.check(f"{op} dw {name}", wo.grad / rows,
                               wr.grad / rows, torch.float32, True)
                    if op == "layer_norm":
                        self.check(f"{op} db {name}", bo.grad / rows,
                                   br.grad / rows, torch.float32, True)
        used = {os.path.basename(path) for path, _ in rowred.ops._loaded}
        for kernel in ("rms_norm_bf16_wf32_n4096_eps1p000em05",
                       "rms_norm_backward_bf16_wf32_n4096",
                       "rms_norm_residual_f16_wf32_n1024_eps1p000em05",
                       "rms_norm_residual_backward_f16_wf32_n1024",
                       "layer_norm_bf16_wf32_n4096_eps1p000em05",
                       "layer_norm_backward_f16_wf32_n1024"):
            self.assertIn(kernel + "_kernel0.json", used)
        x = torch.randn(16, 1024, device="cuda", dtype=torch.bfloat16)
        w = torch.rand(1024, device="cuda")
        torch.library.opcheck(torch.ops.rowred.rms_norm.default,
                              (x, w, 1e-5))
        torch.library.opcheck(torch.ops.rowred.layer_norm.default,
                              (x, w, w - 0.5, 1e-5))

    def test_weight_of_another_dtype_runs_on_pytorch(self):
        # Neither the rows' dtype nor f32: PyTorch's op.
        x = torch.randn(16, 1024, device="cuda", dtype=torch.bfloat16)
        w = torch.rand(1024, device="cuda", dtype=torch.float16)
        got = rowred.rms_norm(x, (1024,), w, 1e-5)
        torch.testing.assert_close(
            got, torch.nn.functional.rms_norm(x, (1024,), w, 1e-5))

    def test_errors(self):
        x = torch.randn(16, 1024, device="cuda")
        with self.assertRaisesRegex(ValueError, r"normalized_shape must be "
                                    r"\(1024,\), got \(16, 1024\)"):
            rowred.rms_norm(x, (16, 1024))
        with self.assertRaisesRegex(ValueError, r"weight of shape \(1024,\)"):
            rowred.layer_norm(x, (1024,), torch.ones(512, device="cuda"))
        with self.assertRaisesRegex(ValueError, "bias on cpu"):
            rowred.layer_norm(x, (1024,), None, torch.zeros(1024))

    def test_opcheck(self):
        x = torch.randn(16, 1024, device="cuda", requires_grad=True)
        w = torch.rand(1024, device="cuda", requires_grad=True)
        b = torch.rand(1024, device="cuda", requires_grad=True)
        torch.library.opcheck(torch.ops.rowred.rms_norm.default,
                              (x, w, 1e-5))
        torch.library.opcheck(torch.ops.rowred.layer_norm.default,
                              (x, w, b, 1e-5))
        r = torch.randn(16, 1024, device="cuda", requires_grad=True)
        torch.library.opcheck(torch.ops.rowred.rms_norm_residual.default,
                              (x, r, w, 1e-5))
        dy = torch.randn(16, 1024, device="cuda")
        stat = torch.rand(16, device="cuda") + 0.5
        torch.library.opcheck(torch.ops.rowred.rms_norm_backward.default,
                              (x.detach(), dy, w.detach(), stat))
        torch.library.opcheck(torch.ops.rowred.layer_norm_backward.default,
                              (x.detach(), dy, w.detach(), b.detach(),
                               stat - 0.5, stat))


class InPlaceCrossEntropy(unittest.TestCase):
    """rowred.cross_entropy(..., inplace_backward=True): the forward's
    kernel writes the gradient over the logits (the pack's
    cross_entropy_grad kernels for EXACT_COLS)."""

    def test_values_and_gradients(self):
        for dtype in DTYPES:
            for rows, n in ((64, 1024), (33, 32000), (8, 131072)):
                x = torch.randn(rows, n, device="cuda", dtype=dtype) * 3
                labels = torch.randint(0, n, (rows,), device="cuda")
                labels[2] = -100
                for reduction in ("none", "mean", "sum"):
                    xr = x.double().requires_grad_()
                    want = torch.nn.functional.cross_entropy(
                        xr, labels, reduction=reduction)
                    xo = x.clone().requires_grad_()
                    got = rowred.cross_entropy(xo, labels,
                                               reduction=reduction,
                                               inplace_backward=True)
                    self.assertEqual(got.dtype, dtype)
                    tol = 1e-4 if dtype == torch.float32 else 2e-2
                    torch.testing.assert_close(
                        got.double(), want.detach(), atol=tol, rtol=tol,
                        msg=lambda m: f"loss {reduction} {rows}x{n} "
                        f"{dtype}: {m}")
                    # An upstream gradient other than 1 (per row for none).
                    g = torch.rand_like(want) + 0.5
                    want.backward(g)
                    got.backward(g.to(dtype))
                    tol = 1e-6 if dtype == torch.float32 else 4e-3
                    torch.testing.assert_close(
                        xo.grad.double(), xr.grad, atol=tol, rtol=2e-2,
                        msg=lambda m: f"grad {reduction} {rows}x{n} "
                        f"{dtype}: {m}")
        used = {os.path.basename(path) for path, _ in rowred.ops._loaded}
        self.assertIn("cross_entropy_grad_bf16_n131072_kernel0.json", used)

    def test_upstream_gradient_on_strided_rows(self):
        """The backward's scaling by the incoming gradient of a mean or a
        sum, decided on the GPU (and by reading it without Triton): left
        out for 1, applied otherwise, on rows with a stride past their
        length whose padding stays untouched."""
        rows, n = 48, 1024
        for triton_module in (rowred._scale.triton, None):
            for dtype in DTYPES:
                for reduction, g in (("mean", None), ("mean", 2.5),
                                     ("sum", None), ("sum", 0.25)):
                    wide = torch.randn(rows, n + 8, device="cuda",
                                       dtype=dtype) * 3
                    x = wide[:, :n]
                    labels = torch.randint(0, n, (rows,), device="cuda")
                    labels[5] = -100
                    xr = x.double().requires_grad_()
                    want = torch.nn.functional.cross_entropy(
                        xr, labels, reduction=reduction)
                    want.backward(None if g is None else
                                  torch.tensor(g, dtype=torch.float64,
                                               device="cuda"))
                    padding = wide[:, n:].clone()
                    xo = x.requires_grad_()
                    saved, rowred._scale.triton = rowred._scale.triton, \
                        triton_module
                    try:
                        got = rowred.cross_entropy(xo, labels,
                                                   reduction=reduction,
                                                   inplace_backward=True)
                        got.backward(None if g is None else
                                     torch.tensor(g, dtype=dtype,
                                                  device="cuda"))
                    finally:
                        rowred._scale.triton = saved
                    tol = 1e-6 if dtype == torch.float32 else 4e-3
                    torch.testing.assert_close(
                        xo.grad.double(), xr.grad, atol=tol, rtol=2e-2,
                        msg=lambda m: f"{reduction} g={g} {dtype} triton="
                        f"{triton_module is not None}: {m}")
                    torch.testing.assert_close(wide[:, n:], padding,
                                               atol=0, rtol=0)

    def test_memory(self):
        """The loss's forward and backward hold nothing logits-sized
        beyond the logits (PyTorch's hold the log-softmax and the gradient
        besides)."""
        extra = self.extra_logits(inplace_backward=True)
        self.assertLess(extra["ours"], 0.01, extra)
        self.assertGreater(extra["torch"], 1.0, extra)

    @staticmethod
    def extra_logits(inplace_backward, reduction="mean"):
        """Memory beyond the logits of ours and PyTorch's loss, forward and
        backward, on bf16 logits of 2048 x 32000, in logits; 'none' summed
        with a weight per row."""
        m, n = 2048, 32000
        labels = torch.randint(0, n, (m,), device="cuda")
        weights = torch.rand(m, device="cuda", dtype=torch.bfloat16)

        def total(loss):
            return loss if reduction != "none" else (loss * weights).sum()
        extra = {}
        for name, fn in (("ours", lambda z: total(rowred.cross_entropy(
                             z, labels, reduction=reduction,
                             inplace_backward=inplace_backward))),
                         ("torch", lambda z: total(torch.nn.functional.
                          cross_entropy(z, labels, reduction=reduction)))):
            logits = torch.randn(m, n, device="cuda", dtype=torch.bfloat16,
                                 requires_grad=True)
            extra[name] = extra_memory(fn, logits) / (m * n * 2)
        return extra

    def test_memory_of_the_default_path(self):
        """Without inplace_backward the step holds the gradient and nothing
        else logits-sized beyond the logits (per row too: the backward
        scales that gradient in place); PyTorch's more than that."""
        for reduction in ("mean", "none"):
            extra = self.extra_logits(False, reduction)
            self.assertLess(extra["ours"], 1.01, (reduction, extra))
            self.assertLess(extra["ours"], extra["torch"], (reduction, extra))
        extra = self.extra_logits(True, "none")
        self.assertLess(extra["ours"], 0.01, extra)

    def test_falls_back(self):
        # No gradient asked for: the usual path, the logits untouched.
        x = torch.randn(16, 1024, device="cuda", requires_grad=True)
        labels = torch.randint(0, 1024, (16,), device="cuda")
        before = x.detach().clone()
        want = torch.nn.functional.cross_entropy(before, labels)
        with torch.no_grad():
            loss = rowred.cross_entropy(x, labels, inplace_backward=True)
        torch.testing.assert_close(loss, want)
        torch.testing.assert_close(x.detach(), before)


class Integration(unittest.TestCase):
    def test_compile_fullgraph(self):
        def f(x):
            return rowred.softmax(x * 2.0) + 1.0

        compiled = torch.compile(f, fullgraph=True)
        x = torch.randn(128, 4096, device="cuda")
        torch.testing.assert_close(compiled(x), torch.softmax(x * 2.0, -1)
                                   + 1.0, atol=1e-5, rtol=1e-5)

    def test_compile_as_the_first_call(self):
        # A process whose first call of the norms is traced (a model
        # patched and then compiled): no graph break where the eager path
        # would first load the native ops.
        saved, rowred._native._ops = rowred._native._ops, None
        try:
            torch._dynamo.reset()
            n = 4096
            x = torch.randn(8, n, device="cuda", dtype=torch.bfloat16)
            w = torch.rand(n, device="cuda", dtype=torch.bfloat16) + 0.5
            b = torch.randn(n, device="cuda", dtype=torch.bfloat16)

            def f(x):
                y, h = rowred.rms_norm(x, (n,), w, 1e-5, residual=x)
                y = rowred.rms_norm(y, (n,), w, 1e-5)
                return rowred.softmax(rowred.layer_norm(y + h, (n,), w, b,
                                                        1e-5))

            got = torch.compile(f, fullgraph=True)(x)
            self.assertIsNone(rowred._native._ops)
        finally:
            rowred._native._ops = saved
        torch.testing.assert_close(got, f(x), atol=2e-2, rtol=2e-2)

    def test_training_step_compile_and_graph(self):
        """A training step of the norms and the loss (forward and backward)
        under torch.compile(fullgraph=True) and captured whole in a CUDA
        graph, against the same step in eager PyTorch."""
        n, vocab, rows = 4096, 32000, 64
        dtype = torch.bfloat16
        w = torch.rand(n, device="cuda", dtype=dtype) + 0.5
        b = torch.randn(n, device="cuda", dtype=dtype)
        head = torch.randn(n, vocab, device="cuda", dtype=dtype) / 64
        labels = torch.randint(0, vocab, (rows,), device="cuda")

        def step(x, w, b, norm, loss):
            h = norm[0](x, (n,), w, 1e-5)
            h = norm[1](h, (n,), w, b, 1e-5)
            return loss(h @ head, labels)

        ours = (rowred.rms_norm, rowred.layer_norm), rowred.cross_entropy
        theirs = (torch.nn.functional.rms_norm,
                  torch.nn.functional.layer_norm), \
            torch.nn.functional.cross_entropy
        x0 = torch.randn(rows, n, device="cuda", dtype=dtype)

        def grads(fn, norm, loss):
            x, wo, bo = (t.clone().requires_grad_() for t in (x0, w, b))
            fn(x, wo, bo, norm, loss).backward()
            return x.grad, wo.grad, bo.grad

        want = grads(step, *theirs)
        compiled = torch.compile(step, fullgraph=True)
        for got in (grads(step, *ours), grads(compiled, *ours)):
            for g, r in zip(got, want):
                torch.testing.assert_close(g.float(), r.float(), atol=2e-2,
                                           rtol=5e-2)
        # The whole step captured and replayed.
        x, wo, bo = (t.clone().requires_grad_() for t in (x0, w, b))
        stream = torch.cuda.Stream()
        stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(stream):
            for _ in range(2):
                for t in (x, wo, bo):
                    t.grad = None
                step(x, wo, bo, *ours).backward()
        torch.cuda.current_stream().wait_stream(stream)
        graph = torch.cuda.CUDAGraph()
        for t in (x, wo, bo):
            t.grad = None
        with torch.cuda.graph(graph):
            step(x, wo, bo, *ours).backward()
        graph.replay()
        torch.cuda.synchronize()
        for g, r in zip((x.grad, wo.grad, bo.grad), want):
            torch.testing.assert_close(g.float(), r.float(), atol=2e-2,
                                       rtol=5e-2)

    def test_cuda_graph(self):
        x = torch.randn(256, 32000, device="cuda", dtype=torch.bfloat16)
        rowred.softmax(x)  # load the kernel before capture
        stream = torch.cuda.Stream()
        stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(stream):
            rowred.softmax(x)
        torch.cuda.current_stream().wait_stream(stream)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            y = rowred.softmax(x)
        for _ in range(3):
            x.copy_(torch.randn_like(x))
            graph.replay()
            torch.cuda.synchronize()
            torch.testing.assert_close(y.double(), ref("softmax", x),
                                       atol=1.6e-2, rtol=1.6e-2)

    def test_two_streams(self):
        # A chunks kernel (rows of 131072 f32) needs a workspace: each
        # stream gets its own from the caching allocator.
        xs = [torch.randn(64, 131072, device="cuda") for _ in range(2)]
        streams = [torch.cuda.Stream() for _ in range(2)]
        outs = [None, None]
        torch.cuda.synchronize()
        for _ in range(5):
            for i in range(2):
                with torch.cuda.stream(streams[i]):
                    outs[i] = rowred.softmax(xs[i])
        torch.cuda.synchronize()
        for i in range(2):
            torch.testing.assert_close(outs[i].double(), ref("softmax", xs[i]),
                                       atol=2e-6, rtol=1e-5)


# The first CUDA work of a fresh process's autograd thread: the native
# backward of a norm (whose column sums take a workspace), with the weight's
# gradient checked against float64. The thread has no current context until
# something makes one current.
FIRST_BACKWARD = """
import sys, torch, rowred
rowred.load_pack(sys.argv[1])
op = sys.argv[2]
x = torch.randn(8, 4096, device="cuda") + 1
w = (torch.rand(4096, device="cuda") + 0.5).requires_grad_()
b = torch.randn(4096, device="cuda").requires_grad_()
dy = torch.randn(8, 4096, device="cuda")
def f(x, w, b, lib):
    if op == "rms_norm":
        return lib.rms_norm(x, (4096,), w, 1e-5)
    return lib.layer_norm(x, (4096,), w, b, 1e-5)
f(x, w, b, rowred).backward(dy)
x64, w64, b64 = (t.detach().double().requires_grad_() for t in (x, w, b))
f(x64, w64, b64, torch.nn.functional).backward(dy.double())
err = float((w.grad - w64.grad).norm() / w64.grad.norm())
print(f"{op} dw relative L2 {err:.2e}")
sys.exit(0 if err < 1e-5 else 1)
"""


class FreshProcess(unittest.TestCase):
    """What a fresh process runs first."""

    def test_norm_backward_first_on_the_autograd_thread(self):
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(
            [os.path.dirname(os.path.dirname(rowred.__file__))] +
            os.environ.get("PYTHONPATH", "").split(os.pathsep)))
        for op in ("rms_norm", "layer_norm"):
            run = subprocess.run(
                [sys.executable, "-c", FIRST_BACKWARD, PACK_DIR, op],
                env=env, capture_output=True, text=True, timeout=120)
            self.assertEqual(run.returncode, 0, run.stdout + run.stderr)


class Errors(unittest.TestCase):
    def test_last_dim_not_contiguous(self):
        x = torch.randn(1024, 64, device="cuda").t()
        with self.assertRaisesRegex(ValueError, "must be contiguous"):
            rowred.softmax(x)

    def test_other_dim(self):
        x = torch.randn(4, 1024, device="cuda")
        with self.assertRaisesRegex(ValueError, "last dimension only"):
            rowred.softmax(x, dim=0)

    def test_dtype(self):
        x = torch.randn(4, 1024, device="cuda").double()
        with self.assertRaisesRegex(ValueError, "float32, float16"):
            rowred.softmax(x)

    def test_uneven_rows(self):
        base = torch.randn(4, 6, 1100, device="cuda")
        x = base[:, :5, :1024]
        with self.assertRaisesRegex(ValueError, "not evenly strided"):
            rowred.softmax(x)

    def test_bad_incoming_gradients(self):
        # The engine checks an incoming gradient against the output before
        # any node runs (the native ops' C++ nodes as PyTorch's): a wrong
        # shape or device is PyTorch's error naming it; another dtype is
        # cast to the output's.
        w = torch.rand(1024, device="cuda") + 0.5
        ops = {"softmax": rowred.softmax,
               "rms_norm": lambda x: rowred.rms_norm(x, (1024,), w, 1e-5)}
        for name, op in ops.items():
            x = torch.randn(2, 3, 1024, device="cuda", requires_grad=True)
            g = torch.randn(2, 3, 1024, device="cuda")
            with self.assertRaisesRegex(RuntimeError, "shape", msg=name):
                op(x).backward(g[:, :2])
            with self.assertRaisesRegex(RuntimeError, "device|cpu",
                                        msg=name):
                op(x).backward(g.cpu())
            op(x).backward(g)
            want, x.grad = x.grad, None
            op(x).backward(g.double())
            self.assertTrue(torch.equal(x.grad, want), name)


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    PACK_DIR = sys.argv.pop(1)
    rowred.load_pack(PACK_DIR)
    unittest.main(verbosity=2)
