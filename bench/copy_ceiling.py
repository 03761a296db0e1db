#!/usr/bin/env python3
"""Is torch's device copy the ceiling? Times copies of one buffer size.

The performance target compares ours with a device copy. bench.py measures
that copy with `torch.Tensor.copy_`; this script times the same copy in
other ways, with the same method (triton.testing.do_bench: CUDA events, L2
flushed before every run, median), to see whether a copy kernel of our own
moves the same bytes faster than torch's at the bench's tensor sizes:

  * torch:    `dst.copy_(src)`
  * triton B: one program per B elements, 16-byte accesses
  * persistent G x B: G programs (a multiple of the SM count) walking the
    buffer in steps of B elements
  * with --programs G ...: the persistent copy on G programs of 1024
    threads x 16 elements (one per SM), to see what a kernel that leaves
    SMs idle (clusters of 16 use 112 of an H200's 132) can move

GB/s = 2 * bytes / time (read plus write), as in bench.py.

usage: copy_ceiling.py [--mib 64 128 1024] [--programs 132 112 ...] [--json OUT]
"""
import argparse
import json

import torch
import triton
import triton.language as tl


@triton.jit
def copy_kernel(src, dst, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(dst + offs, tl.load(src + offs, mask=mask), mask=mask)


@triton.jit
def persistent_copy_kernel(src, dst, n, BLOCK: tl.constexpr):
    start = tl.program_id(0).to(tl.int64) * BLOCK
    step = tl.num_programs(0).to(tl.int64) * BLOCK
    for base in range(start, n, step):
        offs = base + tl.arange(0, BLOCK)
        mask = offs < n
        tl.store(dst + offs, tl.load(src + offs, mask=mask), mask=mask)


def gbps(src, dst, fn):
    """GB/s of the copy `fn` of `src` into `dst`, checked first."""
    dst.zero_()
    fn()
    if not torch.equal(src, dst):
        raise SystemExit("a copy kernel copied wrongly")
    ms = triton.testing.do_bench(fn, return_mode="median")
    return 2 * src.numel() * src.element_size() / ms / 1e6


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--mib", type=int, nargs="+", default=[64, 128, 1024])
    p.add_argument("--programs", type=int, nargs="+", default=[],
                   help="also copy on this many 1024-thread programs")
    p.add_argument("--json")
    args = p.parse_args()
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    print(f"device: {torch.cuda.get_device_name(0)}, {sms} SMs")
    rows = []
    for mib in args.mib:
        n = mib * (1 << 20) // 4
        src = torch.randn(n, device="cuda")
        dst = torch.empty_like(src)
        results = {"torch": gbps(src, dst, lambda: dst.copy_(src))}
        for block, warps in ((1024, 4), (4096, 8), (8192, 8)):
            grid = (triton.cdiv(n, block),)
            results[f"triton {block}/w{warps}"] = gbps(
                src, dst, lambda: copy_kernel[grid](src, dst, n, BLOCK=block,
                                                   num_warps=warps))
        for per_sm, block, warps in ((4, 4096, 8), (8, 2048, 4),
                                     (16, 1024, 4)):
            grid = (per_sm * sms,)
            results[f"persistent {per_sm}x{sms} x {block}/w{warps}"] = gbps(
                src, dst, lambda: persistent_copy_kernel[grid](
                    src, dst, n, BLOCK=block, num_warps=warps))
        for programs in args.programs:
            results[f"persistent {programs} x 16384/w32"] = gbps(
                src, dst, lambda: persistent_copy_kernel[(programs,)](
                    src, dst, n, BLOCK=16384, num_warps=32))
        for name, value in results.items():
            rows.append({"MiB": mib, "copy": name, "gbps": value})
            print(f"{mib:6} MiB  {name:32} {value:7.0f} GB/s")
        del src, dst
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
