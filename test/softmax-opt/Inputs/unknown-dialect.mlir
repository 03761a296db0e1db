// A dialect softmax-opt does not know.
func.func @f(%x: memref<?x?xf32>, %y: memref<?x?xf32>) {
  nosuch.softmax dimension(1) ins(%x : memref<?x?xf32>) outs(%y : memref<?x?xf32>)
  return
}
