#!/usr/bin/env python3
"""Times the same kernels from several directories in alternating rounds.

An A/B (or A/B/C...) comparison for one change: every directory holds a
kernel of the same file name (for example the compiler's output before and
after a change, or a PTX edit), and each round times every directory's
kernel once, in turn, so that drift over the run (clocks, temperature) falls
on all of them alike. Prints the median over the rounds, per kernel and
directory, and each directory's ratio to the first. Every output is checked
against torch.softmax in float64 first; a wrong kernel is reported and not
timed.

With --torch, torch.softmax is timed in the same rounds as one more
column, so that a kernel can be compared with it on equal terms (as the
benchmark does for its fixed shapes and the bench kernels, bench.py
--rounds); --peers adds the benchmark's Triton peers as well (the
tutorial's kernel only up to its 16384 columns); --copy adds a device copy
of the same tensor, the limit of a memory-bound kernel of that size.

usage: ab.py DIR_A [DIR_B ...] [--torch | --peers] [--rows M] [--rounds R]
             [--copy] [--match RE]
"""
import argparse
import json
import os
import re
import statistics
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "test", "GPU"))
from rowred_kernel import Kernel, named_cols  # noqa: E402
import bench  # noqa: E402

DTYPES = {"f32": torch.float32, "bf16": torch.bfloat16, "f16": torch.float16}


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("dirs", nargs="+")
    p.add_argument("--rows", type=int, default=4096,
                   help="rows M (at most --max-elements per shape)")
    p.add_argument("--max-elements", type=int, default=1 << 28,
                   help="elements per shape at most (default 2^28; the "
                        "bench's rows of 1048576 have 2^30)")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--match", default="")
    p.add_argument("--torch", action="store_true",
                   help="also time torch.softmax in every round")
    p.add_argument("--peers", action="store_true",
                   help="also time torch.softmax and the bench's Triton "
                        "peers in every round")
    p.add_argument("--copy", action="store_true",
                   help="also time a device copy of the same tensor")
    p.add_argument("--json")
    args = p.parse_args()
    if len(args.dirs) + (args.torch or args.peers or args.copy) < 2:
        p.error("give at least two kernel directories, or one and --torch, "
                "--peers or --copy")
    peers = {}
    if args.torch or args.peers:
        peers["torch"] = lambda x: torch.softmax(x, dim=-1)
    if args.peers:
        peers["triton-tutorial"] = bench.tutorial_softmax
        peers["triton-online"] = bench.triton_online_softmax
    if args.copy:
        # Into a buffer of the shape's (copy_out below), as bench.py does.
        peers["copy"] = lambda x: copy_out.copy_(x)
    columns = args.dirs + list(peers)
    with open(os.path.join(args.dirs[0], "manifest.json")) as f:
        manifest = [m for m in json.load(f) if re.search(args.match, m)]
    results = []
    for meta_file in manifest:
        kernels = [Kernel(d, meta_file) for d in args.dirs]
        n = named_cols(meta_file, kernels[0].meta)
        dtype = DTYPES[kernels[0].meta["input_type"]]
        rows = min(args.rows, max(1, args.max_elements // n))
        x = torch.randn(rows, n, device="cuda", dtype=dtype)
        ref = torch.softmax(x.double(), dim=-1)
        copy_out = torch.empty_like(x)  # the copy peer's destination
        tol = 1e-5 if dtype == torch.float32 else 1e-2
        runs = []
        for kernel in kernels:
            def run(kernel=kernel):
                y = torch.empty_like(x)
                kernel.launch(x.data_ptr(), y.data_ptr(), rows, n, n, n)
                return y
            err = (run().double() - ref).abs().max().item()
            runs.append(run if err <= tol else None)
        for name, peer in peers.items():
            ok = not (name == "triton-tutorial" and n > bench.TUTORIAL_MAX_N)
            if ok and name not in ("torch", "copy"):
                ok = (peer(x).double() - ref).abs().max().item() <= tol
            runs.append((lambda peer=peer: peer(x)) if ok else None)
        samples, _ = bench.time_in_rounds(
            {i: run for i, run in enumerate(runs) if run}, args.rounds)
        times = [samples.get(i, []) for i in range(len(runs))]
        gbps = [2 * rows * n * x.element_size() / statistics.median(t) / 1e6
                if t else None for t in times]
        results.append({"kernel": meta_file, "M": rows, "N": n,
                        "gbps": dict(zip(columns, gbps))})
        cells = " ".join(f"{g:8.0f}" if g else
                         "     n/a" if c == "triton-tutorial" else "   WRONG"
                         for g, c in zip(gbps, columns))
        ratios = " ".join(f"{g / gbps[0]:6.3f}" if g and gbps[0] else
                          "     -" for g in gbps[1:])
        print(f"{meta_file:48} {rows:6} x {n:<8} {cells}  {ratios}",
              flush=True)
        del x, ref, copy_out
        torch.cuda.empty_cache()
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    return 1 if any(g is None and c != "triton-tutorial"
                    for r in results for c, g in r["gbps"].items()) else 0


if __name__ == "__main__":
    sys.exit(main())
