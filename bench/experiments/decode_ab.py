#!/usr/bin/env python3
"""Decode-size A/B: the kernels of several plans (DIR/<variant>/, from
gen_plan_variants.py decode) of rms_norm, layer_norm and softmax at 1, 4,
16 and 64 rows of 2048, 4096 and 8192, beside torch's op, Liger-Kernel's
(where importable) and a copy of the tensor. Each call is timed alone
between CUDA events after an L2 flush (a 256 MiB memset, which also gives
the host time to queue the call); variants take turns in 5 rounds of 15
calls; the median of the rounds' medians. Every output is checked against
float64 first (relative L2 printed as maxerr).

Caveat: a provider whose host path takes longer than the flush (Liger's
Python launch, 20-100 us on the H200 machine) is timed with the GPU idle
waiting for it: its times here are the host's, not its kernel's. Compare
the variants with each other and with torch's op; time Liger by CUDA graph
replay.

usage: decode_ab.py DIR
"""
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "python"))
from rowred import _runtime, ops  # noqa: E402

from flushed import flushed_medians  # noqa: E402


def main():
    root = sys.argv[1]
    variants = sorted(os.listdir(root), key=lambda v: (v != "auto", v))
    try:
        from liger_kernel.ops.layer_norm import LigerLayerNormFunction
        from liger_kernel.ops.rms_norm import LigerRMSNormFunction
        from liger_kernel.ops.softmax import LigerSoftmaxFunction
        liger = True
    except ImportError as e:
        print("liger not importable:", e)
        liger = False
    flush = torch.empty(256 * 2**20, dtype=torch.int8, device="cuda")

    torch.set_grad_enabled(False)
    for op in ("rms_norm", "layer_norm", "softmax"):
        for dname, dt in (("f32", torch.float32), ("bf16", torch.bfloat16)):
            for n in (2048, 4096, 8192):
                ks = {}
                for v in variants:
                    p = f"{root}/{v}/{op}_{dname}_n{n}_kernel0.json"
                    if os.path.exists(p):
                        ks[v] = _runtime.Kernel(p, 0)
                for m in (1, 4, 16, 64):
                    x = torch.randn(m, n, device="cuda", dtype=dt) * 2 + 0.5
                    w = torch.rand(n, device="cuda", dtype=dt) + 0.5
                    b = torch.randn(n, device="cuda", dtype=dt)
                    xd, wd, bd = x.double(), w.double(), b.double()
                    if op == "rms_norm":
                        ref = xd * torch.rsqrt(
                            xd.square().mean(-1, keepdim=True) + 1e-5) * wd
                        peer = {"torch": lambda: F.rms_norm(x, (n,), w, 1e-5)}
                        if liger:
                            peer["liger"] = lambda: LigerRMSNormFunction.apply(
                                x, w, 1e-5, 0.0, "llama", False)
                    elif op == "layer_norm":
                        ref = F.layer_norm(xd, (n,), wd, bd, 1e-5)
                        peer = {"torch": lambda: F.layer_norm(x, (n,), w, b,
                                                              1e-5)}
                        if liger:
                            peer["liger"] = \
                                lambda: LigerLayerNormFunction.apply(
                                    x, w, b, 1e-5)
                    else:
                        ref = torch.softmax(xd, -1)
                        peer = {"torch": lambda: torch.softmax(x, -1)}
                        if liger:
                            peer["liger"] = \
                                lambda: LigerSoftmaxFunction.apply(x)
                    fns, errs = {}, {}
                    for v, k in ks.items():
                        y = torch.empty_like(x)
                        stats = [torch.empty(m, device="cuda")
                                 for _ in range(2)]
                        operands = [x, y] + {
                            "rms_norm": [w, stats[0]],
                            "layer_norm": [w, b, stats[0], stats[1]]
                        }.get(op, [])
                        ptrs = [t.data_ptr() for t in operands]

                        def go(k=k, ptrs=ptrs):
                            ops._launch_operands(k, 0, ptrs, [n, n], m, n)
                        go()
                        torch.cuda.synchronize()
                        errs[v] = float((y.double() - ref).norm() /
                                        ref.norm())
                        fns[v] = go
                    y2 = torch.empty_like(x)
                    fns.update(peer)
                    fns["copy"] = lambda: y2.copy_(x)
                    for name, f in peer.items():
                        errs[name] = float((f().double() - ref).norm() /
                                           ref.norm())
                    t = flushed_medians(fns, flush, reps=15)
                    best = min(ks, key=lambda v: t[v])
                    best_peer = min(peer, key=lambda k: t[k])
                    print(f"{op:10s} {dname:4s} {m:>2d}x{n:<5d} " +
                          " ".join(f"{v}:{t[v]:5.1f}" for v in ks) + " | " +
                          " ".join(f"{k}:{t[k]:5.1f}"
                                   for k in list(peer) + ["copy"]) +
                          f" | auto/best-peer {t[best_peer] / t['auto']:.2f}"
                          f" best={best} {t[best_peer] / t[best]:.2f}"
                          f" maxerr {max(errs.values()):.1e}", flush=True)


if __name__ == "__main__":
    main()
