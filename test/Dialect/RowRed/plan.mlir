// RUN: softmax-opt %s | FileCheck %s
// RUN: softmax-opt %s | softmax-opt | FileCheck %s

// A #rowred.plan round-trips; fields at their defaults are left out.

// CHECK-LABEL: func.func @fused
// CHECK: rowred.plan = #rowred.plan<strategy = fused, block = 1024, warps = 1, rows_per_block = 4, vector = 4, max_cols = 1024>
func.func @fused(%x: memref<?x1024xf32>, %m: memref<?xf32>, %y: memref<?x1024xf32>) {
  rowred.map ins(%x : memref<?x1024xf32>) rows(%m : memref<?xf32>) outs(%y : memref<?x1024xf32>) {
  ^bb0(%xj: f32, %mi: f32):
    %d = arith.subf %xj, %mi : f32
    rowred.yield %d : f32
  } {rowred.plan = #rowred.plan<strategy = fused, chip = "sm_90", block = 1024, warps = 1, rows_per_block = 4, vector = 4, fast_exp = true, max_cols = 1024>}
  return
}

// Every field away from its default, over three consistent plans, the
// first in another order.
// CHECK-LABEL: func.func @online
// CHECK: #rowred.plan<strategy = online, chip = "sm_80", block = 2048, warps = 16, vector = 4, fast_exp = false, prefetch = registers, max_cols = 65536, stage_elements = 8192, kept_elements = 4096, keep_ahead = tiles, cache_hints = true, grid = rows, min_blocks_per_sm = 2>
func.func @online(%x: memref<?x?xbf16>, %m: memref<?xf32>, %y: memref<?x?xbf16>) {
  rowred.map ins(%x : memref<?x?xbf16>) rows(%m : memref<?xf32>) outs(%y : memref<?x?xbf16>) {
  ^bb0(%xj: f32, %mi: f32):
    rowred.yield %xj : f32
  } {rowred.plan = #rowred.plan<min_blocks_per_sm = 2, strategy = online, chip = "sm_80", warps = 16, block = 2048, vector = 4, fast_exp = false, prefetch = registers, max_cols = 65536, stage_elements = 8192, kept_elements = 4096, keep_ahead = tiles, cache_hints = true, grid = rows>}
  return
}

// CHECK-LABEL: func.func @forward_second_pass
// CHECK: #rowred.plan<strategy = online, block = 4096, warps = 4, vector = 4, reverse_second_pass = false>
func.func @forward_second_pass(%x: memref<?x?xf32>, %m: memref<?xf32>, %y: memref<?x?xf32>) {
  rowred.map ins(%x : memref<?x?xf32>) rows(%m : memref<?xf32>) outs(%y : memref<?x?xf32>) {
  ^bb0(%xj: f32, %mi: f32):
    rowred.yield %xj : f32
  } {rowred.plan = #rowred.plan<strategy = online, block = 4096, warps = 4, vector = 4, reverse_second_pass = false>}
  return
}

// CHECK-LABEL: func.func @cluster
// CHECK: #rowred.plan<strategy = cluster, block = 16384, warps = 16, cluster = 4, vector = 4, reread = true, pair_reduce = true, max_cols = 65536, stage_elements = 16384, hoist_map_loads = true>
func.func @cluster(%x: memref<?x?xf32>, %m: memref<?xf32>, %y: memref<?x?xf32>) {
  rowred.map ins(%x : memref<?x?xf32>) rows(%m : memref<?xf32>) outs(%y : memref<?x?xf32>) {
  ^bb0(%xj: f32, %mi: f32):
    rowred.yield %xj : f32
  } {rowred.plan = #rowred.plan<strategy = cluster, block = 16384, warps = 16, cluster = 4, vector = 4, reread = true, pair_reduce = true, max_cols = 65536, stage_elements = 16384, hoist_map_loads = true>}
  return
}

// CHECK-LABEL: func.func @sums_in_registers
// CHECK: #rowred.plan<strategy = cluster, block = 2048, warps = 4, cluster = 8, vector = 4, max_cols = 16384, stage_elements = 2048, sums_in_registers = true>
func.func @sums_in_registers(%x: memref<?x?xf32>, %y: memref<?x?xf32>, %s: memref<?xf32>) {
  rowred.map ins(%x : memref<?x?xf32>) outs(%y : memref<?x?xf32>) column_sums(%s : memref<?xf32>) {
  ^bb0(%xj: f32):
    rowred.yield %xj, %xj : f32, f32
  } {rowred.plan = #rowred.plan<strategy = cluster, block = 2048, warps = 4, cluster = 8, vector = 4, max_cols = 16384, stage_elements = 2048, sums_in_registers = true>}
  return
}

// CHECK-LABEL: func.func @chunks
// CHECK: #rowred.plan<strategy = chunks, block = 8192, warps = 4, vector = 4, chunk_stage = 8192, min_blocks_per_sm = 5>
func.func @chunks(%x: memref<?x?xf32>, %m: memref<?xf32>, %y: memref<?x?xf32>) {
  rowred.map ins(%x : memref<?x?xf32>) rows(%m : memref<?xf32>) outs(%y : memref<?x?xf32>) {
  ^bb0(%xj: f32, %mi: f32):
    rowred.yield %xj : f32
  } {rowred.plan = #rowred.plan<strategy = chunks, block = 8192, warps = 4, vector = 4, chunk_stage = 8192, min_blocks_per_sm = 5>}
  return
}
