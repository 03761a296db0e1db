// The per-row results of a vocabulary: the logsumexp of every row, and the
// cross-entropy loss against int64 labels (-100 ignored) with the gradient
// written over the logits in the same pass, each row scaled by grad_scale
// (1 / the count of rows not ignored for a mean).
//
//   softmax-opt examples/family/logsumexp_cross_entropy.mlir --rowred-to-ptx="cols=128256 output-dir=out"
func.func @logsumexp(%x: memref<?x?xbf16>, %lse: memref<?xf32>) {
  rowred.logsumexp ins(%x : memref<?x?xbf16>) outs(%lse : memref<?xf32>)
  return
}

func.func @cross_entropy(%logits: memref<?x?xbf16>, %labels: memref<?xi64>,
                         %scale: memref<?xf32>, %loss: memref<?xf32>) {
  rowred.cross_entropy ignore_index(-100) ins(%logits : memref<?x?xbf16>)
      labels(%labels : memref<?xi64>) grad_scale(%scale : memref<?xf32>)
      outs(%loss : memref<?xf32>) grad(%logits : memref<?x?xbf16>)
  return
}
