#!/usr/bin/env python3
"""Where the host's time of a package call goes, piece by piece.

bench/host_overhead.py times whole calls against PyTorch's; this times the
pieces of one (softmax on f32 8 x 1024 by default) each alone, in loops of
back-to-back calls without a synchronization (the best of 3 loops, us per
call): the allocations an op can make its outputs with, the argument
checks, the kernel lookup, the stream and device queries, the ctypes
arrays and the ctypes call into the runtime (a trivial one, and the launch
itself with its arrays made once), the launch through the package's
extension module (rowred._launch) instead, then the package's layers on
top of it up to the whole call, beside PyTorch's own softmax, rms_norm,
layer_norm and cross-entropy and the package's; the native ops' call
alone, with the package's lookup and the norms' checks before it
(rowred._native_ops, where it is built), each native backward node alone,
cross-entropy's forward on logits that require grad and the Triton kernel
its backward calls; then a training step's pieces (a
Python autograd node that does nothing against a C++ one, rms_norm's
forward with inputs that require grad, its backward op alone, the whole
step), ours and PyTorch's. With --profile, cProfile's
functions instead (the most time of their own first, us per call) for a
forward and backward of softmax, rms_norm and layer_norm (a weight that
requires grad) and a cross-entropy forward (reduction mean), ours and
PyTorch's, so that the Python layers' share of an eager training step
shows.

usage: host_parts.py PACK_DIR [--rows M] [--cols N] [--iters K] [--profile]
PACK_DIR holds softmax, rms_norm, layer_norm and cross_entropy kernels
(f32) for rows of N, with their backward kernels (and cross_entropy_grad)
for the native pieces and --profile.
"""
import argparse
import cProfile
import ctypes
import pstats
import os
import sys
import time

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "python"))
import rowred  # noqa: E402
from rowred import _runtime, ops  # noqa: E402


def per_call_us(fn, iters):
    """The best of 3 loops of `iters` calls issued back to back."""
    for _ in range(iters // 10):
        fn()
    torch.cuda.synchronize()
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        for _ in range(iters):
            fn()
        torch.cuda.synchronize()
        best = min(best, (time.perf_counter() - start) / iters * 1e6)
    return best


def profile(m, n, iters, top=14):
    """cProfile's top functions by their own time, per call, for each
    forward and backward."""
    x = torch.randn(m, n, device="cuda", requires_grad=True)
    w = torch.randn(n, device="cuda", requires_grad=True)
    b = torch.randn(n, device="cuda", requires_grad=True)
    g = torch.randn(m, n, device="cuda")
    labels = torch.randint(0, n, (m,), device="cuda")
    steps = {
        "rowred.softmax fwd+bwd": lambda: rowred.softmax(x).backward(g),
        "torch.softmax fwd+bwd": lambda: torch.softmax(x, -1).backward(g),
        "rowred.rms_norm fwd+bwd": lambda: rowred.rms_norm(
            x, (n,), w, eps=1e-6).backward(g),
        "F.rms_norm fwd+bwd": lambda: F.rms_norm(x, (n,), w, 1e-6).backward(
            g),
        "rowred.layer_norm fwd+bwd": lambda: rowred.layer_norm(
            x, (n,), w, b).backward(g),
        "F.layer_norm fwd+bwd": lambda: F.layer_norm(x, (n,), w, b).backward(
            g),
        "rowred.cross_entropy (no grad)": lambda: rowred.cross_entropy(
            x.detach(), labels),
    }
    for name, fn in steps.items():
        us = per_call_us(fn, iters // 10)
        prof = cProfile.Profile()
        prof.enable()
        for _ in range(iters // 10):
            fn()
        prof.disable()
        torch.cuda.synchronize()
        stats = pstats.Stats(prof)
        rows = sorted(stats.stats.items(), key=lambda kv: -kv[1][2])[:top]
        print(f"== {name}: {us:.1f} us per call unprofiled; own us per "
              "call under cProfile (calls per call):")
        for (path, line, func), (cc, nc, tt, ct, _) in rows:
            where = f"{os.path.basename(path)}:{line}" if line else path
            print(f"  {tt / (iters // 10) * 1e6:7.2f} "
                  f"({nc / (iters // 10):4.1f}) {func} [{where}]")


class _Identity(torch.autograd.Function):
    """A Python autograd node that does nothing: its cost is the engine's
    call into Python."""

    @staticmethod
    def forward(ctx, x):
        return x.view_as(x)

    @staticmethod
    def backward(ctx, grad):
        return grad


def backward_pieces(m, n):
    """The pieces of a training step's host time (us per call): a Python
    autograd node that does nothing against PyTorch's view node, each
    forward alone with inputs that require grad, each backward op alone on
    plain tensors, and the whole step."""
    from rowred import norms
    x = torch.randn(m, n, device="cuda", requires_grad=True)
    w = torch.randn(n, device="cuda", requires_grad=True)
    g = torch.randn(m, n, device="cuda")
    xd, wd = x.detach(), w.detach()
    x3 = torch.randn(2, m // 2, n, device="cuda", requires_grad=True)
    g3 = torch.randn_like(x3)
    b = torch.randn(n, device="cuda", requires_grad=True)
    wp = torch.nn.Parameter(w.detach().clone())
    rstd = torch.rsqrt(xd.square().mean(-1) + 1e-6)
    fused = getattr(torch.ops.aten, "_fused_rms_norm_backward", None)
    pieces = {
        "identity Function fwd+bwd (Python node)": lambda: _Identity.apply(
            x).backward(g),
        "x.view_as(x) fwd+bwd (C++ node)": lambda: x.view_as(x).backward(g),
        "rowred.rms_norm fwd, grad required": lambda: rowred.rms_norm(
            x, (n,), w, eps=1e-6),
        "F.rms_norm fwd, grad required": lambda: F.rms_norm(x, (n,), w,
                                                            1e-6),
        "rms_norm_backward_op alone": lambda: norms.rms_norm_backward_op(
            xd, g, wd, rstd, None),
        "aten._fused_rms_norm_backward alone": lambda: fused(
            g, xd, [n], rstd.unsqueeze(-1), wd, [True, True]),
        "rowred.rms_norm fwd+bwd": lambda: rowred.rms_norm(
            x, (n,), w, eps=1e-6).backward(g),
        "F.rms_norm fwd+bwd": lambda: F.rms_norm(x, (n,), w,
                                                 1e-6).backward(g),
        # A model's activations: (batch, tokens, hidden).
        "rowred.rms_norm fwd+bwd, 3-D": lambda: rowred.rms_norm(
            x3, (n,), w, eps=1e-6).backward(g3),
        "F.rms_norm fwd+bwd, 3-D": lambda: F.rms_norm(
            x3, (n,), w, 1e-6).backward(g3),
        "rowred.layer_norm fwd+bwd, 3-D": lambda: rowred.layer_norm(
            x3, (n,), w, b).backward(g3),
        "F.layer_norm fwd+bwd, 3-D": lambda: F.layer_norm(
            x3, (n,), w, b).backward(g3),
        # A module's weight.
        "rowred.rms_norm fwd+bwd, 3-D, Parameter": lambda: rowred.rms_norm(
            x3, (n,), wp, eps=1e-6).backward(g3),
        "F.rms_norm fwd+bwd, 3-D, Parameter": lambda: F.rms_norm(
            x3, (n,), wp, 1e-6).backward(g3),
    }
    if fused is None:
        del pieces["aten._fused_rms_norm_backward alone"]
    return pieces


def native_pieces(x, w, m, n):
    """The native ops' path (rowred._native_ops) piece by piece: the
    module's call alone on kernels looked up once, the package's lookup and
    call (ops.native_call), and the norms' argument checks before it; none
    where the module is not built."""
    from rowred import norms
    softmax = rowred._native.op("softmax")
    if softmax is None:
        print("no native ops (rowred._native_ops not built): their pieces "
              "left out")
        return {}

    def handles(kernel_ops, eps=None):
        found = [ops._exact_kernel(k, x, n, eps if k in rowred.packs.EPS_OPS
                                   else None) for k in kernel_ops]
        return None if None in found else [k.handle for k in found]

    kernels = ("softmax", "softmax_backward")
    rms = rowred._native.op("rms_norm")
    rms_kernels = ("rms_norm", "rms_norm_backward")
    pieces = {}
    found = handles(kernels)
    if found is not None:
        pieces["native softmax call alone"] = lambda: softmax(x, *found)
        pieces["ops.native_call(softmax)"] = lambda: ops.native_call(
            "softmax", kernels, (x,))
    found_rms = handles(rms_kernels, 1e-6)
    if found_rms is not None:
        pieces["native rms_norm call alone"] = lambda: rms(x, w, *found_rms)
    pieces["norms._check_norm"] = lambda: norms._check_norm(
        "rms_norm", x, (n,), {"weight": w})
    # The backward node alone (the graph kept): the native op's C++ node
    # against PyTorch's own.
    # Cross-entropy's mean: its forward alone, logits requiring grad; its
    # backward alone (ours then scales by the quotient of the incoming
    # gradients, an extra division on the kept graph); the Triton kernel
    # its backward calls, alone, for a factor of 1.
    g = torch.randn_like(x)
    xg, wg = x.clone().requires_grad_(), w.clone().requires_grad_()
    labels = torch.randint(0, n, (m,), device="cuda")
    one = torch.ones((), device="cuda")
    pieces["rowred.cross_entropy fwd, grad required"] = \
        lambda: rowred.cross_entropy(xg, labels)
    pieces["F.cross_entropy fwd, grad required"] = \
        lambda: F.cross_entropy(xg, labels)
    pieces["rowred._scale.scale_rows_ alone"] = \
        lambda: rowred._scale.scale_rows_(x, one)
    backward_of = {
        "native log_softmax": lambda: rowred.log_softmax(xg),
        "torch.log_softmax": lambda: torch.log_softmax(xg, -1),
        "native rms_norm": lambda: rowred.rms_norm(xg, (n,), wg, 1e-6),
        "F.rms_norm": lambda: torch.nn.functional.rms_norm(xg, (n,), wg,
                                                           1e-6),
        "native cross_entropy": lambda: rowred.cross_entropy(xg, labels),
        "F.cross_entropy": lambda: F.cross_entropy(xg, labels),
    }
    for name, forward in backward_of.items():
        out = forward()
        leaves = (xg, wg) if "rms_norm" in name else (xg,)
        grad = one if "cross_entropy" in name else g
        pieces[name + " backward alone"] = \
            lambda out=out, leaves=leaves, grad=grad: torch.autograd.grad(
                out, leaves, grad, retain_graph=True)
    return pieces


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("pack_dir")
    parser.add_argument("--rows", type=int, default=8)
    parser.add_argument("--cols", type=int, default=1024)
    parser.add_argument("--iters", type=int, default=20000)
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args()
    rowred.load_pack(args.pack_dir)
    m, n = args.rows, args.cols
    if args.profile:
        profile(m, n, args.iters)
        return
    x = torch.randn(m, n, device="cuda")
    w = torch.randn(n, device="cuda")
    y = torch.empty_like(x)
    labels = torch.randint(0, n, (m,), device="cuda")
    torch.testing.assert_close(rowred.softmax(x), torch.softmax(x, -1))
    kernel = ops._kernel("softmax", x, n)
    lib = kernel._lib
    pointers = _runtime._array(_runtime._U64_ARRAYS, ctypes.c_uint64,
                               [x.data_ptr(), y.data_ptr()])
    strides = _runtime._array(_runtime._I64_ARRAYS, ctypes.c_int64, [n, n])
    stream = ops._raw_stream(0)
    launcher = _runtime.launcher()
    addresses = [x.data_ptr(), y.data_ptr()]
    f32 = torch.empty(0, device=x.device)
    device = x.device
    loss = torch.randn(m, device="cuda")
    pieces = {
        "empty loop": lambda: None,
        "torch.empty(shape, dtype=, device=)": lambda: torch.empty(
            x.shape, dtype=x.dtype, device=x.device),
        "torch.empty_like": lambda: torch.empty_like(x),
        "x.new_empty((rows,), dtype=f32)": lambda: x.new_empty(
            (m,), dtype=torch.float32),
        "x.new_empty(rows, dtype=f32)": lambda: x.new_empty(
            m, dtype=torch.float32),
        "f32 prototype.new_empty((rows,))": lambda: f32.new_empty((m,)),
        "torch.empty((rows,), dtype=f32, device=D)": lambda: torch.empty(
            (m,), dtype=torch.float32, device=device),
        "x.new_empty((2, rows), dtype=f32).unbind()": lambda: x.new_empty(
            (2, m), dtype=torch.float32).unbind(),
        "x.reshape(-1, n).contiguous()": lambda: x.reshape(-1, n).contiguous(),
        "ops.check_input": lambda: ops.check_input("softmax", x, -1),
        "x.get_device()": lambda: x.get_device(),
        "the raw stream": lambda: ops._raw_stream(0),
        "the current device": lambda: ops.current_device(),
        "the kernel lookup": lambda: ops._kernel("softmax", x, n),
        "kernel.workspace_bytes": lambda: kernel.workspace_bytes(m, n),
        "two ctypes arrays": lambda: (
            _runtime._array(_runtime._U64_ARRAYS, ctypes.c_uint64, [1, 2]),
            _runtime._array(_runtime._I64_ARRAYS, ctypes.c_int64, [n, n])),
        "a trivial ctypes call": lambda: lib.rowred_kernel_min_cols(
            kernel._handle),
        "the launch's ctypes call": lambda: lib.rowred_kernel_launch_operands(
            kernel._handle, stream, pointers, 2, strides, 2, m, n, 0, 0),
        "the launch through rowred._launch": lambda: launcher.launch(
            kernel._handle, stream, addresses, [n, n], m, n, 0, 0),
        "kernel.launch_operands": lambda: kernel.launch_operands(
            stream, [x.data_ptr(), y.data_ptr()], [n, n], m, n, 0),
        "ops._launch_operands": lambda: ops._launch_operands(
            kernel, 0, [x.data_ptr(), y.data_ptr()], [n, n], m, n),
        "ops._launch (the op's implementation)": lambda: ops._launch(
            "softmax", x),
        "rowred.softmax": lambda: rowred.softmax(x),
        "torch.softmax": lambda: torch.softmax(x, -1),
        "rowred.rms_norm": lambda: rowred.rms_norm(x, (n,), w, eps=1e-6),
        "F.rms_norm": lambda: F.rms_norm(x, (n,), w, 1e-6),
        "rowred.layer_norm": lambda: rowred.layer_norm(x, (n,), w, w),
        "F.layer_norm": lambda: F.layer_norm(x, (n,), w, w),
        "rowred.cross_entropy": lambda: rowred.cross_entropy(x, labels),
        "F.cross_entropy": lambda: F.cross_entropy(x, labels),
        "loss.sum() / (labels != -100).sum()": lambda: (
            loss.sum() / (labels != -100).sum()),
    }
    if launcher is None:
        del pieces["the launch through rowred._launch"]
    pieces.update(native_pieces(x, w, m, n))
    pieces.update(backward_pieces(m, n))
    print(f"device: {torch.cuda.get_device_name()}; PyTorch "
          f"{torch.__version__}; {m} x {n} f32; us per call, best of 3")
    for name, fn in pieces.items():
        print(f"{name:40s} {per_call_us(fn, args.iters):7.2f}")


if __name__ == "__main__":
    main()
