//===- Mbarriers.cpp - Shared-memory mbarriers and bulk copies ------------===//
//
// Part of the softmax kernel compiler.
//
//===----------------------------------------------------------------------===//

#include "Mbarriers.h"
#include "KernelValues.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::rowred;

/// The body of `scf.if cond` without an else region.
static Block *ifThen(ImplicitLocOpBuilder &b, Value cond) {
  return &scf::IfOp::create(b, cond, /*withElseRegion=*/false)
              .getThenRegion()
              .front();
}

Value mlir::rowred::mbarrierAt(ImplicitLocOpBuilder &b, StringRef name,
                               Value index) {
  auto sharedPtr = LLVM::LLVMPointerType::get(b.getContext(), 3);
  return LLVM::GEPOp::create(b, sharedPtr, b.getI64Type(),
                             LLVM::AddressOfOp::create(b, sharedPtr, name),
                             ValueRange{index});
}

void mlir::rowred::initMbarriers(ImplicitLocOpBuilder &b, Value tid,
                                 StringRef name, int64_t count) {
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(
      ifThen(b, arith::CmpIOp::create(b, arith::CmpIPredicate::eq, tid,
                                      constI32(b, 0))));
  for (int64_t i = 0; i < count; ++i) {
    Value barrier = mbarrierAt(b, name, constI32(b, i));
    Value arrivals = constI32(b, 1);
    NVVM::MBarrierInitOp::create(b, barrier, arrivals, /*predicate=*/Value());
  }
  NVVM::FenceMbarrierInitOp::create(b);
}

void mlir::rowred::waitForPhase(ImplicitLocOpBuilder &b, Value barrier,
                                Value parity) {
  auto loop = scf::WhileOp::create(b, TypeRange(), ValueRange());
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(b.createBlock(&loop.getBefore()));
  Value done = NVVM::MBarrierTryWaitOp::create(
      b, b.getI1Type(), barrier, parity, /*ticks=*/Value(),
      NVVM::MemScopeKind::CTA, /*relaxed=*/false);
  scf::ConditionOp::create(
      b, arith::XOrIOp::create(b, done, arith::ConstantIntOp::create(b, 1, 1)),
      ValueRange());
  b.setInsertionPointToStart(b.createBlock(&loop.getAfter()));
  scf::YieldOp::create(b);
}

void mlir::rowred::bulkCopyToShared(ImplicitLocOpBuilder &b, Value barrier,
                                    Value bytes,
                                    function_ref<Value(int64_t)> src,
                                    function_ref<Value(int64_t)> dst,
                                    Value l2Hint, int64_t copies) {
  OpBuilder::InsertionGuard guard(b);
  NVVM::MBarrierArriveExpectTxOp::create(
      b, Type(), barrier,
      copies == 1
          ? bytes
          : arith::MulIOp::create(b, bytes, constI32(b, copies)).getResult(),
      NVVM::MemScopeKind::CTA,
      /*relaxed=*/false,
      /*predicate=*/Value());
  b.setInsertionPointToStart(
      ifThen(b, arith::CmpIOp::create(b, arith::CmpIPredicate::ugt, bytes,
                                      constI32(b, 0))));
  for (int64_t i = 0; i < copies; ++i) {
    Value from = src(i);
    // The shared::cluster form (PTX 8.0; the shared::cta one needs 8.6): a
    // block's own shared addresses are valid shared::cluster addresses.
    Value to = LLVM::AddrSpaceCastOp::create(
        b, LLVM::LLVMPointerType::get(b.getContext(), 7), dst(i));
    NVVM::CpAsyncBulkGlobalToSharedClusterOp::create(
        b, to, from, barrier, bytes, /*multicastMask=*/Value(), l2Hint);
  }
}
