#!/usr/bin/env python3
"""How fast can any kernel read the logits of vocabulary rows once?
The compiler's logsumexp against hand-written read-only kernels.

For each shape (M rows of N; row bytes a multiple of 16), times in one set
of rounds (bench.time_in_rounds: the L2 flushed before each call, providers
taking turns): a copy of the same bytes (Tensor.copy_ of half of them, as
bench/family.py's ceiling), the compiler's logsumexp
(`logsumexp_<dtype>_n<N>_kernel0.json` of DIR) and hand-written kernels
that only sum the row's elements in 16-byte vectors, each block reducing in
registers, then shuffles and shared memory (timed without zeroing their
results: the sums only grow):

* `rows/S`: S blocks of 256 threads per row, each a contiguous S-th of it,
  adding its partial sum into the row's result atomically (S = 1: a block
  per row, as ours streams it, without the exponentials);
* `flat`: 8 blocks per SM striding over the whole tensor (no rows at all:
  the read-only floor of the bytes).

Each hand-written kernel's row sums are checked against torch's first.
Prints each provider's median (us) and GB/s as % of the copy.

With --read-flush the L2 is emptied before each call by reading a 256 MiB
buffer instead of zeroing it (Triton's flush, which bench.py uses), so
that no call starts with the flush's dirty lines in L2 to write back.

usage: reduce_only_floor.py DIR [--shapes f32:1024x32000,...] [--rounds R]
                            [--read-flush]
"""
import argparse
import os
import statistics
import sys

import cupy as cp
import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                ".."))
import bench  # noqa: E402
from family import make_args, ours  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "test", "GPU"))
from rowred_kernel import Kernel  # noqa: E402

DTYPES = {"f32": torch.float32, "bf16": torch.bfloat16}
THREADS = 256
SPLITS = (1, 2, 4, 8)
DEFAULT_SHAPES = ("f32:1024x32000,f32:8192x32000,f32:1024x128256,"
                  "bf16:1024x32000,bf16:1024x50256,bf16:8192x50256,"
                  "bf16:1024x128256")

SOURCE = r"""
template <bool Bf16>
__device__ float vectorSum(uint4 v) {
  if (!Bf16)
    return __uint_as_float(v.x) + __uint_as_float(v.y) +
           __uint_as_float(v.z) + __uint_as_float(v.w);
  float s = 0.f;
  for (unsigned w : {v.x, v.y, v.z, v.w})
    s += __uint_as_float(w << 16) + __uint_as_float(w & 0xffff0000u);
  return s;
}

__device__ float blockSum(float s) {
  __shared__ float partial[32];
  for (int o = 16; o > 0; o >>= 1)
    s += __shfl_xor_sync(0xffffffffu, s, o);
  if (threadIdx.x % 32 == 0)
    partial[threadIdx.x / 32] = s;
  __syncthreads();
  s = threadIdx.x < blockDim.x / 32 ? partial[threadIdx.x] : 0.f;
  for (int o = 16; o > 0; o >>= 1)
    s += __shfl_xor_sync(0xffffffffu, s, o);
  return s;
}

// Sums [begin, end) of 16-byte vectors, four loads in flight per thread.
template <bool Bf16>
__device__ float sumRange(const uint4 *x, long begin, long end) {
  float s = 0.f;
  long i = begin + threadIdx.x;
  for (; i + 3 * blockDim.x < end; i += 4 * blockDim.x) {
    uint4 a = x[i], b = x[i + blockDim.x], c = x[i + 2 * blockDim.x],
          d = x[i + 3 * blockDim.x];
    s += vectorSum<Bf16>(a) + vectorSum<Bf16>(b) + vectorSum<Bf16>(c) +
         vectorSum<Bf16>(d);
  }
  for (; i < end; i += blockDim.x)
    s += vectorSum<Bf16>(x[i]);
  return blockSum(s);
}

template <bool Bf16>
__device__ void rows(const uint4 *x, float *out, long rowVectors, int splits) {
  long row = blockIdx.x / splits, part = blockIdx.x % splits;
  long begin = row * rowVectors + part * rowVectors / splits;
  long end = row * rowVectors + (part + 1) * rowVectors / splits;
  float s = sumRange<Bf16>(x, begin, end);
  if (threadIdx.x == 0)
    atomicAdd(out + row, s);
}

template <bool Bf16>
__device__ void flat(const uint4 *x, float *out, long vectors) {
  float s = 0.f;
  long stride = (long)gridDim.x * blockDim.x;
  long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
  for (; i + 3 * stride < vectors; i += 4 * stride) {
    uint4 a = x[i], b = x[i + stride], c = x[i + 2 * stride],
          d = x[i + 3 * stride];
    s += vectorSum<Bf16>(a) + vectorSum<Bf16>(b) + vectorSum<Bf16>(c) +
         vectorSum<Bf16>(d);
  }
  for (; i < vectors; i += stride)
    s += vectorSum<Bf16>(x[i]);
  s = blockSum(s);
  if (threadIdx.x == 0)
    atomicAdd(out, s);
}

extern "C" {
__global__ void rows_f32(const uint4 *x, float *o, long v, int s) {
  rows<false>(x, o, v, s);
}
__global__ void rows_bf16(const uint4 *x, float *o, long v, int s) {
  rows<true>(x, o, v, s);
}
__global__ void flat_f32(const uint4 *x, float *o, long v) {
  flat<false>(x, o, v);
}
__global__ void flat_bf16(const uint4 *x, float *o, long v) {
  flat<true>(x, o, v);
}
}
"""


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("kernel_dir")
    parser.add_argument("--shapes", default=DEFAULT_SHAPES)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--read-flush", action="store_true")
    args = parser.parse_args()
    if args.read_flush:
        flush_buffer = torch.ones(256 << 20, dtype=torch.int8, device="cuda")
        bench._l2_flush = lambda: lambda: flush_buffer.sum(dtype=torch.int32)
    module = cp.RawModule(code=SOURCE, options=("-std=c++17",))
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    print(f"{'shape':22s} {'provider':10s} {'us':>8s} {'GB/s':>7s} "
          f"{'%copy':>6s}")
    for spec in args.shapes.split(","):
        dname, shape = spec.split(":")
        m, n = (int(v) for v in shape.split("x"))
        dtype = DTYPES[dname]
        (x,) = make_args("logsumexp", m, n, dtype)
        nbytes = x.numel() * x.element_size()
        assert (n * x.element_size()) % 16 == 0, spec
        row_vectors = n * x.element_size() // 16
        src = torch.empty(nbytes // 2, dtype=torch.int8, device="cuda")
        dst = torch.empty_like(src)
        out = torch.zeros(m, device="cuda")
        total = torch.zeros(1, device="cuda")
        rows_fn = module.get_function(f"rows_{dname}")
        flat_fn = module.get_function(f"flat_{dname}")
        xp, op, tp = x.data_ptr(), out.data_ptr(), total.data_ptr()

        def rows_run(splits):
            def run():
                rows_fn((m * splits,), (THREADS,),
                        (xp, op, cp.int64(row_vectors), cp.int32(splits)))
                return out
            return run

        def flat_run():
            flat_fn((8 * sms,), (THREADS,),
                    (xp, tp, cp.int64(m * row_vectors)))
            return total

        reference = x.float().sum(dim=1)
        runs = {"copy": lambda: dst.copy_(src)}
        for splits in SPLITS:
            out.zero_()
            got = rows_run(splits)()
            torch.cuda.synchronize()
            error = ((got - reference).abs().max() /
                     reference.abs().max()).item()
            if error > 1e-3:
                sys.exit(f"{spec} rows/{splits}: relative error {error:.1e}")
            runs[f"rows/{splits}"] = rows_run(splits)
        total.zero_()
        flat_run()
        torch.cuda.synchronize()
        if abs(total.item() - reference.sum().item()) > \
                1e-3 * reference.abs().sum().item():
            sys.exit(f"{spec} flat: {total.item()} against "
                     f"{reference.sum().item()}")
        runs["flat"] = flat_run
        kernel = Kernel(args.kernel_dir,
                        f"logsumexp_{dname}_n{n}_kernel0.json")
        runs["ours"] = ours(kernel, "logsumexp", [x])
        lse = runs["ours"]()
        if not torch.allclose(lse, torch.logsumexp(x.double(), 1).float(),
                              rtol=1e-4, atol=1e-4):
            sys.exit(f"{spec} ours: logsumexp differs from torch's")
        samples, failed = bench.time_in_rounds(runs, args.rounds)
        if failed:
            sys.exit(f"{spec}: {failed}")
        us = {k: 1e3 * statistics.median(v) for k, v in samples.items()}
        for name, t in us.items():
            gbs = nbytes / t / 1e3
            print(f"{spec:22s} {name:10s} {t:8.2f} {gbs:7.0f} "
                  f"{100 * us['copy'] / t:5.1f}%")


if __name__ == "__main__":
    main()
