#!/usr/bin/env python3
"""Times what a pack runs for a row length it was not built for, against
the kernel compiled for that length, on one GPU.

For each (op, dtype, N, M), three kernels of one pack, launched as the
package launches them (test/GPU/rowred_kernel.py, the runtime's grid and
few-rows variants): `exact`, the kernel compiled for N; `ladder`, the one
the pack lookup takes when N is not in the pack (rowred.packs' ranking over
the pack's other compiled lengths: a `--cols ladder` kernel of the next
block up); `any`, the kernel for rows of any length. Printed: each one's
GB/s as a fraction of the copy of the same bytes and the ladder's and the
any kernel's speed as a fraction of the exact kernel's. Every output is
checked against float64 first. Timing as bench.py (L2 flushed, providers
taking turns, the median of the rounds' medians).

Build the pack with, e.g.:
  python3 -m rowred.packs build --softmax-opt build/bin/softmax-opt \\
      --out /tmp/any-pack --op softmax,cross_entropy --dtype f32,bf16 \\
      --cols ladder,any,1000,32001,1048576,1048583,16777216

usage: any_kernels.py PACK_DIR [--ops softmax,cross_entropy]
                      [--dtypes f32,bf16] [--cols 1,1000,...] [--rows 1,8,4096]
                      [--rounds R] [--json OUT]
"""
import argparse
import json
import os
import statistics
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench import start_run, time_in_rounds  # noqa: E402
from family import (DEVICE, DTYPES, make_args, max_error,  # noqa: E402
                    moved_bytes, ours)

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "python"))
from rowred import packs  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "test", "GPU"))
from rowred_kernel import Kernel  # noqa: E402

COLS = (1, 1000, 4096, 32001, 131072, 1 << 20, (1 << 20) + 7, 1 << 24)
ROWS = (1, 8, 4096)
# Operands of at most this many elements (two of f32 at 4 GiB each).
MAX_ELEMENTS = 1 << 30


def choices(pack, op, dtype, n):
    """name -> metadata path: the exact kernel for rows of n, the lookup's
    choice among the pack's other compiled lengths, and the any kernel
    (each where the pack has one)."""
    kernels = pack.matching(op, dtype)
    found = {"exact": next((k for k in kernels if k["cols"] == n), None),
             "ladder": packs._best([k for k in kernels
                                    if k["cols"] not in (0, n)], n),
             "any": next((k for k in kernels if k["cols"] == 0), None)}
    return {name: k["metadata"] for name, k in found.items() if k}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("pack")
    parser.add_argument("--ops", default="softmax,cross_entropy")
    parser.add_argument("--dtypes", default="f32,bf16")
    parser.add_argument("--cols", default=",".join(map(str, COLS)))
    parser.add_argument("--rows", default=",".join(map(str, ROWS)))
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--json")
    args = parser.parse_args()
    pack = packs.Pack(args.pack)
    start_run(args.rounds)
    print(f"{'op':13s} {'dtype':5s} {'M x N':>16s} {'exact':>6s} "
          f"{'ladder':>6s} {'any':>6s}  (fraction of the copy)  "
          f"{'ladder/exact':>12s} {'any/exact':>9s}  kernels")
    rows = []
    for op in args.ops.split(","):
        for dname in args.dtypes.split(","):
            for n in map(int, args.cols.split(",")):
                paths = choices(pack, op, dname, n)
                for m in map(int, args.rows.split(",")):
                    if m * n > MAX_ELEMENTS or not paths:
                        continue
                    rows.append(run_shape(op, dname, m, n, paths,
                                          args.rounds))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": torch.cuda.get_device_name(),
                       "rows": rows}, f, indent=1)


def run_shape(op, dname, m, n, paths, rounds):
    """Checks and times the kernels of `paths` on one shape; prints and
    returns its row."""
    call_args = make_args(op, m, n, DTYPES[dname])
    nbytes = moved_bytes(op, m, n, DTYPES[dname])
    src = torch.empty(max(nbytes // 2, 1), dtype=torch.int8, device=DEVICE)
    dst = torch.empty_like(src)
    runs, errors, names = {}, {}, {}
    for name, path in paths.items():
        kernel = Kernel(os.path.dirname(path), os.path.basename(path))
        runs[name] = ours(kernel, op, call_args)
        errors[name] = max_error(op, call_args, runs[name]())
        names[name] = os.path.basename(path)[:-len("_kernel0.json")]
    runs["copy"] = lambda: dst.copy_(src)
    samples, failed = time_in_rounds(runs, rounds)
    ms = {k: statistics.median(v) for k, v in samples.items()}
    frac = {k: ms["copy"] / t for k, t in ms.items() if k != "copy"}
    exact = ms.get("exact")
    vs = {k: exact / ms[k] for k in ("ladder", "any") if exact and k in ms}
    cells = " ".join(f"{frac[k]:6.2f}" if k in frac else f"{'-':>6s}"
                     for k in ("exact", "ladder", "any"))
    ratios = " ".join(f"{vs[k]:{w}.2f}" if k in vs else f"{'-':>{w}s}"
                      for k, w in (("ladder", 12), ("any", 9)))
    print(f"{op:13s} {dname:5s} {m:>7d} x {n:<8d} {cells}  "
          f"{'':22s}  {ratios}  {' '.join(names.values())}"
          + (f" failed {failed}" if failed else "")
          + (f" err {max(errors.values()):.1e}" if
             max(errors.values()) > 1e-2 else ""), flush=True)
    return {"op": op, "dtype": dname, "m": m, "n": n, "ms": ms,
            "copy_fraction": frac, "vs_exact": vs, "errors": errors,
            "kernels": names, "failed": failed}


if __name__ == "__main__":
    main()
