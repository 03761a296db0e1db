"""GPU tests of the rowred package's native ops (rowred._native_ops, the
autograd Functions in C++): the same bits as the same kernels run from
Python, forward and backward. test/GPU/torch_ops.py runs them with its own
tests over its pack (its usage); this module holds no test runner.
"""
import contextlib
import itertools
import os
import unittest

import torch

import rowred


class Native(unittest.TestCase):
    """The native ops (rowred._native_ops, rowred._native) against the
    same kernels run from Python: the same bits forward and backward."""

    def setUp(self):
        runtime = rowred._runtime.library_path()
        path = os.path.join(os.path.dirname(runtime), rowred._native.MODULE)
        if not os.path.isfile(path):
            self.skipTest(f"no {path}: the native ops are not built")
        self.assertIsNotNone(rowred._native.op("rms_norm"),
                             f"{path} did not load")

    STEPS = {
        "softmax": lambda x, w, b, r: rowred.softmax(x),
        "softmax_safe": lambda x, w, b, r: rowred.softmax(x, safe=True),
        "log_softmax": lambda x, w, b, r: rowred.log_softmax(x),
        "rms_norm": lambda x, w, b, r: rowred.rms_norm(x, (x.size(-1),), w,
                                                       1e-5),
        "rms_norm_residual": lambda x, w, b, r: rowred.rms_norm(
            x, (x.size(-1),), w, 1e-6, residual=r),
        "layer_norm": lambda x, w, b, r: rowred.layer_norm(
            x, (x.size(-1),), w, b, 1e-5),
    }

    def run_step(self, name, leaves, grads, native):
        """(outputs, the leaves' gradients) of STEPS[name], on the native
        ops or with the autograd in Python."""
        xs = [t if t is None else t.clone().requires_grad_()
              for t in leaves]
        with contextlib.nullcontext() if native else \
                rowred._native.python_autograd():
            out = self.STEPS[name](*xs)
            outs = out if isinstance(out, tuple) else (out,)
            if native:
                # Leading dimensions too: no view's node around the op's.
                self.assertIn("CppNode", outs[0].grad_fn.name(), name)
            torch.autograd.backward(
                [o for o, g in zip(outs, grads) if g is not None],
                [g for g in grads if g is not None])
        return [o.detach() for o in outs], [t.grad for t in xs]

    def inputs(self, shape, dtype):
        n = shape[-1]

        def randn(*s):
            return torch.randn(s, device="cuda", dtype=dtype)
        return [randn(*shape) + 1, torch.rand(n, device="cuda", dtype=dtype)
                + 0.5, randn(n), randn(*shape)]

    def test_same_bits_as_the_python_autograd(self):
        # M = 1, odd row counts, no rows (the weight's gradient zeros),
        # leading dimensions, a non-contiguous incoming gradient; the
        # residual form with gradients of y and h, of y alone and of h
        # alone.
        for dtype in (torch.float32, torch.bfloat16):
            for shape in ((1, 4096), (37, 1024), (0, 4096), (3, 11, 4096)):
                leaves = self.inputs(shape, dtype)
                dy = torch.randn(shape[::-1], device="cuda",
                                 dtype=dtype).transpose(0, -1)
                for name in self.STEPS:
                    grad_sets = [(dy, dy)]
                    if name == "rms_norm_residual":
                        grad_sets += [(dy, None), (None, dy)]
                    for grads in grad_sets:
                        what = f"{name} {shape} {dtype} {grads[1] is None}"
                        got = self.run_step(name, leaves, grads, True)
                        want = self.run_step(name, leaves, grads, False)
                        for g, w in zip(got[0] + got[1], want[0] + want[1]):
                            self.assertEqual(g is None, w is None, what)
                            if g is not None:
                                self.assertTrue(torch.equal(g, w), what)

    def test_parameters_and_repeated_calls(self):
        # A module's nn.Parameter weight takes the native op as a plain
        # tensor does (the same bits); a call repeating an earlier one's
        # argument types, dtypes, devices and shapes skips the checks and
        # the lookup (rowred._native.fast_calls), and one that differs
        # still gets them.
        x0, w0, b0, dy = self.inputs((3, 5, 4096), torch.bfloat16)
        calls = {
            "rms_norm": lambda x, w, b: rowred.rms_norm(x, (4096,), w, 1e-5),
            "layer_norm": lambda x, w, b: rowred.layer_norm(x, 4096, w, b),
            "softmax": lambda x, w, b: rowred.softmax(x),
            "log_softmax": lambda x, w, b: rowred.log_softmax(x),
        }
        for name, call in calls.items():
            results = []
            for make in (torch.Tensor.clone, torch.nn.Parameter,
                         torch.nn.Parameter):
                x = x0.clone().requires_grad_()
                w, b = make(w0.clone()), make(b0.clone())
                w.requires_grad_(), b.requires_grad_()
                y = call(x, w, b)
                self.assertIn("CppNode", y.grad_fn.name(), name)
                y.backward(dy)
                results.append([y.detach(), x.grad] + [
                    t.grad for t in (w, b) if t.grad is not None])
            self.assertTrue(len(rowred._native.fast_calls), name)
            for got in results[1:]:
                for g, want in zip(got, results[0]):
                    self.assertTrue(torch.equal(g, want), name)
        # The residual form: (y, h) and the gradients of x, the residual
        # and the weight, the same bits on the repeated calls.
        r0 = torch.randn_like(x0)
        results = []
        for make in (torch.Tensor.clone, torch.nn.Parameter,
                     torch.nn.Parameter):
            x, r = x0.clone().requires_grad_(), r0.clone().requires_grad_()
            w = make(w0.clone()).requires_grad_()
            y, h = rowred.rms_norm(x, (4096,), w, 1e-5, residual=r)
            self.assertIn("CppNode", y.grad_fn.name())
            torch.autograd.backward((y, h), (dy, dy))
            results.append([y.detach(), h.detach(), x.grad, r.grad, w.grad])
        self.assertIn("rms_norm_residual",
                      [k[0] for k in rowred._native.fast_calls])
        for got in results[1:]:
            for g, want in zip(got, results[0]):
                self.assertTrue(torch.equal(g, want), "residual")
        for bad in (r0[:1], r0.float(), r0.transpose(0, 1).contiguous()):
            with self.assertRaisesRegex(ValueError, "residual of the input"):
                rowred.rms_norm(x0, (4096,), w0, 1e-5, residual=bad)
        with self.assertRaisesRegex(ValueError, "normalized_shape"):
            rowred.rms_norm(x0, (4095,), w0, 1e-5)
        with self.assertRaisesRegex(ValueError, "weight on cpu"):
            rowred.rms_norm(x0, (4096,), w0.cpu(), 1e-5)
        with self.assertRaisesRegex(ValueError, "CUDA tensor"):
            rowred.rms_norm(x0.cpu(), (4096,), w0, 1e-5)
        torch.testing.assert_close(
            rowred.rms_norm(x0, (4096,), w0.float(), 1e-5),
            torch.nn.functional.rms_norm(x0, (4096,), w0.float(), 1e-5))

    def test_strided_softmax_rows(self):
        base = torch.randn(300, 5000, device="cuda")
        g = torch.randn(300, 4096, device="cuda")
        for name in ("softmax", "log_softmax"):
            results = []
            for native in (True, False):
                wide = base.clone().requires_grad_()
                with contextlib.nullcontext() if native else \
                        rowred._native.python_autograd():
                    y = getattr(rowred, name)(wide[:, :4096])
                    y.backward(g)
                if native:
                    self.assertIn("CppNode", y.grad_fn.name(), name)
                results.append((y.detach(), wide.grad))
            for got, want in zip(*results):
                self.assertTrue(torch.equal(got, want), name)

    def test_without_grad(self):
        x, w, b, _ = self.inputs((64, 4096), torch.bfloat16)
        for mode in (torch.no_grad, torch.inference_mode):
            with mode():
                y = rowred.layer_norm(x, (4096,), w, b, 1e-5)
                with rowred._native.python_autograd():
                    want = rowred.layer_norm(x, (4096,), w, b, 1e-5)
            self.assertTrue(torch.equal(y, want), mode.__name__)

    def test_cross_entropy_loss_without_grad(self):
        # Every reduction, ignored rows, an exact (32000) and an any-length
        # (5000) kernel, f32 losses and the logits' dtype; no rows at all.
        # The mean and the sum at 32000 come from the pack's
        # cross_entropy_sum (summed over the rows in the kernel): against
        # float64 and the same bits on every call; the rest the same bits
        # as the Python path.
        for dtype in (torch.float32, torch.bfloat16):
            for rows, n in ((64, 32000), (7, 5000), (0, 32000)):
                x = torch.randn(rows, n, device="cuda", dtype=dtype) * 3
                labels = torch.randint(0, n, (rows,), device="cuda")
                labels[::3] = -100
                for reduction in ("none", "mean", "sum"):
                    for loss_dtype in (None, torch.float32):
                        what = f"{rows}x{n} {dtype} {reduction} " \
                            f"{loss_dtype}"

                        def call():
                            return rowred.cross_entropy(
                                x, labels, reduction=reduction,
                                loss_dtype=loss_dtype)
                        got = call()
                        # A repeated call takes the repeated-call path.
                        again = call()
                        self.assertTrue(torch.equal(got, again) or (
                            got.isnan().all() and again.isnan().all()), what)
                        with rowred._native.python_autograd():
                            want = call()
                        self.assertEqual(got.dtype, want.dtype, what)
                        if reduction == "none" or rows == 0 or n != 32000:
                            self.assertTrue(torch.equal(got, want) or (
                                got.isnan().all() and want.isnan().all()),
                                what)
                            continue
                        self.assertTrue(torch.equal(got, call()), what)
                        ref = torch.nn.functional.cross_entropy(
                            x.double(), labels, reduction=reduction)
                        tol = 1e-5 if got.dtype == torch.float32 else 1e-2
                        torch.testing.assert_close(got.double(), ref,
                                                   rtol=tol, atol=tol,
                                                   msg=what)
        self.assertIn(("cross_entropy_sum",), {
            key[0] for key, handles in rowred.ops._native_kernels.items()
            if handles})
        self.assertIn("cross_entropy",
                      [key[0] for key in rowred._native.fast_calls])
        # After a repeated call, calls that differ still get the checks.
        x = torch.randn(8, 32000, device="cuda")
        labels = torch.randint(0, 32000, (8,), device="cuda")
        rowred.cross_entropy(x, labels), rowred.cross_entropy(x, labels)
        for bad in (labels.int(), labels[:4], labels.cpu()):
            with self.assertRaisesRegex(ValueError, "labels"):
                rowred.cross_entropy(x, bad)
        with self.assertRaisesRegex(ValueError, "label 32000 of row 0"):
            rowred.cross_entropy(x, torch.full_like(labels, 32000),
                                 check_labels=True)

    def test_cross_entropy_training(self):
        # The loss and the logits' gradient of every reduction, into a new
        # buffer and over the logits, the loss in the logits' dtype and in
        # f32, an incoming gradient of 1 and of 2.5, M = 1 and ignored rows:
        # the same bits as the Python path, on the first call and on the
        # repeated call's path (rowred._native.fast_calls).
        for dtype in (torch.float32, torch.bfloat16):
            for rows in (1, 37):
                x = torch.randn(rows, 32000, device="cuda", dtype=dtype) * 3
                labels = torch.randint(0, 32000, (rows,), device="cuda")
                labels[1::3] = -100
                for reduction, inplace, loss_dtype, factor in \
                        itertools.product(("none", "mean", "sum"),
                                          (False, True),
                                          (None, torch.float32),
                                          (1.0, 2.5)):
                    what = f"{rows} {dtype} {reduction} inplace {inplace} " \
                        f"{loss_dtype} {factor}"
                    results = []
                    for native in (True, True, False):
                        xo = x.clone().requires_grad_()
                        with contextlib.nullcontext() if native else \
                                rowred._native.python_autograd():
                            loss = rowred.cross_entropy(
                                xo, labels, reduction=reduction,
                                inplace_backward=inplace,
                                loss_dtype=loss_dtype)
                            if native:
                                self.assertIn("CppNode", loss.grad_fn.name(),
                                              what)
                            loss.backward(None if factor == 1.0 and
                                          reduction != "none" else
                                          torch.full_like(loss, factor))
                        results.append((loss.detach(), xo.grad))
                    self.assertEqual(results[0][0].dtype,
                                     loss_dtype or dtype, what)
                    for got in results[1:]:
                        for g, want in zip(got, results[0]):
                            self.assertTrue(torch.equal(g, want), what)
        self.assertIn(True, [key[7] for key in rowred._native.fast_calls
                             if key[0] == "cross_entropy"])
        # A kept graph's second backward (retain_graph) scales the gradient
        # the first one scaled in place by its own factor, not on top of
        # the first's: native and Python paths against float64.
        for dtype, reduction, inplace, native in itertools.product(
                (torch.float32, torch.bfloat16), ("none", "mean", "sum"),
                (False, True), (True, False)):
            what = f"retain_graph {dtype} {reduction} {inplace} {native}"
            x = torch.randn(37, 32000, device="cuda", dtype=dtype) * 3
            labels = torch.randint(0, 32000, (37,), device="cuda")
            labels[1::3] = -100
            xr = x.double().requires_grad_()
            want = torch.nn.functional.cross_entropy(xr, labels,
                                                     reduction=reduction)
            xo = x.clone().requires_grad_()
            with contextlib.nullcontext() if native else \
                    rowred._native.python_autograd():
                got = rowred.cross_entropy(xo, labels, reduction=reduction,
                                           inplace_backward=inplace)
                for factor, keep in ((2.5, True), (0.5, False)):
                    g = torch.full_like(want, factor)
                    want.backward(g, retain_graph=keep)
                    got.backward(g.to(got.dtype), retain_graph=keep)
            tol = 1e-6 if dtype == torch.float32 else 4e-3
            torch.testing.assert_close(xo.grad.double(), xr.grad, atol=tol,
                                       rtol=2e-2, msg=lambda m: f"{what}: {m}")
        x = torch.randn(8, 32000, device="cuda", requires_grad=True)
        loss = rowred.cross_entropy(x, torch.zeros(8, dtype=torch.int64,
                                                   device="cuda"))
        with self.assertRaisesRegex(RuntimeError, "create_graph"):
            torch.autograd.grad(loss, x, create_graph=True)

    def test_cross_entropy_training_of_odd_labels(self):
        # Every row ignored (the mean 0 / 0: NaN, as F.cross_entropy's, and
        # a zero gradient, not 0 * inf) and labels strided in memory, each
        # reduction, into a new buffer and over the logits, the native op
        # and the Python path, against F.cross_entropy on f32 logits.
        for dtype in (torch.float32, torch.bfloat16):
            x = torch.randn(16, 32000, device="cuda", dtype=dtype) * 3
            for kind, labels in (
                    ("all ignored", torch.full((16,), -100, device="cuda")),
                    ("strided", torch.randint(0, 32000, (32,),
                                              device="cuda")[::2])):
                for reduction, inplace, native in itertools.product(
                        ("none", "mean", "sum"), (False, True),
                        (True, False)):
                    what = f"{kind} {dtype} {reduction} inplace {inplace} " \
                        f"native {native}"
                    xr = x.detach().clone().float().requires_grad_()
                    want = torch.nn.functional.cross_entropy(
                        xr, labels, reduction=reduction)
                    want.sum().backward()
                    xo = x.clone().requires_grad_()
                    with contextlib.nullcontext() if native else \
                            rowred._native.python_autograd():
                        got = rowred.cross_entropy(xo, labels,
                                                   reduction=reduction,
                                                   inplace_backward=inplace)
                        got.sum().backward()
                    tol = 1e-5 if dtype == torch.float32 else 2e-2
                    torch.testing.assert_close(
                        got.float(), want.detach(), atol=tol, rtol=tol,
                        equal_nan=True, msg=lambda m: f"{what}: {m}")
                    self.assertFalse(xo.grad.isnan().any().item(), what)
                    torch.testing.assert_close(
                        xo.grad.float(), xr.grad, atol=1e-6 if dtype ==
                        torch.float32 else 4e-3, rtol=2e-2,
                        msg=lambda m: f"{what}: {m}")

    def test_cross_entropy_total_of_ignored_rows(self):
        # Every row ignored: the sum 0 and the mean NaN (0 / 0), as
        # F.cross_entropy's; a capture replays the kernel's totals.
        x = torch.randn(16, 32000, device="cuda")
        labels = torch.full((16,), -100, device="cuda")
        self.assertEqual(rowred.cross_entropy(x, labels, reduction="sum")
                         .item(), 0.0)
        self.assertTrue(rowred.cross_entropy(x, labels).isnan().item())
        labels[3] = 7
        want = torch.nn.functional.cross_entropy(x, labels)
        graph = torch.cuda.CUDAGraph()
        rowred.cross_entropy(x, labels)  # the kernel loaded before capture
        with torch.cuda.graph(graph):
            loss = rowred.cross_entropy(x, labels)
        graph.replay()
        torch.testing.assert_close(loss, want)
        labels[3] = 9
        graph.replay()
        torch.testing.assert_close(
            loss, torch.nn.functional.cross_entropy(x, labels))

    def test_cuda_graph_of_a_step(self):
        """Forward and backward captured (the backward's workspace a buffer
        of the graph's own) against the eager step."""
        x, w, _, _ = self.inputs((512, 4096), torch.bfloat16)
        dy = torch.randn_like(x)
        xs = [t.clone().requires_grad_() for t in (x, w)]

        def step():
            for t in xs:
                t.grad = None
            rowred.rms_norm(xs[0], (4096,), xs[1], 1e-5).backward(dy)

        step()
        want = [t.grad.clone() for t in xs]
        stream = torch.cuda.Stream()
        stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(stream):
            step()
        torch.cuda.current_stream().wait_stream(stream)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            step()
        captured = [t.grad for t in xs]
        for _ in range(3):
            graph.replay()
            step()  # an eager step between replays, on the cached workspace
            torch.cuda.synchronize()
            for t, c, g in zip(xs, captured, want):
                self.assertTrue(torch.equal(c, g))
                self.assertTrue(torch.equal(t.grad, g))

    def test_second_order_gradient_refused(self):
        x, w, _, _ = self.inputs((8, 4096), torch.float32)
        x.requires_grad_()
        y = rowred.rms_norm(x, (4096,), w, 1e-5)
        with self.assertRaisesRegex(RuntimeError, "create_graph"):
            torch.autograd.grad(y.sum(), x, create_graph=True)
