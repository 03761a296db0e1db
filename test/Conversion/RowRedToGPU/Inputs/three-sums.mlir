// Three sums that read no other reduce's result: one level of three
// reduces.
func.func @three_sums(%x: memref<?x?xf32>, %y: memref<?x?xf32>) {
  %c0 = arith.constant 0 : index
  %d = memref.dim %x, %c0 : memref<?x?xf32>
  %s1 = memref.alloc(%d) : memref<?xf32>
  %s2 = memref.alloc(%d) : memref<?xf32>
  %s3 = memref.alloc(%d) : memref<?xf32>
  rowred.reduce sum ins(%x : memref<?x?xf32>) outs(%s1 : memref<?xf32>) {
  ^bb0(%a: f32):
    rowred.yield %a : f32
  }
  rowred.reduce sum ins(%x : memref<?x?xf32>) outs(%s2 : memref<?xf32>) {
  ^bb0(%a: f32):
    %p = arith.mulf %a, %a : f32
    rowred.yield %p : f32
  }
  rowred.reduce sum ins(%x : memref<?x?xf32>) outs(%s3 : memref<?xf32>) {
  ^bb0(%a: f32):
    %p = arith.mulf %a, %a : f32
    %q = arith.mulf %p, %a : f32
    rowred.yield %q : f32
  }
  rowred.map ins(%x : memref<?x?xf32>) rows(%s1, %s2, %s3 : memref<?xf32>, memref<?xf32>, memref<?xf32>) outs(%y : memref<?x?xf32>) {
  ^bb0(%a: f32, %t1: f32, %t2: f32, %t3: f32):
    %u = arith.addf %t1, %t2 : f32
    %v = arith.addf %u, %t3 : f32
    %r = arith.mulf %a, %v : f32
    rowred.yield %r : f32
  }
  memref.dealloc %s1 : memref<?xf32>
  memref.dealloc %s2 : memref<?xf32>
  memref.dealloc %s3 : memref<?xf32>
  return
}
