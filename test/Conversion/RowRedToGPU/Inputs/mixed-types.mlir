// One sum over two inputs of different element types, then a map.
func.func @mixed(%x: memref<?x?xf32>, %z: memref<?x?xbf16>, %y: memref<?x?xf32>) {
  %c0 = arith.constant 0 : index
  %d = memref.dim %x, %c0 : memref<?x?xf32>
  %s = memref.alloc(%d) : memref<?xf32>
  rowred.reduce sum ins(%x, %z : memref<?x?xf32>, memref<?x?xbf16>) outs(%s : memref<?xf32>) {
  ^bb0(%a: f32, %b: f32):
    %m = arith.mulf %a, %b : f32
    rowred.yield %m : f32
  }
  rowred.map ins(%x, %z : memref<?x?xf32>, memref<?x?xbf16>) rows(%s : memref<?xf32>) outs(%y : memref<?x?xf32>) {
  ^bb0(%a: f32, %b: f32, %si: f32):
    %r = arith.mulf %a, %si : f32
    rowred.yield %r : f32
  }
  memref.dealloc %s : memref<?xf32>
  return
}
