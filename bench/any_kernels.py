#!/usr/bin/env python3
"""Times what a pack built for rows of any length runs at a row length it
was not built for, against the kernel compiled for that length, on one
GPU.

For each (op, dtype, N, M), three kernels, launched as the package
launches them (test/GPU/rowred_kernel.py: the runtime's grid and few-rows
variants): `taken`, the kernel the pack lookup (rowred.packs.find_kernel)
takes from ANY_PACK (a `--cols ladder,any` pack: the exact kernels of the
ladder, each taking the shorter rows up to the length below it, and the
streamed kernel for any length); `any`, ANY_PACK's streamed kernel alone;
`exact`, EXACT_PACK's kernel compiled for N. Printed: each one's GB/s as a
fraction of the copy of the same bytes, and `taken`'s and `any`'s speed as
a fraction of the exact kernel's. Every output is checked against float64
first. Timing as bench.py (L2 flushed, providers taking turns, the median
of the rounds' medians).

Build the packs with, e.g.:
  python3 -m rowred.packs build --softmax-opt build/bin/softmax-opt \\
      --out /tmp/any-pack --op softmax,cross_entropy --dtype f32,bf16 \\
      --cols ladder,any
  python3 -m rowred.packs build --softmax-opt build/bin/softmax-opt \\
      --out /tmp/exact-pack --op softmax,cross_entropy --dtype f32,bf16 \\
      --cols 1,1000,1025,...   (the lengths of COLS)

usage: any_kernels.py ANY_PACK EXACT_PACK [--ops softmax,cross_entropy]
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

# The lengths, and lengths just past a ladder kernel's (the most
# padded rows of the next one up).
COLS = (1, 1000, 1025, 4096, 4097, 12289, 32001, 65537, 131072, 262145,
        1 << 20, (1 << 20) + 7, (1 << 21) + 3, 1 << 22, 1 << 24)
ROWS = (1, 8, 4096)
# Operands of at most this many elements (f32: 2 GiB each).
MAX_ELEMENTS = 1 << 29


def choices(any_pack, exact_pack, op, dtype, n):
    """name -> metadata path: the kernel the lookup takes from `any_pack`,
    its streamed kernel for any length, and `exact_pack`'s kernel compiled
    for rows of n (each where there is one)."""
    found = {"taken": packs._best(any_pack.matching(op, dtype), n),
             "any": next((k for k in any_pack.matching(op, dtype)
                          if k["cols"] == 0), None),
             "exact": next((k for k in exact_pack.matching(op, dtype)
                            if k["cols"] == n), None)}
    return {name: k["metadata"] for name, k in found.items() if k}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("any_pack")
    parser.add_argument("exact_pack")
    parser.add_argument("--ops", default="softmax,cross_entropy")
    parser.add_argument("--dtypes", default="f32,bf16")
    parser.add_argument("--cols", default=",".join(map(str, COLS)))
    parser.add_argument("--rows", default=",".join(map(str, ROWS)))
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--json")
    args = parser.parse_args()
    any_pack, exact_pack = packs.Pack(args.any_pack), \
        packs.Pack(args.exact_pack)
    start_run(args.rounds)
    print(f"{'op':13s} {'dtype':5s} {'M x N':>16s} {'exact':>6s} "
          f"{'taken':>6s} {'any':>6s}  (fraction of the copy)  "
          f"{'taken/exact':>11s} {'any/exact':>9s}  kernels")
    rows = []
    for op in args.ops.split(","):
        for dname in args.dtypes.split(","):
            for n in map(int, args.cols.split(",")):
                paths = choices(any_pack, exact_pack, op, dname, n)
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
    runs, errors, names, refused = {}, {}, {}, {}
    for name, path in paths.items():
        names[name] = os.path.basename(path)[:-len("_kernel0.json")]
        try:
            kernel = Kernel(os.path.dirname(path), os.path.basename(path))
            runs[name] = ours(kernel, op, call_args)
            errors[name] = max_error(op, call_args, runs[name]())
        except Exception as e:  # noqa: BLE001 - a kernel that cannot run
            refused[name] = f"{type(e).__name__}: {str(e)[:160]}"
            runs.pop(name, None)
    runs["copy"] = lambda: dst.copy_(src)
    samples, failed = time_in_rounds(runs, rounds, rep_ms=40)
    failed.update(refused)
    ms = {k: statistics.median(v) for k, v in samples.items()}
    frac = {k: ms["copy"] / t for k, t in ms.items() if k != "copy"}
    exact = ms.get("exact")
    vs = {k: exact / ms[k] for k in ("taken", "any") if exact and k in ms}
    cells = " ".join(f"{frac[k]:6.2f}" if k in frac else f"{'-':>6s}"
                     for k in ("exact", "taken", "any"))
    ratios = " ".join(f"{vs[k]:{w}.2f}" if k in vs else f"{'-':>{w}s}"
                      for k, w in (("taken", 11), ("any", 9)))
    print(f"{op:13s} {dname:5s} {m:>7d} x {n:<8d} {cells}  "
          f"{'':22s}  {ratios}  {' '.join(names.values())}"
          + (f" failed {failed}" if failed else "")
          + (f" err {max(errors.values()):.1e}" if errors and
             max(errors.values()) > 1e-2 else ""), flush=True)
    return {"op": op, "dtype": dname, "m": m, "n": n, "ms": ms,
            "copy_fraction": frac, "vs_exact": vs, "errors": errors,
            "kernels": names, "failed": failed}


if __name__ == "__main__":
    main()
