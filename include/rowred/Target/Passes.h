//===- Passes.h - RowRed target passes --------------------------*- C++ -*-===//
//
// Part of the softmax kernel compiler.
//
//===----------------------------------------------------------------------===//

#ifndef ROWRED_TARGET_PASSES_H
#define ROWRED_TARGET_PASSES_H

#include "mlir/Pass/Pass.h"

namespace mlir {
class ModuleOp;
namespace rowred {

#define GEN_PASS_DECL
#include "rowred/Target/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "rowred/Target/Passes.h.inc"

} // namespace rowred
} // namespace mlir

#endif // ROWRED_TARGET_PASSES_H
