// Softmax of bf16 attention scores (with the safe form: rows that are all
// -inf give zeros) and log-softmax of f32 rows, the forwards of the family.
//
//   softmax-opt examples/family/softmax_log_softmax.mlir --rowred-to-ptx="cols=4096 output-dir=out"
func.func @attention_probs(%scores: memref<?x?xbf16>, %probs: memref<?x?xbf16>) {
  rowred.softmax dimension(1) safe ins(%scores : memref<?x?xbf16>) outs(%probs : memref<?x?xbf16>)
  return
}

func.func @log_probs(%x: memref<?x?xf32>, %y: memref<?x?xf32>) {
  rowred.log_softmax dimension(1) ins(%x : memref<?x?xf32>) outs(%y : memref<?x?xf32>)
  return
}
