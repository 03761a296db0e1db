// Integer elements are rejected by the verifier.
func.func @f(%x: memref<4x8xi32>, %y: memref<4x8xi32>) {
  rowred.softmax dimension(1) ins(%x : memref<4x8xi32>) outs(%y : memref<4x8xi32>)
  return
}
