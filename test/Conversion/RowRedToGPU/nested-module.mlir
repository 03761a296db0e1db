// RUN: not softmax-opt %s --rowred-to-ptx="cols=1024" -o /dev/null 2>&1 | FileCheck %s

// The kernels are placed in the top-level module, next to the functions that
// launch them: a softmax in a nested module is refused at the user's op, not
// with an internal error about gpu.container_module.

// CHECK: nested-module.mlir:[[@LINE+5]]:7: error: 'rowred.map' op (from rowred.softmax) is in a nested module; the GPU lowering puts kernels in the top-level module, with the functions that launch them: move the function there
// CHECK-NOT: container_module
module {
  module @inner {
    func.func @f(%x: memref<?x?xf32>, %y: memref<?x?xf32>) {
      rowred.softmax dimension(1) ins(%x : memref<?x?xf32>) outs(%y : memref<?x?xf32>)
      return
    }
  }
}
