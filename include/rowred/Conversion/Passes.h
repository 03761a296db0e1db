//===- Passes.h - RowRed conversion passes ----------------------*- C++ -*-===//
//
// Part of the softmax kernel compiler.
//
//===----------------------------------------------------------------------===//

#ifndef ROWRED_CONVERSION_PASSES_H
#define ROWRED_CONVERSION_PASSES_H

#include "rowred/Conversion/RowRedToGPU/RowRedToGPU.h"

namespace mlir {
namespace rowred {

#define GEN_PASS_REGISTRATION
#include "rowred/Conversion/Passes.h.inc"

} // namespace rowred
} // namespace mlir

#endif // ROWRED_CONVERSION_PASSES_H
