// The generic pieces written by hand: a sum of squares of each row, then a
// map that scales every element by a per-column gain and the row's
// reciprocal RMS, and also sums each column's scaled values down the rows
// (rowred.map's column_sums). One kernel.
//
//   softmax-opt examples/family/generic.mlir --rowred-to-ptx="output-dir=out"
func.func @scaled_rows(%x: memref<?x2048xf32>, %gain: memref<2048xf32>,
                       %y: memref<?x2048xf32>, %colsum: memref<2048xf32>) {
  %c0 = arith.constant 0 : index
  %rows = memref.dim %x, %c0 : memref<?x2048xf32>
  %ss = memref.alloc(%rows) : memref<?xf32>
  rowred.reduce sum ins(%x : memref<?x2048xf32>) outs(%ss : memref<?xf32>) {
  ^bb0(%xj: f32):
    %sq = arith.mulf %xj, %xj : f32
    rowred.yield %sq : f32
  }
  rowred.map ins(%x : memref<?x2048xf32>) cols(%gain : memref<2048xf32>)
      rows(%ss : memref<?xf32>) outs(%y : memref<?x2048xf32>)
      column_sums(%colsum : memref<2048xf32>) {
  ^bb0(%xj: f32, %gj: f32, %s: f32):
    %n = rowred.row_length : f32
    %mean = arith.divf %s, %n : f32
    %r = math.rsqrt %mean : f32
    %v = arith.mulf %xj, %r : f32
    %out = arith.mulf %v, %gj : f32
    rowred.yield %out, %out : f32, f32
  }
  memref.dealloc %ss : memref<?xf32>
  return
}
