#!/usr/bin/env python3
"""Times the family's kernels against PyTorch on one GPU.

Ops: rms_norm (and its residual form: h = x + r written and normalized),
layer_norm (weight and bias), softmax_backward, logsumexp and
cross_entropy, on the LLM shapes of the issue that added them: M in {4096,
16384} tokens x hidden N in {2048, 4096, 8192} for the norms, the softmax
bench's main shapes for the backward, M in {1024, 8192} x vocabularies of
{32000, 50257, 128256, 151936} for logsumexp and cross-entropy; f32 and
bf16. Peers: PyTorch eager (F.rms_norm, x + r then F.rms_norm, F.layer_norm,
torch._softmax_backward_data, torch.logsumexp, F.cross_entropy with
reduction="none") and torch.compile of the same function (Inductor's
Triton; dynamo's recompile limit raised, dynamic shapes off), and
Liger-Kernel's RMSNorm, fused add + RMSNorm and LayerNorm where
`liger_kernel` is importable (its softmax backward, logsumexp and
cross-entropy have no forward-only call to time; the run says whether it
was importable). The ceiling
is a device copy of the bytes the op must move (the norms read x and write
y, the residual form reads x and r and writes y and h; the backward reads
y and dy and writes dx; logsumexp and cross-entropy read the logits, their
per-row results aside), timed alike.
Every output is checked against a float64 reference before it is timed.
Timing as bench.py: CUDA events, L2 flushed before every call, providers
taking turns call by call within --rounds rounds, the median of the
rounds' medians.

With --long, the shapes are long rows that no block holds, as the
streamed online kernel or chunks take them: the norms and the backward at
{64, 8} x {262144, 1048576}, logsumexp and cross-entropy at 8 x 4194304.
With --other, the norms at {4096, 16384} x {5120, 6144, 10000, 12288,
14336, 16384} and the backward at 4096 rows of those lengths.
With --any, every shape runs on the kernel of its (op, dtype) compiled for
rows of any length (the streamed online kernel) instead of its own.

usage: family.py KERNEL_DIR [--json OUT] [--rounds R] [--ops rms_norm,...]
                 [--long] [--other] [--any]
       family.py SWEEP_DIR --sweep [--sweep-rows 4096,16384]
KERNEL_DIR holds the kernels of `scripts/gen_kernels.py --set family-bench`,
SWEEP_DIR those of `--set family-sweep` (fused block shapes timed against
each other and torch.compile).
"""
import argparse
import json
import os
import re
import statistics
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench import SHAPES as SOFTMAX_SHAPES  # noqa: E402
from bench import LIGER_MISSING, liger  # noqa: E402
from bench import (compile_every_shape, start_run,  # noqa: E402
                   time_in_rounds)

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "scripts"))
from gen_kernels import EPSILON, OTHER_NS  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "test", "GPU"))
from rowred_kernel import Kernel  # noqa: E402

DEVICE = "cuda"
NORM_SHAPES = [(m, n) for m in (4096, 16384) for n in (2048, 4096, 8192)]
VOCAB_SHAPES = [(m, n) for m in (1024, 8192)
                for n in (32000, 50257, 128256, 151936)]
SHAPES = {"rms_norm": NORM_SHAPES, "rms_norm_residual": NORM_SHAPES,
          "layer_norm": NORM_SHAPES,
          "softmax_backward": SOFTMAX_SHAPES, "logsumexp": VOCAB_SHAPES,
          "cross_entropy": VOCAB_SHAPES}
LONG_NORM_SHAPES = [(m, n) for m in (64, 8) for n in (262144, 1048576)]
# --other: row lengths between and above the powers of two of the LLM
# shapes (gen_kernels.py's family-bench has their kernels).
OTHER_NORM_SHAPES = [(m, n) for m in (4096, 16384) for n in OTHER_NS]
OTHER_SHAPES = {"rms_norm": OTHER_NORM_SHAPES, "layer_norm": OTHER_NORM_SHAPES,
                "softmax_backward": [(4096, n) for n in OTHER_NS]}
LONG_SHAPES = {"rms_norm": LONG_NORM_SHAPES, "layer_norm": LONG_NORM_SHAPES,
               "softmax_backward": LONG_NORM_SHAPES,
               "logsumexp": [(8, 4194304)], "cross_entropy": [(8, 4194304)]}
DTYPES = {"f32": torch.float32, "bf16": torch.bfloat16}
# --sweep also times f16 kernels (the benchmark's tables are f32 and bf16).
SWEEP_DTYPES = {**DTYPES, "f16": torch.float16}


def eager(op):
    """The PyTorch function of `op`, on (inputs, columns)."""
    if op == "rms_norm":
        return lambda x, w: F.rms_norm(x, (x.shape[-1],), w, EPSILON)
    if op == "rms_norm_residual":
        return residual_rms_norm
    if op == "layer_norm":
        return lambda x, w, b: F.layer_norm(x, (x.shape[-1],), w, b, EPSILON)
    if op == "logsumexp":
        return lambda x: torch.logsumexp(x, -1)
    if op == "softmax":
        return lambda x: torch.softmax(x, -1)
    if op == "log_softmax":
        return lambda x: torch.log_softmax(x, -1)
    if op == "cross_entropy":
        return lambda x, labels: F.cross_entropy(x, labels, reduction="none")
    if op == "log_softmax_backward":
        return lambda y, dy: torch._log_softmax_backward_data(dy, y, -1,
                                                              y.dtype)
    return lambda y, dy: torch._softmax_backward_data(dy, y, -1, y.dtype)


def liger_op(op):
    """Liger-Kernel's function of `op` on (inputs, columns), or None."""
    if liger is None:
        return None
    if op == "rms_norm":
        return lambda x, w: liger.liger_rms_norm(x, w, EPSILON)
    if op == "rms_norm_residual":
        return lambda x, r, w: liger.liger_fused_add_rms_norm(x, r, w,
                                                              EPSILON)
    if op == "layer_norm":
        return lambda x, w, b: liger.liger_layer_norm(x, w, b, EPSILON)
    return None


def residual_rms_norm(x, r, w):
    """The residual form: h = x + r, written, and rms_norm(h); returns the
    normalized rows (h stays materialized, as the kernel writes it)."""
    h = x + r
    return F.rms_norm(h, (h.shape[-1],), w, EPSILON), h


def bench_op(kernel):
    """The op a kernel of family-bench computes: its metadata's, with
    rms_norm of two inputs as its residual form."""
    op = kernel.meta["op"]
    inputs = [r for _, r, _ in kernel.runtime.operands if r == "input"]
    return "rms_norm_residual" if op == "rms_norm" and len(inputs) == 2 \
        else op


def make_args(op, m, n, dtype):
    x = torch.randn(m, n, device=DEVICE, dtype=dtype)
    if op == "rms_norm":
        return [x, torch.randn(n, device=DEVICE, dtype=dtype)]
    if op == "rms_norm_residual":
        return [x, torch.randn(m, n, device=DEVICE, dtype=dtype),
                torch.randn(n, device=DEVICE, dtype=dtype)]
    if op == "layer_norm":
        return [x, torch.randn(n, device=DEVICE, dtype=dtype),
                torch.randn(n, device=DEVICE, dtype=dtype)]
    if op in ("logsumexp", "softmax", "log_softmax"):
        return [x]
    if op == "cross_entropy":
        labels = torch.randint(0, n, (m,), device=DEVICE)
        labels[3::7] = -100
        return [x, labels]
    y = torch.softmax(x.float() * 3, dim=-1).to(dtype)
    return [y, torch.randn(m, n, device=DEVICE, dtype=dtype)]


def moved_bytes(op, m, n, dtype):
    """Bytes the op must read and write (per-column and per-row operands
    aside)."""
    matrices = {"softmax_backward": 3, "log_softmax_backward": 3,
                "logsumexp": 1, "cross_entropy": 1,
                "rms_norm_residual": 4}.get(op, 2)
    return matrices * m * n * torch.tensor([], dtype=dtype).element_size()


def ours(kernel, op, args, shared=None):
    """A launcher of `kernel` on args (inputs, then per-column operands,
    then labels, in the kernel's order): the outputs are allocated once, as
    the peers' caching allocator does, or taken from `shared` (a dict the
    kernels of one shape share, so that a sweep of many holds one set).
    Returns the first output (of rows, else per row)."""
    roles = [role for _, role, _ in kernel.runtime.operands]
    inputs = args[:roles.count("input")]
    m, n = inputs[0].shape
    shared = {} if shared is None else shared
    if "rows" not in shared:
        shared["rows"] = [torch.empty_like(inputs[0])
                          for _ in range(roles.count("output"))]
        shared["per_row"] = [torch.empty(m, device=DEVICE,
                                         dtype=torch.float32)
                             for _ in range(roles.count("row_output"))]
    outputs, row_outputs = shared["rows"], shared["per_row"]
    rest = args[len(inputs):]
    pointers = [t.data_ptr() for t in inputs + outputs + rest + row_outputs]
    strides = [t.stride(0) for t in inputs + outputs]
    stream = torch.cuda.current_stream().cuda_stream
    result = (outputs + row_outputs)[0]
    # A chunks kernel's workspace: zeroed once, left zero by each launch
    # (kept alive by the launcher).
    workspace = None
    if kernel.meta.get("chunk_elements", 0):
        workspace = torch.zeros(kernel.runtime.workspace_bytes(m, n),
                                dtype=torch.uint8, device=DEVICE)

    def run():
        kernel.runtime.launch_operands(
            stream, pointers, strides, m, n,
            workspace.data_ptr() if workspace is not None else 0)
        return result
    return run


def max_error(op, args, out, chunk_elements=1 << 26):
    """max |out - reference| / max |reference| of the first output, the
    float64 reference computed a few rows at a time (a float64 copy of 1024
    x 2^20 rows of each operand would not fit beside them)."""
    out = out[0] if isinstance(out, tuple) else out
    m, n = args[0].shape
    step = max(1, chunk_elements // n)
    err, scale = 0.0, 0.0
    for i in range(0, m, step):
        # Rows and per-row labels are cut; per-column operands are whole.
        part = [a[i:i + step] if a.dim() == 2 or not a.is_floating_point()
                else a for a in args]
        ref = eager(op)(*[a.double() if a.is_floating_point() else a
                          for a in part])
        ref = ref[0] if isinstance(ref, tuple) else ref
        err = max(err, (out[i:i + step].double() - ref).abs().max().item())
        scale = max(scale, ref.abs().max().item())
    return err / max(scale, 1e-30)


def sweep(kernel_dir, rounds, row_counts=(4096, 16384)):
    """Times every kernel of KERNEL_DIR (gen_kernels.py --set family-sweep)
    against the others of its (op, dtype, N) and torch.compile of the op,
    taking turns, at each M of `row_counts`; prints GB/s and the fraction of
    the copy of the same bytes."""
    compile_every_shape()
    with open(os.path.join(kernel_dir, "manifest.json")) as f:
        names = json.load(f)
    groups = {}
    for name in names:
        kernel = Kernel(kernel_dir, name)
        meta = kernel.meta
        # The row length the kernel was compiled for, as gen_kernels names
        # it (`_n<N>`; kernels for rows of any length record no max_cols).
        cols = re.search(r"_n(\d+)_", name)
        n = int(cols[1]) if cols else meta["max_cols"]
        key = (bench_op(kernel), meta["input_type"], n)
        groups.setdefault(key, []).append(kernel)
    for (op, dname, n), kernels in groups.items():
        compiled = torch.compile(eager(op), dynamic=False)
        for m in row_counts:
            call_args = make_args(op, m, n, SWEEP_DTYPES[dname])
            nbytes = moved_bytes(op, m, n, SWEEP_DTYPES[dname])
            src = torch.empty(nbytes // 2, dtype=torch.int8, device=DEVICE)
            dst = torch.empty_like(src)
            shared = {}
            runs = {k.name: ours(k, op, call_args, shared) for k in kernels}
            runs["torch.compile"] = lambda: compiled(*call_args)
            runs["copy"] = lambda: dst.copy_(src)
            samples, _ = time_in_rounds(runs, rounds, rep_ms=40)
            gbs = {k: nbytes / statistics.median(v) / 1e6
                   for k, v in samples.items()}
            for name, value in sorted(gbs.items(), key=lambda kv: -kv[1]):
                if name != "copy":
                    print(f"{op:17s} {dname:5s} {m:>5d} x {n:<5d} {name:48s} "
                          f"{value:6.0f} {100 * value / gbs['copy']:5.1f}%")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("kernel_dir")
    parser.add_argument("--json")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--ops", default="rms_norm,rms_norm_residual,"
                        "layer_norm,softmax_backward,logsumexp,cross_entropy")
    parser.add_argument("--other", action="store_true",
                        help="the row lengths of OTHER_SHAPES instead of "
                        "the LLM shapes")
    parser.add_argument("--long", action="store_true",
                        help="long rows (LONG_SHAPES) instead of the LLM "
                        "shapes")
    parser.add_argument("--any", action="store_true",
                        help="the kernels for rows of any length")
    parser.add_argument("--sweep-rows", default="4096,16384",
                        help="the row counts of --sweep")
    parser.add_argument("--sweep", action="store_true",
                        help="time the block shapes of --set family-sweep "
                        "against each other instead")
    args = parser.parse_args()
    if args.sweep:
        return sweep(args.kernel_dir, args.rounds,
                     [int(m) for m in args.sweep_rows.split(",")])
    ceiling = start_run(args.rounds)
    header = (f"{'op':17s} {'dtype':5s} {'M x N':>12s} {'ours GB/s':>9s} "
              f"{'%copy':>6s} {'eager':>7s} {'compile':>7s} {'liger':>7s} "
              f"{'vs best':>7s} {'err':>8s}")
    print("liger: " + ("importable" if liger else
                       f"not importable ({LIGER_MISSING})"))
    print(header)
    rows = []
    for op in args.ops.split(","):
        shapes = (LONG_SHAPES if args.long else
                  OTHER_SHAPES if args.other else SHAPES).get(op, [])
        compiled = torch.compile(eager(op), dynamic=False)
        liger_fn = liger_op(op)
        for dname, dtype in DTYPES.items():
            for m, n in shapes:
                name = (f"{op}_{dname}_auto_kernel0.json" if args.any else
                        f"{op}_{dname}_auto_n{n}_kernel0.json")
                kernel = Kernel(args.kernel_dir, name)
                call_args = make_args(op, m, n, dtype)
                nbytes = moved_bytes(op, m, n, dtype)
                src = torch.empty(nbytes // 2, dtype=torch.int8, device=DEVICE)
                dst = torch.empty_like(src)
                runs = {"ours": ours(kernel, op, call_args),
                        "eager": lambda: eager(op)(*call_args),
                        "compile": lambda: compiled(*call_args),
                        "copy": lambda: dst.copy_(src)}
                if liger_fn:
                    runs["liger"] = lambda: liger_fn(*call_args)
                errors = {k: max_error(op, call_args, runs[k]())
                          for k in runs if k != "copy"}
                samples, failed = time_in_rounds(runs, args.rounds)
                ms = {k: statistics.median(v) for k, v in samples.items()}
                gbs = {k: nbytes / t / 1e6 for k, t in ms.items()}
                best_peer = max(gbs.get(k, 0)
                                for k in ("eager", "compile", "liger"))
                row = {"op": op, "dtype": dname, "m": m, "n": n,
                       "gbs": gbs, "errors": errors, "failed": failed,
                       "copy_fraction": gbs["ours"] / gbs["copy"],
                       "vs_best_peer": gbs["ours"] / best_peer}
                rows.append(row)
                print(f"{op:17s} {dname:5s} {m:>5d} x {n:<5d} "
                      f"{gbs['ours']:9.0f} {100 * row['copy_fraction']:5.1f}% "
                      f"{gbs.get('eager', 0):7.0f} {gbs.get('compile', 0):7.0f} "
                      f"{gbs.get('liger', 0):7.0f} "
                      f"{row['vs_best_peer']:6.2f}x "
                      f"{errors['ours']:8.1e}")
    ratios = [r["vs_best_peer"] for r in rows]
    geo = statistics.geometric_mean(ratios)
    print(f"geomean vs best peer {geo:.2f}x, min {min(ratios):.2f}x; "
          f"copy fraction min {min(r['copy_fraction'] for r in rows):.2f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": torch.cuda.get_device_name(),
                       "copy_gbs": ceiling,
                       "liger": LIGER_MISSING or "importable",
                       "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
