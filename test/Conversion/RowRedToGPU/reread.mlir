// RUN: softmax-opt %s --test-rowred-plan-request="fields='warps = 16, reread = true, prefetch = none, cache_hints = false'" --rowred-decompose --rowred-plan="cols=16384" --convert-rowred-to-gpu | FileCheck %s

// With reread = true, the vector path still holds the row in
// registers (32 elements per thread here), but rows that do not allow vector
// accesses are walked in tiles of 4 elements per thread: once per reduction
// (each with its own accumulator) and once more for the map.

// CHECK: gpu.func @softmax_kernel0
// CHECK: scf.if %{{.*}} {
// The vector path: the row in registers, eight 16-byte chunks per thread.
// CHECK-COUNT-8: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xf32>
// CHECK: } else {
// CHECK: scf.for %[[ROW:.*]] = %{{.*}} to %{{.*}} step %{{.*}} : i64 {
// Max: a tile loop of 4 x 512 = 2048 elements accumulating from -inf.
// CHECK: %[[MAX:.*]] = scf.for %{{.*}} = %{{.*}} to %{{.*}} step %c2048_i32{{(_[0-9]+)?}} iter_args(%[[ACC:.*]] = %[[NEG_INF:.*]]) -> (f32) : i32 {
// CHECK-COUNT-4: llvm.load %{{.*}} {alignment = 4 : i64} : !llvm.ptr<1> -> f32
// CHECK: arith.maximumf
// CHECK: scf.yield
// CHECK: gpu.shuffle xor %[[MAX]]
// CHECK: gpu.barrier
// Sum of exp(x - max), read again.
// CHECK: %[[SUM:.*]] = scf.for %{{.*}} = %{{.*}} to %{{.*}} step %c2048_i32{{(_[0-9]+)?}} iter_args(%{{.*}} = %{{.*}}) -> (f32) : i32 {
// CHECK-COUNT-4: llvm.load %{{.*}} {alignment = 4 : i64} : !llvm.ptr<1> -> f32
// CHECK: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f32"
// CHECK: scf.yield
// CHECK: gpu.shuffle xor %[[SUM]]
// CHECK: gpu.barrier
// The map: one reciprocal per row, then a third walk that stores.
// CHECK: arith.divf
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %c2048_i32{{(_[0-9]+)?}} : i32 {
// CHECK-COUNT-4: llvm.store %{{.*}}, %{{.*}} {alignment = 4 : i64} : f32, !llvm.ptr<1>
// CHECK: gpu.return

func.func @softmax(%x: memref<?x?xf32>, %y: memref<?x?xf32>) {
  rowred.softmax dimension(1) ins(%x : memref<?x?xf32>) outs(%y : memref<?x?xf32>)
  return
}
