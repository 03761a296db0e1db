//===- ContractFloatOps.cpp - Let the kernels' float ops fuse -------------===//
//
// Part of the softmax kernel compiler.
//
//===----------------------------------------------------------------------===//

#include "rowred/Target/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

namespace mlir::rowred {
#define GEN_PASS_DEF_ROWREDCONTRACTFLOATOPS
#include "rowred/Target/Passes.h.inc"
} // namespace mlir::rowred

using namespace mlir;

namespace {
/// Adds `contract` to the fast-math flags of every LLVM operation that has
/// them, keeping the flags it had.
struct ContractFloatOps
    : rowred::impl::RowRedContractFloatOpsBase<ContractFloatOps> {
  void runOnOperation() override {
    getOperation().walk([](LLVM::FastmathFlagsInterface op) {
      LLVM::FastmathFlags flags =
          op.getFastmathAttr().getValue() | LLVM::FastmathFlags::contract;
      op->setAttr(op.getFastmathAttrName(),
                  LLVM::FastmathFlagsAttr::get(op->getContext(), flags));
    });
  }
};
} // namespace
