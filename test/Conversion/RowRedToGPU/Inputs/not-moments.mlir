// Two levels shaped like layer_norm's shifted moments but for the second
// sum: (x - s/N) * x, which is not the square of the shifted element.
func.func @not_moments(%x: memref<?x?xf32>, %y: memref<?x?xf32>) {
  %c0 = arith.constant 0 : index
  %d = memref.dim %x, %c0 : memref<?x?xf32>
  %s = memref.alloc(%d) : memref<?xf32>
  %c = memref.alloc(%d) : memref<?xf32>
  %q = memref.alloc(%d) : memref<?xf32>
  rowred.reduce sum ins(%x : memref<?x?xf32>) outs(%s : memref<?xf32>) {
  ^bb0(%a: f32):
    rowred.yield %a : f32
  }
  rowred.reduce sum ins(%x : memref<?x?xf32>) rows(%s : memref<?xf32>) outs(%c : memref<?xf32>) {
  ^bb0(%a: f32, %t: f32):
    %n = rowred.row_length : f32
    %m = arith.divf %t, %n : f32
    %e = arith.subf %a, %m : f32
    rowred.yield %e : f32
  }
  rowred.reduce sum ins(%x : memref<?x?xf32>) rows(%s : memref<?xf32>) outs(%q : memref<?xf32>) {
  ^bb0(%a: f32, %t: f32):
    %n = rowred.row_length : f32
    %m = arith.divf %t, %n : f32
    %e = arith.subf %a, %m : f32
    %p = arith.mulf %e, %a : f32
    rowred.yield %p : f32
  }
  rowred.map ins(%x : memref<?x?xf32>) rows(%s, %c, %q : memref<?xf32>, memref<?xf32>, memref<?xf32>) outs(%y : memref<?x?xf32>) {
  ^bb0(%a: f32, %t1: f32, %t2: f32, %t3: f32):
    %u = arith.addf %t1, %t2 : f32
    %v = arith.addf %u, %t3 : f32
    %r = arith.mulf %a, %v : f32
    rowred.yield %r : f32
  }
  memref.dealloc %s : memref<?xf32>
  memref.dealloc %c : memref<?xf32>
  memref.dealloc %q : memref<?xf32>
  return
}
