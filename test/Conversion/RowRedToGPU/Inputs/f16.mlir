// An f16 softmax whose row length is only known at run time.
func.func @softmax(%x: memref<?x?xf16>, %y: memref<?x?xf16>) {
  rowred.softmax dimension(1) ins(%x : memref<?x?xf16>) outs(%y : memref<?x?xf16>)
  return
}
