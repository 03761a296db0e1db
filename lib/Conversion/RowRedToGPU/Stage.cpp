//===- Stage.cpp - The prefetch stage in shared memory --------------------===//
//
// Part of the softmax kernel compiler.
//
//===----------------------------------------------------------------------===//

#include "Stage.h"
#include "Mbarriers.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::rowred;

Stage::Stage(ImplicitLocOpBuilder &b, const KernelPlan &plan)
    : b(b), plan(plan) {
  auto sharedPtr = LLVM::LLVMPointerType::get(b.getContext(), 3);
  ptr = base = LLVM::AddressOfOp::create(b, sharedPtr, kStageName);
}

int64_t Stage::slotElements() const {
  return plan.strategy == Strategy::chunks ? plan.chunkStaged
                                           : plan.stageElements;
}

Value Stage::address(Value local) {
  return LLVM::GEPOp::create(b, ptr.getType(), plan.inType, ptr,
                             ValueRange{local}, LLVM::GEPNoWrapFlags::inbounds);
}

void Stage::initBarriers(Value tid, int64_t count) {
  initMbarriers(b, tid, kStageBarriersName, count);
}

Value Stage::barrier(Value index) {
  return mbarrierAt(b, kStageBarriersName, index);
}

Value Stage::buffer(Value index) {
  Value bytes = constI32(b, plan.keptElements * byteWidth(plan.inType));
  Value offset = arith::MulIOp::create(b, index, bytes);
  return LLVM::GEPOp::create(b, base.getType(), b.getI8Type(), base,
                             ValueRange{offset},
                             LLVM::GEPNoWrapFlags::inbounds);
}

void Stage::enterBulkRow(Value index, Value parity) {
  bulkBuffer = index;
  bulkParity = parity;
  ptr = buffer(index);
}

void Stage::leaveRow() {
  ptr = base;
  bulkBuffer = bulkParity = Value();
}

void Stage::copyChunks(ArrayRef<Value> rowPtrs, ArrayRef<ChunkPlace> places,
                       Value stageStart) {
  int64_t bytes = plan.vectorWidth * byteWidth(plan.inType);
  for (const ChunkPlace &place : places) {
    auto copy = scf::IfOp::create(b, place.valid, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&copy.getThenRegion().front());
    Value local = stageStart ? arith::SubIOp::create(b, place.col, stageStart)
                             : place.local;
    for (auto [slot, rowPtr] : llvm::enumerate(rowPtrs)) {
      if (!rowPtr)
        continue;
      Value src = LLVM::GEPOp::create(b, rowPtr.getType(), plan.inType, rowPtr,
                                      ValueRange{place.col},
                                      LLVM::GEPNoWrapFlags::inbounds);
      Value slotLocal = local;
      if (slot > 0) {
        Value offset = constI32(b, int64_t(slot) * slotElements());
        slotLocal = arith::AddIOp::create(b, local, offset);
      }
      Value dst = address(slotLocal);
      // 16-byte copies bypass L1 (.cg); narrower ones must go through it.
      NVVM::CpAsyncOp::create(b, dst, src, bytes,
                              bytes == 16 ? NVVM::LoadCacheModifierKind::CG
                                          : NVVM::LoadCacheModifierKind::CA,
                              /*cpSize=*/Value());
    }
  }
}
