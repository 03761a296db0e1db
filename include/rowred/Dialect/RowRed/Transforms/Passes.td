//===- Passes.td - RowRed transformation passes ------------*- tablegen -*-===//
//
// Part of the softmax kernel compiler.
//
//===----------------------------------------------------------------------===//

#ifndef ROWRED_DIALECT_ROWRED_TRANSFORMS_PASSES
#define ROWRED_DIALECT_ROWRED_TRANSFORMS_PASSES

include "mlir/Pass/PassBase.td"

def RowRedDecompose : Pass<"rowred-decompose"> {
  let summary = "Rewrite the high-level rowred ops into rowred.reduce and "
                "rowred.map";
  let description = [{
    Replaces every high-level op with the generic pieces it is made of: f32
    row-scalar buffers (`memref.alloc`), the reduces that fill them, and a
    map that writes the output, followed by the deallocation of the
    buffers. Softmax becomes a `max` reduce, a `sum` reduce of `exp(x - m)`
    and a map:

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

    Log-softmax maps with `xj - mi - log(si)` instead. The others:

    | op | reduces | map |
    |---|---|---|
    | `softmax_backward` (y, dy) | `s = sum(dy * y)` | `y * (dy - s)` |
    | `log_softmax_backward` (y, dy) | `s = sum(dy)` | `dy - exp(y) * s` |
    | `rms_norm` (x, w) | `s = sum(x * x)` | `x * rsqrt(s / N + eps) * w` |
    | `layer_norm` (x, w, b) | `s = sum(x)`; `c = sum(e)`, `q = sum(e^2)` | `(e - c / N) * rsqrt(max(q / N - (c / N)^2, 0) + eps) * w + b` |

    `N` is `rowred.row_length`; the weight and bias are `cols` operands of
    the map. Layer norm shifts its elements as `e = x - s / N` and corrects
    them by the shifted mean `c / N` without forming the mean, which f32
    holds to about 1e-3 in rows of mean 1e4: `e` is exact there and the
    correction small. `c` and `q` read only `s`, so that the kernel reduces
    them together.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::math::MathDialect",
    "::mlir::memref::MemRefDialect"
  ];
}

#endif // ROWRED_DIALECT_ROWRED_TRANSFORMS_PASSES
