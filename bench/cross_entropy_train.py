#!/usr/bin/env python3
"""Times cross-entropy's training step (the loss and the gradient of the
logits) and measures its peak memory, against PyTorch, on one GPU.

Ours: rowred.cross_entropy(logits, labels, inplace_backward=True) and its
backward, one kernel that writes the loss and the gradient over the logits
(the kernels of a pack built with `--op cross_entropy_grad`). Peers: PyTorch
eager F.cross_entropy(logits, labels) and its backward, and torch.compile of
the same function (Inductor's forward and backward; dynamo's recompile limit
raised, dynamic shapes off). reduction="mean", ignore_index -100 on every
seventh row, shapes M in {1024, 8192} x vocabularies of {32000, 50257,
128256, 151936}, f32 and bf16.

Time: as bench.py (CUDA events, L2 flushed before every call, providers
taking turns call by call, the median of the rounds' medians); GB/s counts
the logits read once and the gradient written once, and the ceiling is a
device copy of those bytes. Memory: torch.cuda.max_memory_allocated over
the loss's forward and backward on logits that are an intermediate (whose
gradient the layer below consumes), beyond the logits, in logits-sized
units. Before timing, each provider's loss and gradient are checked against
float64.

usage: cross_entropy_train.py PACK_DIR [--json OUT] [--rounds R]
"""
import argparse
import json
import os
import statistics
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench import start_run, time_in_rounds  # noqa: E402
from autograd_sink import Sink, extra_memory  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "python"))
import rowred  # noqa: E402

SHAPES = [(m, n) for m in (1024, 8192) for n in (32000, 50257, 128256, 151936)]
DTYPES = {"f32": torch.float32, "bf16": torch.bfloat16}


def step(loss_fn, logits, labels):
    """One training step's cross-entropy on a fresh leaf of `logits`: the
    loss and the gradient of the logits."""
    x = logits.detach().requires_grad_()
    loss = loss_fn(x, labels)
    loss.backward()
    return loss, x.grad


def timed_step(loss_fn, logits, labels):
    """The loss and its gradient on logits that are an intermediate, whose
    gradient goes to the layer below (Sink), as in training."""
    x = logits.detach().requires_grad_()
    loss_fn(Sink.apply(x), labels).backward()


def extra_logits(loss_fn, logits, labels):
    """Peak memory of the loss's forward and backward on an intermediate
    (the logits of a layer, as in training) beyond what is allocated before,
    in logits-sized units."""
    x = logits.detach().requires_grad_()
    return extra_memory(lambda z: loss_fn(z, labels), x) / (
        logits.numel() * logits.element_size())


def errors(loss_fn, logits, labels, ref_loss, ref_grad):
    loss, grad = step(loss_fn, logits.clone(), labels)
    scale = ref_grad.abs().max().item()
    return (abs(loss.double().item() - ref_loss) / abs(ref_loss),
            (grad.double() - ref_grad).abs().max().item() / scale)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("pack_dir")
    parser.add_argument("--json")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    rowred.load_pack(args.pack_dir)
    ceiling = start_run(args.rounds)
    fns = {"ours": lambda x, y: rowred.cross_entropy(
               x, y, inplace_backward=True),
           "eager": F.cross_entropy,
           "compile": torch.compile(F.cross_entropy, dynamic=False)}
    print(f"{'dtype':5s} {'M x N':>12s} {'ours GB/s':>9s} {'%copy':>6s} "
          f"{'eager':>7s} {'compile':>7s} {'vs best':>7s} "
          f"{'extra: ours':>11s} {'eager':>6s} {'compile':>7s} "
          f"{'err loss':>8s} {'grad':>8s}")
    rows = []
    for dname, dtype in DTYPES.items():
        for m, n in SHAPES:
            logits = torch.randn(m, n, device="cuda", dtype=dtype) * 3
            labels = torch.randint(0, n, (m,), device="cuda")
            labels[3::7] = -100
            ref_loss, ref_grad = step(F.cross_entropy, logits.double(),
                                      labels)
            ref_loss = ref_loss.item()
            errs = {k: errors(f, logits, labels, ref_loss, ref_grad)
                    for k, f in fns.items()}
            del ref_grad
            size = logits.numel() * logits.element_size()
            peaks = {k: extra_logits(f, logits, labels)
                     for k, f in fns.items()}
            # Ours overwrites its logits with the gradient on every call:
            # the values drift, the traffic does not.
            work = logits.clone()
            src = torch.empty(size, dtype=torch.int8, device="cuda")
            dst = torch.empty_like(src)
            runs = {k: (lambda f=f, x=(work if k == "ours" else logits):
                        timed_step(f, x, labels))
                    for k, f in fns.items()}
            runs["copy"] = lambda: dst.copy_(src)
            samples, failed = time_in_rounds(runs, args.rounds)
            del work, src, dst
            nbytes = 2 * size
            gbs = {k: nbytes / statistics.median(v) / 1e6
                   for k, v in samples.items()}
            best_peer = max(gbs.get("eager", 0), gbs.get("compile", 0))
            row = {"dtype": dname, "m": m, "n": n, "gbs": gbs,
                   "extra_logits": peaks, "errors": errs, "failed": failed,
                   "copy_fraction": gbs["ours"] / gbs["copy"],
                   "vs_best_peer": gbs["ours"] / best_peer}
            rows.append(row)
            print(f"{dname:5s} {m:>5d} x {n:<6d} {gbs['ours']:9.0f} "
                  f"{100 * row['copy_fraction']:5.1f}% "
                  f"{gbs.get('eager', 0):7.0f} {gbs.get('compile', 0):7.0f} "
                  f"{row['vs_best_peer']:6.2f}x {peaks['ours']:11.2f} "
                  f"{peaks['eager']:6.2f} {peaks['compile']:7.2f} "
                  f"{errs['ours'][0]:8.1e} {errs['ours'][1]:8.1e}")
            del logits
            torch.cuda.empty_cache()
    ratios = [r["vs_best_peer"] for r in rows]
    print(f"geomean vs best peer {statistics.geometric_mean(ratios):.2f}x, "
          f"min {min(ratios):.2f}x; copy fraction min "
          f"{min(r['copy_fraction'] for r in rows):.2f}; memory beyond the "
          f"logits: ours max {max(r['extra_logits']['ours'] for r in rows):.3f}"
          f" logits")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": torch.cuda.get_device_name(),
                       "copy_gbs": ceiling, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
