//===- ClusterExchange.cpp - A row's exchanges across a cluster -----------===//
//
// Part of the softmax kernel compiler.
//
//===----------------------------------------------------------------------===//

#include "ClusterExchange.h"
#include "KernelValues.h"
#include "Mbarriers.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::rowred;

void ClusterExchange::initBarriers(int64_t count) {
  initMbarriers(b, tid, kClusterBarriersName, count);
  NVVM::ClusterArriveOp::create(b, b.getUnitAttr());
}

Value ClusterExchange::indexOf(int64_t exchange) {
  int64_t buffers = rowExchanges.buffers();
  Value index = constI32(b, exchange * buffers);
  if (buffers > 1)
    index = arith::AddIOp::create(b, index, rowBuffer);
  return index;
}

Value ClusterExchange::barrier(Value index) {
  return mbarrierAt(b, kClusterBarriersName, index);
}

void ClusterExchange::awaitCluster() {
  NVVM::ClusterWaitOp::create(b, b.getUnitAttr());
}

void ClusterExchange::finish() {
  NVVM::ClusterArriveRelaxedOp::create(b, b.getUnitAttr());
  NVVM::ClusterWaitOp::create(b, b.getUnitAttr());
}

void ClusterExchange::startRow(Value buffer, Value parity) {
  rowBuffer = buffer;
  rowParity = parity;
  OpBuilder::InsertionGuard guard(b);
  Value first =
      arith::CmpIOp::create(b, arith::CmpIPredicate::eq, tid, constI32(b, 0));
  b.setInsertionPointToStart(
      &scf::IfOp::create(b, first, /*withElseRegion=*/false)
           .getThenRegion()
           .front());
  int64_t bytes = rowExchanges.values * clusterSize * 4;
  for (int64_t e = 0; e < rowExchanges.exchanges; ++e) {
    Value mbarrier = barrier(indexOf(e));
    Value expected = constI32(b, bytes);
    NVVM::MBarrierArriveExpectTxOp::create(
        b, Type(), mbarrier, expected, NVVM::MemScopeKind::CTA,
        /*relaxed=*/false, /*predicate=*/Value());
  }
}

SmallVector<Value> ClusterExchange::exchange(ArrayRef<Value> values,
                                             int64_t exchange) {
  int64_t numValues = values.size();
  assert(numValues == rowExchanges.values &&
         exchange < rowExchanges.exchanges && "unplanned cluster exchange");
  auto sharedPtr = LLVM::LLVMPointerType::get(b.getContext(), 3);
  Type f32 = b.getF32Type();
  Value index = indexOf(exchange);
  Value mbarrier = barrier(index);
  Value offset =
      arith::MulIOp::create(b, index, constI32(b, numValues * clusterSize));
  Value entries = LLVM::GEPOp::create(
      b, sharedPtr, f32,
      LLVM::AddressOfOp::create(b, sharedPtr, kClusterSlotsName),
      ValueRange{offset});
  auto entry = [&](int64_t i, Value block) {
    Value row =
        LLVM::GEPOp::create(b, sharedPtr, f32, entries,
                            ArrayRef<LLVM::GEPArg>{(int32_t)(i * clusterSize)});
    return LLVM::GEPOp::create(b, sharedPtr, f32, row, ValueRange{block});
  };
  {
    Value isPusher = arith::CmpIOp::create(b, arith::CmpIPredicate::ult, tid,
                                           constI32(b, clusterSize));
    auto ifOp = scf::IfOp::create(b, isPusher, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&ifOp.getThenRegion().front());
    // No NVVM op spells st.async (PTX ISA 8.1, sm_90) in MLIR 22. The
    // addresses stay 32-bit shared-window addresses, mapped to block
    // `tid` with mapa inside the same asm so that they are not hoisted
    // out of the row loop as 64-bit registers.
    auto address = [&](Value ptr) {
      return LLVM::PtrToIntOp::create(b, b.getI32Type(), ptr);
    };
    for (auto [i, v] : llvm::enumerate(values))
      NVVM::InlinePtxOp::create(
          b, TypeRange(),
          ValueRange{address(entry(i, rank)), address(mbarrier), v, tid},
          ValueRange(),
          "{\n\t.reg .b32 entry, bar;\n\t"
          "mapa.shared::cluster.u32 entry, $0, $3;\n\t"
          "mapa.shared::cluster.u32 bar, $1, $3;\n\t"
          "st.async.shared::cluster.mbarrier::complete_tx::bytes.f32 "
          "[entry], $2, [bar];\n\t}",
          /*predicate=*/Value());
  }
  waitForPhase(b, mbarrier, rowParity);
  // With a single warp nothing else keeps thread 0 from arming this
  // mbarrier's next phase while other lanes still wait on this one.
  if (numWarps == 1)
    gpu::BarrierOp::create(b);
  Value block = arith::RemUIOp::create(b, lane, constI32(b, clusterSize));
  SmallVector<Value> read;
  for (int64_t i = 0; i < numValues; ++i)
    read.push_back(LLVM::LoadOp::create(b, f32, entry(i, block)));
  return read;
}
