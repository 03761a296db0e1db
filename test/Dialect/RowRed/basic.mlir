// RUN: softmax-opt %s | FileCheck %s
// Round-trip: print, parse back and print again must agree.
// RUN: softmax-opt %s | softmax-opt | FileCheck %s

// CHECK-LABEL: func.func @softmax_ops
func.func @softmax_ops(%x: memref<?x?xf32>, %y: memref<?x?xf32>,
                       %h: memref<4x1024xbf16>, %g: memref<4x1024xbf16>,
                       %a: memref<8x781xf16, strided<[1024, 1]>>,
                       %b: memref<8x781xf16>) {
  // CHECK: rowred.softmax dimension(1) ins(%{{.*}} : memref<?x?xf32>) outs(%{{.*}} : memref<?x?xf32>)
  rowred.softmax dimension(1) ins(%x : memref<?x?xf32>) outs(%y : memref<?x?xf32>)
  // CHECK: rowred.log_softmax dimension(1) ins(%{{.*}} : memref<4x1024xbf16>) outs(%{{.*}} : memref<4x1024xbf16>)
  rowred.log_softmax dimension(1) ins(%h : memref<4x1024xbf16>) outs(%g : memref<4x1024xbf16>)
  // CHECK: rowred.softmax dimension(1) ins(%{{.*}} : memref<8x781xf16, strided<[1024, 1]>>) outs(%{{.*}} : memref<8x781xf16>)
  rowred.softmax dimension(1) ins(%a : memref<8x781xf16, strided<[1024, 1]>>) outs(%b : memref<8x781xf16>)
  return
}

// CHECK-LABEL: func.func @generic_pieces
func.func @generic_pieces(%x: memref<?x?xf16>, %m: memref<?xf32>,
                          %s: memref<?xf32>, %y: memref<?x?xf32>) {
  // CHECK: rowred.reduce max ins(%[[X:.*]] : memref<?x?xf16>) outs(%[[M:.*]] : memref<?xf32>) {
  // CHECK-NEXT: ^bb0(%[[A:.*]]: f32):
  // CHECK-NEXT: rowred.yield %[[A]] : f32
  rowred.reduce max ins(%x : memref<?x?xf16>) outs(%m : memref<?xf32>) {
  ^bb0(%xj: f32):
    rowred.yield %xj : f32
  }
  // CHECK: rowred.reduce sum ins(%[[X]] : memref<?x?xf16>) rows(%[[M]] : memref<?xf32>) outs(%[[S:.*]] : memref<?xf32>) {
  // CHECK: math.exp
  rowred.reduce sum ins(%x : memref<?x?xf16>) rows(%m : memref<?xf32>) outs(%s : memref<?xf32>) {
  ^bb0(%xj: f32, %mi: f32):
    %d = arith.subf %xj, %mi : f32
    %e = math.exp %d : f32
    rowred.yield %e : f32
  }
  // CHECK: rowred.map ins(%[[X]] : memref<?x?xf16>) rows(%[[M]], %[[S]] : memref<?xf32>, memref<?xf32>) outs(%{{.*}} : memref<?x?xf32>) {
  // CHECK: ^bb0(%{{.*}}: f32, %{{.*}}: f32, %{{.*}}: f32):
  // CHECK: arith.divf
  // CHECK: rowred.yield
  rowred.map ins(%x : memref<?x?xf16>) rows(%m, %s : memref<?xf32>, memref<?xf32>) outs(%y : memref<?x?xf32>) {
  ^bb0(%xj: f32, %mi: f32, %si: f32):
    %d = arith.subf %xj, %mi : f32
    %e = math.exp %d : f32
    %r = arith.divf %e, %si : f32
    rowred.yield %r : f32
  }
  // A map with no row scalars is allowed (an element-wise conversion).
  // CHECK: rowred.map ins(%[[X]] : memref<?x?xf16>) outs(%{{.*}} : memref<?x?xf32>) {
  rowred.map ins(%x : memref<?x?xf16>) outs(%y : memref<?x?xf32>) {
  ^bb0(%xj: f32):
    rowred.yield %xj : f32
  }
  return
}

// The ops declare their memory effects, so CSE and canonicalize keep them.
// CHECK-LABEL: func.func @not_dead
// CHECK: rowred.softmax
func.func @not_dead(%x: memref<2x3xf32>, %y: memref<2x3xf32>) {
  rowred.softmax dimension(1) ins(%x : memref<2x3xf32>) outs(%y : memref<2x3xf32>)
  return
}
// RUN: softmax-opt %s --canonicalize --cse | FileCheck %s --check-prefix=KEEP
// KEEP-LABEL: func.func @not_dead
// KEEP: rowred.softmax
