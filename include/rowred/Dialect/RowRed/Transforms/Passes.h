//===- Passes.h - RowRed transformation passes ------------------*- C++ -*-===//
//
// Part of the softmax kernel compiler.
//
//===----------------------------------------------------------------------===//

#ifndef ROWRED_DIALECT_ROWRED_TRANSFORMS_PASSES_H
#define ROWRED_DIALECT_ROWRED_TRANSFORMS_PASSES_H

#include "mlir/Pass/Pass.h"

namespace mlir {
class RewritePatternSet;
namespace rowred {

#define GEN_PASS_DECL
#include "rowred/Dialect/RowRed/Transforms/Passes.h.inc"

/// Adds the patterns that rewrite the high-level ops (`rowred.softmax`,
/// `rowred.rms_norm`, ...) into `rowred.reduce` and `rowred.map`.
void populateDecomposePatterns(RewritePatternSet &patterns);

#define GEN_PASS_REGISTRATION
#include "rowred/Dialect/RowRed/Transforms/Passes.h.inc"

} // namespace rowred
} // namespace mlir

#endif // ROWRED_DIALECT_ROWRED_TRANSFORMS_PASSES_H
