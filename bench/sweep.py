#!/usr/bin/env python3
"""Times every kernel in a directory (checked against torch first).

Used to choose the default block shape: the kernels are one softmax per
(dtype, N, warps), compiled by `scripts/gen_kernels.py --set sweep`.
Prints GB/s per kernel, sorted by (dtype, N, warps).

usage: sweep.py KERNEL_DIR [--rows M] [--json OUT]
"""
import argparse
import json
import os
import sys

import cupy as cp
import numpy as np
import torch
import triton

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "test", "GPU"))
from rowred_kernel import Kernel, named_cols  # noqa: E402

DTYPES = {"f32": torch.float32, "bf16": torch.bfloat16}


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("kernel_dir")
    p.add_argument("--rows", type=int, default=4096)
    p.add_argument("--json")
    p.add_argument("--balanced", action="store_true",
                   help="launch the fewest programs that need the same "
                   "number of rounds over the rows (experiment)")
    args = p.parse_args()
    with open(os.path.join(args.kernel_dir, "manifest.json")) as f:
        manifest = json.load(f)
    results = []
    for meta_file in manifest:
        kernel = Kernel(args.kernel_dir, meta_file)
        meta = kernel.meta
        n = named_cols(meta_file, meta)
        dtype = DTYPES[meta["input_type"]]
        # At most 2^28 elements (1 GiB of f32) per shape.
        rows = min(args.rows, max(1, (1 << 28) // n))
        x = torch.randn(rows, n, device="cuda", dtype=dtype)
        ref = torch.softmax(x.double(), dim=-1)

        def run():
            y = torch.empty_like(x)
            kernel.launch(x.data_ptr(), y.data_ptr(), rows, n, n, n,
                          grid=kernel.grid(rows, args.balanced, cols=n))
            return y
        err = (run().double() - ref).abs().max().item()
        ok = err <= (1e-5 if dtype == torch.float32 else 1e-2)
        ms = triton.testing.do_bench(run, return_mode="median") if ok else None
        gbps = 2 * rows * n * x.element_size() / ms / 1e6 if ms else None
        results.append({"kernel": meta["kernel"], "dtype": meta["input_type"],
                        "reverse": meta.get("reverse_second_pass", False),
                        "M": rows, "N": n, "threads": kernel.threads,
                        "per_sm": kernel.per_sm,
                        "rows_per_block": kernel.rows_per_block,
                        "cluster": kernel.cluster,
                        # none, shared (the stage) or registers.
                        "prefetch": meta.get("prefetch", "shared"
                                             if kernel.dynamic_shared
                                             else "none"),
                        "pair": "_pr1" in meta_file,
                        "E": meta["elements_per_thread"],
                        "strategy": meta["strategy"], "gbps": gbps,
                        "grid": kernel.grid(rows, args.balanced, cols=n),
                        "max_abs_err": err})
    results.sort(key=lambda r: (r["dtype"], r["N"], r["strategy"],
                                r["cluster"], r["rows_per_block"],
                                r["threads"], r["reverse"], r["prefetch"],
                                r["pair"]))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    print(f"{'dtype':5} {'N':>7} {'strategy':8} {'rev':>3} {'R':>2} {'C':>2} "
          f"{'thr':>5} {'E':>4} {'pf':>2} {'pr':>2} {'blk/SM':>6} {'grid':>5} "
          f"{'GB/s':>7}")
    for r in results:
        g = f"{r['gbps']:7.0f}" if r["gbps"] else "  WRONG"
        print(f"{r['dtype']:5} {r['N']:7} {r['strategy']:8} "
              f"{int(r['reverse']):3} {r['rows_per_block']:2} "
              f"{r['cluster']:2} {r['threads']:5} {r['E']:4} "
              f"{r['prefetch'][0].upper() if r['prefetch'] != 'none' else '-':>2} "
              f"{int(r['pair']):2} {r['per_sm']:6} "
              f"{r['grid']:5} {g}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
