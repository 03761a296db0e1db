// Row-wise softmax of a bf16 matrix (test/Pipelines/chips.test).
func.func @softmax(%x: memref<?x?xbf16>, %y: memref<?x?xbf16>) {
  rowred.softmax dimension(1) ins(%x : memref<?x?xbf16>) outs(%y : memref<?x?xbf16>)
  return
}
