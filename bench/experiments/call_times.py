#!/usr/bin/env python3
"""Per-call times of the bench kernels of one shape, and of torch.softmax.

The providers take turns call by call, each call timed alone as the
benchmark times it (bench.interleaved_calls: the L2 flushed first, CUDA
events around the call), and
the script prints each provider's mean, median, 10th and 90th percentiles
and its most frequent times (to the timer's 32 ns). On shapes of a few
microseconds the times are bimodal (twenty-first session), which is why
bench.time_in_rounds interleaves the providers call by call.

usage: call_times.py DTYPE N DIR... [--rows M] [--calls C]
"""
import argparse
import collections
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


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("dtype", choices=["f32", "bf16"])
    p.add_argument("n", type=int)
    p.add_argument("dirs", nargs="+")
    p.add_argument("--rows", type=int, default=4096)
    p.add_argument("--calls", type=int, default=600)
    args = p.parse_args()
    dtype = {"f32": torch.float32, "bf16": torch.bfloat16}[args.dtype]
    x = torch.randn(args.rows, args.n, device="cuda", dtype=dtype)
    y = torch.empty_like(x)
    ref = torch.softmax(x.double(), dim=-1)
    runs = {}
    for d in args.dirs:
        k = Kernel(d, f"softmax_{args.dtype}_auto_n{args.n}_kernel0.json")

        def run(k=k):
            k.launch(x.data_ptr(), y.data_ptr(), args.rows, args.n, args.n,
                     args.n)
        run()
        err = (y.double() - ref).abs().max().item()
        if not err <= (1e-5 if dtype == torch.float32 else 1e-2):
            sys.exit(f"{d}: max abs error {err:.2e}")
        runs[d] = run
    runs["torch"] = lambda: torch.softmax(x, dim=-1)
    for run in runs.values():
        for _ in range(20):
            run()
    times = bench.interleaved_calls(runs, args.calls, bench._l2_flush())
    width = max(map(len, runs))
    for k in runs:
        t = sorted(v * 1000 for v in times[k])
        top = collections.Counter(round(v, 3) for v in t).most_common(6)
        print(f"{k:{width}} mean {statistics.mean(t):7.3f} us  median "
              f"{statistics.median(t):7.3f}  p10 {t[len(t) // 10]:7.3f}  "
              f"p90 {t[9 * len(t) // 10]:7.3f}  most frequent "
              + ", ".join(f"{v:.3f} x{c}" for v, c in top))


if __name__ == "__main__":
    main()
