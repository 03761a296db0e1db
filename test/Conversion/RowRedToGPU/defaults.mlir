// The default strategy and block shape, chosen from sweeps on an H200
// (docs/performance.md):
// * rows of up to 1024 elements: a warp (or less) per row, 4 rows per
//   block, at most 64 registers (.minnctapersm 8) with 32 elements per
//   thread;
// * fused blocks: 16 elements per thread up to 512 columns and at 8192
//   (64 on 128 threads for f32 8192, at most 96 registers),
//   32 at 2048-4096 and from 16384, up to 32768 columns (16384 for 16-bit
//   rows without cp.async, before sm_80); blocks (and cluster slices) of
//   3P/4 for rows that fit them (P >= 8192, three-quarter.mlir);
// * one block per row (grid = "rows") for fused f32 blocks of a row and
//   16-bit ones of 16384 on 512 threads, with no next row fetched;
// * the next row staged in shared memory (dynamic_shared_bytes: one block of
//   input) for the other fused blocks from 16384 (and before sm_90),
//   and loaded ahead into registers for fused 16-bit blocks of 2048-4096
//   and 16-bit rows of 256-512 (prefetch = "registers");
// * clusters of 2 to 8 blocks (512 x 32 slices; 1024 x 32 for f32 beyond
//   131072) up to 262144 f32 / 131072 16-bit, on sm_90 and newer;
// * the online kernel (second pass reversed) beyond, over clusters of 8
//   blocks for rows up to 1 MiB and of 16 beyond (sm_90 and newer), and on
//   one block for unknown rows.
// RUN: softmax-opt %s --rowred-decompose --rowred-plan=cols=100 --convert-rowred-to-gpu | FileCheck %s --check-prefix=N100
// RUN: softmax-opt %s --rowred-decompose --rowred-plan=cols=256 --convert-rowred-to-gpu | FileCheck %s --check-prefix=N256
// RUN: softmax-opt %s --rowred-decompose --rowred-plan=cols=781 --convert-rowred-to-gpu | FileCheck %s --check-prefix=N781
// RUN: softmax-opt %s --rowred-decompose --rowred-plan=cols=4096 --convert-rowred-to-gpu | FileCheck %s --check-prefix=N4096
// RUN: softmax-opt %s --rowred-decompose --rowred-plan=cols=8192 --convert-rowred-to-gpu | FileCheck %s --check-prefix=N8192
// RUN: softmax-opt %s --test-rowred-plan-request="fields='prefetch = registers'" --rowred-decompose --rowred-plan="cols=8192" --convert-rowred-to-gpu | FileCheck %s --check-prefix=N8192-REG
// RUN: softmax-opt %s --test-rowred-plan-request="fields='pair_reduce = true'" --rowred-decompose --rowred-plan="cols=8192" --convert-rowred-to-gpu | FileCheck %s --check-prefix=N8192-PAIR
// RUN: not softmax-opt %s --test-rowred-plan-request="fields='warps = 1'" --rowred-decompose --rowred-plan="strategy=fused cols=8192" --convert-rowred-to-gpu 2>&1 | FileCheck %s --check-prefix=N8192-W1
// RUN: softmax-opt %s --rowred-decompose --rowred-plan=cols=12288 --convert-rowred-to-gpu | FileCheck %s --check-prefix=N12288
// RUN: softmax-opt %s --rowred-decompose --rowred-plan=cols=16384 --convert-rowred-to-gpu | FileCheck %s --check-prefix=N16384
// RUN: softmax-opt %s --rowred-decompose --rowred-plan=cols=32768 --convert-rowred-to-gpu | FileCheck %s --check-prefix=N32768
// RUN: softmax-opt %s --rowred-decompose --rowred-plan="cols=32769 strategy=cluster" --convert-rowred-to-gpu | FileCheck %s --check-prefix=N32769
// RUN: softmax-opt %s --rowred-decompose --rowred-plan=cols=131072 --convert-rowred-to-gpu | FileCheck %s --check-prefix=N131072
// RUN: softmax-opt %s --rowred-decompose --rowred-plan=cols=131073 --convert-rowred-to-gpu | FileCheck %s --check-prefix=N131072
// RUN: softmax-opt %s --rowred-decompose --rowred-plan=cols=262144 --convert-rowred-to-gpu | FileCheck %s --check-prefix=N262144
// RUN: softmax-opt %s --rowred-decompose --rowred-plan=cols=262145 --convert-rowred-to-gpu | FileCheck %s --check-prefix=N262144
// RUN: softmax-opt %s --rowred-decompose --rowred-plan=cols=524287 --convert-rowred-to-gpu | FileCheck %s --check-prefix=N262144
// RUN: softmax-opt %s --test-rowred-plan-request="fields='cluster = 16'" --rowred-decompose --rowred-plan="cols=524288 strategy=online" --convert-rowred-to-gpu | FileCheck %s --check-prefix=N524288
// RUN: softmax-opt %s --test-rowred-plan-request="fields='cluster = 16'" --rowred-decompose --rowred-plan="cols=1048576 strategy=online" --convert-rowred-to-gpu | FileCheck %s --check-prefix=N1M
// RUN: softmax-opt %s --rowred-decompose --rowred-plan=cols=1048576 --convert-rowred-to-gpu | FileCheck %s --check-prefix=N1M-AUTO
// RUN: softmax-opt %s --test-rowred-plan-request="fields='cluster = 1'" --rowred-decompose --rowred-plan="cols=1048576" --convert-rowred-to-gpu | FileCheck %s --check-prefix=N1M-ONE
// RUN: softmax-opt %s --test-rowred-plan-request="fields='cluster = 16'" --rowred-decompose --rowred-plan="cols=2097152 strategy=online" --convert-rowred-to-gpu | FileCheck %s --check-prefix=N2M
// RUN: softmax-opt %s --test-rowred-plan-request="fields='cluster = 16'" --rowred-decompose --rowred-plan="cols=4194304 strategy=online" --convert-rowred-to-gpu | FileCheck %s --check-prefix=N4M
// RUN: softmax-opt %s --test-rowred-plan-request="fields='cluster = 8'" --rowred-decompose --rowred-plan="cols=400000 strategy=online" --convert-rowred-to-gpu | FileCheck %s --check-prefix=N400000
// RUN: softmax-opt %s --test-rowred-plan-request="fields='cluster = 16, keep_ahead = none'" --rowred-decompose --rowred-plan="cols=2097152 strategy=online" --convert-rowred-to-gpu | FileCheck %s --check-prefix=N2M-OFF
// RUN: softmax-opt %s --rowred-decompose --rowred-plan="cols=65536 chip=sm_80" --convert-rowred-to-gpu | FileCheck %s --check-prefix=SM80
// RUN: softmax-opt %s --rowred-decompose --rowred-plan="cols=32768 chip=sm_80" --convert-rowred-to-gpu | FileCheck %s --check-prefix=SM80-32768
// RUN: softmax-opt %s --rowred-decompose --rowred-plan --convert-rowred-to-gpu | FileCheck %s --check-prefix=UNKNOWN

// N100: block_elements = 128 : i64, block_threads = 64 : i64, chunk_elements = 0 : i64, cluster_blocks = 1 : i64, dynamic_shared_bytes = 0 : i64, elements_per_thread = 8 : i64
// N100-SAME: max_cols = 128 : i64
// N100-SAME: rows_per_block = 4 : i64, shared_bytes = 0 : i64, strategy = "fused", vector_width = 4 : i64
// N256: block_elements = 256 : i64, block_threads = 128 : i64, chunk_elements = 0 : i64, cluster_blocks = 1 : i64, dynamic_shared_bytes = 0 : i64, elements_per_thread = 8 : i64
// N256-SAME: rows_per_block = 4 : i64, shared_bytes = 0 : i64, strategy = "fused"
// N781: block_elements = 1024 : i64, block_threads = 128 : i64, chunk_elements = 0 : i64, cluster_blocks = 1 : i64, dynamic_shared_bytes = 0 : i64, elements_per_thread = 32 : i64
// N781-SAME: prefetch = "none"
// N781-SAME: rows_per_block = 4 : i64
// N781: gpu.func @softmax_kernel0
// N781-SAME: nvvm.minctasm = 8 : i32
// N4096: block_elements = 4096 : i64, block_threads = 128 : i64, chunk_elements = 0 : i64, cluster_blocks = 1 : i64, dynamic_shared_bytes = 0 : i64, elements_per_thread = 32 : i64
// N4096-SAME: prefetch = "none"
// N8192: block_elements = 8192 : i64, block_threads = 128 : i64, chunk_elements = 0 : i64, cluster_blocks = 1 : i64, dynamic_shared_bytes = 0 : i64, elements_per_thread = 64 : i64
// N8192-SAME: prefetch = "none"
// Not with the next row in registers or the pair reduction, which keep
// 512 x 16. A request's warps may hold up to the plan's limit of 128
// elements per thread, no more.
// N8192-REG: block_threads = 512 : i64
// N8192-REG-SAME: elements_per_thread = 16 : i64
// N8192-REG-SAME: prefetch = "registers"
// N8192-PAIR: block_threads = 512 : i64
// N8192-PAIR-SAME: elements_per_thread = 16 : i64
// N8192-W1: error: 'rowred.map' op a fused block of 8192 elements over 32 threads keeps 256 elements per thread in registers (limit 128)
// N12288: block_elements = 12288 : i64, block_threads = 384 : i64, chunk_elements = 0 : i64, cluster_blocks = 1 : i64, dynamic_shared_bytes = 0 : i64, elements_per_thread = 32 : i64
// N12288-SAME: grid = "rows"
// N12288-SAME: prefetch = "none"
// Fused f32 blocks of a row run one block per row (grid "rows"), and so
// fetch no next row.
// N16384: block_elements = 16384 : i64, block_threads = 512 : i64, chunk_elements = 0 : i64, cluster_blocks = 1 : i64, dynamic_shared_bytes = 0 : i64, elements_per_thread = 32 : i64
// N16384-SAME: grid = "rows"
// N16384-SAME: prefetch = "none"
// N32768: block_elements = 32768 : i64, block_threads = 1024 : i64, chunk_elements = 0 : i64, cluster_blocks = 1 : i64, dynamic_shared_bytes = 0 : i64, elements_per_thread = 32 : i64
// N32768-SAME: grid = "rows"
// N32768-SAME: strategy = "fused"
// N32769: block_elements = 12288 : i64, block_threads = 384 : i64, chunk_elements = 0 : i64, cluster_blocks = 4 : i64, dynamic_shared_bytes = 0 : i64, elements_per_thread = 32 : i64
// N32769-SAME: max_cols = 49152 : i64
// N32769-SAME: prefetch = "none"
// N32769-SAME: strategy = "cluster"
// Clusters of slices of at most 16384 (512 threads x 32): 8 up to 131072, 16
// beyond (three-quarter slices of 12288 up to 196608); f32 rows from 65536
// (131072 and 131073 here) are cut into chunks of 128 threads x (64 in
// registers + 64 staged) instead, for any length.
// N131072: block_elements = 8192 : i64, block_threads = 128 : i64, chunk_elements = 16384 : i64, chunk_entries = 1 : i64, cluster_blocks = 1 : i64, dynamic_shared_bytes = 32768 : i64, elements_per_thread = 64 : i64
// N131072-SAME: grid = "chunks"
// N131072-SAME: max_cols = 0 : i64
// N131072-SAME: strategy = "chunks"
// N262144: block_elements = 8192 : i64, block_threads = 128 : i64, chunk_elements = 16384 : i64
// N262144-SAME: strategy = "chunks"
// N524288: block_threads = 1024 : i64, chunk_elements = 0 : i64, cluster_blocks = 16 : i64, dynamic_shared_bytes = 131072 : i64
// N524288-SAME: keep_ahead = true, keep_ahead_bulk = true
// N524288-SAME: strategy = "online"
// The online kernels of f32 rows from 512 KiB, over clusters as auto gives
// 16-bit rows of the same size (auto cuts f32 rows into chunks).
// Rows of 2 to under 8 MiB over clusters of 16 keep the first tile (64 KiB)
// of each block's share in two buffers, one bulk copy per row
// (keep_ahead = bulk), and stream the rest (tiles loaded ahead, L2 hints);
// from 8 MiB they keep 3/8 of each block's share (whole tiles of 64 KiB, at
// most 192 KiB) in shared memory, copied in by each thread during the
// previous row's second pass (keep_ahead), and stream the rest.
// N1M: block_threads = 1024 : i64, chunk_elements = 0 : i64, cluster_blocks = 16 : i64, dynamic_shared_bytes = 131072 : i64
// N1M-SAME: keep_ahead = true, keep_ahead_bulk = true, l2_hints = true, max_cols = 1048576 : i64
// N1M-SAME: prefetch = "registers"
// N1M-SAME: strategy = "online"
// N1M-AUTO: chunk_elements = 16384 : i64
// N1M-AUTO-SAME: strategy = "chunks"
// N1M-ONE: block_threads = 1024 : i64, chunk_elements = 0 : i64, cluster_blocks = 1 : i64, dynamic_shared_bytes = 0 : i64
// N1M-ONE-SAME: keep_ahead = false
// N1M-ONE-SAME: strategy = "online"
// N2M: cluster_blocks = 16 : i64, dynamic_shared_bytes = 196608 : i64
// N2M-SAME: keep_ahead = true, keep_ahead_bulk = false, l2_hints = true, max_cols = 2097152 : i64
// N4M: cluster_blocks = 16 : i64, dynamic_shared_bytes = 196608 : i64
// N4M-SAME: keep_ahead = true
// Not over clusters of 8 (f32 400000 lost 7-10% with it).
// N400000: cluster_blocks = 8 : i64, dynamic_shared_bytes = 0 : i64
// N400000-SAME: keep_ahead = false
// N2M-OFF: cluster_blocks = 16 : i64, dynamic_shared_bytes = 0 : i64
// N2M-OFF-SAME: keep_ahead = false, keep_ahead_bulk = false, l2_hints = true, max_cols = 0 : i64
// SM80: block_threads = 1024 : i64, chunk_elements = 0 : i64, cluster_blocks = 1 : i64
// SM80-SAME: strategy = "online"
// SM80-32768: block_elements = 32768 : i64, block_threads = 1024 : i64, chunk_elements = 0 : i64, cluster_blocks = 1 : i64, dynamic_shared_bytes = 131072 : i64
// SM80-32768-SAME: strategy = "fused"
// UNKNOWN: block_threads = 1024 : i64, chunk_elements = 0 : i64, cluster_blocks = 1 : i64
// UNKNOWN-SAME: strategy = "online"
func.func @softmax(%x: memref<?x?xf32>, %y: memref<?x?xf32>) {
  rowred.softmax dimension(1) ins(%x : memref<?x?xf32>) outs(%y : memref<?x?xf32>)
  return
}

// 16-bit rows: fused up to 32768 columns, clusters up to 131072, online over
// clusters of 8 beyond; the next row loaded ahead into registers for fused
// blocks of 2048-4096, the stage from 8192 columns, not before sm_80 (no
// cp.async), where rows stay fused up to 16384 only. On sm_90, rows of 8193
// to 57344 elements are staged whole instead: the online kernel on a block
// per row, both passes reading shared memory.
// RUN: softmax-opt %S/Inputs/bf16.mlir --rowred-decompose --rowred-plan=cols=8192 --convert-rowred-to-gpu | FileCheck %s --check-prefix=BF8192
// RUN: softmax-opt %S/Inputs/bf16.mlir --rowred-decompose --rowred-plan=cols=12288 --convert-rowred-to-gpu | FileCheck %s --check-prefix=BF12288
// RUN: softmax-opt %S/Inputs/bf16.mlir --rowred-decompose --rowred-plan=cols=16384 --convert-rowred-to-gpu | FileCheck %s --check-prefix=BF16384
// RUN: softmax-opt %S/Inputs/bf16.mlir --rowred-decompose --rowred-plan=cols=16383 --convert-rowred-to-gpu | FileCheck %s --check-prefix=BF16383
// RUN: softmax-opt %S/Inputs/f16.mlir --rowred-decompose --rowred-plan=cols=24576 --convert-rowred-to-gpu | FileCheck %s --check-prefix=F16-24576
// RUN: softmax-opt %S/Inputs/bf16.mlir --rowred-decompose --rowred-plan="cols=32768 chip=sm_80" --convert-rowred-to-gpu | FileCheck %s --check-prefix=BF32768-SM80
// RUN: softmax-opt %S/Inputs/bf16.mlir --rowred-decompose --rowred-plan=cols=45000 --convert-rowred-to-gpu | FileCheck %s --check-prefix=BF45000
// RUN: softmax-opt %S/Inputs/bf16.mlir --rowred-decompose --rowred-plan=cols=57344 --convert-rowred-to-gpu | FileCheck %s --check-prefix=BF57344
// RUN: softmax-opt %S/Inputs/bf16.mlir --rowred-decompose --rowred-plan=cols=57352 --convert-rowred-to-gpu | FileCheck %s --check-prefix=BF57352
// RUN: softmax-opt %S/Inputs/bf16.mlir --test-rowred-plan-request="fields='vector = 1'" --rowred-decompose --rowred-plan="cols=32768" --convert-rowred-to-gpu | FileCheck %s --check-prefix=BF-STAGED-SCALAR
// RUN: softmax-opt %S/Inputs/bf16.mlir --rowred-decompose --rowred-plan="cols=16385 strategy=fused" --convert-rowred-to-gpu | FileCheck %s --check-prefix=BF16385
// RUN: softmax-opt %S/Inputs/bf16.mlir --rowred-decompose --rowred-plan="cols=32769 strategy=cluster" --convert-rowred-to-gpu | FileCheck %s --check-prefix=BF32769
// RUN: not softmax-opt %S/Inputs/bf16.mlir --rowred-decompose --rowred-plan="cols=16385 chip=sm_75" --convert-rowred-to-gpu 2>&1 | FileCheck %s --check-prefix=BF-SM75
// RUN: softmax-opt %S/Inputs/bf16.mlir --rowred-decompose --rowred-plan=cols=2048 --convert-rowred-to-gpu | FileCheck %s --check-prefix=BF2048
// RUN: softmax-opt %S/Inputs/bf16.mlir --rowred-decompose --rowred-plan=cols=4096 --convert-rowred-to-gpu | FileCheck %s --check-prefix=BF4096
// RUN: softmax-opt %S/Inputs/bf16.mlir --rowred-decompose --rowred-plan=cols=512 --convert-rowred-to-gpu | FileCheck %s --check-prefix=BF512
// RUN: softmax-opt %S/Inputs/bf16.mlir --rowred-decompose --rowred-plan=cols=1024 --convert-rowred-to-gpu | FileCheck %s --check-prefix=BF1024
// RUN: softmax-opt %S/Inputs/bf16.mlir --rowred-decompose --rowred-plan="cols=131072 strategy=cluster" --convert-rowred-to-gpu | FileCheck %s --check-prefix=BF131072
// RUN: softmax-opt %S/Inputs/bf16.mlir --test-rowred-plan-request="fields='prefetch = none'" --rowred-decompose --rowred-plan="cols=131072" --convert-rowred-to-gpu | FileCheck %s --check-prefix=BF131072-OFF
// RUN: softmax-opt %S/Inputs/bf16.mlir --test-rowred-plan-request="fields='pair_reduce = false'" --rowred-decompose --rowred-plan="cols=131072" --convert-rowred-to-gpu | FileCheck %s --check-prefix=BF131072-NOPAIR
// RUN: softmax-opt %S/Inputs/bf16.mlir --rowred-decompose --rowred-plan="cols=131073 strategy=cluster" --convert-rowred-to-gpu | FileCheck %s --check-prefix=BF131073
// RUN: softmax-opt %S/Inputs/bf16.mlir --rowred-decompose --rowred-plan="cols=151936 strategy=cluster" --convert-rowred-to-gpu | FileCheck %s --check-prefix=BF151936
// RUN: softmax-opt %S/Inputs/bf16.mlir --rowred-decompose --rowred-plan="cols=50257 strategy=cluster" --convert-rowred-to-gpu | FileCheck %s --check-prefix=BF50257
// RUN: softmax-opt %S/Inputs/bf16.mlir --rowred-decompose --rowred-plan=cols=262145 --convert-rowred-to-gpu | FileCheck %s --check-prefix=BF262145
// RUN: softmax-opt %S/Inputs/f16.mlir --rowred-decompose --rowred-plan=cols=100277 --convert-rowred-to-gpu | FileCheck %s --check-prefix=BF262145
// RUN: softmax-opt %S/Inputs/f16.mlir --rowred-decompose --rowred-plan=cols=1048583 --convert-rowred-to-gpu | FileCheck %s --check-prefix=BF262145
// RUN: softmax-opt %S/Inputs/bf16.mlir --rowred-decompose --rowred-plan="cols=240000 strategy=cluster" --convert-rowred-to-gpu | FileCheck %s --check-prefix=BF240000
// RUN: softmax-opt %S/Inputs/bf16.mlir --rowred-decompose --rowred-plan="cols=200000 strategy=cluster" --convert-rowred-to-gpu | FileCheck %s --check-prefix=BF200000
// RUN: softmax-opt %S/Inputs/bf16.mlir --rowred-decompose --rowred-plan="cols=393216 strategy=cluster" --convert-rowred-to-gpu | FileCheck %s --check-prefix=BF393216
// RUN: softmax-opt %S/Inputs/bf16.mlir --rowred-decompose --rowred-plan="cols=524288 strategy=cluster" --convert-rowred-to-gpu | FileCheck %s --check-prefix=BF524288
// RUN: softmax-opt %S/Inputs/bf16.mlir --test-rowred-plan-request="fields='cluster = 8'" --rowred-decompose --rowred-plan="cols=450000 strategy=online" --convert-rowred-to-gpu | FileCheck %s --check-prefix=BF450000
// RUN: softmax-opt %S/Inputs/bf16.mlir --rowred-decompose --rowred-plan=cols=500009 --convert-rowred-to-gpu | FileCheck %s --check-prefix=BF262145
// RUN: softmax-opt %S/Inputs/f16.mlir --rowred-decompose --rowred-plan="cols=262144 strategy=cluster" --convert-rowred-to-gpu | FileCheck %s --check-prefix=F16-262144
// RUN: softmax-opt %S/Inputs/bf16.mlir --test-rowred-plan-request="fields='cluster = 16'" --rowred-decompose --rowred-plan="cols=1048576 strategy=online" --convert-rowred-to-gpu | FileCheck %s --check-prefix=BF1M
// RUN: softmax-opt %S/Inputs/bf16.mlir --rowred-decompose --rowred-plan=cols=1048576 --convert-rowred-to-gpu | FileCheck %s --check-prefix=BF1M-AUTO
// RUN: softmax-opt %S/Inputs/bf16.mlir --test-rowred-plan-request="fields='prefetch = registers'" --rowred-decompose --rowred-plan="cols=1048576" --convert-rowred-to-gpu | FileCheck %s --check-prefix=BF1M-REG
// RUN: softmax-opt %S/Inputs/bf16.mlir --test-rowred-plan-request="fields='keep_ahead = none'" --rowred-decompose --rowred-plan="cols=1048576" --convert-rowred-to-gpu | FileCheck %s --check-prefix=BF1M-OFF
// RUN: softmax-opt %S/Inputs/bf16.mlir --test-rowred-plan-request="fields='cluster = 16'" --rowred-decompose --rowred-plan="cols=2097152 strategy=online" --convert-rowred-to-gpu | FileCheck %s --check-prefix=BF2M
// RUN: softmax-opt %S/Inputs/bf16.mlir --rowred-decompose --rowred-plan=cols=8388608 --convert-rowred-to-gpu | FileCheck %s --check-prefix=BF2M
// RUN: softmax-opt %S/Inputs/f16.mlir --test-rowred-plan-request="fields='cluster = 16'" --rowred-decompose --rowred-plan="cols=2097152 strategy=online" --convert-rowred-to-gpu | FileCheck %s --check-prefix=F16-2M
// RUN: softmax-opt %S/Inputs/f16.mlir --rowred-decompose --rowred-plan=cols=8388608 --convert-rowred-to-gpu | FileCheck %s --check-prefix=F16-8M
// BF512: block_elements = 512 : i64, block_threads = 128 : i64, chunk_elements = 0 : i64, cluster_blocks = 1 : i64, dynamic_shared_bytes = 0 : i64, elements_per_thread = 16 : i64
// BF512-SAME: prefetch = "registers"
// BF512-SAME: rows_per_block = 4 : i64
// BF512: gpu.func @softmax_kernel0
// BF512-SAME: kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
// BF1024: block_elements = 1024 : i64, block_threads = 128 : i64, chunk_elements = 0 : i64, cluster_blocks = 1 : i64, dynamic_shared_bytes = 0 : i64, elements_per_thread = 32 : i64
// BF1024-SAME: prefetch = "none"
// BF1024-SAME: rows_per_block = 4 : i64
// BF1024: gpu.func @softmax_kernel0
// BF1024-SAME: nvvm.minctasm = 8 : i32
// Fused 16-bit blocks of 4096, 8192 and 16384 (both on 256 threads, 32 and
// 64 elements each) run a block per row (grid "rows") and fetch no next
// row; 2048 and 12288 load their next row ahead into registers; the stage
// takes over from 24576 (768 threads and more). Rows of 8193 to 57344 are
// staged whole on sm_90: the online kernel on one
// block per row with tiles of 16 elements per thread, 128 threads up to
// 12288, 512 beyond; its stage is the row in whole tiles, which bounds
// max_cols. At 57344 two stages of 112 KiB share an SM; longer rows keep
// their clusters.
// BF8192: block_elements = 8192 : i64, block_threads = 256 : i64, chunk_elements = 0 : i64, cluster_blocks = 1 : i64, dynamic_shared_bytes = 0 : i64, elements_per_thread = 32 : i64
// BF8192-SAME: grid = "rows"
// BF8192-SAME: prefetch = "none"
// BF8192-SAME: strategy = "fused", vector_width = 8 : i64
// BF12288: block_elements = 2048 : i64, block_threads = 128 : i64, chunk_elements = 0 : i64, cluster_blocks = 1 : i64, dynamic_shared_bytes = 24576 : i64, elements_per_thread = 16 : i64
// BF12288-SAME: grid = "rows"
// BF12288-SAME: max_cols = 12288 : i64
// BF12288-SAME: prefetch = "shared"
// BF12288-SAME: strategy = "online", vector_width = 8 : i64
// BF16384: block_elements = 8192 : i64, block_threads = 512 : i64, chunk_elements = 0 : i64, cluster_blocks = 1 : i64, dynamic_shared_bytes = 32768 : i64, elements_per_thread = 16 : i64
// BF16384-SAME: grid = "rows"
// BF16384-SAME: max_cols = 16384 : i64
// BF16384-SAME: prefetch = "shared"
// BF16384-SAME: strategy = "online", vector_width = 8 : i64
// An odd row is staged as the even ones are (its peeled path copies the
// row's vectors from its head), in a stage of the row in whole tiles.
// BF16383: block_elements = 8192 : i64, block_threads = 512 : i64, chunk_elements = 0 : i64, cluster_blocks = 1 : i64, dynamic_shared_bytes = 32768 : i64, elements_per_thread = 16 : i64
// BF16383-SAME: grid = "rows"
// BF16383-SAME: max_cols = 16384 : i64
// BF16383-SAME: peeled_path = true
// BF16383-SAME: prefetch = "shared"
// BF16383-SAME: strategy = "online", vector_width = 8 : i64
// F16-24576: block_elements = 8192 : i64, block_threads = 512 : i64, chunk_elements = 0 : i64, cluster_blocks = 1 : i64, dynamic_shared_bytes = 49152 : i64, elements_per_thread = 16 : i64
// F16-24576-SAME: grid = "rows"
// F16-24576-SAME: max_cols = 24576 : i64
// F16-24576-SAME: strategy = "online"
// BF32768-SM80: block_elements = 32768 : i64, block_threads = 1024 : i64, chunk_elements = 0 : i64, cluster_blocks = 1 : i64, dynamic_shared_bytes = 65536 : i64
// BF45000: block_elements = 8192 : i64, block_threads = 512 : i64, chunk_elements = 0 : i64, cluster_blocks = 1 : i64, dynamic_shared_bytes = 98304 : i64
// BF45000-SAME: max_cols = 49152 : i64
// BF45000-SAME: strategy = "online"
// BF57344: block_elements = 8192 : i64, block_threads = 512 : i64, chunk_elements = 0 : i64, cluster_blocks = 1 : i64, dynamic_shared_bytes = 114688 : i64
// BF57344-SAME: grid = "rows"
// BF57344-SAME: strategy = "online"
// BF57352: block_elements = 32768 : i64, block_threads = 1024 : i64, chunk_elements = 0 : i64, cluster_blocks = 2 : i64, dynamic_shared_bytes = 0 : i64
// BF57352-SAME: grid = "persistent"
// BF57352-SAME: strategy = "cluster"
// A staged row's tile holds two vectors (16 elements) per thread: with a
// lower limit auto does not stage, and reports the cluster it tried next.
// A vector width asked for leaves the shape to the options: no staged row
// (the stage copies vectors, and vector = 1 has none).
// BF-STAGED-SCALAR: block_threads = 1024 : i64
// BF-STAGED-SCALAR-SAME: grid = "persistent"
// BF-STAGED-SCALAR-SAME: strategy = "fused"
// BF32768-SM80-SAME: grid = "persistent"
// BF32768-SM80-SAME: strategy = "fused"
// BF16385: block_elements = 24576 : i64, block_threads = 768 : i64, chunk_elements = 0 : i64, cluster_blocks = 1 : i64, dynamic_shared_bytes = 49152 : i64, elements_per_thread = 32 : i64
// BF16385-SAME: strategy = "fused", vector_width = 8 : i64
// BF32769: block_elements = 12288 : i64, block_threads = 384 : i64, chunk_elements = 0 : i64, cluster_blocks = 4 : i64, dynamic_shared_bytes = 0 : i64, elements_per_thread = 32 : i64
// BF32769-SAME: strategy = "cluster", vector_width = 8 : i64
// Chips before sm_80 (no cp.async) are not compiled for.
// BF-SM75: error: 'rowred.map' op #rowred.plan field 'chip': 'sm_75' is not a supported chip
// BF2048: block_elements = 2048 : i64, block_threads = 64 : i64, chunk_elements = 0 : i64, cluster_blocks = 1 : i64, dynamic_shared_bytes = 0 : i64
// BF2048-SAME: prefetch = "registers"
// BF4096: block_elements = 4096 : i64, block_threads = 128 : i64, chunk_elements = 0 : i64, cluster_blocks = 1 : i64, dynamic_shared_bytes = 0 : i64
// BF4096-SAME: grid = "rows"
// BF4096-SAME: prefetch = "none"
// 16-bit cluster slices reduce (max, sum) pairs and load their next row ahead
// into registers, unless prefetch or pair_reduce says otherwise. (Auto cuts
// bf16 rows of 65536 to 1048576 into chunks; the
// cluster and online kernels below are asked for by name.)
// BF131072: block_elements = 32768 : i64, block_threads = 1024 : i64, chunk_elements = 0 : i64, cluster_blocks = 4 : i64
// BF131072-SAME: pair_reduce = true, peeled_path = true, plan = {{.*}}, prefetch = "registers"
// BF131072-SAME: strategy = "cluster"
// BF131072-OFF: pair_reduce = false, peeled_path = true, plan = {{.*}}, prefetch = "none"
// BF131072-NOPAIR: pair_reduce = false, peeled_path = true, plan = {{.*}}, prefetch = "none"
// BF131073: block_elements = 12288 : i64, block_threads = 384 : i64, chunk_elements = 0 : i64, cluster_blocks = 16 : i64, dynamic_shared_bytes = 0 : i64, elements_per_thread = 32 : i64
// BF131073-SAME: pair_reduce = false, peeled_path = true, plan = {{.*}}, prefetch = "none"
// BF131073-SAME: strategy = "cluster", vector_width = 8 : i64
// BF151936: block_elements = 12288 : i64, block_threads = 384 : i64, chunk_elements = 0 : i64, cluster_blocks = 16 : i64
// BF151936-SAME: pair_reduce = true, peeled_path = true, plan = {{.*}}, prefetch = "registers"
// BF151936-SAME: strategy = "cluster"
// Cluster slices (named: auto cuts such rows into chunks) of a known length
// that is not a multiple of the vector width run the peeled path on
// contiguous rows, which takes no pair: the pair is left off.
// BF50257: cluster_blocks = 4 : i64
// BF50257-SAME: pair_reduce = false, peeled_path = true, plan = {{.*}}, prefetch = "none"
// Longer odd rows are cut into chunks, which take the peeled path; f16 rows
// alike (here 100277 and, past 1 MiB, 1048583).
// BF262145: block_elements = 4096 : i64, block_threads = 128 : i64, chunk_elements = 16384 : i64
// BF262145-SAME: peeled_path = true
// BF262145-SAME: strategy = "chunks"
// 16-bit rows that are a multiple of the vector width and fill at least 7/8
// of their block get slices of 32768 (3/4 blocks: 24576) on 1024 (768)
// threads (131072 above: clusters of 4 instead of 8): clusters of 8 instead
// of 16 up to 262144, clusters of 16 instead of the online kernel up to
// 524288.
// BF240000: block_elements = 32768 : i64, block_threads = 1024 : i64, chunk_elements = 0 : i64, cluster_blocks = 8 : i64
// BF240000-SAME: pair_reduce = true, peeled_path = true, plan = {{.*}}, prefetch = "registers"
// BF240000-SAME: strategy = "cluster"
// F16-262144: block_elements = 32768 : i64, block_threads = 1024 : i64, chunk_elements = 0 : i64, cluster_blocks = 8 : i64
// F16-262144-SAME: strategy = "cluster"
// BF393216: block_elements = 24576 : i64, block_threads = 768 : i64, chunk_elements = 0 : i64, cluster_blocks = 16 : i64
// BF393216-SAME: strategy = "cluster"
// BF524288: block_elements = 32768 : i64, block_threads = 1024 : i64, chunk_elements = 0 : i64, cluster_blocks = 16 : i64
// BF524288-SAME: pair_reduce = true, peeled_path = true, plan = {{.*}}, prefetch = "registers"
// BF524288-SAME: strategy = "cluster"
// Rows filling 3/4 of their block keep 16 slices of 16384 (up to 262144),
// or the online kernel beyond.
// BF200000: block_elements = 16384 : i64, block_threads = 512 : i64, chunk_elements = 0 : i64, cluster_blocks = 16 : i64
// BF200000-SAME: strategy = "cluster"
// BF450000: cluster_blocks = 8 : i64
// BF450000-SAME: strategy = "online"
// bf16 rows over clusters of 16 run on 1024 threads, their tiles loaded
// ahead. Rows of 2 MiB take tiles of 16 elements per thread and keep three
// of the four tiles of each share in two buffers of 96 KiB, one bulk copy
// per row (keep_ahead = bulk); longer rows take tiles of 32 per thread and
// keep nothing, and so do rows with keep_ahead = none. (Auto cuts rows of
// 2-8 MiB into chunks instead: 128 threads x (32 + 96 staged); longer rows,
// 16 MiB here, take the online kernel over clusters of 16.)
// BF1M-AUTO: block_elements = 4096 : i64, block_threads = 128 : i64, chunk_elements = 16384 : i64
// BF1M-AUTO-SAME: strategy = "chunks"
// BF1M: block_elements = 16384 : i64, block_threads = 1024 : i64, chunk_elements = 0 : i64, cluster_blocks = 16 : i64, dynamic_shared_bytes = 196608 : i64
// BF1M-SAME: keep_ahead = true, keep_ahead_bulk = true, l2_hints = true
// BF1M-SAME: prefetch = "registers"
// BF1M-SAME: strategy = "online"
// BF1M-OFF: block_elements = 32768 : i64, block_threads = 1024 : i64, chunk_elements = 0 : i64, cluster_blocks = 16 : i64, dynamic_shared_bytes = 0 : i64
// BF1M-OFF-SAME: keep_ahead = false
// BF2M: block_elements = 32768 : i64, block_threads = 1024 : i64, chunk_elements = 0 : i64, cluster_blocks = 16 : i64, dynamic_shared_bytes = 0 : i64
// BF2M-SAME: keep_ahead = false
// f16 rows there keep 3/8 of each share in shared memory (keep_ahead), on
// 512 threads: tiles of 16 KiB, at most 112 KiB for each of two blocks.
// F16-2M: block_elements = 8192 : i64, block_threads = 512 : i64, chunk_elements = 0 : i64, cluster_blocks = 16 : i64, dynamic_shared_bytes = 98304 : i64
// F16-2M-SAME: keep_ahead = true, keep_ahead_bulk = false, l2_hints = true
// F16-2M-SAME: prefetch = "registers"
// F16-2M-SAME: strategy = "online"
// F16-8M: dynamic_shared_bytes = 114688 : i64
// F16-8M-SAME: keep_ahead = true
// BF1M-REG: cluster_blocks = 16 : i64, dynamic_shared_bytes = 0 : i64
// BF1M-REG-SAME: prefetch = "registers"
