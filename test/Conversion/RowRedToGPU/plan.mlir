// The plans rowred-plan chooses for f32 and bf16 softmax rows, by row length
// (cols; 0: unknown) and chip: the strategy and block shape of each kernel,
// as IR. Every strategy appears: fused (one or several rows per block, the
// row staged or re-read), cluster (f32 rows of 33K-65K), online (unknown
// lengths, staged 16-bit rows, rows over clusters, kept tiles) and chunks.
// docs/kernels.md says why each is the default.

// RUN: softmax-opt %s --rowred-decompose --rowred-plan="cols=0 chip=sm_90" | FileCheck %s --check-prefix=SM90_0
// RUN: softmax-opt %s --rowred-decompose --rowred-plan="cols=256 chip=sm_90" | FileCheck %s --check-prefix=SM90_256
// RUN: softmax-opt %s --rowred-decompose --rowred-plan="cols=1024 chip=sm_90" | FileCheck %s --check-prefix=SM90_1024
// RUN: softmax-opt %s --rowred-decompose --rowred-plan="cols=4096 chip=sm_90" | FileCheck %s --check-prefix=SM90_4096
// RUN: softmax-opt %s --rowred-decompose --rowred-plan="cols=12288 chip=sm_90" | FileCheck %s --check-prefix=SM90_12288
// RUN: softmax-opt %s --rowred-decompose --rowred-plan="cols=32768 chip=sm_90" | FileCheck %s --check-prefix=SM90_32768
// RUN: softmax-opt %s --rowred-decompose --rowred-plan="cols=49152 chip=sm_90" | FileCheck %s --check-prefix=SM90_49152
// RUN: softmax-opt %s --rowred-decompose --rowred-plan="cols=65536 chip=sm_90" | FileCheck %s --check-prefix=SM90_65536
// RUN: softmax-opt %s --rowred-decompose --rowred-plan="cols=40000 chip=sm_90" | FileCheck %s --check-prefix=SM90_40000
// RUN: softmax-opt %s --rowred-decompose --rowred-plan="cols=1048583 chip=sm_90" | FileCheck %s --check-prefix=SM90_1048583
// RUN: softmax-opt %s --rowred-decompose --rowred-plan="cols=4194311 chip=sm_90" | FileCheck %s --check-prefix=SM90_4194311
// RUN: softmax-opt %s --rowred-decompose --rowred-plan="cols=1048576 chip=sm_90" | FileCheck %s --check-prefix=SM90_1048576
// RUN: softmax-opt %s --rowred-decompose --rowred-plan="cols=8388608 chip=sm_90" | FileCheck %s --check-prefix=SM90_8388608
// RUN: softmax-opt %s --rowred-decompose --rowred-plan="cols=4096 chip=sm_80" | FileCheck %s --check-prefix=SM80_4096
// RUN: softmax-opt %s --rowred-decompose --rowred-plan="cols=32768 chip=sm_80" | FileCheck %s --check-prefix=SM80_32768
// RUN: softmax-opt %s --rowred-decompose --rowred-plan="cols=1048576 chip=sm_80" | FileCheck %s --check-prefix=SM80_1048576
// RUN: softmax-opt %s --rowred-decompose --rowred-plan="cols=32768 chip=sm_89" | FileCheck %s --check-prefix=SM89_32768
// RUN: softmax-opt %s --rowred-decompose --rowred-plan="cols=8388608 chip=sm_120" | FileCheck %s --check-prefix=SM120_8388608

// SM90_0-LABEL: func.func @f32
// SM90_0: rowred.plan = #rowred.plan<strategy = online, block = 16384, warps = 32, vector = 4, prefetch = registers, cache_hints = true>
// SM90_0-LABEL: func.func @bf16
// SM90_0: rowred.plan = #rowred.plan<strategy = online, block = 16384, warps = 16, vector = 8, prefetch = registers, cache_hints = true>

// SM90_256-LABEL: func.func @f32
// SM90_256: rowred.plan = #rowred.plan<strategy = fused, block = 256, warps = 4, rows_per_block = 4, vector = 4, max_cols = 256, stage_elements = 256>
// SM90_256-LABEL: func.func @bf16
// SM90_256: rowred.plan = #rowred.plan<strategy = fused, block = 256, warps = 4, rows_per_block = 4, vector = 8, prefetch = registers, max_cols = 256, stage_elements = 256>

// SM90_1024-LABEL: func.func @f32
// SM90_1024: rowred.plan = #rowred.plan<strategy = fused, block = 1024, warps = 4, rows_per_block = 4, vector = 4, max_cols = 1024, stage_elements = 1024, min_blocks_per_sm = 8>
// SM90_1024-LABEL: func.func @bf16
// SM90_1024: rowred.plan = #rowred.plan<strategy = fused, block = 1024, warps = 4, rows_per_block = 4, vector = 8, max_cols = 1024, stage_elements = 1024, min_blocks_per_sm = 8>

// SM90_4096-LABEL: func.func @f32
// SM90_4096: rowred.plan = #rowred.plan<strategy = fused, block = 4096, warps = 4, vector = 4, max_cols = 4096, stage_elements = 4096, cache_hints = true, grid = rows>
// SM90_4096-LABEL: func.func @bf16
// SM90_4096: rowred.plan = #rowred.plan<strategy = fused, block = 4096, warps = 4, vector = 8, max_cols = 4096, stage_elements = 4096, grid = rows>

// SM90_12288-LABEL: func.func @f32
// SM90_12288: rowred.plan = #rowred.plan<strategy = fused, block = 12288, warps = 12, vector = 4, reread = true, max_cols = 12288, stage_elements = 12288, cache_hints = true, grid = rows>
// SM90_12288-LABEL: func.func @bf16
// SM90_12288: rowred.plan = #rowred.plan<strategy = online, block = 2048, warps = 4, vector = 8, prefetch = stage, max_cols = 12288, stage_elements = 12288, grid = rows>

// SM90_32768-LABEL: func.func @f32
// SM90_32768: rowred.plan = #rowred.plan<strategy = fused, block = 32768, warps = 32, vector = 4, reread = true, max_cols = 32768, stage_elements = 32768, cache_hints = true, grid = rows>
// SM90_32768-LABEL: func.func @bf16
// SM90_32768: rowred.plan = #rowred.plan<strategy = online, block = 8192, warps = 16, vector = 8, prefetch = stage, max_cols = 32768, stage_elements = 32768, grid = rows>

// SM90_49152-LABEL: func.func @f32
// SM90_49152: rowred.plan = #rowred.plan<strategy = cluster, block = 12288, warps = 12, cluster = 4, vector = 4, reread = true, max_cols = 49152, stage_elements = 12288, min_blocks_per_sm = 2>
// SM90_49152-LABEL: func.func @bf16
// SM90_49152: rowred.plan = #rowred.plan<strategy = online, block = 8192, warps = 16, vector = 8, prefetch = stage, max_cols = 49152, stage_elements = 49152, grid = rows>

// SM90_65536-LABEL: func.func @f32
// SM90_65536: rowred.plan = #rowred.plan<strategy = chunks, block = 8192, warps = 4, vector = 4, chunk_stage = 8192, min_blocks_per_sm = 5>
// SM90_65536-LABEL: func.func @bf16
// SM90_65536: rowred.plan = #rowred.plan<strategy = chunks, block = 4096, warps = 4, vector = 8, chunk_stage = 12288, min_blocks_per_sm = 8>

// SM90_40000-LABEL: func.func @f32
// SM90_40000: rowred.plan = #rowred.plan<strategy = cluster, block = 12288, warps = 12, cluster = 4, vector = 4, reread = true, max_cols = 49152, stage_elements = 12288, min_blocks_per_sm = 2>
// SM90_40000-LABEL: func.func @bf16
// SM90_40000: rowred.plan = #rowred.plan<strategy = online, block = 8192, warps = 16, vector = 8, prefetch = stage, max_cols = 40960, stage_elements = 40960, grid = rows>

// Odd rows to 4194304 are cut into chunks (the peeled path); longer ones
// stream over a cluster of 16 blocks.
// SM90_1048583-LABEL: func.func @f32
// SM90_1048583: rowred.plan = #rowred.plan<strategy = chunks, block = 8192, warps = 4, vector = 4, chunk_stage = 8192, min_blocks_per_sm = 5>
// SM90_1048583-LABEL: func.func @bf16
// SM90_1048583: rowred.plan = #rowred.plan<strategy = chunks, block = 4096, warps = 4, vector = 8, chunk_stage = 12288, min_blocks_per_sm = 8>
// SM90_4194311-LABEL: func.func @f32
// SM90_4194311: rowred.plan = #rowred.plan<strategy = online, block = 16384, warps = 32, cluster = 16, vector = 4, prefetch = registers, max_cols = 4456448, stage_elements = 278528, kept_elements = 49152, keep_ahead = tiles, cache_hints = true, min_blocks_per_sm = 1>
// SM90_4194311-LABEL: func.func @bf16
// SM90_4194311: rowred.plan = #rowred.plan<strategy = online, block = 32768, warps = 32, cluster = 16, vector = 8, prefetch = registers, stage_elements = 294912, cache_hints = true, min_blocks_per_sm = 1>

// SM90_1048576-LABEL: func.func @f32
// SM90_1048576: rowred.plan = #rowred.plan<strategy = chunks, block = 8192, warps = 4, vector = 4, chunk_stage = 8192, min_blocks_per_sm = 5>
// SM90_1048576-LABEL: func.func @bf16
// SM90_1048576: rowred.plan = #rowred.plan<strategy = chunks, block = 4096, warps = 4, vector = 8, chunk_stage = 12288, min_blocks_per_sm = 8>

// SM90_8388608-LABEL: func.func @f32
// SM90_8388608: rowred.plan = #rowred.plan<strategy = online, block = 16384, warps = 32, cluster = 16, vector = 4, prefetch = registers, max_cols = 8388608, stage_elements = 524288, kept_elements = 49152, keep_ahead = tiles, cache_hints = true, min_blocks_per_sm = 1>
// SM90_8388608-LABEL: func.func @bf16
// SM90_8388608: rowred.plan = #rowred.plan<strategy = online, block = 32768, warps = 32, cluster = 16, vector = 8, prefetch = registers, stage_elements = 524288, cache_hints = true, min_blocks_per_sm = 1>

// SM80_4096-LABEL: func.func @f32
// SM80_4096: rowred.plan = #rowred.plan<strategy = fused, chip = "sm_80", block = 4096, warps = 4, vector = 4, max_cols = 4096, stage_elements = 4096>
// SM80_4096-LABEL: func.func @bf16
// SM80_4096: rowred.plan = #rowred.plan<strategy = fused, chip = "sm_80", block = 4096, warps = 4, vector = 8, prefetch = registers, max_cols = 4096, stage_elements = 4096>

// SM80_32768-LABEL: func.func @f32
// SM80_32768: rowred.plan = #rowred.plan<strategy = fused, chip = "sm_80", block = 32768, warps = 32, vector = 4, reread = true, prefetch = stage, max_cols = 32768, stage_elements = 32768>
// SM80_32768-LABEL: func.func @bf16
// SM80_32768: rowred.plan = #rowred.plan<strategy = fused, chip = "sm_80", block = 32768, warps = 32, vector = 8, reread = true, prefetch = stage, max_cols = 32768, stage_elements = 32768>

// SM80_1048576-LABEL: func.func @f32
// SM80_1048576: rowred.plan = #rowred.plan<strategy = online, chip = "sm_80", block = 16384, warps = 32, vector = 4, prefetch = registers, stage_elements = 1048576, cache_hints = true>
// SM80_1048576-LABEL: func.func @bf16
// SM80_1048576: rowred.plan = #rowred.plan<strategy = online, chip = "sm_80", block = 16384, warps = 16, vector = 8, prefetch = registers, stage_elements = 1048576, cache_hints = true>

// SM89_32768-LABEL: func.func @f32
// SM89_32768: rowred.plan = #rowred.plan<strategy = fused, chip = "sm_89", block = 32768, warps = 32, vector = 4, reread = true, max_cols = 32768, stage_elements = 32768>
// SM89_32768-LABEL: func.func @bf16
// SM89_32768: rowred.plan = #rowred.plan<strategy = fused, chip = "sm_89", block = 32768, warps = 32, vector = 8, reread = true, prefetch = stage, max_cols = 32768, stage_elements = 32768>

// SM120_8388608-LABEL: func.func @f32
// SM120_8388608: rowred.plan = #rowred.plan<strategy = online, chip = "sm_120", block = 8192, warps = 16, cluster = 16, vector = 4, prefetch = registers, max_cols = 8388608, stage_elements = 524288, kept_elements = 8192, keep_ahead = tiles, cache_hints = true>
// SM120_8388608-LABEL: func.func @bf16
// SM120_8388608: rowred.plan = #rowred.plan<strategy = online, chip = "sm_120", block = 32768, warps = 32, cluster = 16, vector = 8, prefetch = registers, stage_elements = 524288, cache_hints = true, min_blocks_per_sm = 1>

func.func @f32(%x: memref<?x?xf32>, %y: memref<?x?xf32>) {
  rowred.softmax dimension(1) ins(%x : memref<?x?xf32>) outs(%y : memref<?x?xf32>)
  return
}
func.func @bf16(%x: memref<?x?xbf16>, %y: memref<?x?xbf16>) {
  rowred.softmax dimension(1) ins(%x : memref<?x?xbf16>) outs(%y : memref<?x?xbf16>)
  return
}
