//===- RowReduction.cpp - A row's values reduced across its threads -------===//
//
// Part of the softmax kernel compiler.
//
//===----------------------------------------------------------------------===//

#include "RowReduction.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::rowred;

RowReduction::RowReduction(ImplicitLocOpBuilder &b, const KernelPlan &plan,
                           Value lane, Value warp, Value shared,
                           ClusterExchange *cluster)
    : b(b), plan(plan), lane(lane), warp(warp), shared(shared),
      cluster(cluster) {}

Value RowReduction::warpReduce(Value v, function_ref<Value(Value, Value)> fn) {
  return butterfly(v, std::min<int64_t>(plan.threadsPerRow(), 32), fn);
}

Value RowReduction::butterfly(Value v, int32_t lanes,
                              function_ref<Value(Value, Value)> fn) {
  for (int32_t offset = lanes / 2; offset >= 1; offset /= 2) {
    Value other =
        gpu::ShuffleOp::create(b, v, offset, 32, gpu::ShuffleMode::XOR)
            .getShuffleResult();
    v = fn(v, other);
  }
  return v;
}

void RowReduction::publishPerWarp(ArrayRef<Value> values, int64_t firstSlot,
                                  bool barrier) {
  publishPerWarp(values, arith::ConstantIndexOp::create(b, firstSlot), barrier);
}

Value RowReduction::slotAt(Value base, int64_t i) {
  if (i == 0)
    return base;
  if (std::optional<int64_t> c = getConstantIntValue(base))
    return arith::ConstantIndexOp::create(b, *c + i);
  return arith::AddIOp::create(b, base, arith::ConstantIndexOp::create(b, i));
}

void RowReduction::publishPerWarp(ArrayRef<Value> values, Value firstSlot,
                                  bool barrier) {
  Value isLane0 =
      arith::CmpIOp::create(b, arith::CmpIPredicate::eq, lane, constI32(b, 0));
  auto ifOp = scf::IfOp::create(b, isLane0, /*withElseRegion=*/false);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&ifOp.getThenRegion().front());
    for (auto [i, v] : llvm::enumerate(values))
      memref::StoreOp::create(b, v, shared,
                              ValueRange{slotAt(firstSlot, i), warp});
  }
  if (barrier)
    gpu::BarrierOp::create(b);
}

SmallVector<SmallVector<Value>>
RowReduction::exchangeAcrossWarps(ArrayRef<Value> values, int64_t firstSlot) {
  publishPerWarp(values, firstSlot);
  SmallVector<SmallVector<Value>> partials(values.size());
  for (size_t i = 0; i < values.size(); ++i) {
    Value slot = arith::ConstantIndexOp::create(b, firstSlot + i);
    for (int64_t w = 0; w < plan.numWarps; ++w)
      partials[i].push_back(memref::LoadOp::create(
          b, shared, ValueRange{slot, arith::ConstantIndexOp::create(b, w)}));
  }
  return partials;
}

Value RowReduction::blockReduce(Value v, Combiner c, int64_t slot) {
  return blockReduce(ValueRange{v}, {c}, slot).front();
}

SmallVector<Value> RowReduction::blockReduce(ValueRange values,
                                             ArrayRef<Combiner> combiners,
                                             int64_t firstSlot) {
  auto fn = [&](size_t i) {
    return [this, c = combiners[i]](Value l, Value r) {
      return combine(b, c, l, r);
    };
  };
  SmallVector<Value> reduced;
  for (auto [i, v] : llvm::enumerate(values))
    reduced.push_back(warpReduce(v, fn(i)));
  if (plan.threadsPerRow() > 32 && plan.numWarps == 32) {
    // Thirty-two partials read at once would take as many registers next
    // to the row's: lane l reads warp l's, and a butterfly combines them.
    publishPerWarp(reduced, firstSlot);
    for (size_t i = 0; i < reduced.size(); ++i) {
      Value slot = arith::ConstantIndexOp::create(b, firstSlot + i);
      Value laneIndex = arith::IndexCastOp::create(b, b.getIndexType(), lane);
      reduced[i] = butterfly(
          memref::LoadOp::create(b, shared, ValueRange{slot, laneIndex}), 32,
          fn(i));
    }
  } else if (plan.threadsPerRow() > 32) {
    SmallVector<SmallVector<Value>> partials =
        exchangeAcrossWarps(reduced, firstSlot);
    for (size_t i = 0; i < reduced.size(); ++i)
      reduced[i] = treeReduce<Value>(partials[i], fn(i));
  }
  if (plan.clusterSize > 1) {
    assert(values.size() == 1 && "cluster exchanges carry one reduce each");
    reduced[0] = clusterReduce(reduced[0], fn(0), firstSlot);
  }
  return reduced;
}

Value RowReduction::clusterReduce(Value v, function_ref<Value(Value, Value)> fn,
                                  int64_t slot) {
  return butterfly(cluster->exchange({v}, slot)[0], plan.clusterSize, fn);
}

Value RowReduction::rescale(Value m, Value d, Value mAll) {
  Value isNegInf =
      arith::CmpFOp::create(b, arith::CmpFPredicate::OEQ, m, negInf(b));
  Value scaled = arith::MulFOp::create(
      b, d, emitExp(b, plan, arith::SubFOp::create(b, m, mAll)));
  return arith::SelectOp::create(b, isNegInf, constF32(b, 0.0), scaled);
}

std::pair<Value, Value> RowReduction::butterflyPair(Value m, Value d,
                                                    int32_t lanes) {
  auto max = [&](Value l, Value r) { return combine(b, Combiner::max, l, r); };
  auto sum = [&](Value l, Value r) { return combine(b, Combiner::sum, l, r); };
  Value mAll = butterfly(m, lanes, max);
  return {mAll, butterfly(rescale(m, d, mAll), lanes, sum)};
}

std::pair<Value, Value> RowReduction::clusterReducePair(Value m, Value d) {
  SmallVector<Value> entries = cluster->exchange({m, d}, 0);
  return butterflyPair(entries[0], entries[1], plan.clusterSize);
}

std::pair<Value, Value> RowReduction::blockReducePair(Value m, Value d,
                                                      Value pairSlot) {
  std::tie(m, d) = reducePairInBlock(m, d, pairSlot);
  return reducePairAcrossBlocks(m, d);
}

std::pair<Value, Value> RowReduction::reducePairInBlock(Value m, Value d,
                                                        Value pairSlot) {
  std::tie(m, d) =
      butterflyPair(m, d, std::min<int64_t>(plan.threadsPerRow(), 32));
  if (plan.threadsPerRow() > 32) {
    // The row's first slot: 0, or 0 and 2 by turns (alternatesSlots).
    Value base = pairSlot ? pairSlot : arith::ConstantIndexOp::create(b, 0);
    publishPerWarp({m, d}, base);
    // Lane l of every aligned group of P lanes (P: the warps rounded up to
    // a power of two) reads warp l's pair, so that every lane ends with the
    // result; lanes past the last warp hold the identity (-inf, 0).
    int64_t groupLanes = llvm::PowerOf2Ceil(plan.numWarps);
    Value slotWarp = arith::RemUIOp::create(b, lane, constI32(b, groupLanes));
    Value inRange = arith::CmpIOp::create(b, arith::CmpIPredicate::ult,
                                          slotWarp, constI32(b, plan.numWarps));
    Value index = arith::IndexCastOp::create(
        b, b.getIndexType(),
        arith::SelectOp::create(b, inRange, slotWarp, constI32(b, 0)));
    Value wm =
        memref::LoadOp::create(b, shared, ValueRange{slotAt(base, 0), index});
    Value wd =
        memref::LoadOp::create(b, shared, ValueRange{slotAt(base, 1), index});
    // Created one by one: the order of the ops must not depend on the order
    // in which the host compiler evaluates arguments.
    Value sum = arith::SelectOp::create(b, inRange, wd, constF32(b, 0.0));
    Value max = arith::SelectOp::create(b, inRange, wm, negInf(b));
    std::tie(m, d) = butterflyPair(max, sum, groupLanes);
  }
  return {m, d};
}

std::pair<Value, Value> RowReduction::reducePairAcrossBlocks(Value m, Value d) {
  if (plan.clusterSize > 1)
    std::tie(m, d) = clusterReducePair(m, d);
  return {m, d};
}
