//===- Passes.td - RowRed transformation passes ------------*- tablegen -*-===//
//
// Part of the softmax kernel compiler.
//
//===----------------------------------------------------------------------===//

#ifndef ROWRED_DIALECT_ROWRED_TRANSFORMS_PASSES
#define ROWRED_DIALECT_ROWRED_TRANSFORMS_PASSES

include "mlir/Pass/PassBase.td"

def RowRedDecompose : Pass<"rowred-decompose"> {
  let summary = "Rewrite softmax and log_softmax into rowred.reduce and "
                "rowred.map";
  let description = [{
    Replaces every `rowred.softmax` and `rowred.log_softmax` with the generic
    pieces it is made of: two f32 row-scalar buffers (`memref.alloc`), a
    `max` reduce, a `sum` reduce of `exp(x - m)`, and a map that writes the
    output, followed by the deallocation of the buffers.

    ```mlir
    rowred.softmax dimension(1) ins(%x : memref<?x?xf32>)
                                outs(%y : memref<?x?xf32>)
    ```

    becomes

    ```mlir
    %rows = memref.dim %x, %c0 : memref<?x?xf32>
    %m = memref.alloc(%rows) : memref<?xf32>
    %s = memref.alloc(%rows) : memref<?xf32>
    rowred.reduce max ins(%x : memref<?x?xf32>) outs(%m : memref<?xf32>) {
    ^bb0(%xj: f32):
      rowred.yield %xj : f32
    }
    rowred.reduce sum ins(%x : memref<?x?xf32>) rows(%m : memref<?xf32>)
        outs(%s : memref<?xf32>) { ... exp(xj - mi) ... }
    rowred.map ins(%x : memref<?x?xf32>) rows(%m, %s : ...)
        outs(%y : memref<?x?xf32>) { ... exp(xj - mi) / si ... }
    memref.dealloc %s : memref<?xf32>
    memref.dealloc %m : memref<?xf32>
    ```

    Log-softmax maps with `xj - mi - log(si)` instead.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::math::MathDialect",
    "::mlir::memref::MemRefDialect"
  ];
}

#endif // ROWRED_DIALECT_ROWRED_TRANSFORMS_PASSES
