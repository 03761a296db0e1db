// Layer norm: a sum, then two sums that read its result (the shifted sums
// of the variance): two levels of reduces.
func.func @layer_norm(%x: memref<?x?xf32>, %w: memref<?xf32>,
                      %b: memref<?xf32>, %y: memref<?x?xf32>) {
  rowred.layer_norm epsilon(1.0e-05) ins(%x : memref<?x?xf32>) weight(%w : memref<?xf32>) bias(%b : memref<?xf32>) outs(%y : memref<?x?xf32>)
  return
}
