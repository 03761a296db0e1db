// A sum reduce and a map: fusable, but not the online softmax pair.
func.func @online_needs_softmax(%x: memref<4x8xf32>, %y: memref<4x8xf32>) {
  %s = memref.alloc() : memref<4xf32>
  rowred.reduce sum ins(%x : memref<4x8xf32>) outs(%s : memref<4xf32>) {
  ^bb0(%xj: f32):
    rowred.yield %xj : f32
  }
  rowred.map ins(%x : memref<4x8xf32>) rows(%s : memref<4xf32>) outs(%y : memref<4x8xf32>) {
  ^bb0(%xj: f32, %si: f32):
    %r = arith.divf %xj, %si : f32
    rowred.yield %r : f32
  }
  return
}
