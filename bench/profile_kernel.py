#!/usr/bin/env python3
"""Launches generated kernels once each (and a device copy) for a profiler.

Meant to run under Nsight Compute on the GPU machine, for example

  ncu --clock-control none --section SpeedOfLight ... \\
      python3 bench/profile_kernel.py KERNEL_DIR softmax_f32_auto_n16384_kernel0.json:4096

Each KERNEL.json:M argument names a kernel's metadata in KERNEL_DIR and the
rows to run it on; the columns are the kernel's `cols` (its `max_cols`).
Every output is checked against torch.softmax in float64 first, so that the
profile is of a kernel that computes the right thing. The copy (torch's
`copy_` of 256 MiB of f32) is the bandwidth ceiling the benchmark uses.
"""
import argparse
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "test", "GPU"))
from rowred_kernel import Kernel, named_cols  # noqa: E402

DTYPES = {"f32": torch.float32, "bf16": torch.bfloat16, "f16": torch.float16}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("kernel_dir")
    parser.add_argument("kernels", nargs="+", metavar="KERNEL.json:M")
    parser.add_argument("--cols", type=int, default=0,
                        help="columns (default: the kernel's max_cols)")
    args = parser.parse_args()
    torch.manual_seed(0)
    a = torch.randn(1 << 26, device="cuda")
    b = torch.empty_like(a)
    b.copy_(a)
    failures = 0
    for spec in args.kernels:
        meta_file, _, m = spec.rpartition(":")
        kernel = Kernel(args.kernel_dir, meta_file)
        n = args.cols or kernel.meta["max_cols"] or named_cols(meta_file,
                                                                kernel.meta)
        if n == 0:
            parser.error(f"{meta_file} takes any row length: give --cols")
        dtype = DTYPES[kernel.meta["input_type"]]
        x = torch.randn(int(m), n, device="cuda", dtype=dtype)
        y = torch.full_like(x, float("nan"))
        kernel.launch(x.data_ptr(), y.data_ptr(), x.shape[0], n, x.stride(0),
                      y.stride(0))
        torch.cuda.synchronize()
        err = (y.double() - torch.softmax(x.double(), -1)).abs().max().item()
        ok = err <= (1e-5 if dtype == torch.float32 else 1e-2)
        failures += not ok
        print(f"{meta_file} {m}x{n}: grid {kernel.grid(int(m), cols=n)} x "
              f"{kernel.threads}, {kernel.per_sm} blocks/SM, max abs err "
              f"{err:.2e} {'ok' if ok else 'WRONG'}", flush=True)
        del x, y
        torch.cuda.empty_cache()
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
