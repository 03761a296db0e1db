#!/usr/bin/env python3
"""Compiles the kernels of several plans of the same ops into one directory
each, with the same file names, for decode_ab.py and backward_ab.py (run
here, where the compiler is; carry OUT_DIR to the GPU machine).

`decode`: rms_norm and layer_norm (eps 1e-5) and softmax, f32 and bf16, at
2048, 4096 and 8192 columns, as auto plans them (`auto/`) and as a fused
block of 16 warps (`fw16/`) or a cluster of 2, 4 or 8 blocks (`c2/`, `c4/`,
`c8/`; `c4w8/` and `c8w4/` with 8 and 4 warps a block): the plan table's
few_rows for decode-size norms came from these.
`vocab`: logsumexp and cross-entropy (rows only reduced), f32 and bf16,
at 32000, 32001, 50257, 128256 and 151936 columns, as auto plans them and
as clusters of 2-16 blocks (`c2/` ... `c16/`) or chunks (`chunks/`), for
decode_ab.py at 1-64 rows.
`backward`: rms_norm_backward, rms_norm_residual_backward and
layer_norm_backward (--ops: some of them), f32 and bf16, at
COLS (default 2048,4096,5120,8192) as auto plans them (`auto/`) and on 8,
16, 32 or 64 elements per thread (`e8/` ... `e64/`, each the warps that
give that many of the auto block's elements; shapes the registers refuse
are left out): the plan table's operand_shapes for the norms' backwards
came from these.

With --variant LABEL=REQUEST (repeated), every set compiles those plan
requests (fields of #rowred.plan_request) beside auto instead of its own
(`backward`: the clusters of slices of the rows of 12288-16384 came from
`c4w8="strategy = cluster, cluster = 4, warps = 8"` and the like); --ops
limits them to some of their ops. With --table LABEL=PATH (repeated), auto
plans them by the plan table at PATH into LABEL/ (the A/B of an edit of
lib/Conversion/RowRedToGPU/PlanTable.json, few_rows' ladders included,
which no request states).

usage: gen_plan_variants.py SOFTMAX_OPT OUT_DIR {decode,vocab,backward}
                            [--cols 2048,4096,...] [--ops OP,...]
                            [--variant LABEL=REQUEST ...]
                            [--table LABEL=PATH ...]
                            [--dtypes f32,bf16,f16]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "python"))
from rowred import packs  # noqa: E402

DECODE = {"auto": "", "fw16": "strategy = fused, warps = 16",
          "c2": "strategy = cluster, cluster = 2",
          "c4": "strategy = cluster, cluster = 4",
          "c8": "strategy = cluster, cluster = 8",
          "c4w8": "strategy = cluster, cluster = 4, warps = 8",
          "c8w4": "strategy = cluster, cluster = 8, warps = 4"}
VOCAB = {"auto": "", "c2": "strategy = cluster, cluster = 2",
         "c4": "strategy = cluster, cluster = 4",
         "c8": "strategy = cluster, cluster = 8",
         "c16": "strategy = cluster, cluster = 16",
         "chunks": "strategy = chunks"}


def compile_one(softmax_opt, out, name, op, dtype, cols, eps, request,
                table=None):
    """Compiles `op` for rows of `cols` with the plan request `request`
    (fields of #rowred.plan_request, or "" for auto), planned by the plan
    table at `table` (None: the compiler's own), into `out`; returns
    softmax-opt's error, or None."""
    src = packs._mlir_source(name, op, dtype, eps)
    if request:
        src = src.replace(
            "\n  return",
            f" {{rowred.plan_request = #rowred.plan_request<{request}>}}"
            "\n  return", 1)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, name + ".mlir")
        with open(path, "w") as f:
            f.write(src)
        result = subprocess.run(
            [softmax_opt, path,
             f"--rowred-to-ptx=cols={cols} chip=sm_90 output-dir={out}"
             + (f" plan-table={packs._quoted(table, '--table')}"
                if table else ""),
             "-o", os.devnull], capture_output=True, text=True)
    if not result.returncode:
        return None
    errors = [line for line in result.stderr.splitlines() if "error" in line]
    return (errors or result.stderr.strip().splitlines() or ["failed"])[0]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("softmax_opt")
    parser.add_argument("out_dir")
    parser.add_argument("set", choices=["decode", "vocab", "backward"])
    parser.add_argument("--cols", default=None)
    parser.add_argument("--ops", default=None)
    parser.add_argument("--variant", action="append", default=[])
    parser.add_argument("--table", action="append", default=[])
    parser.add_argument("--dtypes", default="f32,bf16")
    args = parser.parse_args()
    dtypes = args.dtypes.split(",")
    # LABEL -> (plan request, plan table) of --variant and --table.
    asked = {}
    for spec in args.variant:
        label, _, request = spec.partition("=")
        asked[label] = (request, None)
    for spec in args.table:
        label, _, path = spec.partition("=")
        asked[label] = ("", os.path.abspath(path))
    if args.set in ("decode", "vocab"):
        decode = args.set == "decode"
        cols = [int(c) for c in (args.cols or (
            "2048,4096,8192" if decode else
            "32000,32001,50257,128256,151936")).split(",")]
        ops = (args.ops.split(",") if args.ops else
               ("rms_norm", "layer_norm", "softmax") if decode
               else ("logsumexp", "cross_entropy"))
        variants = {label: (request, None) for label, request in
                    (DECODE if decode else VOCAB).items()}
        if asked:
            variants = {"auto": ("", None), **asked}
        for label, (request, table) in variants.items():
            out = os.path.join(args.out_dir, label)
            os.makedirs(out, exist_ok=True)
            for op in ops:
                for dtype in dtypes:
                    for n in cols:
                        error = compile_one(
                            args.softmax_opt, out, f"{op}_{dtype}_n{n}", op,
                            dtype, n, 1e-5 if "norm" in op else None,
                            request, table)
                        if error:
                            print(f"{label} {op} {dtype} {n}: {error}")
        return
    cols = [int(c) for c in (args.cols or "2048,4096,5120,8192").split(",")]
    auto = os.path.join(args.out_dir, "auto")
    os.makedirs(auto, exist_ok=True)
    backward_ops = args.ops.split(",") if args.ops else [
        "rms_norm_backward", "rms_norm_residual_backward",
        "layer_norm_backward"]
    shapes = [(op, dtype, n) for op in backward_ops
              for dtype in dtypes for n in cols]
    for op, dtype, n in shapes:
        error = compile_one(args.softmax_opt, auto, f"{op}_{dtype}_n{n}", op,
                            dtype, n, None, "")
        if error:
            print(f"auto {op} {dtype} {n}: {error}")
    # Requests of --variant (LABEL=FIELDS, e.g. c4w8="strategy = cluster,
    # cluster = 4, warps = 8") and tables of --table instead of the
    # elements per thread.
    for label, (request, table) in asked.items():
        out = os.path.join(args.out_dir, label)
        os.makedirs(out, exist_ok=True)
        for op, dtype, n in shapes:
            error = compile_one(args.softmax_opt, out, f"{op}_{dtype}_n{n}",
                                op, dtype, n, None, request, table)
            if error:
                print(f"{label} {op} {dtype} {n}: {error}")
    for per_thread in () if asked else (8, 16, 32, 64):
        out = os.path.join(args.out_dir, f"e{per_thread}")
        os.makedirs(out, exist_ok=True)
        for op, dtype, n in shapes:
            name = f"{op}_{dtype}_n{n}"
            meta_path = os.path.join(auto, name + "_kernel0.json")
            if not os.path.exists(meta_path):
                continue
            with open(meta_path) as f:
                block = json.load(f)["block_elements"]
            warps = block // (per_thread * 32)
            if not 1 <= warps <= 32:
                continue
            error = compile_one(args.softmax_opt, out, name, op, dtype, n,
                                None, f"warps = {warps}")
            if error:
                print(f"e{per_thread} {name}: {error}")


if __name__ == "__main__":
    main()
