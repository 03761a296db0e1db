// RUN: softmax-opt %s -split-input-file --rowred-plan="cols=4096" --convert-rowred-to-gpu | FileCheck %s

// Any reduce chain feeding a map is fused, not just softmax: here every row
// is scaled by the reciprocal root of its sum of squares, with constants
// captured from the function.

// CHECK: rowred.kernels = {l2norm_kernel0 = {{{.*}}op = "custom"{{.*}}shared_bytes = 16 : i64, strategy = "fused"
// CHECK: gpu.func @l2norm_kernel0
// CHECK-SAME: workgroup(%[[SMEM:.*]] : memref<1x4xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64})
// CHECK: scf.for
// The reduce body squares each element; masked lanes add 0.
// CHECK: %[[SQ:.*]] = arith.mulf %[[E:.*]], %[[E]] : f32
// CHECK: arith.select %{{.*}}, %[[SQ]], %{{.*}} : f32
// CHECK: gpu.barrier
// The row-uniform part of the map (the root) is computed once per row.
// CHECK: %[[R:.*]] = math.rsqrt %{{.*}} : f32
// CHECK-NOT: math.rsqrt
// CHECK: arith.mulf %{{.*}}, %[[R]] : f32
// A single block-level reduction per row: a barrier before the next row
// reuses its shared slot.
// CHECK: llvm.store
// CHECK: gpu.barrier
// CHECK-NEXT: }
func.func @l2norm(%x: memref<?x4096xf32>, %y: memref<?x4096xf32>) {
  %c0 = arith.constant 0 : index
  %eps = arith.constant 1.0e-6 : f32
  %rows = memref.dim %x, %c0 : memref<?x4096xf32>
  %s = memref.alloc(%rows) : memref<?xf32>
  rowred.reduce sum ins(%x : memref<?x4096xf32>) outs(%s : memref<?xf32>) {
  ^bb0(%xj: f32):
    %sq = arith.mulf %xj, %xj : f32
    rowred.yield %sq : f32
  }
  rowred.map ins(%x : memref<?x4096xf32>) rows(%s : memref<?xf32>) outs(%y : memref<?x4096xf32>) {
  ^bb0(%xj: f32, %si: f32):
    %t = arith.addf %si, %eps : f32
    %r = math.rsqrt %t : f32
    %o = arith.mulf %xj, %r : f32
    rowred.yield %o : f32
  }
  memref.dealloc %s : memref<?xf32>
  return
}

// -----

// A map with no reduction (a type conversion) exchanges nothing between
// warps: no shared memory and no barrier, even with four warps.
// CHECK-LABEL: gpu.module @convert_kernel0
// CHECK: gpu.func @convert_kernel0
// CHECK-NOT: workgroup
// CHECK-SAME: known_block_size = array<i32: 128, 1, 1>
// CHECK-NOT: gpu.barrier
// CHECK: arith.truncf %{{.*}} : f32 to bf16
// CHECK-NOT: gpu.barrier
// CHECK: gpu.return
func.func @convert(%x: memref<?x4096xf32>, %y: memref<?x4096xbf16>) {
  rowred.map ins(%x : memref<?x4096xf32>) outs(%y : memref<?x4096xbf16>) {
  ^bb0(%xj: f32):
    rowred.yield %xj : f32
  }
  return
}

// -----

// A per-column operand that only the map reads (a norm's weight) is loaded
// where the map needs it, after the row's reduction, so that its elements
// hold no registers through the reduction; the row's elements are loaded
// before it.
// CHECK-LABEL: gpu.module @scale_kernel0
// CHECK: gpu.func @scale_kernel0(%[[X:[^:]*]]: !llvm.ptr<1>, %{{[^:]*}}: !llvm.ptr<1>, %[[W:[^:]*]]: !llvm.ptr<1>
// CHECK: llvm.getelementptr %[[X]]
// CHECK-NOT: llvm.getelementptr inbounds %[[W]]
// CHECK: gpu.barrier
// CHECK-NOT: llvm.getelementptr inbounds %[[W]]
// CHECK: math.rsqrt
// CHECK: llvm.getelementptr inbounds %[[W]]
// CHECK: arith.mulf
// CHECK: llvm.store
func.func @scale(%x: memref<?x4096xf32>, %w: memref<4096xf32>, %y: memref<?x4096xf32>) {
  %c0 = arith.constant 0 : index
  %rows = memref.dim %x, %c0 : memref<?x4096xf32>
  %s = memref.alloc(%rows) : memref<?xf32>
  rowred.reduce sum ins(%x : memref<?x4096xf32>) outs(%s : memref<?xf32>) {
  ^bb0(%xj: f32):
    %sq = arith.mulf %xj, %xj : f32
    rowred.yield %sq : f32
  }
  rowred.map ins(%x : memref<?x4096xf32>) cols(%w : memref<4096xf32>) rows(%s : memref<?xf32>) outs(%y : memref<?x4096xf32>) {
  ^bb0(%xj: f32, %wj: f32, %si: f32):
    %r = math.rsqrt %si : f32
    %o = arith.mulf %xj, %r : f32
    %p = arith.mulf %o, %wj : f32
    rowred.yield %p : f32
  }
  memref.dealloc %s : memref<?xf32>
  return
}
