#!/usr/bin/env python3
"""Times the host's share of a call to each rowred op against PyTorch's.

On a shape whose kernels take a few microseconds (8 x 1024 by default),
the host issues calls faster than they run only if its own path is short:
each op is called --iters times back to back, without a synchronisation
between calls, and the time per call is the loop's wall time (after a
synchronisation at its end) over the calls. That is the host's time per
call wherever it exceeds the kernel's, as here. Ours and PyTorch's take
turns --reps times and each reports its median (the host's time moves by
tens of percent between runs). Ops: softmax (forward, and
forward and backward on an input that requires grad), rms_norm (and its
residual form) and layer_norm (forward, and forward and backward with a
weight and bias that require grad), logsumexp and cross-entropy (reduction
mean; forward, and forward and backward on logits that require grad),
against torch.softmax, F.rms_norm (x + r first for the residual form),
F.layer_norm, torch.logsumexp and F.cross_entropy; f32 and bf16. "py" is
the package with its native ops off (their autograd in Python,
rowred._native.python_autograd), in the same turns. Every output is
checked against PyTorch's first.

usage: host_overhead.py PACK_DIR [--rows M] [--cols N] [--iters K]
                        [--reps R]
PACK_DIR holds a pack (python3 -m rowred.packs build) with those ops'
kernels for rows of N.
"""
import argparse
import os
import statistics
import sys
import time

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "python"))
import rowred  # noqa: E402

EPS = 1e-6


def per_call_us(fn, iters, warmup=None):
    """Wall time per call of `iters` calls issued back to back, after
    `warmup` calls (default: max(100, iters // 20))."""
    for _ in range(max(100, iters // 20) if warmup is None else warmup):
        fn()
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(iters):
        fn()
    torch.cuda.synchronize()
    return (time.perf_counter() - start) / iters * 1e6


def compare(ours, theirs, iters, reps):
    """(ours, ours with the autograd in Python, PyTorch's) median time per
    call over `reps` turns each."""
    times = ([], [], [])
    for _ in range(reps):
        times[0].append(per_call_us(ours, iters))
        with rowred._native.python_autograd():
            times[1].append(per_call_us(ours, iters))
        times[2].append(per_call_us(theirs, iters))
    return tuple(statistics.median(t) for t in times)


def cases(m, n, dtype):
    """(name, ours, PyTorch's) for each op on M x N rows of `dtype`."""
    x = torch.randn(m, n, device="cuda", dtype=dtype)
    r = torch.randn_like(x)
    w = torch.randn(n, device="cuda", dtype=dtype)
    b = torch.randn(n, device="cuda", dtype=dtype)
    labels = torch.randint(0, n, (m,), device="cuda")
    xg = x.clone().requires_grad_()
    wg = w.clone().requires_grad_()
    bg = b.clone().requires_grad_()
    g = torch.randn_like(x)

    def forward_backward(f):
        return lambda: f(xg).backward(g)

    return [
        ("softmax", lambda: rowred.softmax(x), lambda: torch.softmax(x, -1)),
        ("softmax fwd+bwd", forward_backward(rowred.softmax),
         forward_backward(lambda t: torch.softmax(t, -1))),
        ("rms_norm", lambda: rowred.rms_norm(x, (n,), w, eps=EPS),
         lambda: F.rms_norm(x, (n,), w, EPS)),
        ("rms_norm residual",
         lambda: rowred.rms_norm(x, (n,), w, eps=EPS, residual=r)[0],
         lambda: F.rms_norm(x + r, (n,), w, EPS)),
        ("rms_norm fwd+bwd",
         forward_backward(lambda t: rowred.rms_norm(t, (n,), wg, eps=EPS)),
         forward_backward(lambda t: F.rms_norm(t, (n,), wg, EPS))),
        ("layer_norm", lambda: rowred.layer_norm(x, (n,), w, b, eps=EPS),
         lambda: F.layer_norm(x, (n,), w, b, EPS)),
        ("layer_norm fwd+bwd",
         forward_backward(lambda t: rowred.layer_norm(t, (n,), wg, bg,
                                                      eps=EPS)),
         forward_backward(lambda t: F.layer_norm(t, (n,), wg, bg, EPS))),
        ("logsumexp", lambda: rowred.logsumexp(x),
         lambda: torch.logsumexp(x, -1)),
        ("cross_entropy", lambda: rowred.cross_entropy(x, labels),
         lambda: F.cross_entropy(x, labels)),
        ("cross_entropy fwd+bwd",
         lambda: rowred.cross_entropy(xg, labels).backward(),
         lambda: F.cross_entropy(xg, labels).backward()),
    ]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("pack_dir")
    parser.add_argument("--rows", type=int, default=8)
    parser.add_argument("--cols", type=int, default=1024)
    parser.add_argument("--iters", type=int, default=2000)
    parser.add_argument("--reps", type=int, default=3)
    args = parser.parse_args()
    rowred.load_pack(args.pack_dir)
    print(f"device: {torch.cuda.get_device_name()}; PyTorch "
          f"{torch.__version__}; {args.rows} x {args.cols}; us per call, "
          f"median of {args.reps}")
    native = rowred._native.op("softmax") is not None
    print("ours: " + ("the native ops (rowred._native_ops)" if native else
                      "no native ops: rowred._native_ops not built") +
          "; py: ours with the autograd in Python")
    print(f"{'op':18s} {'dtype':9s} {'ours':>7s} {'py':>7s} {'torch':>7s} "
          f"{'ours / torch':>12s} {'py / torch':>10s}")
    for dtype in (torch.float32, torch.bfloat16):
        for name, ours, theirs in cases(args.rows, args.cols, dtype):
            if "bwd" not in name:
                tol = 1e-5 if dtype == torch.float32 else 2e-2
                torch.testing.assert_close(
                    ours().float(), theirs().float(), atol=tol, rtol=tol,
                    msg=lambda m: f"{name} {dtype}: {m}")
            t_ours, t_py, t_torch = compare(ours, theirs, args.iters,
                                            args.reps)
            print(f"{name:18s} {str(dtype)[6:]:9s} {t_ours:7.1f} "
                  f"{t_py:7.1f} {t_torch:7.1f} {t_ours / t_torch:12.2f} "
                  f"{t_py / t_torch:10.2f}")


if __name__ == "__main__":
    main()
