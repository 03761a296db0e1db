// A bf16 softmax whose row length is only known at run time.
func.func @softmax(%x: memref<?x?xbf16>, %y: memref<?x?xbf16>) {
  rowred.softmax dimension(1) ins(%x : memref<?x?xbf16>) outs(%y : memref<?x?xbf16>)
  return
}
