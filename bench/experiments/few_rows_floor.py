#!/usr/bin/env python3
"""How fast can any one-read kernel run a few long rows? The compiler's
kernel against hand-written floors.

For each shape (M rows of N, a few rows of a long vocabulary), times in one
set of rounds (bench.time_in_rounds: the L2 flushed before each call,
providers taking turns): a copy of the tensor (Tensor.copy_), an empty
kernel, the compiler's kernel (`softmax_<dtype>_auto_n<N>_kernel0.json` of
the first DIR, from gen_kernels.py --set bench, launched through the
runtime as the benchmark launches it; the other DIRs' kernels of the same
name beside it) and the hand-written kernels of few_rows_floor.cu: a
row over a cluster of 8 or 16 blocks meeting in distributed shared memory
(`cluster`), and a row over as many plain blocks as hold it at E elements a
thread, meeting in global memory (`grid`). Each output is checked against
float64 first. With --skeleton the hand-written kernels also run on rows of
length 0 at M = 1: their launch, barriers and exchange without a load or a
store. --once launches each provider once instead of timing them (for a
profiler).

Prints each provider's median (us) and the copy's time over it (% of the
copy: the benchmark's GB/s ratio).

usage: few_rows_floor.py CUBIN DIR... [--shapes f32:1x128256,...] [--rounds R]
                         [--skeleton] [--once]
  (CUBIN: nvcc -arch=sm_90a -O3 -cubin few_rows_floor.cu -o CUBIN)
"""
import argparse
import ctypes
import os
import statistics
import sys

import cupy as cp
import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "test", "GPU"))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                ".."))
from rowred_kernel import Kernel  # noqa: E402
import bench  # noqa: E402

DTYPES = {"f32": torch.float32, "bf16": torch.bfloat16}
THREADS = 256
CLUSTER_E = (16, 32, 64)
GRID_E = (8, 16, 32)
DEFAULT_SHAPES = ",".join(f"{t}:{m}x{n}" for t in DTYPES for n in
                          (128256, 256000) for m in (1, 8, 16, 64))

_cuda = ctypes.CDLL("libcuda.so.1")


def allow_clusters_of_16(function):
    """CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED (14) = 1."""
    handle = function.kernel.ptr  # RawKernel -> its CUfunction
    r = _cuda.cuFuncSetAttribute(ctypes.c_void_p(handle), 14, 1)
    if r:
        sys.exit(f"cuFuncSetAttribute: CUresult {r}")


class Floors:
    """The hand-written kernels of one dtype on one shape: name -> callable
    that launches it from `x` into `y`."""

    def __init__(self, module, dtype, x, y, sms):
        self.module, self.dtype, self.x, self.y = module, dtype, x, y
        self.sms = sms

    def cluster(self, e, c, n):
        f = self.module.get_function(f"cluster_{self.dtype}_e{e}_c{c}")
        if c > 8:
            allow_clusters_of_16(f)
        rows = self.x.size(0)
        args = (self.x.data_ptr(), self.y.data_ptr(), cp.int32(n))
        return lambda: f((rows * c,), (THREADS,), args)

    def grid(self, e, n, blocks=None):
        """On the blocks that hold rows of `n` (or on `blocks`); None where
        the launch would not fit two blocks per SM (every block must be
        resident: they wait for each other)."""
        rows = self.x.size(0)
        blocks = blocks or max(1, -(-n // (e * THREADS)))
        if rows * blocks > 2 * self.sms:
            return None
        f = self.module.get_function(f"grid_{self.dtype}_e{e}")
        ws = cp.zeros(rows * blocks * 2, cp.float32)
        counters = cp.zeros(rows, cp.uint32)
        epoch = [0]

        def run():
            epoch[0] += 1
            f((rows * blocks,), (THREADS,),
              (self.x.data_ptr(), self.y.data_ptr(), cp.int32(n),
               cp.int32(blocks), ws.data.ptr, counters.data.ptr,
               cp.uint32(epoch[0] * blocks)))

        return run


def shape_runs(args, module, dtype, m, n, sms):
    torch.manual_seed(0)
    x = torch.randn(m, n, device="cuda", dtype=DTYPES[dtype])
    y = torch.empty_like(x)
    ref = torch.softmax(x.double(), dim=-1)
    tol = 1e-5 if dtype == "f32" else 1e-2
    floors = Floors(module, dtype, x, y, sms)
    runs = {"copy": lambda: y.copy_(x)}
    empty = module.get_function("empty")
    runs["empty kernel"] = lambda: empty((1,), (THREADS,), ())
    for i, d in enumerate(args.dirs):
        k = Kernel(d, f"softmax_{dtype}_auto_n{n}_kernel0.json")
        name = "ours" if i == 0 else "ours " + os.path.basename(d.rstrip("/"))
        runs[name] = (lambda k=k: k.launch(x.data_ptr(), y.data_ptr(), m, n,
                                           n, n))
    for c in (8, 16):
        e = next((e for e in CLUSTER_E if c * e * THREADS >= n), None)
        if e:
            runs[f"cluster {c} x {e * THREADS}"] = floors.cluster(e, c, n)
    for e in GRID_E:
        run = floors.grid(e, n)
        if run:
            runs[f"grid {-(-n // (e * THREADS))} x {e * THREADS}"] = run
    for name, run in list(runs.items()):
        if name in ("copy", "empty kernel"):
            continue
        y.fill_(float("nan"))
        run()
        torch.cuda.synchronize()
        err = (y.double() - ref).abs().max().item()
        if not err <= tol:
            print(f"  {name}: max abs error {err:.2e}, not timed")
            del runs[name]
    if args.skeleton and m == 1:
        for name, run in list(runs.items()):
            if name.startswith(("cluster", "grid")):
                kind, count, _, size = name.split()
                e = int(size) // THREADS
                runs[f"{name}, no row"] = (floors.cluster(e, int(count), 0)
                                           if kind == "cluster" else
                                           floors.grid(e, 0, int(count)))
    return runs


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("cubin")
    p.add_argument("dirs", nargs="+",
                   help="kernel directories: the first is `ours`, the others "
                        "variants of it, named by their directory")
    p.add_argument("--shapes", default=DEFAULT_SHAPES)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--skeleton", action="store_true")
    p.add_argument("--once", action="store_true",
                   help="launch each provider once, untimed (under ncu)")
    args = p.parse_args()
    module = cp.RawModule(path=args.cubin)
    sms = cp.cuda.Device().attributes["MultiProcessorCount"]
    print(f"device: {torch.cuda.get_device_name()}; {args.rounds} rounds")
    for shape in args.shapes.split(","):
        dtype, mn = shape.split(":")
        m, n = map(int, mn.split("x"))
        runs = shape_runs(args, module, dtype, m, n, sms)
        if args.once:
            for name, run in runs.items():
                print(f"{dtype} {m} x {n}: {name}")
                run()
                torch.cuda.synchronize()
            continue
        samples, errors = bench.time_in_rounds(runs, args.rounds)
        copy = statistics.median(samples["copy"])
        print(f"{dtype} {m} x {n}:")
        for name in runs:
            if name in errors:
                print(f"  {name:32} {errors[name]}")
                continue
            t = statistics.median(samples[name])
            print(f"  {name:32} {t * 1000:7.2f} us  {100 * copy / t:5.1f}% "
                  "of the copy")


if __name__ == "__main__":
    main()
