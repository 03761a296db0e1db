// The ops of one input and one output of rows (or per-row results) whose
// maps are not softmax's: log-softmax, the safe forms, smoothed
// cross-entropy (test/Pipelines/family-chips.test).
func.func @log_softmax_f32(%x: memref<?x?xf32>, %y: memref<?x?xf32>) {
  rowred.log_softmax dimension(1) ins(%x : memref<?x?xf32>) outs(%y : memref<?x?xf32>)
  return
}

func.func @log_softmax_f16(%x: memref<?x?xf16>, %y: memref<?x?xf16>) {
  rowred.log_softmax dimension(1) ins(%x : memref<?x?xf16>) outs(%y : memref<?x?xf16>)
  return
}

func.func @softmax_safe_f16(%x: memref<?x?xf16>, %y: memref<?x?xf16>) {
  rowred.softmax dimension(1) safe ins(%x : memref<?x?xf16>) outs(%y : memref<?x?xf16>)
  return
}

func.func @softmax_safe_bf16(%x: memref<?x?xbf16>, %y: memref<?x?xbf16>) {
  rowred.softmax dimension(1) safe ins(%x : memref<?x?xbf16>) outs(%y : memref<?x?xbf16>)
  return
}

func.func @log_softmax_safe_f32(%x: memref<?x?xf32>, %y: memref<?x?xf32>) {
  rowred.log_softmax dimension(1) safe ins(%x : memref<?x?xf32>) outs(%y : memref<?x?xf32>)
  return
}

func.func @cross_entropy_smoothed_f16(%x: memref<?x?xf16>, %l: memref<?xi64>, %loss: memref<?xf32>, %lse: memref<?xf32>) {
  rowred.cross_entropy ignore_index(-100) label_smoothing(0.1) ins(%x : memref<?x?xf16>) labels(%l : memref<?xi64>) outs(%loss : memref<?xf32>) lse(%lse : memref<?xf32>)
  return
}
