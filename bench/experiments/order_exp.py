#!/usr/bin/env python3
"""What one timed call inherits from the calls before it.

Runs a few fixed rotations of one bench kernel (and torch.softmax) on one
shape and prints each call's median time per rotation, each call timed as
the benchmark times it (the L2 flushed, a spin, CUDA events around the
call; bench.py shuffles its order because of what this shows). The
rotations tell apart what could carry over from one call to the next:
the output buffer the previous call wrote, the kernel it ran, and whether
one flush leaves the L2 as cold as two.

usage: order_exp.py DTYPE N DIR [--rows M] [--calls C]
"""
import argparse
import os
import statistics
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "test", "GPU"))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                ".."))
from rowred_kernel import Kernel  # noqa: E402
import bench  # noqa: E402


def rotation(calls, steps, flush):
    """Times `calls` turns of `steps` ((name, fn, flushes) in a fixed
    order, every step with the same number of flushes) through
    bench.interleaved_calls without its shuffle. Returns name -> median
    (us)."""
    flushes = {k for _, _, k in steps}
    assert len(flushes) == 1, "one number of flushes per rotation"
    count = flushes.pop()
    times = bench.interleaved_calls(
        {name: fn for name, fn, _ in steps}, calls,
        lambda: [flush() for _ in range(count)], shuffle=False)
    return {name: 1000 * statistics.median(t) for name, t in times.items()}


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("dtype", choices=["f32", "bf16"])
    p.add_argument("n", type=int)
    p.add_argument("dir")
    p.add_argument("--rows", type=int, default=4096)
    p.add_argument("--calls", type=int, default=500)
    args = p.parse_args()
    dtype = {"f32": torch.float32, "bf16": torch.bfloat16}[args.dtype]
    m, n = args.rows, args.n
    x = torch.randn(m, n, device="cuda", dtype=dtype)
    y1, y2 = torch.empty_like(x), torch.empty_like(x)
    ref = torch.softmax(x.double(), dim=-1)
    k = Kernel(args.dir, f"softmax_{args.dtype}_auto_n{n}_kernel0.json")

    def ours(y):
        return lambda: k.launch(x.data_ptr(), y.data_ptr(), m, n, n, n)

    def torch_into(y):
        return lambda: torch.ops.aten._softmax.out(x, -1, False, out=y)
    for fn, y in ((ours(y1), y1), (ours(y2), y2), (torch_into(y1), y1)):
        y.fill_(float("nan"))
        fn()
        torch.cuda.synchronize()
        err = (y.double() - ref).abs().max().item()
        if not err <= (1e-5 if dtype == torch.float32 else 1e-2):
            sys.exit(f"max abs error {err:.2e}")
    rotations = [
        ("ours alone, y1", [("ours y1", ours(y1), 1)]),
        ("ours alone, y1, two flushes", [("ours y1", ours(y1), 2)]),
        ("ours alone, y1, no flush", [("ours y1", ours(y1), 0)]),
        ("ours y1, ours y2", [("ours y1", ours(y1), 1),
                              ("ours y2", ours(y2), 1)]),
        ("torch alone, y1", [("torch y1", torch_into(y1), 1)]),
        ("ours y1, torch y1", [("ours y1", ours(y1), 1),
                               ("torch y1", torch_into(y1), 1)]),
        ("ours y1, torch y2", [("ours y1", ours(y1), 1),
                               ("torch y2", torch_into(y2), 1)]),
        ("ours y1, torch y1, torch y1", [("ours y1", ours(y1), 1),
                                         ("torch y1 (1st)", torch_into(y1), 1),
                                         ("torch y1 (2nd)", torch_into(y1),
                                          1)]),
    ]
    flush = bench._l2_flush()
    for _, steps in rotations:  # warm-up
        rotation(20, steps, flush)
    for title, steps in rotations:
        medians = rotation(args.calls, steps, flush)
        print(f"{title:32} " + "  ".join(f"{name} {t:7.3f}"
                                         for name, t in medians.items()))


if __name__ == "__main__":
    main()
