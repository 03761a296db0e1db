#!/usr/bin/env python3
"""The backward kernels of several plans side by side: each DIR (from
gen_plan_variants.py backward, or a pack) holding
`<op>_<dtype>_n<N>_kernel0.json` for rms_norm_backward, its residual
form's (rms_norm_residual_backward: h's own gradient a third input),
layer_norm_backward, softmax_backward and log_softmax_backward (y and dy
in, dx out), f32, f16 and bf16, is timed on the same operands at each
shape of $BWD_SHAPES (MxN, comma-separated; default 16384x8192,
8192x4096, 4096x5120, 32768x2048): each launch alone between CUDA events
after an L2 flush, the directories taking turns in 5 rounds of 10; the
median of the rounds' medians, its ratio to the first directory's, and the
GB/s of the bytes dx needs (x and dy read, and the residual form's third
input, dx written). Each directory's
dx, dw (and db) are compared with the first's (`e`: the largest difference
over the largest value).

usage: BWD_SHAPES=16384x8192,... backward_ab.py DIR_A [DIR_B ...]
"""
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "python"))
from rowred import _runtime, ops  # noqa: E402

from flushed import flushed_medians  # noqa: E402


def main():
    dirs = sys.argv[1:]
    shapes = [tuple(map(int, s.split("x"))) for s in os.environ.get(
        "BWD_SHAPES", "16384x8192,8192x4096,4096x5120,32768x2048").split(",")]
    flush = torch.empty(512 * 2**20, dtype=torch.int8, device="cuda")

    def kernel(d, name):
        p = os.path.join(d, name + "_kernel0.json")
        return _runtime.Kernel(p, 0) if os.path.exists(p) else None

    for op in ("rms_norm_backward", "rms_norm_residual_backward",
               "layer_norm_backward", "softmax_backward",
               "log_softmax_backward"):
        for dname, dt in (("f32", torch.float32), ("f16", torch.float16),
                          ("bf16", torch.bfloat16)):
            for m, n in shapes:
                ks = {os.path.basename(d.rstrip("/")):
                      kernel(d, f"{op}_{dname}_n{n}") for d in dirs}
                ks = {k: v for k, v in ks.items() if v is not None}
                if not ks:
                    continue
                x = torch.randn(m, n, device="cuda", dtype=dt)
                dy = torch.randn_like(x)
                residual = op == "rms_norm_residual_backward"
                dy_h = torch.randn_like(x) if residual else None
                w = torch.rand(n, device="cuda", dtype=dt) + 0.5
                b = torch.randn(n, device="cuda", dtype=dt)
                mean = x.float().mean(-1)
                rstd = torch.rsqrt(x.float().var(-1, correction=0) + 1e-5)
                # The softmax backwards: y (the forward's output of x) and
                # dy in, dx out.
                softmax = op.endswith("softmax_backward")
                if softmax:
                    y = (torch.log_softmax if op.startswith("log")
                         else torch.softmax)(x.float(), -1).to(dt)
                outs, runs = {}, {}
                for name, k in ks.items():
                    dx, dw, db = (torch.empty_like(x), torch.empty_like(w),
                                  torch.empty_like(w))
                    rows_in = [x, dy] + ([dy_h] if residual else [])
                    if softmax:
                        operands = [y, dy, dx]
                    else:
                        operands = rows_in + [dx, w] + (
                            [mean, rstd, dw, db] if op.startswith("layer")
                            else [rstd, dw])
                    ptrs = [t.data_ptr() for t in operands]
                    strides = [n] * (len(rows_in) + 1)

                    def go(k=k, ptrs=ptrs, strides=strides):
                        ops._launch_operands(k, 0, ptrs, strides, m, n)
                    go()
                    torch.cuda.synchronize()
                    outs[name] = (dx,) if softmax else (dx, dw)
                    runs[name] = go
                ref = next(iter(outs.values()))
                errs = {name: max(float((a.float() - r.float()).abs().max() /
                                        (r.float().abs().max() + 1e-30))
                                  for a, r in zip(o, ref))
                        for name, o in outs.items()}
                med = flushed_medians(runs, flush)
                base = med[next(iter(med))]
                kbytes = (4 if residual else 3) * m * n * x.element_size() / 1e3
                print(f"{op:20s} {dname:4s} {m:>5d}x{n:<5d} " + "  ".join(
                    f"{k}:{v:7.1f}us {base / v:4.2f} {kbytes / v:5.0f}GB/s "
                    f"e{errs[k]:.0e}" for k, v in med.items()), flush=True)


if __name__ == "__main__":
    main()
