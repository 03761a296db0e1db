// RUN: softmax-opt %s -split-input-file -verify-diagnostics --rowred-plan="cols=4096" --convert-rowred-to-gpu | FileCheck %s

// A plan written in the input is kept by rowred-plan (which would choose a
// fused block of 4096 on 128 threads here) and followed by the lowering:
// a block of 2048 elements on 64 threads.

// CHECK: rowred.kernels = {softmax_kernel0 = {block_elements = 2048 : i64, block_threads = 64 : i64,
// CHECK-SAME: elements_per_thread = 32 : i64
// CHECK-SAME: strategy = "fused", vector_width = 2 : i64
// CHECK: gpu.func @softmax_kernel0
// CHECK-SAME: known_block_size = array<i32: 64, 1, 1>
func.func @softmax(%x: memref<?x?xf32>, %y: memref<?x?xf32>) {
  %c0 = arith.constant 0 : index
  %rows = memref.dim %x, %c0 : memref<?x?xf32>
  %m = memref.alloc(%rows) : memref<?xf32>
  %s = memref.alloc(%rows) : memref<?xf32>
  rowred.reduce max ins(%x : memref<?x?xf32>) outs(%m : memref<?xf32>) {
  ^bb0(%xj: f32):
    rowred.yield %xj : f32
  }
  rowred.reduce sum ins(%x : memref<?x?xf32>) rows(%m : memref<?xf32>) outs(%s : memref<?xf32>) {
  ^bb0(%xj: f32, %mi: f32):
    %d = arith.subf %xj, %mi : f32
    %e = math.exp %d : f32
    rowred.yield %e : f32
  }
  rowred.map ins(%x : memref<?x?xf32>) rows(%m, %s : memref<?xf32>, memref<?xf32>) outs(%y : memref<?x?xf32>) {
  ^bb0(%xj: f32, %mi: f32, %si: f32):
    %d = arith.subf %xj, %mi : f32
    %e = math.exp %d : f32
    %r = arith.divf %e, %si : f32
    rowred.yield %r : f32
  } {rowred.origin = "softmax", rowred.plan = #rowred.plan<strategy = fused, block = 2048, warps = 2, vector = 2, max_cols = 2048>}
  memref.dealloc %s : memref<?xf32>
  memref.dealloc %m : memref<?xf32>
  return
}

// -----

// The online kernel needs the softmax pair of reduces; a plan that asks for
// it elsewhere is refused.
func.func @online_plan_on_a_sum(%x: memref<?x?xf32>, %y: memref<?x?xf32>) {
  %c0 = arith.constant 0 : index
  %rows = memref.dim %x, %c0 : memref<?x?xf32>
  %s = memref.alloc(%rows) : memref<?xf32>
  rowred.reduce sum ins(%x : memref<?x?xf32>) outs(%s : memref<?xf32>) {
  ^bb0(%xj: f32):
    rowred.yield %xj : f32
  }
  // expected-error @+1 {{'rowred.map' op #rowred.plan asks for online, which needs a max reduce followed by a sum of exp(x - max), as produced by rowred-decompose}}
  rowred.map ins(%x : memref<?x?xf32>) rows(%s : memref<?xf32>) outs(%y : memref<?x?xf32>) {
  ^bb0(%xj: f32, %si: f32):
    %r = arith.divf %xj, %si : f32
    rowred.yield %r : f32
  } {rowred.plan = #rowred.plan<strategy = online, block = 4096, warps = 4, vector = 4>}
  memref.dealloc %s : memref<?xf32>
  return
}

// -----

// A plan and a request together: the request would be ignored.
func.func @plan_and_request(%x: memref<?x?xf32>, %m: memref<?xf32>, %y: memref<?x?xf32>) {
  // expected-error @+1 {{'rowred.map' op has both a #rowred.plan and a #rowred.plan_request; give the whole plan or the fields to request}}
  rowred.map ins(%x : memref<?x?xf32>) rows(%m : memref<?xf32>) outs(%y : memref<?x?xf32>) {
  ^bb0(%xj: f32, %mi: f32):
    %d = arith.subf %xj, %mi : f32
    rowred.yield %d : f32
  } {rowred.plan = #rowred.plan<strategy = fused, block = 1024, warps = 4, vector = 4, max_cols = 1024>, rowred.plan_request = #rowred.plan_request<warps = 8>}
  return
}
