//===- ShareTilesTest.cpp - Tests of the online kernel's share tiles ------===//
//
// Part of the softmax kernel compiler.
//
//===----------------------------------------------------------------------===//

#include "ShareTiles.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include "gtest/gtest.h"

#include <functional>

using namespace mlir;
using namespace mlir::rowred;

namespace {

using Share = std::pair<int64_t, int64_t>;

/// Builds the i32 values that `emit` returns from constants, in a function
/// of their own, folds them, and reads them back as integers.
class ShareTilesTest : public ::testing::Test {
protected:
  ShareTilesTest() {
    context.loadDialect<arith::ArithDialect, func::FuncDialect>();
  }

  std::vector<int64_t>
  fold(std::function<std::vector<Value>(ImplicitLocOpBuilder &)> emit) {
    OpBuilder builder(&context);
    Location loc = builder.getUnknownLoc();
    OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
    builder.setInsertionPointToEnd(module->getBody());
    auto func = func::FuncOp::create(builder, loc, "f",
                                     builder.getFunctionType({}, {}));
    ImplicitLocOpBuilder b(loc, builder);
    b.setInsertionPointToStart(func.addEntryBlock());
    std::vector<Value> values = emit(b);
    auto ret = func::ReturnOp::create(b, ValueRange(values));
    func.setFunctionType(b.getFunctionType({}, ret.getOperandTypes()));
    EXPECT_TRUE(
        succeeded(applyPatternsGreedily(func, RewritePatternSet(&context))));
    std::vector<int64_t> results;
    for (Value v : func.getBody().front().getTerminator()->getOperands()) {
      IntegerAttr attr;
      EXPECT_TRUE(matchPattern(v, m_Constant(&attr))) << "not folded";
      results.push_back(attr ? attr.getValue().getSExtValue() : -1);
    }
    return results;
  }

  static Value i32(ImplicitLocOpBuilder &b, int64_t v) {
    return arith::ConstantIntOp::create(b, v, 32);
  }

  /// Each cluster rank's share [lo, hi) of a row of `cols`.
  std::vector<Share> shares(const KernelPlan &plan, int64_t cols) {
    std::vector<Share> out;
    for (int64_t rank = 0; rank < plan.clusterSize; ++rank) {
      std::vector<int64_t> v = fold([&](ImplicitLocOpBuilder &b) {
        auto [lo, hi] = onlineShare(b, plan, i32(b, cols), i32(b, rank));
        return std::vector<Value>{lo, hi};
      });
      out.push_back({v[0], v[1]});
    }
    return out;
  }

  MLIRContext context;
};

TEST_F(ShareTilesTest, ClusterSharesInVectorsCoverTheRowEvenly) {
  // Without the stage, shares go in whole vectors: every rank of eight gets
  // about an eighth of an odd row, in order, and together they are the row.
  KernelPlan plan;
  plan.clusterSize = 8;
  plan.vectorWidth = 4;
  plan.blockElements = 16384;
  auto s = shares(plan, 131075);
  int64_t next = 0;
  for (auto [lo, hi] : s) {
    EXPECT_EQ(lo, next);
    EXPECT_GT(hi - lo, 16000);
    EXPECT_EQ(lo % 4, 0);
    next = hi;
  }
  EXPECT_EQ(next, 131075);
}

TEST_F(ShareTilesTest, ClusterSharesOfTheStageAreWholeTiles) {
  // With the stage, shares go in whole tiles (the stage copies tiles): the
  // same row over 16384-element tiles gives four ranks two tiles each, the
  // fifth the last 3 columns and three none.
  KernelPlan plan;
  plan.clusterSize = 8;
  plan.vectorWidth = 4;
  plan.blockElements = 16384;
  plan.prefetch = true;
  auto s = shares(plan, 131075);
  for (int rank = 0; rank < 4; ++rank)
    EXPECT_EQ(s[rank], Share(rank * 32768, (rank + 1) * 32768));
  EXPECT_EQ(s[4], Share(131072, 131075));
  for (int rank = 5; rank < 8; ++rank)
    EXPECT_EQ(s[rank].first, s[rank].second);
}

TEST_F(ShareTilesTest, OneBlockSharesTheWholeRow) {
  KernelPlan plan;
  plan.blockElements = 4096;
  auto s = shares(plan, 50257);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0], Share(0, 50257));
}

TEST_F(ShareTilesTest, TilesAndKeptTiles) {
  KernelPlan plan;
  plan.blockElements = 1024;
  plan.keptElements = 8192;
  std::vector<int64_t> v = fold([&](ImplicitLocOpBuilder &b) {
    Value lo = i32(b, 100), hi = i32(b, 100 + 5 * 1024 - 7);
    return std::vector<Value>{
        shareTiles(b, plan, lo, hi),
        tilesBeforeLast(b, shareTiles(b, plan, lo, hi)),
        tilesBeforeLast(b, i32(b, 0)),
        // Never the last tile, however many fit.
        keptEnd(b, plan, lo, hi),
        arith::ExtUIOp::create(b, b.getI32Type(),
                               isKeptTile(b, plan, i32(b, 100 + 3 * 1024), lo,
                                          hi, /*keepAheadRow=*/true)),
        arith::ExtUIOp::create(b, b.getI32Type(),
                               isKeptTile(b, plan, i32(b, 100 + 4 * 1024), lo,
                                          hi, /*keepAheadRow=*/true)),
        // Pass 1's own kept tiles: the share's first keptElements columns.
        arith::ExtUIOp::create(b, b.getI32Type(),
                               isKeptTile(b, plan, i32(b, 100 + 4 * 1024), lo,
                                          hi, /*keepAheadRow=*/false))};
  });
  EXPECT_EQ(v, (std::vector<int64_t>{5, 4, 0, 100 + 4 * 1024, 1, 0, 1}));
  plan.keptElements = 2048;
  v = fold([&](ImplicitLocOpBuilder &b) {
    return std::vector<Value>{keptEnd(b, plan, i32(b, 100), i32(b, 5220))};
  });
  EXPECT_EQ(v, (std::vector<int64_t>{100 + 2048}));
}

TEST_F(ShareTilesTest, FormsOfTheTileWalk) {
  KernelPlan plan;
  plan.prefetchRegisters = true;
  plan.reverseSecondPass = true;
  EXPECT_TRUE(onlineTilesAhead(plan, /*staged=*/false, /*vec=*/4));
  EXPECT_FALSE(onlineTilesAhead(plan, /*staged=*/true, 4));
  EXPECT_FALSE(onlineTilesAhead(plan, false, /*vec=*/1));
  EXPECT_TRUE(onlineChainsTiles(plan, false, 4));
  plan.reverseSecondPass = false;
  EXPECT_FALSE(onlineChainsTiles(plan, false, 4));
  plan.keptElements = 4096;
  EXPECT_TRUE(onlineKeeps(plan, false, 4));
  EXPECT_TRUE(readsKeptTiles(plan, /*keepAheadRow=*/false));
  plan.keepAhead = true;
  EXPECT_FALSE(onlineKeeps(plan, false, 4));
  EXPECT_FALSE(readsKeptTiles(plan, false));
  EXPECT_TRUE(readsKeptTiles(plan, true));
}

} // namespace
