#!/usr/bin/env python3
"""Why the eager training steps slow later in a process: one small step
(softmax bf16 4096 x 4096 by default) timed as bench/train.py times it and
by the host's wall time per step, in a fresh process, then after each of a
few loads (large tensors allocated and freed; a whole train.py shape of
another op), and with Python's garbage collector off or its objects frozen.
Beside each: the objects the collector tracks and the collections of each
generation during the host's timing.

usage: host_slowdown.py PACK_DIR [--op softmax] [--shape 4096x4096]
                        [--dtype bf16] [--load cross_entropy:8192x151936]
"""
import argparse
import gc
import os
import statistics
import sys
import types

import torch

_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(_HERE, ".."))
from bench import time_in_rounds  # noqa: E402
from host_overhead import per_call_us  # noqa: E402
import train  # noqa: E402


def measure(label, steps):
    """Prints each step's train.py time and host time per step, the objects
    the collector tracks and its collections during the host's timing."""
    before = [s["collections"] for s in gc.get_stats()]
    host = {k: per_call_us(s, 300) for k, s in steps.items()}
    runs = [s["collections"] - b for s, b in zip(gc.get_stats(), before)]
    samples, _ = time_in_rounds(steps, 3)
    timed = {k: 1e3 * statistics.median(v) for k, v in samples.items()}
    cells = "  ".join(f"{k} {timed.get(k, float('nan')):6.1f}/{host[k]:6.1f}"
                      for k in steps)
    print(f"{label:28s} {cells}  tracked {len(gc.get_objects()):8d} "
          f"gc runs {runs}", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("pack_dir")
    parser.add_argument("--op", default="softmax")
    parser.add_argument("--shape", default="4096x4096")
    parser.add_argument("--dtype", default="bf16")
    parser.add_argument("--load", default="cross_entropy:8192x151936")
    args = parser.parse_args()
    train.start_package_run(args.pack_dir, 3)
    m, n = (int(d) for d in args.shape.split("x"))
    leaves, extra, dy = train.inputs(args.op, m, n, train.DTYPES[args.dtype])
    steps = train.make_steps(args.op, train.forwards(args.op), leaves, extra,
                             dy)
    print("cells: provider train.py-us/host-us per step")
    measure("fresh", steps)
    load_op, load_shape = args.load.split(":")
    lm, ln = (int(d) for d in load_shape.split("x"))
    big = torch.randn(lm, ln, device="cuda", dtype=train.DTYPES[args.dtype])
    del big
    torch.cuda.empty_cache()
    measure("after a large tensor", steps)
    row = train.run_shape(load_op, lm, ln, args.dtype,
                          types.SimpleNamespace(rounds=1, graphs=False,
                                                weight_dtype="rows"))
    torch.cuda.empty_cache()
    print(train.summary(row))
    measure(f"after {load_op}", steps)
    gc.disable()
    measure("  gc disabled", steps)
    gc.enable()
    gc.collect()
    measure("  gc collected", steps)
    gc.freeze()
    measure("  gc frozen", steps)
    gc.unfreeze()
    measure("  gc unfrozen", steps)


if __name__ == "__main__":
    main()
