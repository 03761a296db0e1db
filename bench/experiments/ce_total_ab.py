#!/usr/bin/env python3
"""Cross-entropy's reduced loss without a gradient: summed over the rows in
the kernel (a pack's cross_entropy_sum) against the per-row kernel reduced
with PyTorch's calls (the same package with that kernel left out) and
F.cross_entropy, in one process.

For each shape: us per call of back-to-back eager calls (the host's time
where the GPU's is small), and us per call replaying a CUDA graph of 20
calls, the L2 flushed before each replay (the GPU's time).

usage: ce_total_ab.py PACK_DIR [--shapes 8x1024,8x32000,...] [--dtypes ...]
PACK_DIR holds cross_entropy and cross_entropy_sum kernels for the rows.
"""
import argparse
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "python"))
import rowred  # noqa: E402
from rowred import ops  # noqa: E402
from host_parts import per_call_us  # noqa: E402

DTYPES = {"f32": torch.float32, "bf16": torch.bfloat16}


def graph_us(fn, calls=20, reps=20):
    flush = torch.empty(512 << 20, dtype=torch.uint8, device="cuda")
    fn()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for _ in range(calls):
            fn()
    times = []
    for _ in range(reps):
        flush.zero_()
        start, stop = (torch.cuda.Event(enable_timing=True) for _ in "ab")
        start.record()
        graph.replay()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop) * 1e3 / calls)
    return sorted(times)[len(times) // 2]


def per_row(fn, x):
    """fn with the package's cross_entropy_sum kernel for x's rows left out
    (its entry in the native ops' kernel cache, ops._native_kernels)."""
    key = (("cross_entropy_sum",), x.dtype, x.size(-1), x.get_device(), None)

    def call():
        saved = ops._native_kernels.get(key, False)
        ops._native_kernels[key] = None
        try:
            return fn()
        finally:
            if saved is False:
                del ops._native_kernels[key]
            else:
                ops._native_kernels[key] = saved
    return call


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("pack_dir")
    parser.add_argument("--shapes",
                        default="8x1024,8x32000,64x128256,4096x32000,"
                                "4096x128256")
    parser.add_argument("--dtypes", default="f32,bf16")
    args = parser.parse_args()
    rowred.load_pack(args.pack_dir)
    # The sum at every shape, the package's limit aside.
    ops._TOTAL_MAX_ELEMENTS = 1 << 62
    print(f"device: {torch.cuda.get_device_name()}; PyTorch "
          f"{torch.__version__}; us per call (eager: back to back; graph: "
          "replay, L2 flushed)")
    print(f"{'shape':>12} {'dtype':>5} | {'eager: sum':>10} {'per-row':>8} "
          f"{'torch':>7} | {'graph: sum':>10} {'per-row':>8} {'torch':>7}")
    for dtype_name in args.dtypes.split(","):
        for shape in args.shapes.split(","):
            m, n = map(int, shape.split("x"))
            x = torch.randn(m, n, device="cuda", dtype=DTYPES[dtype_name])
            labels = torch.randint(0, n, (m,), device="cuda")
            labels[::7] = -100
            ours = lambda: rowred.cross_entropy(x, labels)  # noqa: E731
            rows = per_row(ours, x)
            theirs = lambda: F.cross_entropy(x, labels)  # noqa: E731
            ref = F.cross_entropy(x.double(), labels)
            for fn in (ours, rows):
                err = abs(fn().double() - ref).item() / abs(ref).item()
                assert err < 1e-2, (shape, dtype_name, err)
            eager = [per_call_us(f, 2000 if m * n < 1 << 22 else 200)
                     for f in (ours, rows, theirs)]
            graph = [graph_us(f) for f in (ours, rows, theirs)]
            print(f"{shape:>12} {dtype_name:>5} | {eager[0]:10.1f} "
                  f"{eager[1]:8.1f} {eager[2]:7.1f} | {graph[0]:10.1f} "
                  f"{graph[1]:8.1f} {graph[2]:7.1f}")


if __name__ == "__main__":
    main()
