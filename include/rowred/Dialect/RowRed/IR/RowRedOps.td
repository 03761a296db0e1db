//===- RowRedOps.td - Row-wise reduction dialect ops -------*- tablegen -*-===//
//
// Part of the softmax kernel compiler.
//
//===----------------------------------------------------------------------===//

#ifndef ROWRED_OPS
#define ROWRED_OPS

include "mlir/IR/OpBase.td"
include "mlir/IR/EnumAttr.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

//===----------------------------------------------------------------------===//
// Dialect
//===----------------------------------------------------------------------===//

def RowRed_Dialect : Dialect {
  let name = "rowred";
  let cppNamespace = "::mlir::rowred";
  let summary = "Row-wise reductions over 2-D buffers (softmax and its pieces)";
  let description = [{
    The `rowred` dialect describes computations that reduce every row of a
    2-D buffer to a few per-row scalars and then map each element of the row
    using those scalars. Softmax is the first member:

    ```
    m_i = max_j x_ij
    s_i = sum_j exp(x_ij - m_i)
    y_ij = exp(x_ij - m_i) / s_i
    ```

    The dialect has two levels:

    * `rowred.softmax` and `rowred.log_softmax`: high-level, destination-style
      ops that name the whole computation.
    * `rowred.reduce` and `rowred.map`: the generic pieces. A reduce folds an
      element-wise expression of the row (its region) with a combiner (`max`
      or `sum`) into one f32 scalar per row; a map computes every output
      element from the input element and per-row scalars.

    `rowred-decompose` rewrites the high-level ops into the pieces, and
    `convert-rowred-to-gpu` fuses a chain of reduces and a map over the same
    input into one GPU kernel.

    All buffers are memrefs. Inputs and outputs may be f32, f16 or bf16;
    every expression is evaluated in f32 (elements are extended to f32 when
    read and rounded to the output type when written).
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::math::MathDialect",
    "::mlir::memref::MemRefDialect"
  ];
  let useDefaultAttributePrinterParser = 1;
  let hasOperationAttrVerify = 1;
  let extraClassDeclaration = [{
    /// Registers the attributes (RowRedAttrs.cpp).
    void registerAttributes();
  }];
}

class RowRed_Op<string mnemonic, list<Trait> traits = []> :
    Op<RowRed_Dialect, mnemonic, traits>;

include "RowRedAttrs.td"

//===----------------------------------------------------------------------===//
// Enums
//===----------------------------------------------------------------------===//

def RowRed_CombinerMax : I32EnumAttrCase<"max", 0>;
def RowRed_CombinerSum : I32EnumAttrCase<"sum", 1>;

def RowRed_CombinerAttr : I32EnumAttr<"Combiner",
    "combiner of a row reduction",
    [RowRed_CombinerMax, RowRed_CombinerSum]> {
  let cppNamespace = "::mlir::rowred";
}

//===----------------------------------------------------------------------===//
// High-level ops
//===----------------------------------------------------------------------===//

class RowRed_SoftmaxLikeOp<string mnemonic> :
    RowRed_Op<mnemonic, [DeclareOpInterfaceMethods<MemoryEffectsOpInterface>]> {
  let arguments = (ins AnyMemRef:$input, AnyMemRef:$output,
                       I64Attr:$dimension);
  let assemblyFormat = [{
    `dimension` `(` $dimension `)`
    `ins` `(` $input `:` type($input) `)`
    `outs` `(` $output `:` type($output) `)`
    attr-dict
  }];
  let hasVerifier = 1;
  // Shared by softmax and log_softmax; the helpers are in RowRedOps.cpp.
  let extraClassDefinition = [{
    ::llvm::LogicalResult $cppClass::verify() {
      return verifySoftmaxLike(*this, getInput(), getOutput(), getDimension());
    }
    void $cppClass::getEffects(
        ::llvm::SmallVectorImpl<::mlir::SideEffects::EffectInstance<
            ::mlir::MemoryEffects::Effect>> &effects) {
      addEffects(effects, {&getInputMutable()}, {&getOutputMutable()});
    }
  }];
  let extraClassDeclaration = [{
    mlir::MemRefType getInputType() {
      return mlir::cast<mlir::MemRefType>(getInput().getType());
    }
    mlir::MemRefType getOutputType() {
      return mlir::cast<mlir::MemRefType>(getOutput().getType());
    }
  }];
}

def RowRed_SoftmaxOp : RowRed_SoftmaxLikeOp<"softmax"> {
  let summary = "Row-wise softmax of a 2-D buffer";
  let description = [{
    Computes, for every row `i` of `input` and every column `j`,

    ```
    output[i, j] = exp(input[i, j] - m_i) / sum_k exp(input[i, k] - m_i)
    m_i = max_k input[i, k]
    ```

    in destination style: `input` is read, `output` is written. Like
    upstream `linalg.softmax`, `dimension` names the reduced dimension; it
    must be the innermost one (1). Both buffers are rank 2 with the same
    shape and element type, which is f32, f16 or bf16. Arithmetic is done
    in f32. The buffers may be strided (row stride different from the
    number of columns).

    Special values follow `torch.softmax`: a row holding a NaN is all NaN, a
    row that is entirely `-inf` is all NaN, and a row holding `+inf` is all
    NaN (`inf - inf`). `-inf` elements of an otherwise finite row give 0.

    Example:

    ```mlir
    rowred.softmax dimension(1)
        ins(%x : memref<?x?xf32>) outs(%y : memref<?x?xf32>)
    ```
  }];
}

def RowRed_LogSoftmaxOp : RowRed_SoftmaxLikeOp<"log_softmax"> {
  let summary = "Row-wise log-softmax of a 2-D buffer";
  let description = [{
    Computes, for every row `i` of `input` and every column `j`,

    ```
    output[i, j] = input[i, j] - m_i - log(sum_k exp(input[i, k] - m_i))
    m_i = max_k input[i, k]
    ```

    with the same operands, constraints and special-value behaviour as
    `rowred.softmax` (`-inf` elements of a finite row give `-inf`).

    Example:

    ```mlir
    rowred.log_softmax dimension(1)
        ins(%x : memref<4x1024xbf16>) outs(%y : memref<4x1024xbf16>)
    ```
  }];
}

//===----------------------------------------------------------------------===//
// Generic pieces
//===----------------------------------------------------------------------===//

def RowRed_ReduceOp : RowRed_Op<"reduce", [
    DeclareOpInterfaceMethods<MemoryEffectsOpInterface>,
    SingleBlock]> {
  let summary = "Reduces an element-wise expression of every row to a scalar";
  let description = [{
    For every row `i` of the 2-D `input`, evaluates the region on each
    element `input[i, j]` (extended to f32) and on the row scalars
    `rows[k][i]`, folds the values it yields with `combiner`, and writes the
    result to `init[i]`:

    ```
    init[i] = combine_j body(input[i, j], rows[0][i], ..., rows[n-1][i])
    ```

    The region has one f32 block argument for the element followed by one f32
    argument per `rows` operand, and yields one f32. `init` and every `rows`
    operand are rank-1 f32 buffers with one element per row of `input`.

    Combiners, their identities and NaN behaviour:

    * `max`: `arith.maximumf` semantics. Identity `-inf` (never NaN: a NaN
      identity would poison every row and break the online combiner). A NaN
      anywhere in the row gives NaN; `-0.0 < +0.0`.
    * `sum`: f32 addition, identity `+0.0`, in an unspecified order. NaN and
      infinities propagate as in IEEE-754.

    The identity is what padded (out-of-range) lanes of a GPU block
    contribute, so it never changes a result.

    Example (the second step of softmax, `s_i = sum_j exp(x_ij - m_i)`):

    ```mlir
    rowred.reduce sum ins(%x : memref<?x?xf32>)
        rows(%m : memref<?xf32>) outs(%s : memref<?xf32>) {
    ^bb0(%xj: f32, %mi: f32):
      %d = arith.subf %xj, %mi : f32
      %e = math.exp %d : f32
      rowred.yield %e : f32
    }
    ```
  }];
  let arguments = (ins RowRed_CombinerAttr:$combiner, AnyMemRef:$input,
                       Variadic<AnyMemRef>:$rows, AnyMemRef:$init);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    $combiner `ins` `(` $input `:` type($input) `)`
    (`rows` `(` $rows^ `:` type($rows) `)`)?
    `outs` `(` $init `:` type($init) `)`
    $body attr-dict
  }];
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
  let extraClassDeclaration = [{
    /// The value padded lanes contribute: `-inf` for max, `0` for sum.
    llvm::APFloat getIdentity();
  }];
}

def RowRed_MapOp : RowRed_Op<"map", [
    DeclareOpInterfaceMethods<MemoryEffectsOpInterface>,
    SingleBlock]> {
  let summary = "Writes every element of a row from the input and row scalars";
  let description = [{
    For every element `input[i, j]` of the 2-D `input`, evaluates the region
    on the element (extended to f32) and the row scalars `rows[k][i]`, and
    writes the f32 value it yields, rounded to the element type of `output`,
    to `output[i, j]`. `input` and `output` have the same shape; their
    element types are f32, f16 or bf16 and may differ.

    The region has one f32 block argument for the element followed by one f32
    argument per `rows` operand, and yields one f32.

    Example (the last step of softmax):

    ```mlir
    rowred.map ins(%x : memref<?x?xf32>)
        rows(%m, %s : memref<?xf32>, memref<?xf32>)
        outs(%y : memref<?x?xf32>) {
    ^bb0(%xj: f32, %mi: f32, %si: f32):
      %d = arith.subf %xj, %mi : f32
      %e = math.exp %d : f32
      %r = arith.divf %e, %si : f32
      rowred.yield %r : f32
    }
    ```
  }];
  let arguments = (ins AnyMemRef:$input, Variadic<AnyMemRef>:$rows,
                       AnyMemRef:$output);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    `ins` `(` $input `:` type($input) `)`
    (`rows` `(` $rows^ `:` type($rows) `)`)?
    `outs` `(` $output `:` type($output) `)`
    $body attr-dict
  }];
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
}

def RowRed_YieldOp : RowRed_Op<"yield", [
    Pure, Terminator, ParentOneOf<["ReduceOp", "MapOp"]>]> {
  let summary = "Yields the per-element value of a reduce or map body";
  let description = [{
    Terminates the region of `rowred.reduce` and `rowred.map` with the f32
    value computed for one element.

    Example:

    ```mlir
    rowred.yield %e : f32
    ```
  }];
  let arguments = (ins F32:$value);
  let assemblyFormat = "$value attr-dict `:` type($value)";
}

#endif // ROWRED_OPS
