//===- RowRedToGPU.h - Lower rowred groups to GPU kernels -------*- C++ -*-===//
//
// Part of the softmax kernel compiler.
//
//===----------------------------------------------------------------------===//

#ifndef ROWRED_CONVERSION_ROWREDTOGPU_ROWREDTOGPU_H
#define ROWRED_CONVERSION_ROWREDTOGPU_ROWREDTOGPU_H

#include "mlir/Pass/Pass.h"

namespace mlir {
class ModuleOp;
namespace rowred {

#define GEN_PASS_DECL_CONVERTROWREDTOGPU
#define GEN_PASS_DECL_ROWREDPLAN
#include "rowred/Conversion/Passes.h.inc"

/// Name of the module attribute holding one dictionary of launch metadata per
/// generated kernel, keyed by the kernel's name.
inline constexpr llvm::StringLiteral kKernelsAttrName = "rowred.kernels";

} // namespace rowred
} // namespace mlir

#endif // ROWRED_CONVERSION_ROWREDTOGPU_ROWREDTOGPU_H
