func.func @rms_norm_residual(%x: memref<?x?xbf16>, %r: memref<?x?xbf16>, %w: memref<?xbf16>, %y: memref<?x?xbf16>) {
  rowred.rms_norm epsilon(1.0e-06) ins(%x : memref<?x?xbf16>) residual(%r : memref<?x?xbf16>) weight(%w : memref<?xbf16>) outs(%y : memref<?x?xbf16>) residual_out(%r : memref<?x?xbf16>)
  return
}
