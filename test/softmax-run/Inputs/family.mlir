// Kernels of several operands for softmax-run's tests.
func.func @rms_norm(%x: memref<?x?xbf16>, %w: memref<?xbf16>, %y: memref<?x?xbf16>) {
  rowred.rms_norm epsilon(1.0e-06) ins(%x : memref<?x?xbf16>) weight(%w : memref<?xbf16>) outs(%y : memref<?x?xbf16>)
  return
}

func.func @layer_norm_bias(%x: memref<?x?xf32>, %b: memref<?xf32>, %y: memref<?x?xf32>) {
  rowred.layer_norm epsilon(1.0e-05) ins(%x : memref<?x?xf32>) bias(%b : memref<?xf32>) outs(%y : memref<?x?xf32>)
  return
}

// Two inputs and no op softmax-run knows.
func.func @custom(%x: memref<?x?xf32>, %r: memref<?x?xf32>, %y: memref<?x?xf32>) {
  rowred.map ins(%x, %r : memref<?x?xf32>, memref<?x?xf32>) outs(%y : memref<?x?xf32>) {
  ^bb0(%a: f32, %b: f32):
    %s = arith.addf %a, %b : f32
    rowred.yield %s : f32
  }
  return
}

// Labels in, the loss and the logsumexp out.
func.func @cross_entropy(%x: memref<?x?xbf16>, %l: memref<?xi64>, %loss: memref<?xf32>, %lse: memref<?xf32>) {
  rowred.cross_entropy ignore_index(-100) ins(%x : memref<?x?xbf16>) labels(%l : memref<?xi64>) outs(%loss : memref<?xf32>) lse(%lse : memref<?xf32>)
  return
}
