#!/usr/bin/env python3
"""Times decode-size calls (a few rows) of the package's forward ops beside
PyTorch eager, torch.compile and Liger-Kernel, on the GPU's time alone.

Each provider's call is captured in a CUDA graph (train.graphed) and its
replays are timed as bench.py times calls (bench.time_in_rounds: the L2
flushed before every replay, CUDA events around it, providers taking turns
in a shuffled order, the median of --rounds rounds' medians): the host's
time per call (docs/performance.md, The host's time per call) is left out,
as it is for a model decoding under CUDA graphs. A copy of the input
(Tensor.copy_) is the floor. Every provider's output is checked against
float64 first (relative L2). With --chain K each graph calls the op K
times, on K operand sets of its own (none in the L2 after the flush), and
the copies are a graph of K copies: the time per call with the graph's
launch shared by K kernels, as in a model's decode step, where a single
call's replay is mostly the launch.

Ops and shapes: rms_norm and layer_norm (eps 1e-5) at hidden sizes --hidden,
softmax, logsumexp and cross-entropy (reduction "none") at vocabularies
--vocab; M in --rows; --dtypes of f32, bf16 and f16. Providers: rowred
(the package on PACK_DIR, e.g. a `--preset llm` pack), torch, compile
(torch.compile of the torch call, every shape compiled), liger
(liger_kernel's functional ops where importable, but for cross-entropy,
whose loss reads a value on the host: a capture refuses it and leaves the
device's generator unusable).

usage: decode.py PACK_DIR [--ops rms_norm,...] [--dtypes f32,bf16]
                 [--rows 1,4,16,64] [--hidden 2048,4096,8192]
                 [--vocab 32000,128256,151936,256000] [--rounds R]
                 [--chain K] [--json OUT]
"""
import argparse
import statistics

import torch
import torch.nn.functional as F

from bench import time_in_rounds
from train import (DTYPES, EPS, PEERS, best_peer, graphed, liger, rowred,
                   start_package_run, write_json)

NORM_OPS = ("rms_norm", "layer_norm")


def providers(op):
    """provider -> (function of the op's arguments, float64 reference of
    the same)."""
    if op == "rms_norm":
        def torch_fn(x, w):
            return F.rms_norm(x, (x.size(-1),), w, EPS)
        fns = {"rowred": lambda x, w: rowred.rms_norm(x, (x.size(-1),), w,
                                                       EPS)}
        if liger:
            fns["liger"] = lambda x, w: liger.liger_rms_norm(
                x, w, EPS, in_place=False)
    elif op == "layer_norm":
        def torch_fn(x, w, b):
            return F.layer_norm(x, (x.size(-1),), w, b, EPS)
        fns = {"rowred": lambda x, w, b: rowred.layer_norm(
            x, (x.size(-1),), w, b, EPS)}
        if liger:
            fns["liger"] = lambda x, w, b: liger.liger_layer_norm(x, w, b,
                                                                  EPS)
    elif op == "softmax":
        def torch_fn(x):
            return torch.softmax(x, -1)
        fns = {"rowred": rowred.softmax}
        if liger:
            fns["liger"] = liger.liger_softmax
    elif op == "logsumexp":
        def torch_fn(x):
            return torch.logsumexp(x, -1)
        fns = {"rowred": rowred.logsumexp}
    else:
        def torch_fn(x, labels):
            return F.cross_entropy(x, labels, reduction="none")
        fns = {"rowred": lambda x, labels: rowred.cross_entropy(
            x, labels, reduction="none")}
    fns["torch"] = torch_fn
    fns["compile"] = torch.compile(torch_fn, dynamic=False)
    return fns, torch_fn


def arguments(op, m, n, dtype):
    x = torch.randn(m, n, device="cuda", dtype=dtype) * 2
    if op in NORM_OPS:
        w = torch.rand(n, device="cuda", dtype=dtype) + 0.5
        b = torch.randn(n, device="cuda", dtype=dtype)
        return [x, w] + ([b] if op == "layer_norm" else [])
    if op == "cross_entropy":
        return [x, torch.randint(0, n, (m,), device="cuda")]
    return [x]


def rel_l2(got, want):
    got = got.double()
    return (float(torch.linalg.vector_norm(got - want)) /
            (float(torch.linalg.vector_norm(want)) or 1.0))


def run_shape(op, m, n, dname, rounds, chain=1):
    args = arguments(op, m, n, DTYPES[dname])
    # With a chain, each replay calls the op on `chain` operand sets of
    # their own: none is in the L2 after the flush.
    sets = [args] + [arguments(op, m, n, DTYPES[dname])
                     for _ in range(chain - 1)]
    fns, torch_fn = providers(op)
    ref = torch_fn(*[a.double() if a.is_floating_point() else a
                     for a in args])
    row = {"op": op, "dtype": dname, "m": m, "n": n, "us": {},
           "rel_l2": {}, "failed": {}}
    replays = {}
    for name, fn in fns.items():
        try:
            row["rel_l2"][name] = rel_l2(fn(*args), ref)
            replays[name] = graphed(
                lambda fn=fn: [fn(*operands) for operands in sets])
        except Exception as e:  # noqa: BLE001 - reported in the table
            row["failed"][name] = f"{type(e).__name__}: {str(e)[:100]}"
    outs = [torch.empty_like(operands[0]) for operands in sets]

    def copies():
        for out, operands in zip(outs, sets):
            out.copy_(operands[0])
    replays["copy"] = graphed(copies) if chain > 1 else copies
    samples, failed = time_in_rounds(replays, rounds, rep_ms=30)
    row["failed"].update(failed)
    row["us"] = {k: 1e3 * statistics.median(v) / chain
                 for k, v in samples.items()}
    row["chain"] = chain
    return row


def summary(row):
    us = row["us"]
    ours = us.get("rowred", float("nan"))
    cells = "".join(f"{us[k]:8.1f}" if k in us else f"{'-':>8s}"
                    for k in ("rowred", *PEERS, "copy"))
    line = (f"{row['op']:13s} {row['dtype']:4s} {row['m']:>3d}x{row['n']:<7d}"
            + cells + f" {best_peer(us) / ours:6.2f}x"
            + f" {row['rel_l2'].get('rowred', float('nan')):8.1e}")
    if row["failed"]:
        line += f"  failed: {sorted(row['failed'])}"
    return line


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("pack_dir")
    parser.add_argument("--ops", default="rms_norm,layer_norm,softmax,"
                        "logsumexp,cross_entropy")
    parser.add_argument("--dtypes", default="f32,bf16")
    parser.add_argument("--rows", default="1,4,16,64")
    parser.add_argument("--hidden", default="2048,4096,8192")
    parser.add_argument("--vocab", default="32000,128256,151936,256000")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--chain", type=int, default=1,
                        help="calls of the op per CUDA graph, each on "
                        "operands of its own, as a model's decode step "
                        "runs its kernels back to back; us per call "
                        "(the copies are then a graph too)")
    parser.add_argument("--json")
    args = parser.parse_args()
    start_package_run(args.pack_dir, args.rounds)
    print(f"{'op':13s} {'type':4s} {'M x N':>11s}{'rowred':>8s}{'torch':>8s}"
          f"{'compile':>8s}{'liger':>8s}{'copy':>8s} {'vs best':>7s} "
          f"{'rel L2':>8s}   (us per call, CUDA graph replay"
          + (f", {args.chain} calls a graph)" if args.chain > 1 else ")"))
    rows = []
    for op in args.ops.split(","):
        lengths = args.hidden if op in NORM_OPS else args.vocab
        for dname in args.dtypes.split(","):
            for n in map(int, lengths.split(",")):
                for m in map(int, args.rows.split(",")):
                    row = run_shape(op, m, n, dname, args.rounds,
                                    args.chain)
                    rows.append(row)
                    print(summary(row), flush=True)
    if args.json:
        write_json(args.json, rows)


if __name__ == "__main__":
    main()
