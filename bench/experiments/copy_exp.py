#!/usr/bin/env python3
"""copy_exp.py ROUNDS PTX_DIR: copies of 2 GiB (the bf16 rows of 1048576) by
the kernels of copy.cu (build.sh puts their PTX in PTX_DIR) on persistent grids
of 112 and 132 blocks (one per SM, forced by shared memory) and on one block
per tile, next to torch's copy."""
import os, sys
import cupy as cp
import numpy as np
import torch
sys.path.insert(0, os.path.join(os.getcwd(), "bench"))
import bench  # noqa

rounds = int(sys.argv[1])
ptx_dir = sys.argv[2]
nbytes = 1 << 31
x = torch.randn(nbytes // 2, device="cuda", dtype=torch.bfloat16)
y = torch.empty_like(x)
n16 = nbytes // 16
runs = {}
for u in (1, 2, 4, 8):
    mod = cp.RawModule(path=os.path.join(ptx_dir, f"copy-u{u}.ptx"))
    for name in ("stride_copy", "region_copy") if u in (4, 8) else ():
        f = mod.get_function(name)
        f.max_dynamic_shared_size_bytes = 120 * 1024
        for g in (112, 132):
            def run(f=f, g=g):
                f((g,), (1024,), (np.uint64(x.data_ptr()),
                                  np.uint64(y.data_ptr()), np.int64(n16)),
                  shared_mem=120 * 1024)
            runs[f"{name} u{u} g{g}"] = run
    for name, threads in (("tile_copy", 256), ("small_copy", 128)):
        f = mod.get_function(name)
        blocks = -(-n16 // (threads * u))
        def run(f=f, blocks=blocks, threads=threads):
            f((blocks,), (threads,), (np.uint64(x.data_ptr()),
                                      np.uint64(y.data_ptr()), np.int64(n16)))
        runs[f"{name}{threads} u{u}"] = run
for name, run in runs.items():
    y.zero_()
    run()
    torch.cuda.synchronize()
    assert torch.equal(x, y), name
runs["torch copy"] = lambda: y.copy_(x)
from torch.profiler import profile, ProfilerActivity
with profile(activities=[ProfilerActivity.CUDA]) as prof:
    y.copy_(x)
    torch.cuda.synchronize()
print(prof.key_averages().table(row_limit=5))
samples, errors = bench.time_in_rounds(runs, rounds)
print("errors", errors)
bench.print_rounds(samples, 2 * nbytes, 26, ratios=False)
