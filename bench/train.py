#!/usr/bin/env python3
"""Times the training step of each op (forward and backward) through the
rowred package, beside PyTorch eager, torch.compile and Liger-Kernel, and
measures each step's extra peak memory.

A step is what a training loop runs for the op: fresh leaves that require
grad (the input, and the norms' weight and bias), the forward, and the
backward of a fixed incoming gradient (the loss's backward for
cross-entropy, reduction "mean", ignore_index -100 on every seventh row).
The input (and the residual form's residual stream) reaches the op as an
intermediate whose gradient the layer below consumes (autograd_sink.Sink),
as a model's activations and logits do: no provider pays for accumulating
it into a leaf's .grad (a copy, for the losses that write their gradient
over the logits, and for a gradient that reaches two leaves, as x + r's
does).
Providers:

* rowred: the package's ops on a pack built for the exact row lengths
  (rowred.rms_norm, its residual form, rowred.layer_norm,
  rowred.cross_entropy (the gradient written by the forward's kernel into a
  new buffer) and, as a second column, its inplace_backward=True form,
  rowred.softmax, rowred.log_softmax);
* torch: F.rms_norm, x + r then F.rms_norm, F.layer_norm, F.cross_entropy,
  torch.softmax, torch.log_softmax;
* compile: torch.compile of the torch step's forward (dynamic shapes off,
  every shape compiled: dynamo's recompile limits raised), its backward
  compiled by AOT autograd;
* liger: Liger-Kernel's functions (LigerRMSNormFunction, fused add + RMSNorm,
  LayerNorm, cross-entropy, softmax) where `liger_kernel` is importable
  (put its src/ on PYTHONPATH); the column says why where it is not.

Time, eager, two ways: the GPU's time of the step, as bench.py times it
(CUDA events, the L2 flushed before every call, each step issued after a
spin on the GPU longer than the host takes to issue it, providers taking
turns call by call, the median of --rounds rounds' medians): what a
training loop whose GPU work outlasts its host's sees; and back to back,
the wall time per step of a loop of steps (no flush, a synchronization at
the end; providers taking turns, the median of the rounds): what a loop
bound by its host sees, where the step's host time (the forward's calls,
the autograd engine's backward call) exceeds its GPU time. With --graphs,
also each step captured in a CUDA graph and replayed (the launch cost
gone). Memory: torch.cuda.max_memory_allocated over one step beyond what
is allocated before it (the inputs, the weights and the incoming
gradient), in MiB. Before timing, every provider's
gradients are compared with float64 PyTorch (relative L2 of dx).

With --weight-dtype f32 the norms' weight and bias are f32 beside 16-bit
rows (mixed precision; the dtype column reads e.g. bf16w32): the pack needs
their kernels of an f32 weight (rowred.packs build --weight-dtype f32), and
F.layer_norm refuses the mix.

usage: train.py PACK_DIR [--ops rms_norm,...] [--dtypes f32,bf16]
                [--weight-dtype rows|f32] [--shapes MxN,...] [--rounds R]
                [--graphs] [--json OUT]
"""
import argparse
import json
import os
import random
import statistics
import sys

import torch
import torch.nn.functional as F

_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, _HERE)
sys.path.insert(0, os.path.join(_HERE, "..", "test", "GPU"))
from bench import (LIGER_MISSING, liger, start_run,  # noqa: E402
                   time_in_rounds)
from autograd_sink import Sink  # noqa: E402
from host_overhead import per_call_us  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "python"))
import rowred  # noqa: E402

EPS = 1e-5
NORM_SHAPES = ((8192, 4096), (16384, 8192), (4096, 5120), (32768, 2048))
SHAPES = {
    "rms_norm": NORM_SHAPES,
    "rms_norm_residual": NORM_SHAPES,
    "layer_norm": NORM_SHAPES,
    "cross_entropy": ((4096, 32000), (4096, 128256), (8192, 151936)),
    "softmax": ((4096, 4096), (4096, 32000)),
    "log_softmax": ((4096, 4096), (4096, 32000)),
}
DTYPES = {"f32": torch.float32, "bf16": torch.bfloat16, "f16": torch.float16}


def _rms(x, w):
    return F.rms_norm(x, (x.size(-1),), w, EPS)


def _rms_residual(x, r, w):
    h = x + r
    return F.rms_norm(h, (x.size(-1),), w, EPS), h


def _layer_norm(x, w, b):
    return F.layer_norm(x, (x.size(-1),), w, b, EPS)


def forwards(op):
    """provider -> the forward of `op` (a function of the step's leaves),
    where it has one."""
    if op == "rms_norm":
        fns = {"rowred": lambda x, w: rowred.rms_norm(x, (x.size(-1),), w,
                                                       EPS),
               "torch": _rms, "compile": torch.compile(_rms, dynamic=False)}
        if liger:
            fns["liger"] = lambda x, w: liger.liger_rms_norm(
                x, w, EPS, in_place=False)
    elif op == "rms_norm_residual":
        fns = {"rowred": lambda x, r, w: rowred.rms_norm(
                   x, (x.size(-1),), w, EPS, residual=r),
               "torch": _rms_residual,
               "compile": torch.compile(_rms_residual, dynamic=False)}
        if liger:
            fns["liger"] = lambda x, r, w: liger.liger_fused_add_rms_norm(
                x, r, w, EPS, in_place=False)
    elif op == "layer_norm":
        fns = {"rowred": lambda x, w, b: rowred.layer_norm(
                   x, (x.size(-1),), w, b, EPS),
               "torch": _layer_norm,
               "compile": torch.compile(_layer_norm, dynamic=False)}
        if liger:
            fns["liger"] = lambda x, w, b: liger.liger_layer_norm(x, w, b,
                                                                  EPS)
    elif op == "cross_entropy":
        fns = {"rowred": rowred.cross_entropy,
               "rowred_inplace": lambda x, y: rowred.cross_entropy(
                   x, y, inplace_backward=True),
               "torch": F.cross_entropy,
               "compile": torch.compile(F.cross_entropy, dynamic=False)}
        if liger:
            fns["liger"] = liger.liger_cross_entropy
    else:
        torch_fn = torch.softmax if op == "softmax" else torch.log_softmax
        ours = rowred.softmax if op == "softmax" else rowred.log_softmax

        def eager(x, f=torch_fn):
            return f(x, -1)
        fns = {"rowred": ours, "torch": eager,
               "compile": torch.compile(eager, dynamic=False)}
        if liger and op == "softmax":
            fns["liger"] = liger.liger_softmax
    return fns


def make_step(op, forward, leaves, extra, dy, sink=True):
    """A training step of `forward`: fresh leaves requiring grad, the
    forward (of the activations through Sink, intermediates whose gradient
    is dropped, unless `sink` is false: the input, and the residual form's
    residual stream), the backward of `dy` (the loss's own for
    cross-entropy); returns the leaves' gradients."""
    activations = 2 if op == "rms_norm_residual" else 1

    def step():
        xs = [t.detach().requires_grad_() for t in leaves]
        args = [Sink.apply(t) if sink and i < activations else t
                for i, t in enumerate(xs)]
        out = forward(*args, *extra)
        if op == "rms_norm_residual":
            torch.autograd.backward(out, (dy, dy))
        elif op == "cross_entropy":
            out.backward()
        else:
            out.backward(dy)
        return [t.grad for t in xs]
    return step


def make_steps(op, fns, leaves, extra, dy):
    """provider -> its training step (make_step) of each forward of `fns`.
    The steps that write the gradient over their input (ours in place,
    Liger's cross-entropy) get their own copy of it: its values drift from
    step to step, its traffic does not."""
    return {k: make_step(op, f, [t.clone() for t in leaves]
                         if k in ("rowred_inplace", "liger") and
                         op == "cross_entropy" else leaves, extra, dy)
            for k, f in fns.items()}


def reference_dx(op, forward, leaves, extra, dy):
    """The float64 gradient of the input."""
    xs = [t.double().requires_grad_() for t in leaves]
    out = forward(*xs, *extra)
    if op == "rms_norm_residual":
        torch.autograd.backward(out, (dy.double(), dy.double()))
    elif op == "cross_entropy":
        out.backward()
    else:
        out.backward(dy.double())
    return xs[0].grad


def inputs(op, m, n, dtype, weight_dtype=None):
    """(leaves, extra non-differentiable arguments, incoming gradient); the
    norms' weight and bias of `weight_dtype` (None: `dtype`)."""
    def randn(*shape, dtype=dtype):
        return torch.randn(shape, device="cuda", dtype=dtype)
    weight_dtype = weight_dtype or dtype
    x = randn(m, n)
    if op == "cross_entropy":
        labels = torch.randint(0, n, (m,), device="cuda")
        labels[3::7] = -100
        return [x * 3], [labels], None
    dy = randn(m, n)
    w = torch.rand(n, device="cuda", dtype=weight_dtype) + 0.5
    if op == "rms_norm":
        return [x, w], [], dy
    if op == "rms_norm_residual":
        return [x, randn(m, n), w], [], dy
    if op == "layer_norm":
        return [x + 1, w, randn(n, dtype=weight_dtype)], [], dy
    return [x * 3], [], dy


def rel_l2(got, want):
    return (float(torch.linalg.vector_norm(got.double() - want)) /
            (float(torch.linalg.vector_norm(want)) or 1.0))


def extra_memory_mib(step):
    torch.cuda.synchronize()
    base = torch.cuda.memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    grads = step()
    torch.cuda.synchronize()
    peak = torch.cuda.max_memory_allocated() - base
    del grads
    return peak / 2 ** 20


def graphed(step):
    """`step` captured in a CUDA graph (after warm-up on a side stream);
    returns its replay."""
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        for _ in range(2):
            step()
    torch.cuda.current_stream().wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        step()
    return graph.replay


def run_shape(op, m, n, dname, args):
    dtype = DTYPES[dname]
    mixed = args.weight_dtype == "f32" and dname != "f32" and \
        op in rowred.packs.WEIGHT_OPS
    leaves, extra, dy = inputs(op, m, n, dtype,
                               torch.float32 if mixed else None)
    fns = forwards(op)
    steps = make_steps(op, fns, leaves, extra, dy)
    ref = reference_dx(op, fns["torch"], leaves, extra, dy)
    if mixed:
        dname += "w32"
    row = {"op": op, "dtype": dname, "m": m, "n": n, "us": {}, "graph_us": {},
           "extra_mib": {}, "dx_rel_l2": {}, "failed": {}}
    for k, step in list(steps.items()):
        try:
            # The input's gradient, through a leaf of its own.
            check = make_step(op, fns[k], [t.clone() for t in leaves],
                              extra, dy, sink=False)
            row["dx_rel_l2"][k] = rel_l2(check()[0], ref)
            row["extra_mib"][k] = extra_memory_mib(step)
        except Exception as e:  # noqa: BLE001 - reported in the table
            row["failed"][k] = f"{type(e).__name__}: {str(e)[:120]}"
            del steps[k]
    del ref
    samples, failed = time_in_rounds(steps, args.rounds)
    row["failed"].update(failed)
    row["us"] = {k: 1e3 * statistics.median(v) for k, v in samples.items()}
    row["back_to_back_us"] = back_to_back_us(
        {k: steps[k] for k in row["us"]}, row["us"], args.rounds)
    if args.graphs:
        replays = {}
        for k, step in steps.items():
            if k == "liger" and op == "cross_entropy":
                # Liger's loss reads a value on the host (a synchronization
                # a capture refuses, which leaves the device's generator
                # unusable).
                continue
            try:
                replays[k] = graphed(step)
            except Exception as e:  # noqa: BLE001
                row["failed"][k + "_graph"] = type(e).__name__
        samples, failed = time_in_rounds(replays, args.rounds)
        row["graph_us"] = {k: 1e3 * statistics.median(v)
                           for k, v in samples.items()}
        del replays
    return row


def back_to_back_us(steps, gpu_us, rounds, loop_ms=30):
    """provider -> the median over `rounds` rounds of the wall time per
    step (us) of a loop of its steps issued back to back, about `loop_ms`
    long by the step's GPU time `gpu_us`; the providers take turns in an
    order shuffled each round."""
    samples = {k: [] for k in steps}
    for round_ in range(rounds):
        order = list(steps)
        random.Random(round_).shuffle(order)
        for k in order:
            calls = max(10, min(200, int(1e3 * loop_ms / gpu_us[k])))
            samples[k].append(per_call_us(steps[k], calls, warmup=3))
    return {k: statistics.median(v) for k, v in samples.items()}


PEERS = ("torch", "compile", "liger")


def best_peer(values):
    """The least of the peers' values in `values` (provider -> time or
    memory), or NaN where no peer has one."""
    peers = [values[k] for k in PEERS if k in values]
    return min(peers) if peers else float("nan")


def summary(row):
    us = row["us"]
    best = best_peer(us)
    ours = us.get("rowred", float("nan"))
    mem = row["extra_mib"]

    def cell(k):
        return f"{us[k]:8.0f}" if k in us else f"{'-':>8s}"
    line = (f"{row['op']:17s} {row['dtype']:7s} {row['m']:>5d}x{row['n']:<6d}"
            + "".join(cell(k) for k in ("rowred", *PEERS))
            + f" {best / ours:6.2f}x"
            + f" {mem.get('rowred', float('nan')):8.0f}"
            + f" {best_peer(mem):8.0f}"
            + f" {row['dx_rel_l2'].get('rowred', float('nan')):8.1e}")
    if "rowred_inplace" in us:
        line += (f"  inplace {us['rowred_inplace']:.0f} us "
                 f"{best / us['rowred_inplace']:.2f}x "
                 f"{mem['rowred_inplace']:.0f} MiB")
    b2b = row["back_to_back_us"]
    if "rowred" in b2b:
        line += (f"  back to back {b2b['rowred']:.0f} us "
                 f"{best_peer(b2b) / b2b['rowred']:.2f}x")
    if row["graph_us"]:
        g = row["graph_us"]
        if "rowred" in g and any(k in g for k in PEERS):
            line += f"  graph {g['rowred']:.0f} us {best_peer(g) / g['rowred']:.2f}x"
    if row["failed"]:
        line += f"  failed: {row['failed']}"
    return line


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("pack_dir")
    parser.add_argument("--ops", default=",".join(SHAPES))
    parser.add_argument("--dtypes", default="f32,bf16")
    parser.add_argument("--weight-dtype", choices=("rows", "f32"),
                        default="rows",
                        help="the norms' weight and bias beside 16-bit rows")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--graphs", action="store_true",
                        help="also time each step replayed from a CUDA graph")
    parser.add_argument("--shapes",
                        help="MxN,... instead of each op's own shapes")
    parser.add_argument("--json")
    args = parser.parse_args()
    shapes = args.shapes and [tuple(int(d) for d in s.split("x"))
                              for s in args.shapes.split(",")]
    start_package_run(args.pack_dir, args.rounds)
    print(f"{'op':17s} {'type':7s} {'M x N':>12s} {'rowred':>8s} "
          f"{'torch':>8s} {'compile':>8s} {'liger':>8s} {'vs best':>7s} "
          f"{'MiB ours':>8s} {'peers':>8s} {'dx L2':>8s}   (us per step)")
    rows = []
    for op in args.ops.split(","):
        for dname in args.dtypes.split(","):
            for m, n in shapes or SHAPES[op]:
                row = run_shape(op, m, n, dname, args)
                rows.append(row)
                print(summary(row), flush=True)
                torch.cuda.empty_cache()
    if args.json:
        write_json(args.json, rows)


def start_package_run(pack_dir, rounds):
    """Loads the pack at `pack_dir`, sets up the run (bench.start_run) and
    says whether Liger-Kernel is importable."""
    rowred.load_pack(pack_dir)
    start_run(rounds)
    print("liger: " + ("importable" if liger else
                       f"not importable ({LIGER_MISSING})"))


def write_json(path, rows):
    """The run's rows, with the device and the versions, to `path`."""
    with open(path, "w") as f:
        json.dump({"device": torch.cuda.get_device_name(),
                   "torch": torch.__version__,
                   "liger": LIGER_MISSING or "importable",
                   "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
