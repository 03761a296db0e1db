// RUN: not softmax-opt %s --rowred-export-kernels="output-dir=%t" 2>&1 | FileCheck %s --check-prefix=NO-KERNELS
// RUN: not softmax-opt %s --rowred-decompose --rowred-plan=cols=64 --convert-rowred-to-gpu --rowred-export-kernels="output-dir=%t" 2>&1 | FileCheck %s --check-prefix=NO-BINARY
// RUN: touch %t.file && not softmax-opt %s --rowred-to-ptx="cols=64 output-dir=%t.file/sub" 2>&1 | FileCheck %s --check-prefix=BAD-DIR

// NO-KERNELS: error: no rowred kernels to export: run convert-rowred-to-gpu first
// NO-BINARY: error: expected a gpu.binary for each of the 1 rowred kernels, found 0: run gpu-module-to-binary first
// BAD-DIR: error: cannot create output directory '{{.*}}.file/sub'
// The module, which holds every kernel's PTX, is not printed with it.
// BAD-DIR-NOT: .version
func.func @softmax(%x: memref<?x?xf32>, %y: memref<?x?xf32>) {
  rowred.softmax dimension(1) ins(%x : memref<?x?xf32>) outs(%y : memref<?x?xf32>)
  return
}
