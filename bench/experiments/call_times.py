#!/usr/bin/env python3
"""Per-call times of the bench kernels of one shape, and of torch.softmax.

The providers take turns call by call in a shuffled order, each call
timed alone as the benchmark times it (bench.interleaved_calls: the L2
flushed first, CUDA events around the call), and
the script prints each provider's mean, median, 10th and 90th percentiles
and its most frequent times (to the timer's 32 ns). On shapes of a few
microseconds the times are bimodal, which is why
bench.time_in_rounds interleaves the providers call by call.

By default each kernel writes one fixed buffer and torch a buffer of its
caching allocator. The time of a call depends on the calls before it and
on the buffers they wrote (by up to 0.8 us on f32
4096 x 256, in a fixed order of six providers), so --outputs compares the
providers in five separate sets, each interleaved on its own: all writing
the allocator's buffer (as in bench.py), all writing the fixed buffer
(torch through aten._softmax.out), the two crossings, and the kernels
alone. --floor adds a set of what any kernel pays on the shape: a copy of
x into the fixed buffer (`Tensor.copy_`) and an empty kernel launched on
the first kernel's grid and block, and on one block per SM.

usage: call_times.py DTYPE N DIR... [--rows M] [--calls C] [--outputs] [--floor]
"""
import argparse
import collections
import os
import statistics
import sys
import tempfile

import cupy as cp
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
    p.add_argument("--outputs", action="store_true",
                   help="also swap the output buffers (fixed / per call)")
    p.add_argument("--floor", action="store_true",
                   help="also time a copy and an empty kernel")
    args = p.parse_args()
    dtype = {"f32": torch.float32, "bf16": torch.bfloat16}[args.dtype]
    x = torch.randn(args.rows, args.n, device="cuda", dtype=dtype)
    y = torch.empty_like(x)
    ref = torch.softmax(x.double(), dim=-1)

    def check(name, out):
        torch.cuda.synchronize()
        err = (out.double() - ref).abs().max().item()
        if not err <= (1e-5 if dtype == torch.float32 else 1e-2):
            sys.exit(f"{name}: max abs error {err:.2e}")
        out.fill_(float("nan"))

    fixed, fresh = {}, {}
    for d in args.dirs:
        k = Kernel(d, f"softmax_{args.dtype}_auto_n{args.n}_kernel0.json")

        def run_fixed(k=k):
            k.launch(x.data_ptr(), y.data_ptr(), args.rows, args.n, args.n,
                     args.n)

        def run_fresh(k=k):
            out = torch.empty_like(x)
            k.launch(x.data_ptr(), out.data_ptr(), args.rows, args.n, args.n,
                     args.n)
            return out
        run_fixed()
        check(d, y)
        check(d, run_fresh())
        fixed[d], fresh[d] = run_fixed, run_fresh

    def torch_fixed():
        torch.ops.aten._softmax.out(x, -1, False, out=y)
    torch_fixed()
    check("torch", y)
    fixed["torch"] = torch_fixed
    fresh["torch"] = lambda: torch.softmax(x, dim=-1)
    floor = {}
    if args.floor:
        floor["copy"] = lambda: y.copy_(x)
        first = Kernel(args.dirs[0],
                       f"softmax_{args.dtype}_auto_n{args.n}_kernel0.json")
        grid = first.grid(args.rows, cols=args.n)
        with tempfile.NamedTemporaryFile("w", suffix=".ptx") as f:
            f.write(".version 8.1\n.target sm_90\n.address_size 64\n"
                    ".visible .entry empty()\n{\n\tret;\n}\n")
            f.flush()
            module = cp.RawModule(path=f.name)
            empty = module.get_function("empty")
        sms = cp.cuda.Device().attributes["MultiProcessorCount"]
        for blocks in sorted({grid, sms}):
            floor[f"empty kernel, {blocks} blocks"] = (
                lambda m=module, g=blocks: empty(
                    (g,), (first.meta["block_threads"],), ()))

    def kernels(outputs):
        return {d: outputs[d] for d in args.dirs}
    sets = [("kernels: fixed buffer, torch: its allocator's",
             {**kernels(fixed), "torch": fresh["torch"]})]
    if args.outputs:
        sets = [("all: the allocator's buffer", fresh),
                ("all: the fixed buffer", fixed),
                sets[0],
                ("kernels: the allocator's buffer, torch: the fixed one",
                 {**kernels(fresh), "torch": fixed["torch"]}),
                ("kernels alone: the fixed buffer", kernels(fixed))]
    if floor:
        sets.append(("floor: a copy into the fixed buffer, an empty kernel",
                     floor))
    flush = bench._l2_flush()
    for title, runs in sets:
        for run in runs.values():
            for _ in range(20):
                run()
        times = bench.interleaved_calls(runs, args.calls, flush)
        print(f"-- {title}")
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
