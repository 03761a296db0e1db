func.func @ce_grad(%x: memref<?x?xbf16>, %l: memref<?xi64>, %g: memref<?xf32>, %loss: memref<?xf32>, %lse: memref<?xf32>) {
  rowred.cross_entropy ignore_index(-100) label_smoothing(0.1) ins(%x : memref<?x?xbf16>) labels(%l : memref<?xi64>) grad_scale(%g : memref<?xf32>) outs(%loss : memref<?xf32>) lse(%lse : memref<?xf32>) grad(%x : memref<?x?xbf16>)
  return
}
