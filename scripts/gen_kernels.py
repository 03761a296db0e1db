#!/usr/bin/env python3
"""Compiles the representative set of kernel variants to PTX + JSON.

Each variant is a small .mlir function (softmax or log_softmax over a dynamic
2-D memref of one element type) compiled with softmax-opt's rowred-to-ptx
pipeline. The GPU suite and the ptxas checks run over this set.

usage: gen_kernels.py SOFTMAX_OPT OUTPUT_DIR [--set suite|bench|sweep] [--match RE]

`suite` is the correctness set below; `bench` compiles one softmax kernel per
benchmark shape (cols=N, strategy=auto) for f32 and bf16.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

# (op, dtype, strategy, pipeline options)
VARIANTS = [
    ("softmax", "f32", "fused", "block-size=32"),
    ("softmax", "f32", "fused", "block-size=256"),
    ("softmax", "f32", "fused", "block-size=1024"),
    ("softmax", "f32", "fused", "block-size=4096"),
    # 128 threads x 64: auto's f32 block of 8192.
    ("softmax", "f32", "fused", "block-size=8192"),
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
    # The re-reading scalar fallback (not a default yet: verify, then time).
    ("softmax", "f32", "fused", "block-size=16384 num-warps=16 "
     "scalar-fallback=reread"),
    ("softmax", "bf16", "fused", "block-size=16384 num-warps=8 "
     "scalar-fallback=reread max-elements-per-thread=64"),
    ("log_softmax", "f16", "fused", "block-size=4096 scalar-fallback=reread"),
    # Several rows per block, each by a group of at most a warp.
    ("softmax", "f32", "fused", "block-size=256 rows-per-block=8"),
    ("softmax", "bf16", "fused", "block-size=1024 rows-per-block=4 "
     "num-warps=4"),
    ("log_softmax", "f32", "fused", "block-size=128 rows-per-block=16 "
     "num-warps=4"),
    ("softmax", "f16", "fused", "block-size=32 rows-per-block=32 num-warps=1"),
    # A warp per row loading its next row ahead (the 16-bit default at 512;
    # f32 on eight rows per block), and a block per row of 1024 (no longer
    # the default there).
    ("softmax", "bf16", "fused", "block-size=512"),
    ("log_softmax", "f32", "fused", "block-size=256 rows-per-block=8 "
     "prefetch=registers"),
    ("softmax", "f32", "fused", "block-size=1024 num-warps=2"),
    # Online over a cluster with each block's share staged in shared memory.
    ("softmax", "bf16", "online", "cols=262144 cluster-size=8 prefetch=on"),
    ("log_softmax", "f32", "online", "cols=131072 cluster-size=4 "
     "prefetch=on"),
    # Rows split over thread-block clusters.
    ("softmax", "f32", "cluster", "block-size=65536"),
    ("softmax", "f32", "cluster", "block-size=65536 cluster-size=2 "
     "scalar-fallback=registers"),
    ("softmax", "bf16", "cluster", "block-size=131072"),
    # 16-bit slices without the pair reduction and the registers ahead that
    # auto gives them.
    ("softmax", "bf16", "cluster", "block-size=65536 pair-reduce=0"),
    ("softmax", "f16", "cluster", "block-size=262144"),
    # auto's slices of 32768 (3/4: 24576) for 16-bit rows beyond 131072 that
    # fill 7/8 of their block: 8 x 1024 threads, 16 x 768, 16 x 1024.
    ("softmax", "f16", "cluster", "cols=262144"),
    ("softmax", "bf16", "cluster", "cols=393216"),
    ("softmax", "bf16", "cluster", "cols=524288"),
    ("log_softmax", "f32", "cluster", "block-size=32768 cluster-size=2"),
    # Blocks and slices of three times a power of two (3, 6, 12 or 24 warps).
    ("softmax", "f32", "fused", "block-size=12288"),
    ("log_softmax", "bf16", "fused", "block-size=6144"),
    ("softmax", "f16", "fused", "block-size=3072 num-warps=3 "
     "scalar-fallback=registers"),
    ("softmax", "bf16", "cluster", "block-size=49152"),
    ("softmax", "f32", "cluster", "block-size=196608"),
    # Online kernels whose rows are split over a cluster.
    ("softmax", "f32", "online", "cluster-size=4"),
    ("log_softmax", "bf16", "online", "cluster-size=8"),
    # Clusters of 16: auto's choice for rows beyond 1 MiB (bf16 rows there
    # on 1024 threads).
    ("softmax", "f32", "online", "cluster-size=16"),
    ("softmax", "bf16", "online", "cluster-size=16"),
    # The online kernel without its tiles loaded ahead (prefetch=registers
    # is its default).
    ("softmax", "f32", "online", "prefetch=off"),
    ("log_softmax", "bf16", "online", "cluster-size=8 prefetch=off"),
    # Tiles of each block's share kept in shared memory between the passes
    # (online-keep, opt-in), without and with the tiles loaded ahead.
    ("softmax", "bf16", "online", "cluster-size=8 online-keep=64 "
     "prefetch=off"),
    ("log_softmax", "f32", "online", "online-keep=128"),
    # Kept tiles copied in during the previous row's pass 2 (keep-ahead,
    # auto's for f32 and f16 rows over clusters of 16): over clusters of 4
    # (shares of up to four f32 tiles, two kept), f16 with three of eight
    # kept, and bf16 on one 512-thread block per row (two of eight kept).
    ("softmax", "f32", "online", "cols=262144 cluster-size=4 online-keep=128 "
     "keep-ahead=on"),
    ("log_softmax", "f16", "online", "cols=262144 cluster-size=4 "
     "online-keep=48 keep-ahead=on"),
    ("softmax", "bf16", "online", "cols=131072 num-warps=16 online-keep=64 "
     "keep-ahead=on"),
    # The same with one bulk copy per row into two buffers by turns
    # (keep-ahead=bulk): over clusters of 4 (one of four f32 tiles kept),
    # f16 over 4 (three of eight), bf16 on one block per row, and one warp
    # per block (no block reduction barrier of its own).
    ("softmax", "f32", "online", "cols=262144 cluster-size=4 online-keep=64 "
     "keep-ahead=bulk"),
    ("log_softmax", "f16", "online", "cols=262144 cluster-size=4 "
     "online-keep=48 keep-ahead=bulk"),
    ("softmax", "bf16", "online", "cols=131072 cluster-size=1 num-warps=16 "
     "online-keep=64 keep-ahead=bulk"),
    ("softmax", "f32", "online", "cols=16384 cluster-size=1 num-warps=1 "
     "online-keep=8 keep-ahead=bulk"),
    # Kept tiles without the tiles loaded ahead.
    ("log_softmax", "f32", "online", "online-keep=64 prefetch=off"),
    # Clusters of 16 blocks (non-portable: the launcher opts in).
    ("softmax", "f32", "cluster", "block-size=262144 cluster-size=16"),
    ("log_softmax", "bf16", "cluster", "block-size=262144 cluster-size=16"),
    # The next row staged in shared memory with cp.async (dynamic shared
    # memory: 4 KiB to 128 KiB per block, beyond 48 KiB opted in).
    ("softmax", "f32", "fused", "block-size=1024 prefetch=on"),
    ("softmax", "bf16", "fused", "block-size=16384 prefetch=on"),
    ("log_softmax", "f32", "fused", "block-size=12288 prefetch=on"),
    ("softmax", "f16", "fused", "block-size=4096 prefetch=on "
     "scalar-fallback=registers"),
    ("softmax", "f32", "fused", "block-size=32768 prefetch=on"),
    ("softmax", "bf16", "cluster", "block-size=131072 prefetch=on"),
    ("log_softmax", "f32", "cluster", "block-size=196608 prefetch=on"),
    # The next row loaded ahead into registers (auto's for fused 16-bit
    # blocks of 2048-4096).
    ("softmax", "f32", "fused", "block-size=8192 prefetch=registers"),
    ("log_softmax", "bf16", "fused", "block-size=2048 prefetch=registers"),
    ("softmax", "f16", "fused", "block-size=4096 prefetch=registers "
     "pair-reduce=1"),
    # One (max, sum) pair exchange per row (fused and cluster).
    ("softmax", "f32", "fused", "block-size=1024 pair-reduce=1"),
    ("softmax", "bf16", "fused", "block-size=16384 pair-reduce=1 prefetch=on"),
    ("log_softmax", "f32", "fused", "block-size=12288 pair-reduce=1"),
    ("softmax", "f16", "fused", "block-size=256 rows-per-block=4 "
     "pair-reduce=1"),
    ("softmax", "f32", "cluster", "block-size=65536 pair-reduce=1 "
     "prefetch=on"),
    ("log_softmax", "bf16", "cluster", "block-size=131072 pair-reduce=1"),
    ("softmax", "f32", "cluster", "block-size=49152 pair-reduce=1 "
     "scalar-fallback=registers"),
    # 16-bit rows that auto stages whole on sm_90: the online kernel on one
    # block per row, 512 threads from 16385 columns (seven, four and three
    # tiles of 8192; 112 KiB at 57344), 128 threads up to 12288 (six tiles of
    # 2048).
    ("softmax", "bf16", "auto", "cols=57344"),
    ("softmax", "bf16", "auto", "cols=32768"),
    ("softmax", "f16", "auto", "cols=24576"),
    ("log_softmax", "bf16", "auto", "cols=12288"),
    # auto's log-softmax chunks for bf16 rows, which get eight blocks per SM
    # (64 registers) where softmax's get nine: at nine they spill 4 bytes.
    ("log_softmax", "bf16", "auto", "cols=131072"),
    # Rows cut into chunks taken by ticket: the default layouts (f32 128 x
    # (64 + 64 staged), 16-bit 128 x (32 + 96)), a small chunk with many per
    # row and a map other than softmax, one warp with no stage, and scalar
    # accesses only.
    ("softmax", "f32", "chunks", ""),
    ("softmax", "bf16", "chunks", ""),
    ("log_softmax", "f32", "chunks", "block-size=1024 chunk-stage=1024"),
    ("softmax", "f16", "chunks", "num-warps=1 block-size=256 chunk-stage=0"),
    ("log_softmax", "bf16", "chunks", "vector-width=1 block-size=2048 "
     "chunk-stage=2048"),
]


BENCH_NS = [256, 512, 781, 1024, 2048, 4096, 8192, 12288, 16384, 32768,
            65536, 131072, 262144, 1048576]


def bench_variants():
    for dtype in ("f32", "bf16"):
        for n in BENCH_NS:
            yield ("softmax", dtype, "auto", f"cols={n}")


SWEEP_NS = [256, 512, 781, 1024, 2048, 4096, 8192, 12288, 16384, 32768]


def sweep_variants():
    """One fused softmax per (dtype, N, warps) with 4..64 elements/thread."""
    for dtype in ("f32", "bf16"):
        for n in SWEEP_NS:
            block = 1 << (n - 1).bit_length()
            for warps in (1, 2, 4, 8, 16, 32):
                per_thread = block // (warps * 32)
                if 4 <= per_thread <= 64:
                    yield ("softmax", dtype, "fused",
                           f"cols={n} num-warps={warps} "
                           "max-elements-per-thread=64")
    # Fused with the re-reading scalar fallback, which leaves the vector path
    # more registers.
    for dtype, warps_list in (("f32", (8, 16)), ("bf16", (4, 8, 16))):
        for n in (8192, 12288, 16384):
            for warps in warps_list:
                block = 1 << (n - 1).bit_length()
                if block // (warps * 32) > 64:
                    continue
                yield ("softmax", dtype, "fused",
                       f"cols={n} num-warps={warps} scalar-fallback=reread "
                       "max-elements-per-thread=64")
    # Several rows per block for short rows: T threads per row (a warp or
    # less), blocks of 128 or 256 threads.
    for dtype in ("f32", "bf16"):
        for n in (256, 512, 781, 1024):
            block = 1 << (n - 1).bit_length()
            for per_row in (8, 16, 32):
                if block // per_row > 32:
                    continue
                for threads in (128, 256):
                    yield ("softmax", dtype, "fused",
                           f"cols={n} num-warps={threads // 32} "
                           f"rows-per-block={threads // per_row}")
    # Clusters: 2 to 16 blocks per row, slices of 8192 to 32768 elements.
    for dtype in ("f32", "bf16"):
        for n in (32768, 65536, 131072, 262144):
            for cluster in (2, 4, 8, 16):
                if not 8192 <= n // cluster <= 32768:
                    continue
                yield ("softmax", dtype, "cluster",
                       f"cols={n} cluster-size={cluster}")
    # Blocks (fused) and cluster slices of three quarters of a power of two
    # against the power-of-two ones, for rows that fit both.
    for dtype in ("f32", "bf16"):
        for n, strategy in ((6144, "fused"), (12288, "fused"),
                            (24576, "cluster"), (49152, "cluster")):
            block = 1 << (n - 1).bit_length()
            yield ("softmax", dtype, strategy, f"cols={n}")
            yield ("softmax", dtype, strategy, f"cols={n} block-size={block}")
    # The online default, forwards and with the second pass reversed (seed
    # 004's cache argument), for the rows where the last tiles may still be
    # in L2.
    for dtype in ("f32", "bf16"):
        for n in (32768, 65536, 262144, 1048576):
            for rev in (0, 1):
                yield ("softmax", dtype, "online",
                       f"cols={n} reverse-second-pass={rev}")
    # Online over a cluster: each block walks 1/C of the row, so that its
    # reversed second pass finds more of its share still in L2.
    for dtype in ("f32", "bf16"):
        for n in (131072, 262144, 1048576):
            for cluster in (4, 8, 16):
                yield ("softmax", dtype, "online",
                       f"cols={n} cluster-size={cluster}")
    # The next row staged in shared memory (cp.async) while the current one
    # is reduced, and one (max, sum) pair exchange per row instead of two,
    # against the same kernel without them.
    for dtype in ("f32", "bf16"):
        for n in (1024, 2048, 4096, 8192, 12288, 16384, 32768, 65536, 131072,
                  262144):
            if dtype == "bf16" and n > 131072:
                continue
            strategy = "fused" if n <= 16384 else "cluster"
            for prefetch in ("off", "on"):
                for pair in (0, 1):
                    yield ("softmax", dtype, strategy,
                           f"cols={n} prefetch={prefetch} pair-reduce={pair}")
    # A whole f32 row of 32768 in one 1024-thread block with the next row
    # staged (128 KiB), against the cluster of two 512-thread blocks.
    for prefetch in ("off", "on"):
        yield ("softmax", "f32", "fused",
               f"cols=32768 num-warps=32 prefetch={prefetch}")
    # The same for 16-bit rows, and clusters of 1024-thread slices of 32768
    # elements with the stage against the default 512-thread slices.
    for prefetch in ("off", "on"):
        yield ("softmax", "bf16", "fused",
               f"cols=32768 num-warps=32 prefetch={prefetch}")
        for dtype in ("f32", "bf16"):
            for n, cluster in ((65536, 2), (131072, 4)):
                yield ("softmax", dtype, "cluster",
                       f"cols={n} cluster-size={cluster} prefetch={prefetch}")
    # Fused rows of 8192-16384 on one block of 768-1024 threads with the
    # stage, the shape that reaches 92% of copy at 32768, against auto's.
    for dtype in ("f32", "bf16"):
        for n, warps in ((8192, 32), (12288, 24), (16384, 32)):
            yield ("softmax", dtype, "fused",
                   f"cols={n} num-warps={warps} prefetch=on")
    # The next row loaded ahead into registers (prefetch=registers) against
    # the stage and no prefetch, fused and cluster.
    for dtype in ("f32", "bf16"):
        for n in (2048, 4096, 8192, 12288, 16384, 65536):
            strategy = "fused" if n <= 16384 else "cluster"
            yield ("softmax", dtype, strategy, f"cols={n} prefetch=registers")
        # Half the elements per thread, for the registers of the second row.
        for n, warps in ((2048, 4), (4096, 8), (12288, 24), (16384, 32)):
            yield ("softmax", dtype, "fused",
                   f"cols={n} num-warps={warps} prefetch=registers")
            yield ("softmax", dtype, "fused",
                   f"cols={n} num-warps={warps} prefetch=off")
    # Short rows: a warp per row (or less), with and without the next row
    # loaded ahead into registers, against auto and a two-warp block per row.
    for dtype in ("f32", "bf16"):
        for n in (256, 512, 781, 1024):
            yield ("softmax", dtype, "auto", f"cols={n}")
            if n > 512:
                yield ("softmax", dtype, "fused", f"cols={n} num-warps=2")
            for rows in (4, 8):
                for prefetch in ("off", "registers"):
                    yield ("softmax", dtype, "fused",
                           f"cols={n} num-warps={rows} rows-per-block={rows} "
                           f"prefetch={prefetch}")
    # Online over a cluster with each block's share staged in shared memory
    # (one DRAM read), against auto's kernel for the same row.
    for dtype, n, clusters in (("bf16", 1048576, (16,)),
                               ("bf16", 262144, (4, 8, 16)),
                               ("bf16", 131072, (4, 8)),
                               ("bf16", 65536, (2, 4)),
                               ("f32", 262144, (8, 16)),
                               ("f32", 131072, (4, 8)),
                               ("f32", 65536, (2, 4))):
        yield ("softmax", dtype, "auto", f"cols={n}")
        for cluster in clusters:
            yield ("softmax", dtype, "online",
                   f"cols={n} cluster-size={cluster} prefetch=on")
    # Rows of three quarters of 32768: auto's fused 768-thread block with the
    # stage against two 384-thread cluster slices.
    for dtype in ("f32", "bf16"):
        yield ("softmax", dtype, "auto", "cols=24576")
        yield ("softmax", dtype, "cluster", "cols=24576")
    for dtype in ("f32", "bf16"):
        for n in (65536, 262144):
            for warps in (4, 8, 16, 32):
                for tile_vectors in (2, 4, 8):
                    vec = 4 if dtype == "f32" else 8
                    yield ("softmax", dtype, "online",
                           f"cols={n} num-warps={warps} "
                           f"block-size={warps * 32 * vec * tile_vectors} "
                           "max-elements-per-thread=64")


def variant_name(op, dtype, strategy, options):
    name = f"{op}_{dtype}_{strategy}"
    for opt in filter(None, options.split()):
        key, value = opt.split("=")
        name += "_" + {"block-size": "b", "reverse-second-pass": "rev", "cols": "n",
         "num-warps": "w", "max-elements-per-thread": "e",
         "scalar-fallback": "fb", "rows-per-block": "r",
         "cluster-size": "c", "prefetch": "pf", "pair-reduce": "pr"}.get(
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
    parser.add_argument("--set", choices=["suite", "bench", "sweep"],
                        default="suite")
    parser.add_argument("--match", default="",
                        help="only the variants whose name matches this "
                        "regular expression")
    args = parser.parse_args()
    variants = {"suite": VARIANTS, "bench": list(bench_variants()),
                "sweep": list(sweep_variants())}[args.set]
    os.makedirs(args.output_dir, exist_ok=True)
    manifest = []
    with tempfile.TemporaryDirectory() as tmp:
        for op, dtype, strategy, options in variants:
            name = variant_name(op, dtype, strategy, options)
            if not re.search(args.match, name):
                continue
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
