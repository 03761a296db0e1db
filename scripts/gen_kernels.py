#!/usr/bin/env python3
"""Compiles the representative set of kernel variants to PTX + JSON.

Each variant is a small .mlir function (softmax or log_softmax over a dynamic
2-D memref of one element type) compiled with softmax-opt's rowred-to-ptx
pipeline. The GPU suite and the ptxas checks run over this set.

usage: gen_kernels.py SOFTMAX_OPT OUTPUT_DIR [--quick]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

# (op, dtype, strategy, pipeline options)
VARIANTS = [
    ("softmax", "f32", "fused", "block-size=32"),
    ("softmax", "f32", "fused", "block-size=256"),
    ("softmax", "f32", "fused", "block-size=1024"),
    ("softmax", "f32", "fused", "block-size=4096"),
    ("softmax", "f32", "fused", "block-size=16384"),
    ("softmax", "f32", "fused", "block-size=32768"),
    ("softmax", "f32", "online", ""),
    ("softmax", "f32", "online", "reverse-second-pass=1"),
    ("softmax", "f16", "fused", "block-size=1024"),
    ("softmax", "f16", "online", ""),
    ("softmax", "bf16", "fused", "block-size=1024"),
    ("softmax", "bf16", "fused", "block-size=8192"),
    ("softmax", "bf16", "online", ""),
    ("log_softmax", "f32", "fused", "block-size=1024"),
    ("log_softmax", "f32", "online", ""),
    ("log_softmax", "bf16", "fused", "block-size=4096"),
]


def variant_name(op, dtype, strategy, options):
    name = f"{op}_{dtype}_{strategy}"
    for opt in filter(None, options.split()):
        key, value = opt.split("=")
        name += "_" + {"block-size": "b", "reverse-second-pass": "rev"}.get(
            key, key.replace("-", "")) + value
    return name


def mlir_source(func, op, dtype):
    t = f"memref<?x?x{dtype}>"
    return (f"func.func @{func}(%x: {t}, %y: {t}) {{\n"
            f"  rowred.{op} dimension(1) ins(%x : {t}) outs(%y : {t})\n"
            f"  return\n}}\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("softmax_opt")
    parser.add_argument("output_dir")
    args = parser.parse_args()
    os.makedirs(args.output_dir, exist_ok=True)
    manifest = []
    with tempfile.TemporaryDirectory() as tmp:
        for op, dtype, strategy, options in VARIANTS:
            name = variant_name(op, dtype, strategy, options)
            src = os.path.join(tmp, name + ".mlir")
            with open(src, "w") as f:
                f.write(mlir_source(name, op, dtype))
            pipeline = (f"strategy={strategy} {options} "
                        f"output-dir={args.output_dir}")
            cmd = [args.softmax_opt, src, f"--rowred-to-ptx={pipeline}",
                   "-o", os.devnull]
            result = subprocess.run(cmd, capture_output=True, text=True)
            if result.returncode != 0:
                sys.stderr.write(f"{name}: softmax-opt failed:\n"
                                 f"{result.stderr}")
                return 1
            manifest.append(name + "_kernel0.json")
    with open(os.path.join(args.output_dir, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=2)
    print(f"wrote {len(manifest)} kernels to {args.output_dir}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
