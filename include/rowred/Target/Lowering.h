//===- Lowering.h - From planned rowred IR to PTX ---------------*- C++ -*-===//
//
// Part of the softmax kernel compiler.
//
//===----------------------------------------------------------------------===//

#ifndef ROWRED_TARGET_LOWERING_H
#define ROWRED_TARGET_LOWERING_H

#include "llvm/ADT/StringRef.h"

namespace mlir {
class OpPassManager;
namespace rowred {

/// Adds the passes from rowred IR whose maps all have a #rowred.plan to
/// `gpu.binary` ops holding PTX for `chip`: convert-rowred-to-gpu, the NVVM
/// target (the PTX ISA the chip needs), the lowering of the kernels to LLVM
/// and gpu-module-to-binary{format=isa} (libdevice from `cudaPath`).
void buildRowRedLoweringPipeline(OpPassManager &pm, llvm::StringRef chip,
                                 llvm::StringRef cudaPath);

} // namespace rowred
} // namespace mlir

#endif // ROWRED_TARGET_LOWERING_H
