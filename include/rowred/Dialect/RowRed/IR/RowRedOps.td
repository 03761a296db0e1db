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
  let summary = "Row-wise reductions over 2-D buffers (softmax, norms and "
                "their pieces)";
  let description = [{
    The `rowred` dialect describes computations that reduce every row of
    2-D buffers to a few per-row scalars and then map each element of the
    rows using those scalars. Softmax is the first member:

    ```
    m_i = max_j x_ij
    s_i = sum_j exp(x_ij - m_i)
    y_ij = exp(x_ij - m_i) / s_i
    ```

    The dialect has two levels:

    * High-level, destination-style ops that name the whole computation:
      `rowred.softmax`, `rowred.log_softmax`, their gradients
      `rowred.softmax_backward` and `rowred.log_softmax_backward`, the
      normalizations `rowred.rms_norm` and `rowred.layer_norm` and their
      gradients `rowred.rms_norm_backward` and `rowred.layer_norm_backward`,
      and the per-row results `rowred.logsumexp` and `rowred.cross_entropy`,
      and the gradient `rowred.logsumexp_backward`.
    * `rowred.reduce` and `rowred.map`: the generic pieces. A reduce folds an
      element-wise expression of rows (its region) with a combiner (`max`
      or `sum`) into one f32 scalar per row; a map computes every element of
      its outputs from the elements of its inputs at the same place, of
      per-column operands (a weight) and of per-row scalars, and may write
      per-row results; `rowred.gather` reads one element of every row at a
      per-row column (a label).

    `rowred-decompose` rewrites the high-level ops into the pieces, and
    `convert-rowred-to-gpu` fuses a chain of reduces and the map that reads
    their results into one GPU kernel.

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
                       I64Attr:$dimension, UnitAttr:$safe);
  let assemblyFormat = [{
    `dimension` `(` $dimension `)` (`safe` $safe^)?
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
    With `safe`, a row that is entirely `-inf` (a fully masked attention
    row) gives zeros instead, as PyTorch's `_safe_softmax`.

    Example:

    ```mlir
    rowred.softmax dimension(1)
        ins(%x : memref<?x?xf32>) outs(%y : memref<?x?xf32>)
    rowred.softmax dimension(1) safe
        ins(%s : memref<?x?xbf16>) outs(%p : memref<?x?xbf16>)
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
    `rowred.softmax` (`-inf` elements of a finite row give `-inf`; with
    `safe`, a row that is entirely `-inf` gives zeros).

    Example:

    ```mlir
    rowred.log_softmax dimension(1)
        ins(%x : memref<4x1024xbf16>) outs(%y : memref<4x1024xbf16>)
    ```
  }];
}

class RowRed_SoftmaxBackwardLikeOp<string mnemonic> :
    RowRed_Op<mnemonic, [DeclareOpInterfaceMethods<MemoryEffectsOpInterface>]> {
  let arguments = (ins AnyMemRef:$output, AnyMemRef:$grad_output,
                       AnyMemRef:$grad_input, I64Attr:$dimension);
  let assemblyFormat = [{
    `dimension` `(` $dimension `)`
    `ins` `(` $output `,` $grad_output `:` type($output) `,`
      type($grad_output) `)`
    `outs` `(` $grad_input `:` type($grad_input) `)`
    attr-dict
  }];
  let hasVerifier = 1;
  let extraClassDefinition = [{
    ::llvm::LogicalResult $cppClass::verify() {
      return verifyBackward(*this, getOutput(), getGradOutput(),
                            getGradInput(), getDimension());
    }
    void $cppClass::getEffects(
        ::llvm::SmallVectorImpl<::mlir::SideEffects::EffectInstance<
            ::mlir::MemoryEffects::Effect>> &effects) {
      addEffects(effects, {&getOutputMutable(), &getGradOutputMutable()},
                 {&getGradInputMutable()});
    }
  }];
}

def RowRed_SoftmaxBackwardOp : RowRed_SoftmaxBackwardLikeOp<"softmax_backward"> {
  let summary = "Gradient of a row-wise softmax";
  let description = [{
    Given `output` = softmax(x) (y) and `grad_output` (dy), the gradient of
    a loss with respect to y, writes the gradient with respect to x:

    ```
    grad_input[i, j] = y[i, j] * (dy[i, j] - sum_k dy[i, k] * y[i, k])
    ```

    as PyTorch's `_softmax_backward_data`. The three buffers are rank 2
    with the same shape; their element types (f32, f16 or bf16) may
    differ. Arithmetic is done in f32. `grad_input` may be `grad_output`
    (in place). `dimension` must be the innermost one (1).

    Example:

    ```mlir
    rowred.softmax_backward dimension(1)
        ins(%y, %dy : memref<?x?xbf16>, memref<?x?xbf16>)
        outs(%dx : memref<?x?xbf16>)
    ```
  }];
}

def RowRed_LogSoftmaxBackwardOp :
    RowRed_SoftmaxBackwardLikeOp<"log_softmax_backward"> {
  let summary = "Gradient of a row-wise log-softmax";
  let description = [{
    Given `output` = log_softmax(x) (y) and `grad_output` (dy), writes the
    gradient with respect to x:

    ```
    grad_input[i, j] = dy[i, j] - exp(y[i, j]) * sum_k dy[i, k]
    ```

    as PyTorch's `_log_softmax_backward_data`, with the operands and
    constraints of `rowred.softmax_backward`.

    Example:

    ```mlir
    rowred.log_softmax_backward dimension(1)
        ins(%y, %dy : memref<?x?xf32>, memref<?x?xf32>)
        outs(%dx : memref<?x?xf32>)
    ```
  }];
}

def RowRed_RmsNormOp : RowRed_Op<"rms_norm", [
    AttrSizedOperandSegments,
    DeclareOpInterfaceMethods<MemoryEffectsOpInterface>]> {
  let summary = "Root-mean-square normalization of every row";
  let description = [{
    Writes, for every row `i` of `input` and every column `j`,

    ```
    output[i, j] = input[i, j] * rsqrt(mean_k input[i, k]^2 + epsilon)
                   * weight[j]
    ```

    as `torch.nn.functional.rms_norm` over the last dimension (without
    `weight`, the factor is 1). `input` and `output` are rank 2 with the
    same shape; `weight` is rank 1 with one element per column; element
    types are f32, f16 or bf16 and may differ. Arithmetic is done in f32.
    With `rstd`, a rank-1 buffer of one element per row (f32, f16 or bf16),
    every row's `rsqrt(mean_k input[i, k]^2 + epsilon)` is written there as
    well, as a backward pass needs it.

    With `residual` and `residual_out` (both or neither; rank 2, the shape
    of `input`), the row normalized is the sum of `input` and `residual`,
    rounded to `residual_out`'s element type, which is written to
    `residual_out` as well:

    ```
    h[i, j] = input[i, j] + residual[i, j]
    residual_out[i, j] = h[i, j]
    output[i, j] = h[i, j] * rsqrt(mean_k h[i, k]^2 + epsilon) * weight[j]
    ```

    as `h = x + r; F.rms_norm(h, ...)` computes it in PyTorch, in one pass:
    the pre-norm residual stream of a transformer block. `residual_out` may
    be `residual` itself (the stream updated in place), and `output` may be
    `input`.

    Examples:

    ```mlir
    rowred.rms_norm epsilon(1.0e-06)
        ins(%x : memref<?x4096xbf16>) weight(%w : memref<4096xbf16>)
        outs(%y : memref<?x4096xbf16>) rstd(%r : memref<?xf32>)
    rowred.rms_norm epsilon(1.0e-06)
        ins(%x : memref<?x4096xbf16>) residual(%h : memref<?x4096xbf16>)
        weight(%w : memref<4096xbf16>)
        outs(%x : memref<?x4096xbf16>) residual_out(%h : memref<?x4096xbf16>)
    ```
  }];
  let arguments = (ins AnyMemRef:$input, Optional<AnyMemRef>:$residual,
                       Optional<AnyMemRef>:$weight, AnyMemRef:$output,
                       Optional<AnyMemRef>:$residual_out,
                       Optional<AnyMemRef>:$rstd, F32Attr:$epsilon);
  let assemblyFormat = [{
    `epsilon` `(` $epsilon `)`
    `ins` `(` $input `:` type($input) `)`
    (`residual` `(` $residual^ `:` type($residual) `)`)?
    (`weight` `(` $weight^ `:` type($weight) `)`)?
    `outs` `(` $output `:` type($output) `)`
    (`residual_out` `(` $residual_out^ `:` type($residual_out) `)`)?
    (`rstd` `(` $rstd^ `:` type($rstd) `)`)?
    attr-dict
  }];
  let hasVerifier = 1;
}

def RowRed_RmsNormBackwardOp : RowRed_Op<"rms_norm_backward", [
    AttrSizedOperandSegments,
    DeclareOpInterfaceMethods<MemoryEffectsOpInterface>]> {
  let summary = "Gradients of the root-mean-square normalization of every row";
  let description = [{
    Given the rows `input` (x) of a `rowred.rms_norm`, the per-row `rstd`
    it wrote (r), its `weight` (w; 1 without) and the gradient
    `grad_output` (dy) of a loss with respect to its output, writes the
    gradient with respect to x and, with `weight_grad`, the one with
    respect to the weight, as PyTorch's RMSNorm backward:

    ```
    x_hat[i, j] = x[i, j] * r[i]
    g[i, j] = dy[i, j] * w[j]
    grad_input[i, j] = r[i] * (g[i, j] - x_hat[i, j] * mean_k g[i, k] x_hat[i, k])
                       + grad_residual[i, j]
    weight_grad[j] = sum_i dy[i, j] * x_hat[i, j]
    ```

    Each row is read once (x and dy) and written once; `weight_grad` is a
    reduction down the columns in the same kernel (`rowred.map`'s
    `column_sums`), summed in a fixed order. With `grad_residual` (the
    residual form's x being `h = x + residual`, the gradient of h from its
    other uses: the residual stream's), grad_input is the whole gradient of
    h, and so of both inputs of the residual form, in the same kernel
    (0 without). `input`, `grad_output`, `grad_residual` and `grad_input`
    are rank 2 with the same shape (f32, f16 or bf16, which may differ);
    `rstd` is a rank-1 f32 buffer of one element per row; `weight` and
    `weight_grad` are rank 1 with one element per column (f32, f16 or
    bf16). Arithmetic is done in f32. `grad_input` may be `grad_output` or
    `grad_residual` (in place).

    Example:

    ```mlir
    rowred.rms_norm_backward ins(%x, %dy : memref<?x4096xbf16>, memref<?x4096xbf16>)
        rstd(%r : memref<?xf32>) weight(%w : memref<4096xbf16>)
        outs(%dx : memref<?x4096xbf16>) weight_grad(%dw : memref<4096xbf16>)
    rowred.rms_norm_backward ins(%h, %dy : memref<?x4096xbf16>, memref<?x4096xbf16>)
        rstd(%r : memref<?xf32>) weight(%w : memref<4096xbf16>)
        grad_residual(%dh : memref<?x4096xbf16>)
        outs(%dx : memref<?x4096xbf16>) weight_grad(%dw : memref<4096xbf16>)
    ```
  }];
  let arguments = (ins AnyMemRef:$input, AnyMemRef:$grad_output,
                       AnyMemRef:$rstd, Optional<AnyMemRef>:$weight,
                       Optional<AnyMemRef>:$grad_residual,
                       AnyMemRef:$grad_input,
                       Optional<AnyMemRef>:$weight_grad);
  let assemblyFormat = [{
    `ins` `(` $input `,` $grad_output `:` type($input) `,`
      type($grad_output) `)`
    `rstd` `(` $rstd `:` type($rstd) `)`
    (`weight` `(` $weight^ `:` type($weight) `)`)?
    (`grad_residual` `(` $grad_residual^ `:` type($grad_residual) `)`)?
    `outs` `(` $grad_input `:` type($grad_input) `)`
    (`weight_grad` `(` $weight_grad^ `:` type($weight_grad) `)`)?
    attr-dict
  }];
  let hasVerifier = 1;
}

def RowRed_LayerNormOp : RowRed_Op<"layer_norm", [
    AttrSizedOperandSegments,
    DeclareOpInterfaceMethods<MemoryEffectsOpInterface>]> {
  let summary = "Layer normalization of every row";
  let description = [{
    Writes, for every row `i` of `input` and every column `j`,

    ```
    mean_i = sum_k input[i, k] / N
    var_i = sum_k (input[i, k] - mean_i)^2 / N
    output[i, j] = (input[i, j] - mean_i) * rsqrt(var_i + epsilon)
                   * weight[j] + bias[j]
    ```

    as `torch.nn.functional.layer_norm` over the last dimension (the
    biased variance; without `weight` the factor is 1, without `bias` the
    term is 0). The elements are shifted by a first mean, and the mean and
    variance of the shifted elements correct it, so that rows with a large
    mean and a small spread (mean 1e4, spread 1) keep f32 precision.
    Operands and types as `rowred.rms_norm`; with `mean` and `rstd` (rank
    1, one element per row), every row's `mean_i` and `rsqrt(var_i +
    epsilon)` are written there as well, as `torch.native_layer_norm`
    returns them.

    Example:

    ```mlir
    rowred.layer_norm epsilon(1.0e-05)
        ins(%x : memref<?x?xf32>) weight(%w : memref<?xf32>)
        bias(%b : memref<?xf32>) outs(%y : memref<?x?xf32>)
        mean(%m : memref<?xf32>) rstd(%r : memref<?xf32>)
    ```
  }];
  let arguments = (ins AnyMemRef:$input, Optional<AnyMemRef>:$weight,
                       Optional<AnyMemRef>:$bias, AnyMemRef:$output,
                       Optional<AnyMemRef>:$mean, Optional<AnyMemRef>:$rstd,
                       F32Attr:$epsilon);
  let assemblyFormat = [{
    `epsilon` `(` $epsilon `)`
    `ins` `(` $input `:` type($input) `)`
    (`weight` `(` $weight^ `:` type($weight) `)`)?
    (`bias` `(` $bias^ `:` type($bias) `)`)?
    `outs` `(` $output `:` type($output) `)`
    (`mean` `(` $mean^ `:` type($mean) `)`)?
    (`rstd` `(` $rstd^ `:` type($rstd) `)`)?
    attr-dict
  }];
  let hasVerifier = 1;
}

def RowRed_LayerNormBackwardOp : RowRed_Op<"layer_norm_backward", [
    AttrSizedOperandSegments,
    DeclareOpInterfaceMethods<MemoryEffectsOpInterface>]> {
  let summary = "Gradients of the layer normalization of every row";
  let description = [{
    Given the rows `input` (x) of a `rowred.layer_norm`, the per-row `mean`
    and `rstd` it wrote (m, r), its `weight` (w; 1 without) and the
    gradient `grad_output` (dy) of a loss with respect to its output,
    writes the gradient with respect to x and, with `weight_grad` and
    `bias_grad`, those with respect to the weight and the bias, as
    PyTorch's `native_layer_norm_backward`:

    ```
    x_hat[i, j] = (x[i, j] - m[i]) * r[i]
    g[i, j] = dy[i, j] * w[j]
    grad_input[i, j] = r[i] * (g[i, j] - mean_k g[i, k]
                               - x_hat[i, j] * mean_k g[i, k] x_hat[i, k])
    weight_grad[j] = sum_i dy[i, j] * x_hat[i, j]
    bias_grad[j] = sum_i dy[i, j]
    ```

    Each row is read once (x and dy) and written once; the weight's and
    the bias's gradients are reductions down the columns in the same kernel
    (`rowred.map`'s `column_sums`), summed in a fixed order. Operands and
    types as `rowred.rms_norm_backward`, with `mean` and `rstd` rank-1 f32
    buffers of one element per row.

    Example:

    ```mlir
    rowred.layer_norm_backward ins(%x, %dy : memref<?x4096xbf16>, memref<?x4096xbf16>)
        mean(%m : memref<?xf32>) rstd(%r : memref<?xf32>)
        weight(%w : memref<4096xbf16>) outs(%dx : memref<?x4096xbf16>)
        weight_grad(%dw : memref<4096xbf16>) bias_grad(%db : memref<4096xbf16>)
    ```
  }];
  let arguments = (ins AnyMemRef:$input, AnyMemRef:$grad_output,
                       AnyMemRef:$mean, AnyMemRef:$rstd,
                       Optional<AnyMemRef>:$weight, AnyMemRef:$grad_input,
                       Optional<AnyMemRef>:$weight_grad,
                       Optional<AnyMemRef>:$bias_grad);
  let assemblyFormat = [{
    `ins` `(` $input `,` $grad_output `:` type($input) `,`
      type($grad_output) `)`
    `mean` `(` $mean `:` type($mean) `)`
    `rstd` `(` $rstd `:` type($rstd) `)`
    (`weight` `(` $weight^ `:` type($weight) `)`)?
    `outs` `(` $grad_input `:` type($grad_input) `)`
    (`weight_grad` `(` $weight_grad^ `:` type($weight_grad) `)`)?
    (`bias_grad` `(` $bias_grad^ `:` type($bias_grad) `)`)?
    attr-dict
  }];
  let hasVerifier = 1;
}

def RowRed_LogSumExpOp : RowRed_Op<"logsumexp", [
    DeclareOpInterfaceMethods<MemoryEffectsOpInterface>]> {
  let summary = "Log of the sum of the exponentials of every row";
  let description = [{
    Writes, for every row `i` of `input`,

    ```
    output[i] = m_i + log(sum_k exp(input[i, k] - m_i))
    m_i = max_k input[i, k], or 0 when that is infinite
    ```

    as `torch.logsumexp` over the last dimension: a row holding a NaN gives
    NaN, a row holding `+inf` gives `+inf`, a row that is entirely `-inf`
    gives `-inf`. `input` is rank 2 (f32, f16 or bf16, rows contiguous);
    `output` is rank 1 with one element per row, of f32, f16 or bf16.
    Arithmetic is done in f32.

    Example:

    ```mlir
    rowred.logsumexp ins(%x : memref<?x?xbf16>) outs(%lse : memref<?xf32>)
    ```
  }];
  let arguments = (ins AnyMemRef:$input, AnyMemRef:$output);
  let assemblyFormat = [{
    `ins` `(` $input `:` type($input) `)`
    `outs` `(` $output `:` type($output) `)`
    attr-dict
  }];
  let hasVerifier = 1;
}

def RowRed_LogSumExpBackwardOp : RowRed_Op<"logsumexp_backward", [
    DeclareOpInterfaceMethods<MemoryEffectsOpInterface>]> {
  let summary = "Gradient of the logsumexp of every row";
  let description = [{
    Given the rows `input` (x), their logsumexp `lse` (as
    `rowred.logsumexp` writes it) and the gradient `grad` (g) of a loss with
    respect to each row's logsumexp, writes the gradient with respect to x:

    ```
    grad_input[i, j] = g[i] * exp(x[i, j] - lse[i])
    ```

    that is `g[i] * softmax(x)[i, j]`, as PyTorch's `logsumexp` backward. A
    row whose logsumexp is infinite (a `+inf` in the row, or a row of
    `-inf`) gives NaN. `input` and `grad_input` are rank 2 with the same
    shape (f32, f16 or bf16, which may differ; rows contiguous);
    `grad_input` may be `input` (in place); `lse` and `grad` are rank-1 f32
    buffers with one element per row. Arithmetic is done in f32. The
    decomposition is one `rowred.map`: one read of x, one write of the
    gradient.

    Example:

    ```mlir
    rowred.logsumexp_backward ins(%x : memref<?x?xbf16>)
        lse(%lse : memref<?xf32>) grad(%g : memref<?xf32>)
        outs(%dx : memref<?x?xbf16>)
    ```
  }];
  let arguments = (ins AnyMemRef:$input, AnyMemRef:$lse, AnyMemRef:$grad,
                       AnyMemRef:$grad_input);
  let assemblyFormat = [{
    `ins` `(` $input `:` type($input) `)`
    `lse` `(` $lse `:` type($lse) `)`
    `grad` `(` $grad `:` type($grad) `)`
    `outs` `(` $grad_input `:` type($grad_input) `)`
    attr-dict
  }];
  let hasVerifier = 1;
}

def RowRed_CrossEntropyOp : RowRed_Op<"cross_entropy", [
    AttrSizedOperandSegments,
    DeclareOpInterfaceMethods<MemoryEffectsOpInterface>]> {
  let summary = "Cross-entropy loss of every row of logits against a label";
  let description = [{
    Writes, for every row `i` of `logits` with the class `labels[i]`,

    ```
    m_i    = max_k logits[i, k]
    lse_i  = m_i + log(sum_k exp(logits[i, k] - m_i))
    nll_i  = lse_i - logits[i, labels[i]]
    loss[i] = (1 - s) * nll_i + s * (lse_i - sum_k logits[i, k] / N)
    ```

    where `s` is `label_smoothing` (0 by default), and `loss[i] = 0` when
    `labels[i]` equals `ignore_index` (-100 by default), as
    `torch.nn.functional.cross_entropy(logits, labels, reduction="none")`.
    A label outside `[0, N)` other than `ignore_index` gives a NaN loss
    (PyTorch stops with a device-side assertion). As PyTorch's (which goes
    through `log_softmax`), a row holding a NaN or `+inf`, or entirely
    `-inf`, gives a NaN loss unless ignored. With `lse`, every row's
    logsumexp is written there as well (ignored rows included), as the
    backward pass needs it, with `rowred.logsumexp`'s special values.

    With `grad` (rank 2, the shape of `logits`), the gradient of the loss
    with respect to the logits is written in the same pass:

    ```
    grad[i, j] = g_i * (exp(logits[i, j] - lse_i) - (1 - s) * [j == labels[i]]
                        - s / N)
    ```

    where `g_i` is `grad_scale[i]` (1 without `grad_scale`; 0 for ignored
    rows): the gradient of `sum_i g_i * loss[i]`, so that a mean over the
    rows that are not ignored passes `1 / count` for every row. `grad` may
    be `logits` itself: training at a large vocabulary then holds no second
    logits-sized buffer (each element is read before it is overwritten).
    Rows of NaN losses get NaN gradients.

    A rank-0 `loss` receives the sum of the rows' losses instead (ignored
    rows add 0: `reduction="sum"`), and `count`, rank-0 f32, the number of
    rows whose label is not `ignore_index`, so that `loss / count` is
    `reduction="mean"`; both are summed in the kernel, in a fixed order
    (`rowred.map`'s totals). `grad_scale` is then the incoming gradient of
    the sum, or of the mean divided by the count, for every row.

    `logits` is rank 2 (f32, f16 or bf16, rows contiguous); `labels` is
    rank 1 of i32 or i64 with one element per row; `loss` (rank 1 with one
    element per row, or rank 0) and `lse` (rank 1) are of f32, f16 or bf16;
    `grad_scale` is rank 1 of f32 with one element per row. Arithmetic is
    done in f32.

    Examples:

    ```mlir
    rowred.cross_entropy ignore_index(-100)
        ins(%logits : memref<?x128256xbf16>) labels(%y : memref<?xi64>)
        outs(%loss : memref<?xf32>) lse(%lse : memref<?xf32>)
    rowred.cross_entropy ignore_index(-100)
        ins(%logits : memref<?x128256xbf16>) labels(%y : memref<?xi64>)
        grad_scale(%g : memref<?xf32>) outs(%loss : memref<?xf32>)
        grad(%logits : memref<?x128256xbf16>)
    rowred.cross_entropy ignore_index(-100)
        ins(%logits : memref<?x32000xbf16>) labels(%y : memref<?xi64>)
        outs(%sum : memref<f32>) count(%n : memref<f32>)
    ```
  }];
  let arguments = (ins AnyMemRef:$logits, AnyMemRef:$labels,
                       Optional<AnyMemRef>:$grad_scale, AnyMemRef:$loss,
                       Optional<AnyMemRef>:$count,
                       Optional<AnyMemRef>:$lse, Optional<AnyMemRef>:$grad,
                       DefaultValuedAttr<I64Attr, "-100">:$ignore_index,
                       DefaultValuedAttr<F32Attr, "0.0f">:$label_smoothing);
  let assemblyFormat = [{
    `ignore_index` `(` custom<IgnoreIndex>($ignore_index) `)`
    (`label_smoothing` `(` $label_smoothing^ `)`)?
    `ins` `(` $logits `:` type($logits) `)`
    `labels` `(` $labels `:` type($labels) `)`
    (`grad_scale` `(` $grad_scale^ `:` type($grad_scale) `)`)?
    `outs` `(` $loss `:` type($loss) `)`
    (`count` `(` $count^ `:` type($count) `)`)?
    (`lse` `(` $lse^ `:` type($lse) `)`)?
    (`grad` `(` $grad^ `:` type($grad) `)`)?
    attr-dict
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Generic pieces
//===----------------------------------------------------------------------===//

def RowRed_ReduceOp : RowRed_Op<"reduce", [
    AttrSizedOperandSegments,
    DeclareOpInterfaceMethods<MemoryEffectsOpInterface>,
    SingleBlock]> {
  let summary = "Reduces an element-wise expression of every row to a scalar";
  let description = [{
    For every row `i` of the 2-D `inputs` (all of the same shape), evaluates
    the region on the elements `inputs[k][i, j]` (extended to f32), the
    per-column elements `cols[c][j]` and the row scalars `rows[r][i]`, folds
    the values it yields with `combiner`, and writes the result to
    `init[i]`:

    ```
    init[i] = combine_j body(inputs[0][i, j], ..., cols[0][j], ...,
                             rows[0][i], ...)
    ```

    The region has one f32 block argument per input, then one per `cols`
    operand, then one per `rows` operand (of that operand's element type),
    and yields one f32. `init` is a rank-1 f32 buffer with one element per
    row; every `rows` operand is a rank-1 buffer of f32 (row scalars) or of
    i32 or i64 (per-row integers such as labels) with one element per row;
    every `cols` operand is a rank-1 buffer of f32, f16 or bf16 with one
    element per column. `rowred.row_length` gives the body the number of
    columns.

    Combiners, their identities and NaN behaviour:

    * `max`: `arith.maximumf` semantics. Identity `-inf` (never NaN: a NaN
      identity would poison every row and break the online combiner). A NaN
      anywhere in the row gives NaN; `-0.0 < +0.0`.
    * `sum`: f32 addition, identity `+0.0`, in an unspecified order. NaN and
      infinities propagate as in IEEE-754.

    The identity is what padded (out-of-range) lanes of a GPU block
    contribute, so it never changes a result.

    Examples (the second step of softmax, `s_i = sum_j exp(x_ij - m_i)`, and
    the sum of softmax backward, `s_i = sum_j dy_ij * y_ij`):

    ```mlir
    rowred.reduce sum ins(%x : memref<?x?xf32>)
        rows(%m : memref<?xf32>) outs(%s : memref<?xf32>) {
    ^bb0(%xj: f32, %mi: f32):
      %d = arith.subf %xj, %mi : f32
      %e = math.exp %d : f32
      rowred.yield %e : f32
    }
    rowred.reduce sum ins(%y, %dy : memref<?x?xbf16>, memref<?x?xbf16>)
        outs(%s : memref<?xf32>) {
    ^bb0(%yj: f32, %dyj: f32):
      %p = arith.mulf %yj, %dyj : f32
      rowred.yield %p : f32
    }
    ```
  }];
  let arguments = (ins RowRed_CombinerAttr:$combiner,
                       Variadic<AnyMemRef>:$inputs,
                       Variadic<AnyMemRef>:$columns,
                       Variadic<AnyMemRef>:$rows, AnyMemRef:$init);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    $combiner `ins` `(` $inputs `:` type($inputs) `)`
    (`cols` `(` $columns^ `:` type($columns) `)`)?
    (`rows` `(` $rows^ `:` type($rows) `)`)?
    `outs` `(` $init `:` type($init) `)`
    $body attr-dict
  }];
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
  let extraClassDeclaration = [{
    /// The value padded lanes contribute: `-inf` for max, `0` for sum.
    llvm::APFloat getIdentity();
    /// The first input, whose shape every input has.
    mlir::Value getInput() { return getInputs().front(); }
  }];
}

def RowRed_MapOp : RowRed_Op<"map", [
    AttrSizedOperandSegments,
    DeclareOpInterfaceMethods<MemoryEffectsOpInterface>,
    SingleBlock]> {
  let summary = "Writes every element of rows from inputs and row scalars";
  let description = [{
    For every column `j` of every row `i`, evaluates the region on the
    elements `inputs[k][i, j]` (extended to f32), the per-column elements
    `cols[c][j]` and the row scalars `rows[r][i]`, and writes the f32 values
    it yields, rounded to each output's element type, to `outputs[o][i, j]`.
    Inputs and 2-D outputs have the same shape; their element types are
    f32, f16 or bf16 and may differ. An output may be an input (in place).

    An output may also be rank 1, with one element per row: it receives,
    once per row, the value yielded for it, which must depend only on the
    row scalars (per-row results: a logsumexp, a loss, a mean). A map may
    have only such outputs.

    With `column_sums`, rank-1 buffers (f32, f16 or bf16) of one element
    per column, the map also reduces down the columns: each receives, once
    all rows are done, the sum over every row `i` of the value yielded for
    it at `(i, j)`, taken in f32 and rounded once to its element type
    (the norms' weight and bias gradients). A rank-0 `column_sums` buffer
    is a total over the rows instead: it receives the sum over every row of
    the value yielded for it, which, as a per-row output's, must depend only
    on the row scalars (a reduced loss, a count of rows). The sum's order is
    fixed by the kernel's plan: the same inputs give the same bits on every
    run. A map may have only column sums.

    The region has one f32 block argument per input, then one per `cols`
    operand, then one per `rows` operand (f32, or the integer type of an
    integer `rows` operand), and yields one f32 per output, then one per
    column sum.

    Examples (the last step of softmax, of RMSNorm with its weight, and of
    its backward with the weight's gradient):

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
    rowred.map ins(%x : memref<?x4096xbf16>) cols(%w : memref<4096xbf16>)
        rows(%r : memref<?xf32>) outs(%y : memref<?x4096xbf16>) {
    ^bb0(%xj: f32, %wj: f32, %ri: f32):
      %n = arith.mulf %xj, %ri : f32
      %v = arith.mulf %n, %wj : f32
      rowred.yield %v : f32
    }
    rowred.map ins(%x, %dy : memref<?x4096xbf16>, memref<?x4096xbf16>)
        cols(%w : memref<4096xbf16>) rows(%r, %s : memref<?xf32>, memref<?xf32>)
        outs(%dx : memref<?x4096xbf16>)
        column_sums(%dw : memref<4096xbf16>) {
    ^bb0(%xj: f32, %dyj: f32, %wj: f32, %ri: f32, %si: f32):
      ...
      rowred.yield %dxj, %dwj : f32, f32
    }
    ```
  }];
  let arguments = (ins Variadic<AnyMemRef>:$inputs,
                       Variadic<AnyMemRef>:$columns,
                       Variadic<AnyMemRef>:$rows,
                       Variadic<AnyMemRef>:$outputs,
                       Variadic<AnyMemRef>:$column_sums);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    `ins` `(` $inputs `:` type($inputs) `)`
    (`cols` `(` $columns^ `:` type($columns) `)`)?
    (`rows` `(` $rows^ `:` type($rows) `)`)?
    (`outs` `(` $outputs^ `:` type($outputs) `)`)?
    (`column_sums` `(` $column_sums^ `:` type($column_sums) `)`)?
    $body attr-dict
  }];
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
  let extraClassDeclaration = [{
    /// The first input, whose shape every input and output has.
    mlir::Value getInput() { return getInputs().front(); }
    /// The first output.
    mlir::Value getOutput() { return getOutputs().front(); }
    /// Whether `output` has one element per row (rank 1) rather than one
    /// per element.
    static bool isRowOutput(mlir::Value output);
    /// Whether column sum `sums` is a total over the rows (rank 0) rather
    /// than one sum per column.
    static bool isTotal(mlir::Value sums);
  }];
}

def RowRed_GatherOp : RowRed_Op<"gather", [
    DeclareOpInterfaceMethods<MemoryEffectsOpInterface>]> {
  let summary = "Reads one element of every row, at a per-row column";
  let description = [{
    Writes, for every row `i`, the element of `input` at column
    `indices[i]`, extended to f32:

    ```
    init[i] = input[i, indices[i]]   when 0 <= indices[i] < N
    init[i] = NaN                    otherwise
    ```

    `input` is rank 2 (f32, f16 or bf16, rows contiguous); `indices` is a
    rank-1 buffer of i32 or i64 and `init` a rank-1 f32 buffer, each with
    one element per row. Like a reduce, a gather produces a row scalar that
    later reduces and the map of the same kernel read (cross-entropy's
    logit of the label).

    Example:

    ```mlir
    rowred.gather ins(%x : memref<?x?xbf16>) indices(%y : memref<?xi64>)
        outs(%xy : memref<?xf32>)
    ```
  }];
  let arguments = (ins AnyMemRef:$input, AnyMemRef:$indices, AnyMemRef:$init);
  let assemblyFormat = [{
    `ins` `(` $input `:` type($input) `)`
    `indices` `(` $indices `:` type($indices) `)`
    `outs` `(` $init `:` type($init) `)`
    attr-dict
  }];
  let hasVerifier = 1;
}

def RowRed_RowLengthOp : RowRed_Op<"row_length", [
    Pure, ParentOneOf<["ReduceOp", "MapOp"]>]> {
  let summary = "The number of columns of the rows a body is evaluated on";
  let description = [{
    Gives the body of a `rowred.reduce` or `rowred.map` the number of
    columns N of its inputs, as f32 (exact up to 2^24; rounded to nearest
    beyond). Means and variances divide by it.

    Example:

    ```mlir
    %n = rowred.row_length : f32
    ```
  }];
  let results = (outs F32:$result);
  let assemblyFormat = "attr-dict `:` type($result)";
}

def RowRed_ColumnIndexOp : RowRed_Op<"column_index", [
    Pure, ParentOneOf<["MapOp"]>]> {
  let summary = "The column of the element a map body is evaluated on";
  let description = [{
    Gives the body of a `rowred.map` the column `j` of the element it
    computes, as an i32 or i64 (to compare with integer `rows` operands such
    as labels). A value that depends on it varies along the row: a map's
    per-row results may not use it. Cross-entropy's gradient writes its
    one-hot term with it.

    Example:

    ```mlir
    %j = rowred.column_index : i64
    %hit = arith.cmpi eq, %j, %label : i64
    ```
  }];
  let results = (outs AnyTypeOf<[I32, I64]>:$result);
  let assemblyFormat = "attr-dict `:` type($result)";
}

def RowRed_YieldOp : RowRed_Op<"yield", [
    Pure, Terminator, ParentOneOf<["ReduceOp", "MapOp"]>]> {
  let summary = "Yields the per-element values of a reduce or map body";
  let description = [{
    Terminates the region of `rowred.reduce` (one f32) and `rowred.map` (one
    f32 per output) with the values computed for one element.

    Example:

    ```mlir
    rowred.yield %e : f32
    ```
  }];
  let arguments = (ins Variadic<F32>:$values);
  let assemblyFormat = "$values attr-dict `:` type($values)";
}

#endif // ROWRED_OPS
