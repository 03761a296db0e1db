//===- RowRedOps.h - Row-wise reduction ops ---------------------*- C++ -*-===//
//
// Part of the softmax kernel compiler.
//
//===----------------------------------------------------------------------===//

#ifndef ROWRED_DIALECT_ROWRED_IR_ROWREDOPS_H
#define ROWRED_DIALECT_ROWRED_IR_ROWREDOPS_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/APFloat.h"

#include "rowred/Dialect/RowRed/IR/RowRedAttrs.h"
#include "rowred/Dialect/RowRed/IR/RowRedDialect.h"

#define GET_OP_CLASSES
#include "rowred/Dialect/RowRed/IR/RowRedOps.h.inc"

namespace mlir {
namespace rowred {
/// Discardable attribute on a `rowred.map` naming the high-level op it was
/// decomposed from (`softmax`, `log_softmax`); kernels record it as `op`.
inline constexpr llvm::StringLiteral kOriginAttrName = "rowred.origin";
/// Discardable f32 attribute on a `rowred.map` holding the `epsilon` of the
/// normalization it was decomposed from; kernels record it as `epsilon`, so
/// that a launcher can compute the reference.
inline constexpr llvm::StringLiteral kEpsilonAttrName = "rowred.epsilon";
/// Discardable attributes on a `rowred.map` decomposed from
/// `rowred.cross_entropy`: its `ignore_index` (i64) and `label_smoothing`
/// (f32), which kernels record under those names.
inline constexpr llvm::StringLiteral kIgnoreIndexAttrName =
    "rowred.ignore_index";
inline constexpr llvm::StringLiteral kLabelSmoothingAttrName =
    "rowred.label_smoothing";
/// Discardable unit attribute on a `rowred.map` decomposed from a `safe`
/// softmax or log_softmax; kernels record it as `safe`.
inline constexpr llvm::StringLiteral kSafeAttrName = "rowred.safe";
/// Discardable attribute on a `rowred.map` holding the #rowred.plan of its
/// kernel (set by rowred-plan, or written in the input), or on the high-level
/// op it is decomposed from.
inline constexpr llvm::StringLiteral kPlanAttrName = "rowred.plan";
/// Discardable attribute on a `rowred.map` holding the #rowred.plan of a
/// second kernel for launches of at most its `max_rows` rows, or an array
/// of such plans of increasing `max_rows` (a launch takes the first that
/// admits its rows), set by rowred-plan where its table has them.
inline constexpr llvm::StringLiteral kFewRowsPlanAttrName =
    "rowred.few_rows_plan";
/// Discardable attribute on a `rowred.map`, or on the high-level op it is
/// decomposed from, holding the #rowred.plan_request that rowred-plan
/// completes into the map's plan.
inline constexpr llvm::StringLiteral kPlanRequestAttrName =
    "rowred.plan_request";

/// Whether `op` is a high-level rowred op (softmax, rms_norm, ...), which
/// rowred-decompose rewrites into the generic pieces.
inline bool isHighLevelOp(Operation *op) {
  return isa<SoftmaxOp, LogSoftmaxOp, SoftmaxBackwardOp, LogSoftmaxBackwardOp,
             RmsNormOp, RmsNormBackwardOp, LayerNormOp, LayerNormBackwardOp,
             LogSumExpOp, LogSumExpBackwardOp,
             CrossEntropyOp>(op);
}
} // namespace rowred
} // namespace mlir

#endif // ROWRED_DIALECT_ROWRED_IR_ROWREDOPS_H
