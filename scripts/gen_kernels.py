#!/usr/bin/env python3
"""Compiles the representative set of kernel variants to PTX + JSON.

Each variant is a small .mlir function (a rowred op over dynamic memrefs
of one element type, with a #rowred.plan_request of the variant's
fields) compiled with softmax-opt's rowred-to-ptx pipeline. The GPU suite and
the ptxas checks run over this set.

usage: gen_kernels.py SOFTMAX_OPT OUTPUT_DIR
                     [--set suite|family|bench|family-bench|sweep|family-sweep|
                            census]
                     [--match RE] [--chip sm_XX] [--ptxas PATH|none]

`suite` is the correctness set of softmax kernels below, `family` that of
the other ops; `bench` compiles one softmax kernel per benchmark shape
(cols=N, strategy=auto) for f32 and bf16, `family-bench` one kernel per
shape of bench/family.py, `family-sweep` the fused block shapes of those
(bench/family.py --sweep times them). `census` is auto's kernel of every
op and element type at the row lengths where its plans change (and for
rows of any length): with --chip and `ptxas -v`, the spill census of
docs/kernels.md.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

# (op, dtype, strategy, spec): spec is `cols=N` (the pipeline's row length)
# and fields of the #rowred.plan_request, `field=value` with no spaces.
VARIANTS = [
    ("softmax", "f32", "fused", "block=32"),
    ("softmax", "f32", "fused", "block=256"),
    ("softmax", "f32", "fused", "block=1024"),
    ("softmax", "f32", "fused", "block=4096"),
    # 128 threads x 64: auto's f32 block of 8192.
    ("softmax", "f32", "fused", "block=8192"),
    ("softmax", "f32", "fused", "block=16384"),
    ("softmax", "f32", "fused", "block=32768"),
    ("softmax", "f32", "online", ""),
    ("softmax", "f32", "online", "reverse_second_pass=true"),
    ("softmax", "f16", "fused", "block=1024"),
    ("softmax", "f16", "online", ""),
    ("softmax", "bf16", "fused", "block=1024"),
    ("softmax", "bf16", "fused", "block=8192"),
    ("softmax", "bf16", "online", ""),
    ("log_softmax", "f32", "fused", "block=1024"),
    ("log_softmax", "f32", "online", ""),
    ("log_softmax", "bf16", "fused", "block=4096"),
    # The re-reading scalar fallback (not a default yet: verify, then time).
    ("softmax", "f32", "fused", "block=16384 warps=16 "
     "reread=true"),
    ("softmax", "bf16", "fused", "block=16384 warps=8 "
     "reread=true"),
    ("log_softmax", "f16", "fused", "block=4096 reread=true"),
    # Several rows per block, each by a group of at most a warp.
    ("softmax", "f32", "fused", "block=256 rows_per_block=8"),
    ("softmax", "bf16", "fused", "block=1024 rows_per_block=4 "
     "warps=4"),
    ("log_softmax", "f32", "fused", "block=128 rows_per_block=16 "
     "warps=4"),
    ("softmax", "f16", "fused", "block=32 rows_per_block=32 warps=1"),
    # A warp per row loading its next row ahead (the 16-bit default at 512;
    # f32 on eight rows per block), and a block per row of 1024 (no longer
    # the default there).
    ("softmax", "bf16", "fused", "block=512"),
    ("log_softmax", "f32", "fused", "block=256 rows_per_block=8 "
     "prefetch=registers"),
    ("softmax", "f32", "fused", "block=1024 warps=2"),
    # Online over a cluster with each block's share staged in shared memory.
    ("softmax", "bf16", "online", "cols=262144 cluster=8 prefetch=stage"),
    ("log_softmax", "f32", "online", "cols=131072 cluster=4 "
     "prefetch=stage"),
    # Rows split over thread-block clusters.
    ("softmax", "f32", "cluster", "block=65536"),
    ("softmax", "f32", "cluster", "block=65536 cluster=2 "
     "reread=false"),
    ("softmax", "bf16", "cluster", "block=131072"),
    # 16-bit slices without the pair reduction and the registers ahead that
    # auto gives them.
    ("softmax", "bf16", "cluster", "block=65536 pair_reduce=false"),
    ("softmax", "f16", "cluster", "block=262144"),
    # auto's slices of 32768 (3/4: 24576) for 16-bit rows beyond 131072 that
    # fill 7/8 of their block: 8 x 1024 threads, 16 x 768, 16 x 1024.
    ("softmax", "f16", "cluster", "cols=262144"),
    ("softmax", "bf16", "cluster", "cols=393216"),
    ("softmax", "bf16", "cluster", "cols=524288"),
    ("log_softmax", "f32", "cluster", "block=32768 cluster=2"),
    # Blocks and slices of three times a power of two (3, 6, 12 or 24 warps).
    ("softmax", "f32", "fused", "block=12288"),
    ("log_softmax", "bf16", "fused", "block=6144"),
    ("softmax", "f16", "fused", "block=3072 warps=3 "
     "reread=false"),
    ("softmax", "bf16", "cluster", "block=49152"),
    ("softmax", "f32", "cluster", "block=196608"),
    # Online kernels whose rows are split over a cluster.
    ("softmax", "f32", "online", "cluster=4"),
    ("log_softmax", "bf16", "online", "cluster=8"),
    # Clusters of 16: auto's choice for rows beyond 1 MiB (bf16 rows there
    # on 1024 threads).
    ("softmax", "f32", "online", "cluster=16"),
    ("softmax", "bf16", "online", "cluster=16"),
    # The online kernel without its tiles loaded ahead (prefetch=registers
    # is its default).
    ("softmax", "f32", "online", "prefetch=none"),
    ("log_softmax", "bf16", "online", "cluster=8 prefetch=none"),
    # Tiles of each block's share kept in shared memory between the passes
    # (kept_elements, opt-in), without and with the tiles loaded ahead.
    ("softmax", "bf16", "online", "cluster=8 kept_elements=32768 "
     "prefetch=none"),
    ("log_softmax", "f32", "online", "kept_elements=32768"),
    # Kept tiles copied in during the previous row's pass 2 (keep_ahead,
    # auto's for f32 and f16 rows over clusters of 16): over clusters of 4
    # (shares of up to four f32 tiles, two kept), f16 with three of eight
    # kept, and bf16 on one 512-thread block per row (two of eight kept).
    ("softmax", "f32", "online", "cols=262144 cluster=4 kept_elements=32768 "
     "keep_ahead=tiles"),
    ("log_softmax", "f16", "online", "cols=262144 cluster=4 "
     "kept_elements=24576 keep_ahead=tiles"),
    ("softmax", "bf16", "online", "cols=131072 warps=16 kept_elements=32768 "
     "keep_ahead=tiles"),
    # The same with one bulk copy per row into two buffers by turns
    # (keep_ahead=bulk): over clusters of 4 (one of four f32 tiles kept),
    # f16 over 4 (three of eight), bf16 on one block per row, and one warp
    # per block (no block reduction barrier of its own).
    ("softmax", "f32", "online", "cols=262144 cluster=4 kept_elements=16384 "
     "keep_ahead=bulk"),
    ("log_softmax", "f16", "online", "cols=262144 cluster=4 "
     "kept_elements=24576 keep_ahead=bulk"),
    ("softmax", "bf16", "online", "cols=131072 cluster=1 warps=16 "
     "kept_elements=32768 keep_ahead=bulk"),
    ("softmax", "f32", "online", "cols=16384 cluster=1 warps=1 "
     "kept_elements=2048 keep_ahead=bulk"),
    # Kept tiles without the tiles loaded ahead.
    ("log_softmax", "f32", "online", "kept_elements=16384 prefetch=none"),
    # Clusters of 16 blocks (non-portable: the launcher opts in).
    ("softmax", "f32", "cluster", "block=262144 cluster=16"),
    ("log_softmax", "bf16", "cluster", "block=262144 cluster=16"),
    # The next row staged in shared memory with cp.async (dynamic shared
    # memory: 4 KiB to 128 KiB per block, beyond 48 KiB opted in).
    ("softmax", "f32", "fused", "block=1024 prefetch=stage"),
    ("softmax", "bf16", "fused", "block=16384 prefetch=stage"),
    ("log_softmax", "f32", "fused", "block=12288 prefetch=stage"),
    ("softmax", "f16", "fused", "block=4096 prefetch=stage "
     "reread=false"),
    ("softmax", "f32", "fused", "block=32768 prefetch=stage"),
    ("softmax", "bf16", "cluster", "block=131072 prefetch=stage"),
    ("log_softmax", "f32", "cluster", "block=196608 prefetch=stage"),
    # The next row loaded ahead into registers (auto's for fused 16-bit
    # blocks of 2048-4096).
    ("softmax", "f32", "fused", "block=8192 prefetch=registers"),
    ("log_softmax", "bf16", "fused", "block=2048 prefetch=registers"),
    ("softmax", "f16", "fused", "block=4096 prefetch=registers "
     "pair_reduce=true"),
    # One (max, sum) pair exchange per row (fused and cluster).
    ("softmax", "f32", "fused", "block=1024 pair_reduce=true"),
    ("softmax", "bf16", "fused", "block=16384 pair_reduce=true prefetch=stage"),
    ("log_softmax", "f32", "fused", "block=12288 pair_reduce=true"),
    ("softmax", "f16", "fused", "block=256 rows_per_block=4 "
     "pair_reduce=true"),
    ("softmax", "f32", "cluster", "block=65536 pair_reduce=true "
     "prefetch=stage"),
    ("log_softmax", "bf16", "cluster", "block=131072 pair_reduce=true"),
    ("softmax", "f32", "cluster", "block=49152 pair_reduce=true"),
    # 16-bit rows that auto stages whole on sm_90: the online kernel on one
    # block per row, 512 threads from 16385 columns (seven, four and three
    # tiles of 8192; 112 KiB at 57344), 128 threads up to 12288 (six tiles of
    # 2048).
    ("softmax", "bf16", "auto", "cols=57344"),
    ("softmax", "bf16", "auto", "cols=32768"),
    ("softmax", "f16", "auto", "cols=24576"),
    ("log_softmax", "bf16", "auto", "cols=12288"),
    # Odd 16-bit rows staged on the peeled path (16385 to 20480); the staged
    # rows and f32's fused blocks of 24577 to 32768 with their cluster of 8
    # for launches of a few rows (bf16 32768 above: its slices pair their
    # reductions beside the re-reading path); f32 rows of 16385 to 24576 over
    # a cluster of 8 at every row count.
    ("softmax", "bf16", "auto", "cols=20011"),
    ("log_softmax", "f32", "auto", "cols=32000"),
    ("softmax", "f32", "auto", "cols=20480"),
    # auto's log-softmax chunks for bf16 rows, which get eight blocks per SM
    # (64 registers) where softmax's get nine: at nine they spill 4 bytes.
    ("log_softmax", "bf16", "auto", "cols=131072"),
    # Rows cut into chunks taken by ticket: the default layouts (f32 128 x
    # (64 + 64 staged), 16-bit 128 x (32 + 96)), a small chunk with many per
    # row and a map other than softmax, one warp with no stage, and scalar
    # accesses only.
    ("softmax", "f32", "chunks", ""),
    ("softmax", "bf16", "chunks", ""),
    ("log_softmax", "f32", "chunks", "block=1024 chunk_stage=1024"),
    ("softmax", "f16", "chunks", "warps=1 block=256 chunk_stage=0"),
    ("log_softmax", "bf16", "chunks", "vector=1 block=2048 "
     "chunk_stage=2048"),
    # auto's chunks beyond the clusters, with their second kernel of smaller
    # chunks (8192) for launches of at most 16 f32 rows and 8 bf16 ones,
    # here on another map than softmax's.
    ("softmax", "f32", "auto", "cols=262144"),
    ("log_softmax", "bf16", "auto", "cols=524288"),
]


# The rest of the family (rowred-decompose's other high-level ops): fused
# kernels of each op and type, a block per row and several rows per block,
# the re-reading scalar path and rows split over clusters. The GPU checks them with
# test/GPU/check_family.py; EPSILON is the norms' epsilon there too.
EPSILON = 1e-5
FAMILY = [
    ("rms_norm", "f32", "auto", "cols=2048"),
    ("rms_norm", "bf16", "auto", "cols=4096"),
    ("rms_norm", "f16", "auto", "cols=8192"),
    ("rms_norm", "bf16", "auto", "cols=256"),
    ("layer_norm", "f32", "auto", "cols=4096"),
    ("layer_norm", "bf16", "auto", "cols=8192"),
    ("layer_norm", "f16", "auto", "cols=1024"),
    ("layer_norm", "f32", "fused", "cols=16384 warps=8 reread=true"),
    ("softmax_backward", "f32", "auto", "cols=1024"),
    ("softmax_backward", "bf16", "auto", "cols=4096"),
    ("softmax_backward", "f16", "auto", "cols=8192"),
    ("log_softmax_backward", "f32", "auto", "cols=4096"),
    ("log_softmax_backward", "bf16", "auto", "cols=512"),
    # Two held operands on more threads than the registers allow (the
    # table's operand_shapes: 512 threads of 24 16-bit elements each).
    ("log_softmax_backward", "f16", "fused", "cols=12288"),
    # Staged streamed rows: each 2-D input's share of the row copied whole
    # into its slot of the stage, every pass reading it there: the
    # backwards (a partial last tile at 10000; f32 slots of 80 KiB), rms_norm
    # with its rstd, the residual form (two inputs, two outputs) and
    # layer_norm; asked for, on the persistent grid and over a cluster of 2.
    ("softmax_backward", "bf16", "auto", "cols=10000"),
    ("softmax_backward", "f32", "auto", "cols=20480"),
    ("log_softmax_backward", "f16", "auto", "cols=12288"),
    ("rms_norm_stats", "f32", "auto", "cols=16384"),
    ("rms_norm_residual", "bf16", "auto", "cols=12288"),
    ("layer_norm", "bf16", "auto", "cols=32768"),
    ("rms_norm", "bf16", "online",
     "cols=20480 reread=true prefetch=stage warps=8"),
    ("softmax_backward", "f16", "online",
     "cols=16384 reread=true prefetch=stage cluster=2"),
    # Rows split over clusters (of 2, 4 and 16 blocks; 16 of 1024 and of 512
    # threads), each block's slice of every operand in its registers.
    ("rms_norm", "f32", "auto", "cols=65536"),
    ("layer_norm", "bf16", "auto", "cols=131072"),
    ("softmax_backward", "bf16", "auto", "cols=32768"),
    ("log_softmax_backward", "f32", "auto", "cols=262144"),
    # Per-row results: logsumexp, and cross_entropy's loss and logsumexp
    # (with label smoothing where the name says so), over a block per row,
    # several rows per block, clusters (odd rows on the peeled path) and
    # chunks.
    ("logsumexp", "f32", "auto", "cols=1000"),
    ("logsumexp", "bf16", "auto", "cols=32000"),
    # logsumexp's gradient, a map without reduces: a block per row, a
    # cluster, and the online kernel for rows of any length.
    ("logsumexp_backward", "bf16", "auto", "cols=4096"),
    ("logsumexp_backward", "f32", "auto", "cols=128256"),
    ("logsumexp_backward", "f16", "auto", ""),
    # RMSNorm's backward: dx and the weight's gradient, a sum down the
    # columns (partial rows per block, a grid barrier, the final sum), on a
    # block per row of 1000 (odd), 4096 and 8192 elements.
    ("rms_norm_backward", "f32", "auto", "cols=1000"),
    ("rms_norm_backward", "bf16", "auto", "cols=4096"),
    ("rms_norm_backward", "f16", "auto", "cols=8192"),
    # Its residual form's: the residual stream's gradient of h (a third
    # input, which the map alone reads) added to dx; at 2048-4096 on 8
    # elements per thread (at 4096 512 f32 threads, 256 bf16), at 5120 on 16
    # (block 6144), 16-bit at 8192 on 32 (loading its row evict-last), at
    # 16384 over a cluster of 8 slices of 2048 (256 f32 threads), each block
    # summing its slice's columns into its cluster's partial row.
    ("rms_norm_residual_backward", "f32", "auto", "cols=1000"),
    ("rms_norm_residual_backward", "bf16", "auto", "cols=4096"),
    ("rms_norm_residual_backward", "f32", "auto", "cols=4096"),
    ("rms_norm_residual_backward", "f32", "auto", "cols=5120"),
    ("rms_norm_residual_backward", "f16", "auto", "cols=2048"),
    ("rms_norm_residual_backward", "f16", "auto", "cols=5120"),
    ("rms_norm_residual_backward", "f16", "auto", "cols=8192"),
    ("rms_norm_residual_backward", "f32", "auto", "cols=16384"),
    # LayerNorm's backward: dx, and two sums down the columns; at 16384
    # over a cluster of 8 slices of 2048 with the sums in registers
    # (sums_in_registers).
    ("layer_norm_backward", "bf16", "auto", "cols=781"),
    ("layer_norm_backward", "f32", "auto", "cols=4096"),
    ("layer_norm_backward", "bf16", "auto", "cols=16384"),
    # 16-bit blocks of 2048-6144 load the next row of x and dy ahead into
    # registers (the table's prefetch rows of three held operands; the
    # scalar path of odd rows loads its own).
    ("layer_norm_backward", "bf16", "auto", "cols=5120"),
    ("rms_norm_backward", "f16", "auto", "cols=2048"),
    # The three at 12288: f32, f16 and the bf16 residual form over a cluster
    # of 2 slices of 6144, bf16 layer_norm on a block of 12288 (384 threads).
    ("rms_norm_backward", "f32", "auto", "cols=12288"),
    ("rms_norm_backward", "f16", "auto", "cols=12288"),
    ("rms_norm_residual_backward", "bf16", "auto", "cols=12288"),
    ("layer_norm_backward", "bf16", "auto", "cols=12288"),
    ("cross_entropy", "bf16", "auto", "cols=32000"),
    ("cross_entropy", "f32", "auto", "cols=50257"),
    ("cross_entropy", "f16", "auto", "cols=781"),
    ("cross_entropy", "f16", "auto", "cols=32000"),
    ("cross_entropy_smoothed", "bf16", "auto", "cols=128256"),
    # Safe softmax and log_softmax (rows of -inf give zeros): fused, chunks.
    ("softmax_safe", "f32", "auto", "cols=4096"),
    ("log_softmax_safe", "bf16", "auto", "cols=131072"),
    # The norms' per-row statistics (rms_norm's rstd; layer_norm's mean and
    # rstd), from a block per row and from a cluster's first block.
    ("rms_norm_stats", "bf16", "auto", "cols=4096"),
    # rms_norm of the sum of two inputs, written as well (the residual
    # form): a block per row (re-reading its inputs), several rows per block
    # and a cluster.
    ("rms_norm_residual", "bf16", "auto", "cols=8192"),
    ("rms_norm_residual", "f16", "auto", "cols=1024"),
    ("rms_norm_residual", "f32", "auto", "cols=32768"),
    ("layer_norm_stats", "f32", "auto", "cols=65536"),
    # Chunks kernels writing per-row results from each row's first chunk.
    ("logsumexp", "f32", "auto", "cols=131072"),
    ("cross_entropy", "bf16", "auto", "cols=151936"),
    # Cross-entropy's gradient written beside the loss (scaled per row; in
    # place over the logits in check_family.py's inplace layout): a block
    # per row, several rows per block, a cluster (odd rows) and chunks (odd
    # 16-bit rows).
    ("cross_entropy_grad", "bf16", "auto", "cols=4096"),
    ("cross_entropy_grad", "f32", "auto", "cols=1000"),
    ("cross_entropy_grad_smoothed", "f16", "auto", "cols=32000"),
    ("cross_entropy_grad", "bf16", "auto", "cols=50257"),
    ("cross_entropy_grad", "f16", "auto", "cols=50257"),
    ("cross_entropy_grad", "f32", "auto", "cols=131072"),
    # The online kernel's running pair with per-row results (one read for
    # logsumexp; cross-entropy's gradient in place over a cluster of 16,
    # whose blocks write parts of the row another reads its label from).
    ("logsumexp", "f32", "online", "cluster=4"),
    ("cross_entropy_grad", "bf16", "online", "cluster=16"),
    # The online kernel with reread: the row streamed once per level of
    # reduces and once for the map, for rows of any length (no cols), rows
    # beyond a cluster's registers (clusters of 8 and 16) and, asked for,
    # per-row results and softmax's three passes.
    ("rms_norm", "f32", "auto", ""),
    ("rms_norm_residual", "f16", "auto", ""),
    ("layer_norm_stats", "bf16", "auto", "cols=1048576"),
    ("softmax_backward", "bf16", "auto", "cols=262144"),
    ("log_softmax_backward", "f32", "online", ""),
    ("logsumexp", "bf16", "auto", ""),
    ("cross_entropy_grad", "f32", "online", ""),
    ("cross_entropy_smoothed", "bf16", "auto", "cols=4194304"),
    ("softmax", "f32", "online", "reread=true"),
    # Generic chunks: a row's chunks meeting in an exchange of a level's
    # partial results, each input's part staged beside the first's. Small
    # chunks make many per row: whole chunks and a partial last one; odd
    # rows of two operands on the scalar path, of one on the peeled path
    # (with the weight); per-row results from the first chunk; the residual
    # form's second input and second output; chunks in registers only.
    ("softmax_backward", "f32", "chunks", "cols=20000 block=1024"),
    ("softmax_backward", "bf16", "chunks", "cols=9000 block=1024 "
     "chunk_stage=0"),
    ("log_softmax_backward", "bf16", "chunks", "cols=5001 block=512"),
    ("rms_norm", "bf16", "chunks", "cols=30011 block=2048"),
    ("rms_norm_stats", "f32", "chunks", "cols=9000 block=1024"),
    ("rms_norm_residual", "f16", "chunks", "cols=12000 block=2048"),
    # Two levels, two exchanges over the same entries: layer_norm (odd rows
    # on the peeled path with their mean and rstd; bf16 staged) and the
    # smoothed cross-entropy gradient (max, then the sums of the
    # exponentials and of the row).
    ("layer_norm_stats", "f32", "chunks", "cols=30011 block=1024"),
    ("layer_norm", "bf16", "chunks", "cols=20000 block=1024 chunk_stage=4096"),
    ("cross_entropy_grad_smoothed", "f32", "chunks", "cols=9001 block=1024"),
    # f16 in the default layouts (auto's from 131072 and 262145): the map's
    # weights and biases loaded by halves of a chunk's vectors.
    ("layer_norm", "f16", "chunks", "cols=40000"),
    ("softmax_backward", "f16", "chunks", "cols=30000"),
    # Mixed precision: 16-bit rows with an f32 weight (and bias) and f32
    # sums down the columns (`_wf32`), on a block per row (odd rows too),
    # several rows per block, a cluster and chunks.
    ("rms_norm_wf32", "bf16", "auto", "cols=4096"),
    ("rms_norm_residual_wf32", "f16", "auto", "cols=1000"),
    ("layer_norm_wf32", "bf16", "auto", "cols=262144"),
    ("rms_norm_backward_wf32", "bf16", "auto", "cols=4096"),
    ("rms_norm_residual_backward_wf32", "f16", "auto", "cols=2048"),
    ("layer_norm_backward_wf32", "bf16", "auto", "cols=781"),
    ("layer_norm_backward_wf32", "f16", "auto", "cols=16384"),
]

# Cross-entropy's parameters in the family set (check_family.py reads them
# back from the metadata).
IGNORE_INDEX = -100
LABEL_SMOOTHING = 0.1

# bench.py's main set, whose lengths the softmax backward is timed at too.
MAIN_BENCH_NS = [256, 512, 781, 1024, 2048, 4096, 8192, 12288, 16384, 32768,
                 65536, 131072, 262144, 1048576]
# bench.py --set vocab: odd and even vocabularies.
BENCH_NS = MAIN_BENCH_NS + [32001, 100277, 1048573, 32000, 128256, 151936,
                            256000]


# bench/family.py --other: the norms' and the backward's row lengths between
# and above the powers of two.
OTHER_NS = (5120, 6144, 10000, 12288, 14336, 16384)


def bench_variants():
    for dtype in ("f32", "bf16"):
        for n in BENCH_NS:
            yield ("softmax", dtype, "auto", f"cols={n}")


def family_bench_variants():
    """One kernel per (op, dtype, N) of bench/family.py's shapes (its long
    rows too), and one per (op, dtype) for rows of any length (--any)."""
    long_norm, long_vocab = (262144, 1048576), (4194304,)
    backward_other = tuple(n for n in OTHER_NS if n not in MAIN_BENCH_NS)
    for op, ns in (("rms_norm", (2048, 4096, 8192) + OTHER_NS + long_norm),
                   ("rms_norm_residual", (2048, 4096, 8192)),
                   ("layer_norm", (2048, 4096, 8192) + OTHER_NS + long_norm),
                   ("softmax_backward", tuple(MAIN_BENCH_NS) + backward_other),
                   ("logsumexp", (32000, 50257, 128256, 151936) + long_vocab),
                   ("cross_entropy",
                    (32000, 50257, 128256, 151936) + long_vocab)):
        for dtype in ("f32", "bf16"):
            for n in ns:
                yield (op, dtype, "auto", f"cols={n}")
            yield (op, dtype, "auto", "")


def family_sweep_variants():
    """The family-bench shapes' fused kernels on every block of 64 to 1024
    threads holding 4 to 64 elements per thread, with the re-reading scalar
    path off and on."""
    for op, dtype, _, spec in family_bench_variants():
        if not spec:
            continue
        n = int(spec.split("=")[1])
        for warps in (2, 4, 8, 16, 32):
            if 4 <= n // (warps * 32) <= 64:
                for reread in ("false", "true"):
                    yield (op, dtype, "fused",
                           f"cols={n} warps={warps} reread={reread}")


CENSUS_OPS = ["softmax", "softmax_safe", "log_softmax", "log_softmax_safe",
              "softmax_backward", "log_softmax_backward", "rms_norm",
              "rms_norm_stats", "rms_norm_residual", "layer_norm",
              "layer_norm_stats", "logsumexp", "cross_entropy",
              "cross_entropy_smoothed", "cross_entropy_grad",
              "cross_entropy_grad_smoothed"]
CENSUS_NS = [1000, 1024, 2048, 4096, 8192, 16384, 32001, 65536, 131072,
             1048576]


def census_variants():
    """Auto's kernel of every op and element type at CENSUS_NS and for rows
    of any length."""
    for op in CENSUS_OPS:
        for dtype in ("f32", "f16", "bf16"):
            for n in [None] + CENSUS_NS:
                yield (op, dtype, "auto", f"cols={n}" if n else "")


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
                           f"cols={n} warps={warps}")
    # Fused with the re-reading scalar fallback, which leaves the vector path
    # more registers.
    for dtype, warps_list in (("f32", (8, 16)), ("bf16", (4, 8, 16))):
        for n in (8192, 12288, 16384):
            for warps in warps_list:
                block = 1 << (n - 1).bit_length()
                if block // (warps * 32) > 64:
                    continue
                yield ("softmax", dtype, "fused",
                       f"cols={n} warps={warps} reread=true")
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
                           f"cols={n} warps={threads // 32} "
                           f"rows_per_block={threads // per_row}")
    # Clusters: 2 to 16 blocks per row, slices of 8192 to 32768 elements.
    for dtype in ("f32", "bf16"):
        for n in (32768, 65536, 131072, 262144):
            for cluster in (2, 4, 8, 16):
                if not 8192 <= n // cluster <= 32768:
                    continue
                yield ("softmax", dtype, "cluster",
                       f"cols={n} cluster={cluster}")
    # Blocks (fused) and cluster slices of three quarters of a power of two
    # against the power-of-two ones, for rows that fit both.
    for dtype in ("f32", "bf16"):
        for n, strategy in ((6144, "fused"), (12288, "fused"),
                            (24576, "cluster"), (49152, "cluster")):
            block = 1 << (n - 1).bit_length()
            yield ("softmax", dtype, strategy, f"cols={n}")
            yield ("softmax", dtype, strategy, f"cols={n} block={block}")
    # The online default, forwards and with the second pass reversed (seed
    # 004's cache argument), for the rows where the last tiles may still be
    # in L2.
    for dtype in ("f32", "bf16"):
        for n in (32768, 65536, 262144, 1048576):
            for rev in ("false", "true"):
                yield ("softmax", dtype, "online",
                       f"cols={n} reverse_second_pass={rev}")
    # Online over a cluster: each block walks 1/C of the row, so that its
    # reversed second pass finds more of its share still in L2.
    for dtype in ("f32", "bf16"):
        for n in (131072, 262144, 1048576):
            for cluster in (4, 8, 16):
                yield ("softmax", dtype, "online",
                       f"cols={n} cluster={cluster}")
    # The next row staged in shared memory (cp.async) while the current one
    # is reduced, and one (max, sum) pair exchange per row instead of two,
    # against the same kernel without them.
    for dtype in ("f32", "bf16"):
        for n in (1024, 2048, 4096, 8192, 12288, 16384, 32768, 65536, 131072,
                  262144):
            if dtype == "bf16" and n > 131072:
                continue
            strategy = "fused" if n <= 16384 else "cluster"
            for prefetch in ("none", "stage"):
                for pair in ("false", "true"):
                    yield ("softmax", dtype, strategy,
                           f"cols={n} prefetch={prefetch} pair_reduce={pair}")
    # A whole f32 row of 32768 in one 1024-thread block with the next row
    # staged (128 KiB), against the cluster of two 512-thread blocks.
    for prefetch in ("none", "stage"):
        yield ("softmax", "f32", "fused",
               f"cols=32768 warps=32 prefetch={prefetch}")
    # The same for 16-bit rows, and clusters of 1024-thread slices of 32768
    # elements with the stage against the default 512-thread slices.
    for prefetch in ("none", "stage"):
        yield ("softmax", "bf16", "fused",
               f"cols=32768 warps=32 prefetch={prefetch}")
        for dtype in ("f32", "bf16"):
            for n, cluster in ((65536, 2), (131072, 4)):
                yield ("softmax", dtype, "cluster",
                       f"cols={n} cluster={cluster} prefetch={prefetch}")
    # Fused rows of 8192-16384 on one block of 768-1024 threads with the
    # stage, the shape that reaches 92% of copy at 32768, against auto's.
    for dtype in ("f32", "bf16"):
        for n, warps in ((8192, 32), (12288, 24), (16384, 32)):
            yield ("softmax", dtype, "fused",
                   f"cols={n} warps={warps} prefetch=stage")
    # The next row loaded ahead into registers (prefetch=registers) against
    # the stage and no prefetch, fused and cluster.
    for dtype in ("f32", "bf16"):
        for n in (2048, 4096, 8192, 12288, 16384, 65536):
            strategy = "fused" if n <= 16384 else "cluster"
            yield ("softmax", dtype, strategy, f"cols={n} prefetch=registers")
        # Half the elements per thread, for the registers of the second row.
        for n, warps in ((2048, 4), (4096, 8), (12288, 24), (16384, 32)):
            yield ("softmax", dtype, "fused",
                   f"cols={n} warps={warps} prefetch=registers")
            yield ("softmax", dtype, "fused",
                   f"cols={n} warps={warps} prefetch=none")
    # Short rows: a warp per row (or less), with and without the next row
    # loaded ahead into registers, against auto and a two-warp block per row.
    for dtype in ("f32", "bf16"):
        for n in (256, 512, 781, 1024):
            yield ("softmax", dtype, "auto", f"cols={n}")
            if n > 512:
                yield ("softmax", dtype, "fused", f"cols={n} warps=2")
            for rows in (4, 8):
                for prefetch in ("none", "registers"):
                    yield ("softmax", dtype, "fused",
                           f"cols={n} warps={rows} rows_per_block={rows} "
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
                   f"cols={n} cluster={cluster} prefetch=stage")
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
                           f"cols={n} warps={warps} "
                           f"block={warps * 32 * vec * tile_vectors}")


# Short names of the plan request's fields in kernel names.
FIELD_TAGS = {"cols": "n", "block": "b", "warps": "w", "rows_per_block": "r",
              "cluster": "c", "vector": "v", "reverse_second_pass": "rev",
              "fast_exp": "fastexp", "reread": "reread", "prefetch": "pf",
              "pair_reduce": "pr", "kept_elements": "kept",
              "keep_ahead": "ka", "cache_hints": "ch", "grid": "grid",
              "chunk_stage": "cs"}


def parse_spec(spec):
    """`cols=N field=value ...` -> (cols, [(field, value)])."""
    cols, fields = None, []
    for item in spec.split():
        key, value = item.split("=")
        if key not in FIELD_TAGS:
            raise ValueError(f"unknown plan request field '{key}' in '{spec}'")
        if key == "cols":
            cols = value
        else:
            fields.append((key, value))
    return cols, fields


def variant_name(op, dtype, strategy, spec):
    name = f"{op}_{dtype}_{strategy}"
    for item in spec.split():
        key, value = item.split("=")
        value = {"true": "1", "false": "0"}.get(value, value)
        name += f"_{FIELD_TAGS[key]}{value}"
    return name


def mlir_source(func, op, dtype, fields):
    """A function applying `op` to dynamic memrefs of `dtype` (2-D rows, 1-D
    per-column weights, of f32 where the op ends in `_wf32`; per-row results
    in f32, labels in i64), with the plan request's `fields` on the op."""
    weight = "f32" if op.endswith("_wf32") else dtype
    op = op.removesuffix("_wf32")
    t, v = f"memref<?x?x{dtype}>", f"memref<?x{weight}>"
    attr = ""
    if fields:
        request = ", ".join(f"{k} = {v}" for k, v in fields)
        attr = f" {{rowred.plan_request = #rowred.plan_request<{request}>}}"
    r = "memref<?xf32>"
    if op == "logsumexp":
        return (f"func.func @{func}(%x: {t}, %lse: {r}) {{\n"
                f"  rowred.logsumexp ins(%x : {t}) outs(%lse : {r}){attr}\n"
                f"  return\n}}\n")
    if op == "rms_norm_residual_backward":
        # dx plus the residual stream's gradient dh, and the weight's
        # gradient summed down the columns.
        return (f"func.func @{func}(%x: {t}, %dy: {t}, %r: {r}, %w: {v}, "
                f"%dh: {t}, %dx: {t}, %dw: {v}) {{\n"
                f"  rowred.rms_norm_backward ins(%x, %dy : {t}, {t}) "
                f"rstd(%r : {r}) weight(%w : {v}) grad_residual(%dh : {t}) "
                f"outs(%dx : {t}) weight_grad(%dw : {v}){attr}\n"
                f"  return\n}}\n")
    if op == "rms_norm_backward":
        # dx, and the weight's gradient summed down the columns.
        return (f"func.func @{func}(%x: {t}, %dy: {t}, %r: {r}, %w: {v}, "
                f"%dx: {t}, %dw: {v}) {{\n"
                f"  rowred.rms_norm_backward ins(%x, %dy : {t}, {t}) "
                f"rstd(%r : {r}) weight(%w : {v}) outs(%dx : {t}) "
                f"weight_grad(%dw : {v}){attr}\n"
                f"  return\n}}\n")
    if op == "layer_norm_backward":
        # dx, and the weight's and the bias's gradients down the columns.
        return (f"func.func @{func}(%x: {t}, %dy: {t}, %m: {r}, %r: {r}, "
                f"%w: {v}, %dx: {t}, %dw: {v}, %db: {v}) {{\n"
                f"  rowred.layer_norm_backward ins(%x, %dy : {t}, {t}) "
                f"mean(%m : {r}) rstd(%r : {r}) weight(%w : {v}) "
                f"outs(%dx : {t}) weight_grad(%dw : {v}) "
                f"bias_grad(%db : {v}){attr}\n"
                f"  return\n}}\n")
    if op == "logsumexp_backward":
        return (f"func.func @{func}(%x: {t}, %lse: {r}, %g: {r}, "
                f"%dx: {t}) {{\n"
                f"  rowred.logsumexp_backward ins(%x : {t}) lse(%lse : {r}) "
                f"grad(%g : {r}) outs(%dx : {t}){attr}\n"
                f"  return\n}}\n")
    if op.startswith("cross_entropy"):
        smoothing = (f" label_smoothing({LABEL_SMOOTHING})"
                     if op.endswith("smoothed") else "")
        # `_grad`: the gradient as well, scaled per row, into its own
        # buffer (over the logits in PyTorch's in-place form).
        grad = "_grad" in op
        return (f"func.func @{func}(%x: {t}, %l: memref<?xi64>, "
                + (f"%g: {r}, %dx: {t}, " if grad else "")
                + f"%loss: {r}, %lse: {r}) {{\n"
                f"  rowred.cross_entropy ignore_index({IGNORE_INDEX})"
                f"{smoothing} ins(%x : {t}) labels(%l : memref<?xi64>) "
                + (f"grad_scale(%g : {r}) " if grad else "")
                + f"outs(%loss : {r}) lse(%lse : {r})"
                + (f" grad(%dx : {t})" if grad else "")
                + f"{attr}\n  return\n}}\n")
    args, body = f"%x: {t}, %y: {t}", f"dimension(1) ins(%x : {t})"
    outs = f"%y : {t}"
    if op.endswith("_safe"):
        body = f"dimension(1) safe ins(%x : {t})"
        op = op.removesuffix("_safe")
    elif op.endswith("softmax_backward"):
        args = f"%x: {t}, %dy: {t}, %y: {t}"
        body = f"dimension(1) ins(%x, %dy : {t}, {t})"
    elif op == "rms_norm_residual":
        # The sum h = x + r written to its own buffer (in place over r in
        # PyTorch's rowred.rms_norm; the ABI has a parameter for each).
        args = f"%x: {t}, %r: {t}, %w: {v}, %y: {t}, %h: {t}"
        body = (f"epsilon({EPSILON:.6e}) ins(%x : {t}) residual(%r : {t}) "
                f"weight(%w : {v})")
        outs = f"%y : {t}) residual_out(%h : {t}"
        op = "rms_norm"
    elif op.startswith("rms_norm"):
        args = f"%x: {t}, %w: {v}, %y: {t}"
        body = f"epsilon({EPSILON:.6e}) ins(%x : {t}) weight(%w : {v})"
    elif op.startswith("layer_norm"):
        args = f"%x: {t}, %w: {v}, %b: {v}, %y: {t}"
        body = (f"epsilon({EPSILON:.6e}) ins(%x : {t}) weight(%w : {v}) "
                f"bias(%b : {v})")
    # `_stats`: the norm's per-row statistics as well, in f32.
    stats = ""
    if op.endswith("_stats"):
        names = ["rstd"] if op.startswith("rms_norm") else ["mean", "rstd"]
        args += "".join(f", %{n}: {r}" for n in names)
        stats = "".join(f" {n}(%{n} : {r})" for n in names)
        op = op.removesuffix("_stats")
    return (f"func.func @{func}({args}) {{\n"
            f"  rowred.{op} {body} outs({outs}){stats}{attr}\n"
            f"  return\n}}\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("softmax_opt")
    parser.add_argument("output_dir")
    parser.add_argument("--set", choices=["suite", "family", "bench",
                                          "family-bench", "sweep",
                                          "family-sweep", "census"],
                        default="suite")
    parser.add_argument("--chip", default="",
                        help="target chip (sm_80, sm_90, ...; default: "
                        "softmax-opt's)")
    parser.add_argument("--ptxas", default="",
                        help="the pipeline's ptxas (rowred-fit-registers; "
                        "none: the planner's plans unchecked; default: "
                        "softmax-opt's)")
    parser.add_argument("--match", default="",
                        help="only the variants whose name matches this "
                        "regular expression")
    args = parser.parse_args()
    variants = {"suite": VARIANTS, "family": FAMILY,
                "bench": list(bench_variants()),
                "family-bench": list(family_bench_variants()),
                "sweep": list(sweep_variants()),
                "family-sweep": list(family_sweep_variants()),
                "census": list(census_variants())}[args.set]
    os.makedirs(args.output_dir, exist_ok=True)
    manifest = []
    skipped = 0
    with tempfile.TemporaryDirectory() as tmp:
        for op, dtype, strategy, spec in variants:
            name = variant_name(op, dtype, strategy, spec)
            if not re.search(args.match, name):
                continue
            cols, fields = parse_spec(spec)
            src = os.path.join(tmp, name + ".mlir")
            with open(src, "w") as f:
                f.write(mlir_source(name, op, dtype, fields))
            pipeline = f"strategy={strategy} output-dir={args.output_dir}"
            if cols:
                pipeline += f" cols={cols}"
            if args.chip:
                pipeline += f" chip={args.chip}"
            if args.ptxas:
                pipeline += f" ptxas={args.ptxas}"
            cmd = [args.softmax_opt, src, f"--rowred-to-ptx={pipeline}",
                   "-o", os.devnull]
            result = subprocess.run(cmd, capture_output=True, text=True)
            if result.returncode != 0 and args.set.endswith("sweep") and \
                    "'rowred.map' op" in result.stderr:
                # A sweep spans the block shapes; those the planner refuses
                # (registers, shared memory) are not among them.
                skipped += 1
                continue
            if result.returncode != 0:
                sys.stderr.write(f"{name}: softmax-opt failed:\n"
                                 f"{result.stderr}")
                return 1
            manifest.append(name + "_kernel0.json")
    with open(os.path.join(args.output_dir, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=2)
    print(f"wrote {len(manifest)} kernels to {args.output_dir}" +
          (f" ({skipped} plans the planner refuses skipped)"
           if skipped else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
