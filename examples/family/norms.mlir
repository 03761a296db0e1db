// RMSNorm in its residual form (h = x + residual written back and
// normalized in one pass, with the rstd the backward reads) and LayerNorm
// with its weight, bias, mean and rstd, over rows of 4096.
//
//   softmax-opt examples/family/norms.mlir --rowred-to-ptx="output-dir=out"
func.func @rms_norm_residual(%x: memref<?x4096xbf16>, %res: memref<?x4096xbf16>,
                             %w: memref<4096xbf16>, %y: memref<?x4096xbf16>,
                             %rstd: memref<?xf32>) {
  rowred.rms_norm epsilon(1.0e-06) ins(%x : memref<?x4096xbf16>)
      residual(%res : memref<?x4096xbf16>) weight(%w : memref<4096xbf16>)
      outs(%y : memref<?x4096xbf16>) residual_out(%res : memref<?x4096xbf16>)
      rstd(%rstd : memref<?xf32>)
  return
}

func.func @layer_norm(%x: memref<?x4096xf32>, %w: memref<4096xf32>,
                      %b: memref<4096xf32>, %y: memref<?x4096xf32>,
                      %mean: memref<?xf32>, %rstd: memref<?xf32>) {
  rowred.layer_norm epsilon(1.0e-05) ins(%x : memref<?x4096xf32>)
      weight(%w : memref<4096xf32>) bias(%b : memref<4096xf32>)
      outs(%y : memref<?x4096xf32>) mean(%mean : memref<?xf32>)
      rstd(%rstd : memref<?xf32>)
  return
}
