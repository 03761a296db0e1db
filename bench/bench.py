#!/usr/bin/env python3
"""Times our generated softmax kernels against the peers on one GPU.

Peers: torch.softmax, torch.compile of torch.softmax (compiled for every
shape: dynamo's recompile limit is raised, dynamic shapes off), the Triton
tutorial's fused persistent softmax, a Triton online (two-read) softmax,
and Liger-Kernel's liger_softmax where `liger_kernel` is importable (the
run says whether it was). All are timed alike, as
triton.testing.do_bench times (CUDA events, L2 flushed before every run,
median), and every output is checked against torch in float64 before it is
timed.
GB/s = 2 * M * N * bytes / time. The copy ceiling is measured in the same run,
once on 1 GiB buffers and once per shape (a device copy of the same tensor,
timed alike: the ceiling at that size, launch and ramp-up included).

Each shape's providers (the same-size copy included) take turns call by call
within each of --rounds rounds (after one uncounted round, and the run
starts with 3 s of copies), and each reports the median of its rounds'
medians, so that drift over the run (clocks, temperature, the bimodal
per-call times of microsecond shapes) falls on all of them alike instead of
on whichever ran last.

usage: bench.py KERNEL_DIR [--json OUT] [--png OUT] [--rounds R]
                [--dtypes f32,bf16] [--set main|vocab] [--shapes MxN,...]
KERNEL_DIR holds the kernels from `scripts/gen_kernels.py --set bench`;
--set picks the shapes (main: M x N from 4096 x 256 to 1024 x 1048576;
vocab: odd vocabularies at M = 1 to 4096 and even ones at M = 1 to 64);
--shapes times only the named shapes of the set (for example
4096x12288,1024x1048576).
"""
import argparse
import json
import math
import os
import random
import statistics
import sys
import time

import cupy as cp
import numpy as np
import torch
import triton
import triton.language as tl
from triton.runtime import driver

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "test", "GPU"))
from rowred_kernel import Kernel  # noqa: E402

try:
    from liger_kernel.transformers import functional as liger
    LIGER_MISSING = None
except Exception as e:  # noqa: BLE001 - any import failure: not a peer
    # (family.py, train.py and decode.py take Liger from here.)
    liger, LIGER_MISSING = None, f"{type(e).__name__}: {e}"

DEVICE = torch.device("cuda")
SHAPES = [(4096, n) for n in (256, 512, 781, 1024, 2048, 4096, 8192, 12288,
                              16384, 32768, 65536, 131072)]
SHAPES += [(1024, 262144), (1024, 1048576), (32768, 4096)]
# Vocabularies (--set vocab): odd ones, a prime near 2^20, and the even
# ones of today's LLMs at the few rows of decode-time sampling.
ODD_VOCABS = (32001, 100277, 1048573)
EVEN_VOCABS = (32000, 128256, 151936, 256000)
VOCAB_SHAPES = [(m, n) for n in ODD_VOCABS for m in (1, 8, 64, 1024, 4096)]
VOCAB_SHAPES += [(m, n) for n in EVEN_VOCABS for m in (1, 8, 16, 64)]
SETS = {"main": SHAPES, "vocab": VOCAB_SHAPES}


# --- Peer: the Triton tutorial's fused softmax (one program per row block,
# persistent over rows, whole row in one BLOCK_SIZE). ---
@triton.jit
def tutorial_softmax_kernel(output_ptr, input_ptr, input_row_stride,
                            output_row_stride, n_rows, n_cols,
                            BLOCK_SIZE: tl.constexpr,
                            num_stages: tl.constexpr):
    row_start = tl.program_id(0)
    row_step = tl.num_programs(0)
    for row_idx in tl.range(row_start, n_rows, row_step,
                            num_stages=num_stages):
        row_start_ptr = input_ptr + row_idx * input_row_stride
        col_offsets = tl.arange(0, BLOCK_SIZE)
        input_ptrs = row_start_ptr + col_offsets
        mask = col_offsets < n_cols
        row = tl.load(input_ptrs, mask=mask, other=-float("inf"))
        row_minus_max = row - tl.max(row, axis=0)
        numerator = tl.exp(row_minus_max)
        denominator = tl.sum(numerator, axis=0)
        softmax_output = numerator / denominator
        output_row_start_ptr = output_ptr + row_idx * output_row_stride
        output_ptrs = output_row_start_ptr + col_offsets
        tl.store(output_ptrs, softmax_output, mask=mask)


TUTORIAL_MAX_N = 16384
_PROPS = driver.active.utils.get_device_properties(torch.cuda.current_device())
_kernels = {}


def tutorial_softmax(x):
    n_rows, n_cols = x.shape
    BLOCK_SIZE = triton.next_power_of_2(n_cols)
    num_warps = 8
    num_stages = 4 if _PROPS["max_shared_mem"] > 200000 else 2
    y = torch.empty_like(x)
    key = (BLOCK_SIZE, x.dtype)
    if key not in _kernels:
        kernel = tutorial_softmax_kernel.warmup(
            y, x, x.stride(0), y.stride(0), n_rows, n_cols,
            BLOCK_SIZE=BLOCK_SIZE, num_stages=num_stages, num_warps=num_warps,
            grid=(1,))
        kernel._init_handles()
        n_regs, size_smem = kernel.n_regs, kernel.metadata.shared
        occupancy = _PROPS["max_num_regs"] // (n_regs * 32 * num_warps)
        if size_smem > 0:
            occupancy = min(occupancy, _PROPS["max_shared_mem"] // size_smem)
        _kernels[key] = (kernel, occupancy * _PROPS["multiprocessor_count"])
    kernel, programs = _kernels[key]
    kernel[(min(programs, n_rows), 1, 1)](y, x, x.stride(0), y.stride(0),
                                          n_rows, n_cols, BLOCK_SIZE,
                                          num_stages)
    return y


# --- Peer: online softmax in Triton (seed 001's kernel, two reads). ---
@triton.jit
def online_softmax_kernel(x_ptr, y_ptr, n_cols, BLOCK: tl.constexpr):
    # 64-bit: row * n_cols passes 2^31 at 4096 x 2^20.
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * n_cols
    y_row = y_ptr + row * n_cols
    m = tl.full((BLOCK,), -float("inf"), tl.float32)
    d = tl.zeros((BLOCK,), tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(x_row + cols, mask=cols < n_cols,
                    other=-float("inf")).to(tl.float32)
        m_new = tl.maximum(m, x)
        alpha = tl.where(m_new == -float("inf"), 0.0, tl.exp(m - m_new))
        d = d * alpha + tl.where(m_new == -float("inf"), 0.0, tl.exp(x - m_new))
        m = m_new
    m_row = tl.max(m, axis=0)
    d_row = tl.sum(d * tl.where(m == -float("inf"), 0.0, tl.exp(m - m_row)),
                   axis=0)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(x_row + cols, mask=cols < n_cols,
                    other=-float("inf")).to(tl.float32)
        y = tl.exp(x - m_row) / d_row
        tl.store(y_row + cols, y.to(y_ptr.dtype.element_ty), mask=cols < n_cols)


def triton_online_softmax(x):
    n_rows, n_cols = x.shape
    y = torch.empty_like(x)
    block = min(triton.next_power_of_2(n_cols), 4096)
    num_warps = 4 if block <= 1024 else 8 if block <= 2048 else 16
    online_softmax_kernel[(n_rows,)](x, y, n_cols, BLOCK=block,
                                     num_warps=num_warps)
    return y


# --- Ours: the generated PTX launched through the documented ABI. ---
class Ours:
    def __init__(self, kernel_dir, dtype, n):
        tag = {torch.float32: "f32", torch.bfloat16: "bf16"}[dtype]
        self.kernel = Kernel(kernel_dir, f"softmax_{tag}_auto_n{n}_kernel0.json")
        self.meta = self.kernel.meta
        self.per_sm = self.kernel.per_sm

    def __call__(self, x):
        y = torch.empty_like(x)
        rows, cols = x.shape
        self.kernel.launch(x.data_ptr(), y.data_ptr(), rows, cols,
                           x.stride(0), y.stride(0))
        return y


def _l2_flush():
    """The L2 flush triton.testing.do_bench runs before every timed call:
    Triton's own (zeroing a buffer larger than the L2) where this Triton
    has it, else the same with a 256 MiB buffer. Returns a callable."""
    active = driver.active
    if hasattr(active, "get_empty_cache_for_benchmark"):
        cache = active.get_empty_cache_for_benchmark()
        return lambda: active.clear_cache(cache)
    cache = torch.empty(256 << 20, dtype=torch.int8, device=DEVICE)
    return cache.zero_


# Cycles of torch.cuda._sleep between the flush and each timed call: ~100 us
# at the H200's 1.98 GHz, more than any provider's Python launch takes.
# A callable whose host time is longer (a training step: its forward, the
# autograd engine's backward call) gets twice its own (head_start_cycles).
HOST_AHEAD_CYCLES = 200_000
# torch.cuda._sleep's cycles per microsecond, at least the GPU's clock.
SLEEP_CYCLES_PER_US = 2000


def head_start_cycles(host_s):
    """The spin before a timed call whose host takes `host_s` seconds to
    issue: HOST_AHEAD_CYCLES, or twice the host's time where that is
    longer (the host's time moves by up to 40% within a process)."""
    return max(HOST_AHEAD_CYCLES, int(2e6 * host_s * SLEEP_CYCLES_PER_US))


def interleaved_calls(runs, calls, flush, seed=0, shuffle=True,
                      spins=None):
    """Times `calls` calls of each callable of `runs` (name -> fn), the
    callables taking turns call by call, in an order shuffled afresh for
    each turn (seeded): a call's time depends on the calls before it (by up
    to 10% on a 7 us shape), and a fixed order would
    give each provider the same predecessor every time. With `shuffle`
    false they keep the order of `runs` (experiments that study that
    dependence: bench/experiments/order_exp.py). Before each call
    `flush` (the L2 flush) and a spin of the callable's `spins` cycles
    (default HOST_AHEAD_CYCLES), then CUDA events around the call. The
    spin keeps the host's enqueueing ahead of the GPU, so that no call's
    window holds time the GPU spent waiting for the host. Returns name ->
    the calls' times (ms)."""
    spins = spins or {}
    events = {name: [(torch.cuda.Event(enable_timing=True),
                      torch.cuda.Event(enable_timing=True))
                     for _ in range(calls)] for name in runs}
    order = list(runs)
    rng = random.Random(seed)
    for i in range(calls):
        if shuffle:
            rng.shuffle(order)
        for name in order:
            flush()
            torch.cuda._sleep(spins.get(name, HOST_AHEAD_CYCLES))
            events[name][i][0].record()
            runs[name]()
            events[name][i][1].record()
    torch.cuda.synchronize()
    return {name: [s.elapsed_time(e) for s, e in events[name]]
            for name in runs}


def time_in_rounds(runs, rounds, rep_ms=100, warmup_ms=25):
    """Times each callable of `runs` (name -> fn) as do_bench does (the L2
    flushed before every call, CUDA events around it), for `rounds` rounds.
    Within a round the callables take turns call by call, in a shuffled
    order (interleaved_calls), so that every provider's samples come from
    the same stretch of time and follow the same mix of other calls: on
    shapes of a few microseconds the per-call times are bimodal, and a
    median there moves with the mix of the two modes. Each round takes
    about `rep_ms` per callable, after one uncounted round. Without the
    spin after each flush, rounds of one provider on a 7 us shape measured
    up to 128% apart; each callable's spin covers the host's time to issue
    it (the longest of five calls, head_start_cycles), so that the times
    are the GPU's (train.py times host-bound steps back to back as well).
    Returns name -> the rounds' medians (ms), and name -> the exception's
    type name for those that raised (not timed again)."""
    flush = _l2_flush()
    runs = dict(runs)
    errors = {}
    estimate = {}
    spins = {}
    for name, run in list(runs.items()):
        try:
            run()
            torch.cuda.synchronize()
            start = torch.cuda.Event(enable_timing=True)
            end = torch.cuda.Event(enable_timing=True)
            start.record()
            host_s = 0.0
            for _ in range(5):
                flush()
                issued = time.perf_counter()
                run()
                host_s = max(host_s, time.perf_counter() - issued)
            end.record()
            torch.cuda.synchronize()
            estimate[name] = start.elapsed_time(end) / 5
            spins[name] = head_start_cycles(host_s)
            for _ in range(max(1, int(warmup_ms / estimate[name]))):
                run()
        except Exception as e:  # reported by the caller
            errors[name] = type(e).__name__
            del runs[name]
    samples = {name: [] for name in runs}
    if not runs:
        return samples, errors
    spin_ms = sum(spins.values()) / SLEEP_CYCLES_PER_US / 1e3
    calls = max(1, int(rep_ms * len(runs) /
                       (sum(estimate.values()) + spin_ms)))
    # One more round first, not counted: a shape's first round can follow
    # seconds of idle GPU (Triton compiling a peer) and run at lower clocks.
    for round_ in range(rounds + 1):
        times = interleaved_calls(runs, calls, flush, seed=round_,
                                  spins=spins)
        for name in runs if round_ > 0 else ():
            samples[name].append(statistics.median(times[name]))
    return samples, errors


def max_abs_error(x, y, chunk_elements=1 << 26):
    """max |y - softmax(x)| against a float64 reference, computed a few rows
    at a time (a float64 copy of 4096 x 2^20 would not fit beside the
    operands)."""
    rows = max(1, chunk_elements // x.size(1))
    err = 0.0
    for i in range(0, x.size(0), rows):
        ref = torch.softmax(x[i:i + rows].double(), dim=-1)
        err = max(err, (y[i:i + rows].double() - ref).abs().max().item())
    return err


def compile_every_shape():
    """Lets torch.compile compile every shape on its own: dynamo's
    recompile limits raised (their names changed over PyTorch versions)."""
    for limit in ("recompile_limit", "cache_size_limit",
                  "accumulated_recompile_limit", "accumulated_cache_size_limit"):
        if hasattr(torch._dynamo.config, limit):
            setattr(torch._dynamo.config, limit, 100000)


def start_run(rounds):
    """Sets up a benchmark run: every shape compiled on its own by
    torch.compile, the seed fixed; prints the device line and returns the
    copy bandwidth (GB/s)."""
    compile_every_shape()
    torch.manual_seed(0)
    ceiling = copy_bandwidth()
    print(f"device: {torch.cuda.get_device_name()}; copy bandwidth "
          f"{ceiling:.0f} GB/s; {rounds} rounds per shape")
    return ceiling


def copy_bandwidth(warm_up_s=3.0):
    """The device copy's GB/s on 1 GiB buffers, measured after `warm_up_s`
    seconds of the same copy, so that the clocks have settled before the
    first shape (the first shape of a run on a GPU fresh from idle had
    rounds 25-150% slower than the others)."""
    a = torch.empty(1 << 28, dtype=torch.float32, device=DEVICE)
    b = torch.empty_like(a)
    start = time.time()
    while time.time() - start < warm_up_s:
        b.copy_(a)
        torch.cuda.synchronize()
    ms = triton.testing.do_bench(lambda: b.copy_(a), return_mode="median")
    return 2 * a.numel() * 4 / ms / 1e6


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("kernel_dir")
    parser.add_argument("--json")
    parser.add_argument("--png")
    parser.add_argument("--dtypes", default="f32,bf16")
    parser.add_argument("--rounds", type=int, default=5,
                        help="rounds of every provider in turn per shape "
                             "(default 5; 1: one timing each)")
    parser.add_argument("--set", choices=sorted(SETS), default="main",
                        help="the shapes to time (default main)")
    parser.add_argument("--shapes",
                        help="only these shapes of the set, as MxN,...")
    args = parser.parse_args()
    if args.rounds < 1:
        parser.error("--rounds must be at least 1")
    shapes = SETS[args.set]
    if args.shapes:
        named = {f"{m}x{n}": (m, n) for m, n in shapes}
        unknown = [s for s in args.shapes.split(",") if s not in named]
        if unknown:
            parser.error(f"--shapes: {', '.join(unknown)} not in the sweep "
                         f"({', '.join(named)})")
        shapes = [named[s] for s in args.shapes.split(",")]
    ceiling = start_run(args.rounds)
    name = torch.cuda.get_device_name()
    compiled = torch.compile(lambda x: torch.softmax(x, dim=-1),
                             dynamic=False)
    providers = {"torch": lambda x: torch.softmax(x, dim=-1),
                 "torch.compile": compiled,
                 "triton-tutorial": tutorial_softmax,
                 "triton-online": triton_online_softmax}
    if liger:
        providers["liger"] = lambda x: liger.liger_softmax(x)
    print("liger: " + ("importable" if liger else
                       f"not importable ({LIGER_MISSING})"), flush=True)
    rows = []
    for tag in args.dtypes.split(","):
        dtype = {"f32": torch.float32, "bf16": torch.bfloat16}[tag]
        for m, n in shapes:
            x = torch.randn(m, n, device=DEVICE, dtype=dtype)
            result = {"dtype": tag, "M": m, "N": n}
            ours = Ours(args.kernel_dir, dtype, n)
            # The kernel this launch takes: a variant for a few rows, or the
            # kernel compiled for N.
            result["ours_strategy"] = ours.kernel.taken(m, n)["strategy"]
            copy_out = torch.empty_like(x)
            timed = {"copy": lambda: copy_out.copy_(x)}
            for pname, fn in list(providers.items()) + [("ours", ours)]:
                if pname == "triton-tutorial" and n > TUTORIAL_MAX_N:
                    # Its whole row lives in registers: compiling a block of
                    # 64K+ elements takes minutes and fails out of resources
                    # (DESIGN.md section 4 measured 32768 and up).
                    result[pname] = None
                    result[pname + "_error"] = "not run (row > 16384)"
                    continue
                try:
                    y = fn(x)
                    torch.cuda.synchronize()
                    err = max_abs_error(x, y)
                    del y
                    tol = 1e-5 if dtype == torch.float32 else 1e-2
                    if not err <= tol:
                        result[pname] = None
                        result[pname + "_error"] = f"max abs err {err:.2e}"
                        continue
                    timed[pname] = lambda fn=fn: fn(x)
                except Exception as e:  # a peer that fails is reported
                    result[pname] = None
                    result[pname + "_error"] = type(e).__name__
            samples, errors = time_in_rounds(timed, args.rounds)
            for pname, error in errors.items():
                result[pname] = None
                result[pname + "_error"] = error
            for pname in samples:
                ms = statistics.median(samples[pname])
                result[pname] = 2 * m * n * x.element_size() / ms / 1e6
                result[pname + "_spread"] = (
                    max(samples[pname]) / min(samples[pname]) - 1)
            del copy_out
            rows.append(result)
            print("  " + json.dumps(result), flush=True)
            del x
            torch.cuda.empty_cache()
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": name, "copy_gbps": ceiling,
                       "liger": LIGER_MISSING or "importable",
                       "rounds": args.rounds, "rows": rows},
                      f, indent=1)
    names = ["torch", "torch.compile", "triton-tutorial", "triton-online",
             "liger", "ours"]
    print(f"{'dtype':5} {'M x N':>15} {'strategy':8} " +
          " ".join(f"{p:>15}" for p in names) +
          f" {'%copy':>6} {'copy@MxN':>8} {'%':>5} {'vs best':>7}")
    ratios_best, ratios_torch = [], []
    for r in rows:
        cells = []
        for p in names:
            v = r.get(p)
            missing = ("not run" if r.get(p + "_error", "").startswith(
                "not run") else "fail")
            cells.append(f"{v:15.0f}" if v else f"{missing:>15}")
        peers = [r[p] for p in names[:-1] if r.get(p)]
        best = max(peers) if peers else None
        ours = r.get("ours")
        pct = f"{100 * ours / ceiling:6.1f}" if ours else f"{'-':>6}"
        same = r["copy"]
        pct_same = f"{100 * ours / same:5.1f}" if ours else f"{'-':>5}"
        vs = f"{ours / best:7.2f}" if ours and best else f"{'-':>7}"
        if ours and best:
            ratios_best.append(ours / best)
        if ours and r.get("torch"):
            ratios_torch.append(ours / r["torch"])
        print(f"{r['dtype']:5} {str(r['M']) + ' x ' + str(r['N']):>15} "
              f"{r['ours_strategy']:8} " + " ".join(cells) +
              f" {pct} {same:8.0f} {pct_same} {vs}")
    if ratios_torch:
        g = math.exp(sum(map(math.log, ratios_torch)) / len(ratios_torch))
        print(f"geomean ours/torch {g:.2f}; min ours/best-peer "
              f"{min(ratios_best):.2f}")
    spreads = [(r[k], r["dtype"], r["M"], r["N"], k[:-len("_spread")])
               for r in rows for k in r if k.endswith("_spread")]
    if spreads and args.rounds > 1:
        s, tag, m, n, p = max(spreads)
        print(f"largest spread between one provider's rounds (slowest / "
              f"fastest - 1): {100 * s:.1f}% ({p}, {tag} {m} x {n})")
    if args.png:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        fig, axes = plt.subplots(1, len(args.dtypes.split(",")),
                                 figsize=(13, 4.5), squeeze=False)
        for ax, tag in zip(axes[0], args.dtypes.split(",")):
            m_plot = max(r["M"] for r in rows)
            sel = [r for r in rows if r["dtype"] == tag and r["M"] == m_plot]
            for p in names:
                pts = [(r["N"], r[p]) for r in sel if r.get(p)]
                if pts:
                    ax.plot(*zip(*pts), marker="o", label=p)
            ax.axhline(ceiling, color="gray", ls="--", label="copy")
            ax.set_xscale("log", base=2)
            ax.set_xlabel(f"N (M = {m_plot})")
            ax.set_ylabel("GB/s")
            ax.set_title(f"softmax {tag} on {name}")
            ax.legend()
        fig.tight_layout()
        fig.savefig(args.png, dpi=110)
    return 0


if __name__ == "__main__":
    sys.exit(main())
