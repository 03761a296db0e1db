// The backwards: softmax's from its output, logsumexp's from the saved
// logsumexp, and the norms' from the saved statistics, whose weight and
// bias gradients are sums down the columns in the same kernel.
//
//   softmax-opt examples/family/backwards.mlir --rowred-to-ptx="output-dir=out"
func.func @softmax_backward(%y: memref<?x4096xbf16>, %dy: memref<?x4096xbf16>,
                            %dx: memref<?x4096xbf16>) {
  rowred.softmax_backward dimension(1)
      ins(%y, %dy : memref<?x4096xbf16>, memref<?x4096xbf16>)
      outs(%dx : memref<?x4096xbf16>)
  return
}

func.func @logsumexp_backward(%x: memref<?x32000xbf16>, %lse: memref<?xf32>,
                              %g: memref<?xf32>, %dx: memref<?x32000xbf16>) {
  rowred.logsumexp_backward ins(%x : memref<?x32000xbf16>)
      lse(%lse : memref<?xf32>) grad(%g : memref<?xf32>)
      outs(%dx : memref<?x32000xbf16>)
  return
}

func.func @rms_norm_backward(%x: memref<?x4096xbf16>, %dy: memref<?x4096xbf16>,
                             %rstd: memref<?xf32>, %w: memref<4096xbf16>,
                             %dx: memref<?x4096xbf16>, %dw: memref<4096xbf16>) {
  rowred.rms_norm_backward ins(%x, %dy : memref<?x4096xbf16>, memref<?x4096xbf16>)
      rstd(%rstd : memref<?xf32>) weight(%w : memref<4096xbf16>)
      outs(%dx : memref<?x4096xbf16>) weight_grad(%dw : memref<4096xbf16>)
  return
}

func.func @layer_norm_backward(%x: memref<?x4096xf32>, %dy: memref<?x4096xf32>,
                               %mean: memref<?xf32>, %rstd: memref<?xf32>,
                               %w: memref<4096xf32>, %dx: memref<?x4096xf32>,
                               %dw: memref<4096xf32>, %db: memref<4096xf32>) {
  rowred.layer_norm_backward ins(%x, %dy : memref<?x4096xf32>, memref<?x4096xf32>)
      mean(%mean : memref<?xf32>) rstd(%rstd : memref<?xf32>)
      weight(%w : memref<4096xf32>) outs(%dx : memref<?x4096xf32>)
      weight_grad(%dw : memref<4096xf32>) bias_grad(%db : memref<4096xf32>)
  return
}
