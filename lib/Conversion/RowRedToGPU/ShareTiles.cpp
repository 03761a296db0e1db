//===- ShareTiles.cpp - The online kernel's tiles of a share --------------===//
//
// Part of the softmax kernel compiler.
//
//===----------------------------------------------------------------------===//

#include "ShareTiles.h"
#include "KernelValues.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;
using namespace mlir::rowred;

std::pair<Value, Value> mlir::rowred::onlineShare(ImplicitLocOpBuilder &b,
                                                  const KernelPlan &plan,
                                                  Value cols,
                                                  Value clusterRank) {
  Value lo = constI32(b, 0), hi = cols;
  if (plan.clusterSize > 1) {
    Type i32 = b.getI32Type(), i64 = b.getI64Type();
    Value cols64 = arith::ExtUIOp::create(b, i64, cols);
    Value tile64 =
        constI64(b, plan.prefetch ? plan.blockElements : plan.vectorWidth);
    Value clusterSize = constI64(b, plan.clusterSize);
    Value span = arith::MulIOp::create(
        b,
        arith::CeilDivUIOp::create(
            b, arith::CeilDivUIOp::create(b, cols64, clusterSize), tile64),
        tile64);
    Value lo64 = arith::MinUIOp::create(
        b,
        arith::MulIOp::create(b, arith::ExtUIOp::create(b, i64, clusterRank),
                              span),
        cols64);
    Value hi64 =
        arith::MinUIOp::create(b, arith::AddIOp::create(b, lo64, span), cols64);
    lo = arith::TruncIOp::create(b, i32, lo64);
    hi = arith::TruncIOp::create(b, i32, hi64);
  }
  return {lo, hi};
}

Value mlir::rowred::shareTiles(ImplicitLocOpBuilder &b, const KernelPlan &plan,
                               Value lo, Value hi) {
  Value tile = constI32(b, plan.blockElements);
  Value columns = arith::SubIOp::create(b, hi, lo);
  return arith::CeilDivUIOp::create(b, columns, tile);
}

Value mlir::rowred::tilesBeforeLast(ImplicitLocOpBuilder &b, Value n) {
  return arith::SubIOp::create(b, n,
                               arith::MinUIOp::create(b, n, constI32(b, 1)));
}

Value mlir::rowred::keptEnd(ImplicitLocOpBuilder &b, const KernelPlan &plan,
                            Value lo, Value hi) {
  Value tile = constI32(b, plan.blockElements);
  Value tiles = tilesBeforeLast(b, shareTiles(b, plan, lo, hi));
  Value beforeLast = arith::MulIOp::create(b, tiles, tile);
  return arith::AddIOp::create(
      b, lo,
      arith::MinUIOp::create(b, beforeLast, constI32(b, plan.keptElements)));
}

Value mlir::rowred::isKeptTile(ImplicitLocOpBuilder &b, const KernelPlan &plan,
                               Value start, Value lo, Value hi,
                               bool keepAheadRow) {
  if (keepAheadRow)
    return arith::CmpIOp::create(b, arith::CmpIPredicate::slt, start,
                                 keptEnd(b, plan, lo, hi));
  Value kept = constI32(b, plan.keptElements);
  Value column = arith::SubIOp::create(b, start, lo);
  return arith::CmpIOp::create(b, arith::CmpIPredicate::slt, column, kept);
}

bool mlir::rowred::onlineTilesAhead(const KernelPlan &plan, bool staged,
                                    int64_t vec) {
  return plan.prefetchRegisters && !staged && vec > 1;
}

bool mlir::rowred::onlineChainsTiles(const KernelPlan &plan, bool staged,
                                     int64_t vec) {
  return onlineTilesAhead(plan, staged, vec) && plan.reverseSecondPass;
}

bool mlir::rowred::onlineKeeps(const KernelPlan &plan, bool staged,
                               int64_t vec) {
  return plan.keptElements > 0 && !staged && vec > 1 && !plan.keepAhead;
}

bool mlir::rowred::readsKeptTiles(const KernelPlan &plan, bool keepAheadRow) {
  return plan.keptElements > 0 && (!plan.keepAhead || keepAheadRow);
}
