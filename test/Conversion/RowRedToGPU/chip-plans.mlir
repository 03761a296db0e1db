// The plans were measured on sm_90. On the other chips, which the project
// cannot time, ptxas holds blocks of 1024 threads at 64 registers and
// spills the values of maps other than softmax's there; those maps take
// blocks of at most 512 threads (a cluster of two slices of 16384 where
// sm_90 holds a fused block of 32768, twice the 16-bit slices; without
// clusters, the online kernel), and their kernels ask ptxas for one block
// per SM (min_blocks_per_sm = 1) instead of sm_90's bounds, so that it
// gives them the registers they need. softmax's own kernels keep sm_90's
// shapes, and so do the rows staged whole (layer_norm's bf16 32768). On sm_120 cross-entropy's gradient, which compares the labels
// with every element, takes slices of at most 8192 (256 threads of 32
// elements). ptxas checks the kernels in test/Pipelines/family-chips.test.

// RUN: softmax-opt %s --rowred-decompose --rowred-plan="cols=32768 chip=sm_90" | FileCheck %s --check-prefix=SM90-32768
// RUN: softmax-opt %s --rowred-decompose --rowred-plan="cols=32768 chip=sm_100" | FileCheck %s --check-prefix=SM100-32768
// RUN: softmax-opt %s --rowred-decompose --rowred-plan="cols=65536 chip=sm_90" | FileCheck %s --check-prefix=SM90-65536
// RUN: softmax-opt %s --rowred-decompose --rowred-plan="cols=65536 chip=sm_120" | FileCheck %s --check-prefix=SM120-65536
// RUN: softmax-opt %s --rowred-decompose --rowred-plan="cols=16384 chip=sm_100" | FileCheck %s --check-prefix=SM100-16384
// RUN: softmax-opt %s --rowred-decompose --rowred-plan="cols=1024 chip=sm_89" | FileCheck %s --check-prefix=SM89-1024
// RUN: softmax-opt %s --rowred-decompose --rowred-plan="cols=16384 chip=sm_120" | FileCheck %s --check-prefix=SM120-16384

// SM90-32768-LABEL: func.func @log_softmax_f32
// SM90-32768: rowred.plan = #rowred.plan<strategy = fused, block = 32768, warps = 32,
// SM90-32768-LABEL: func.func @layer_norm_bf16
// SM90-32768: rowred.plan = #rowred.plan<strategy = online, block = 4096, warps = 16, vector = 8, reread = true, prefetch = stage, max_cols = 32768, stage_elements = 32768, grid = rows>}

// SM100-32768-LABEL: func.func @log_softmax_f32
// SM100-32768: rowred.plan = #rowred.plan<strategy = cluster, chip = "sm_100", block = 16384, warps = 16, cluster = 2, {{.*}}min_blocks_per_sm = 1>
// SM100-32768-LABEL: func.func @layer_norm_bf16
// SM100-32768: rowred.plan = #rowred.plan<strategy = online, chip = "sm_100", block = 4096, warps = 16, {{.*}}prefetch = stage, {{.*}}min_blocks_per_sm = 1>

// 16-bit rows of 65536 are cut into chunks; launches of a few rows take a
// cluster of 8 slices (few_rows_plan), whose log-softmax asks for one block
// per SM on sm_120.
// SM90-65536-LABEL: func.func @softmax_f16
// SM90-65536: rowred.plan = #rowred.plan<strategy = chunks, block = 4096, warps = 4, vector = 8, chunk_stage = 12288, min_blocks_per_sm = 8>
// SM90-65536-LABEL: func.func @log_softmax_f16
// SM90-65536: rowred.plan = #rowred.plan<strategy = chunks, block = 4096, warps = 4, vector = 8, chunk_stage = 12288, min_blocks_per_sm = 8>

// SM120-65536-LABEL: func.func @softmax_f16
// SM120-65536: rowred.few_rows_plan = #rowred.plan<strategy = cluster, chip = "sm_120", block = 8192, warps = 16, cluster = 8, {{[^>]*}}stage_elements = 8192, max_rows = 64>
// SM120-65536-SAME: rowred.plan = #rowred.plan<strategy = chunks, chip = "sm_120"
// SM120-65536-LABEL: func.func @log_softmax_f16
// SM120-65536: rowred.few_rows_plan = #rowred.plan<strategy = cluster, chip = "sm_120", block = 8192, warps = 16, cluster = 8, {{[^>]*}}min_blocks_per_sm = 1, max_rows = 64>

// A warp per row of 1024: softmax's bound of eight blocks per SM (64
// registers) on sm_89 too, one block for log-softmax (at eight it spilled
// 28 bytes there).
// SM89-1024-LABEL: func.func @log_softmax_f32
// SM89-1024: rowred.plan = #rowred.plan<strategy = fused, chip = "sm_89", block = 1024, warps = 4, rows_per_block = 4, {{.*}}min_blocks_per_sm = 1>
// SM89-1024-LABEL: func.func @softmax_f32
// SM89-1024: rowred.plan = #rowred.plan<strategy = fused, chip = "sm_89", block = 1024, warps = 4, rows_per_block = 4, {{.*}}min_blocks_per_sm = 8>

// SM100-16384-LABEL: func.func @cross_entropy_grad_f32
// SM100-16384: rowred.plan = #rowred.plan<strategy = fused, chip = "sm_100", block = 16384, warps = 16, {{.*}}min_blocks_per_sm = 1>
// SM120-16384-LABEL: func.func @cross_entropy_grad_f32
// SM120-16384: rowred.plan = #rowred.plan<strategy = cluster, chip = "sm_120", block = 8192, warps = 16, cluster = 2, {{.*}}min_blocks_per_sm = 1>

func.func @softmax_f16(%x: memref<?x?xf16>, %y: memref<?x?xf16>) {
  rowred.softmax dimension(1) ins(%x : memref<?x?xf16>) outs(%y : memref<?x?xf16>)
  return
}

func.func @log_softmax_f16(%x: memref<?x?xf16>, %y: memref<?x?xf16>) {
  rowred.log_softmax dimension(1) ins(%x : memref<?x?xf16>) outs(%y : memref<?x?xf16>)
  return
}

func.func @log_softmax_f32(%x: memref<?x?xf32>, %y: memref<?x?xf32>) {
  rowred.log_softmax dimension(1) ins(%x : memref<?x?xf32>) outs(%y : memref<?x?xf32>)
  return
}

func.func @layer_norm_bf16(%x: memref<?x?xbf16>, %w: memref<?xbf16>, %b: memref<?xbf16>, %y: memref<?x?xbf16>) {
  rowred.layer_norm epsilon(1.0e-5) ins(%x : memref<?x?xbf16>) weight(%w : memref<?xbf16>) bias(%b : memref<?xbf16>) outs(%y : memref<?x?xbf16>)
  return
}

func.func @cross_entropy_grad_f32(%x: memref<?x?xf32>, %l: memref<?xi64>, %g: memref<?xf32>, %dx: memref<?x?xf32>, %loss: memref<?xf32>, %lse: memref<?xf32>) {
  rowred.cross_entropy ignore_index(-100) ins(%x : memref<?x?xf32>) labels(%l : memref<?xi64>) grad_scale(%g : memref<?xf32>) outs(%loss : memref<?xf32>) lse(%lse : memref<?xf32>) grad(%dx : memref<?x?xf32>)
  return
}

func.func @softmax_f32(%x: memref<?x?xf32>, %y: memref<?x?xf32>) {
  rowred.softmax dimension(1) ins(%x : memref<?x?xf32>) outs(%y : memref<?x?xf32>)
  return
}
