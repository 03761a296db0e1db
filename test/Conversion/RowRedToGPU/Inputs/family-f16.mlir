// The family's kernels of generic chunks in f16: rms_norm (one reduce, x
// held), layer_norm (three reduces in two levels) and the softmax backward
// (y and dy held).
func.func @rms_norm(%x: memref<?x?xf16>, %w: memref<?xf16>, %y: memref<?x?xf16>) {
  rowred.rms_norm epsilon(1.0e-05) ins(%x : memref<?x?xf16>) weight(%w : memref<?xf16>) outs(%y : memref<?x?xf16>)
  return
}

func.func @layer_norm(%x: memref<?x?xf16>, %w: memref<?xf16>, %b: memref<?xf16>, %y: memref<?x?xf16>) {
  rowred.layer_norm epsilon(1.0e-05) ins(%x : memref<?x?xf16>) weight(%w : memref<?xf16>) bias(%b : memref<?xf16>) outs(%y : memref<?x?xf16>)
  return
}

func.func @softmax_backward(%y: memref<?x?xf16>, %dy: memref<?x?xf16>, %dx: memref<?x?xf16>) {
  rowred.softmax_backward dimension(1) ins(%y, %dy : memref<?x?xf16>, memref<?x?xf16>) outs(%dx : memref<?x?xf16>)
  return
}
