// The softmax backward: one sum over two inputs (y and dy), then a map of
// both: one level of reduces, two operands held through it.
func.func @softmax_backward(%y: memref<?x?xf32>, %dy: memref<?x?xf32>,
                            %dx: memref<?x?xf32>) {
  rowred.softmax_backward dimension(1) ins(%y, %dy : memref<?x?xf32>, memref<?x?xf32>) outs(%dx : memref<?x?xf32>)
  return
}
