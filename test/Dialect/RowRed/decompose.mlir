// RUN: softmax-opt %s --rowred-decompose --split-input-file | FileCheck %s

// CHECK-LABEL: func.func @softmax
// CHECK-SAME: (%[[X:.*]]: memref<?x?xf32>, %[[Y:.*]]: memref<?x?xf32>)
// CHECK-NOT: rowred.softmax
// CHECK: %[[C0:.*]] = arith.constant 0 : index
// CHECK: %[[ROWS:.*]] = memref.dim %[[X]], %[[C0]]
// CHECK: %[[M:.*]] = memref.alloc(%[[ROWS]]) : memref<?xf32>
// CHECK: rowred.reduce max ins(%[[X]] : memref<?x?xf32>) outs(%[[M]] : memref<?xf32>) {
// CHECK-NEXT: ^bb0(%[[A:.*]]: f32):
// CHECK-NEXT: rowred.yield %[[A]] : f32
// CHECK: %[[S:.*]] = memref.alloc(%[[ROWS]]) : memref<?xf32>
// CHECK: rowred.reduce sum ins(%[[X]] : memref<?x?xf32>) rows(%[[M]] : memref<?xf32>) outs(%[[S]] : memref<?xf32>) {
// CHECK-NEXT: ^bb0(%[[B:.*]]: f32, %[[BM:.*]]: f32):
// CHECK-NEXT: %[[D:.*]] = arith.subf %[[B]], %[[BM]] : f32
// CHECK-NEXT: %[[E:.*]] = math.exp %[[D]] : f32
// CHECK-NEXT: rowred.yield %[[E]] : f32
// CHECK: rowred.map ins(%[[X]] : memref<?x?xf32>) rows(%[[M]], %[[S]] : memref<?xf32>, memref<?xf32>) outs(%[[Y]] : memref<?x?xf32>) {
// CHECK-NEXT: ^bb0(%[[C:.*]]: f32, %[[CM:.*]]: f32, %[[CS:.*]]: f32):
// CHECK-NEXT: %[[D2:.*]] = arith.subf %[[C]], %[[CM]] : f32
// CHECK-NEXT: %[[E2:.*]] = math.exp %[[D2]] : f32
// CHECK-NEXT: %[[R:.*]] = arith.divf %[[E2]], %[[CS]] : f32
// CHECK-NEXT: rowred.yield %[[R]] : f32
// CHECK-NEXT: } {rowred.origin = "softmax"}
// CHECK: memref.dealloc %[[S]]
// CHECK: memref.dealloc %[[M]]
func.func @softmax(%x: memref<?x?xf32>, %y: memref<?x?xf32>) {
  rowred.softmax dimension(1) ins(%x : memref<?x?xf32>) outs(%y : memref<?x?xf32>)
  return
}

// -----

// Static shapes give static row-scalar buffers; log-softmax maps with
// x - m - log(s).
// CHECK-LABEL: func.func @log_softmax
// CHECK-NOT: memref.dim
// CHECK: %[[M:.*]] = memref.alloc() : memref<16xf32>
// CHECK: rowred.reduce max ins(%{{.*}} : memref<16x781xbf16>) outs(%[[M]] : memref<16xf32>)
// CHECK: %[[S:.*]] = memref.alloc() : memref<16xf32>
// CHECK: rowred.reduce sum
// CHECK: rowred.map
// CHECK-NEXT: ^bb0(%[[C:.*]]: f32, %[[CM:.*]]: f32, %[[CS:.*]]: f32):
// CHECK-NEXT: %[[D:.*]] = arith.subf %[[C]], %[[CM]] : f32
// CHECK-NEXT: %[[L:.*]] = math.log %[[CS]] : f32
// CHECK-NEXT: %[[R:.*]] = arith.subf %[[D]], %[[L]] : f32
// CHECK-NEXT: rowred.yield %[[R]] : f32
// CHECK-NEXT: } {rowred.origin = "log_softmax"}
func.func @log_softmax(%x: memref<16x781xbf16>, %y: memref<16x781xbf16>) {
  rowred.log_softmax dimension(1) ins(%x : memref<16x781xbf16>) outs(%y : memref<16x781xbf16>)
  return
}

// -----

// Other ops are left alone.
// CHECK-LABEL: func.func @untouched
// CHECK: rowred.reduce max
// CHECK-NOT: memref.alloc
func.func @untouched(%x: memref<4x8xf32>, %m: memref<4xf32>) {
  rowred.reduce max ins(%x : memref<4x8xf32>) outs(%m : memref<4xf32>) {
  ^bb0(%xj: f32):
    rowred.yield %xj : f32
  }
  return
}
