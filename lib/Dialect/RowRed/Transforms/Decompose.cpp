//===- Decompose.cpp - Softmax into reduce and map ------------------------===//
//
// Part of the softmax kernel compiler.
//
//===----------------------------------------------------------------------===//

#include "rowred/Dialect/RowRed/IR/RowRedOps.h"
#include "rowred/Dialect/RowRed/Transforms/Passes.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir {
namespace rowred {
#define GEN_PASS_DEF_ROWREDDECOMPOSE
#include "rowred/Dialect/RowRed/Transforms/Passes.h.inc"
} // namespace rowred
} // namespace mlir

using namespace mlir;
using namespace mlir::rowred;

/// Creates the body block of `op` (a reduce or map) with one f32 argument per
/// element and row scalar, and fills it with `buildBody`, which returns the
/// value to yield.
template <typename OpTy>
static void
buildBody(OpBuilder &builder, OpTy op, unsigned numRowScalars,
          function_ref<Value(OpBuilder &, Location, ValueRange)> bodyFn) {
  Location loc = op.getLoc();
  Type f32 = builder.getF32Type();
  SmallVector<Type> types(1 + numRowScalars, f32);
  SmallVector<Location> locs(types.size(), loc);
  OpBuilder::InsertionGuard guard(builder);
  Block *block = builder.createBlock(&op.getBody(), {}, types, locs);
  Value result = bodyFn(builder, loc, block->getArguments());
  YieldOp::create(builder, loc, result);
}

/// Emits `exp(x - m)`, the shifted exponential both reductions share.
static Value shiftedExp(OpBuilder &b, Location loc, Value x, Value m) {
  Value d = arith::SubFOp::create(b, loc, x, m);
  return math::ExpOp::create(b, loc, d);
}

namespace {
/// Rewrites `rowred.softmax` (or `rowred.log_softmax` when `IsLog`) into a
/// max reduce, a sum reduce of `exp(x - m)` and a map, which takes the op's
/// plan or plan request.
template <typename OpTy, bool IsLog>
struct DecomposeSoftmaxLike : OpRewritePattern<OpTy> {
  using OpRewritePattern<OpTy>::OpRewritePattern;

  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value input = op.getInput();
    Value output = op.getOutput();
    MemRefType inType = op.getInputType();
    auto scalarsType =
        MemRefType::get({inType.getDimSize(0)}, rewriter.getF32Type());

    SmallVector<Value> dynSizes;
    if (inType.isDynamicDim(0))
      dynSizes.push_back(memref::DimOp::create(rewriter, loc, input, 0));
    Value maxBuf =
        memref::AllocOp::create(rewriter, loc, scalarsType, dynSizes);
    Value sumBuf =
        memref::AllocOp::create(rewriter, loc, scalarsType, dynSizes);

    auto maxOp = ReduceOp::create(rewriter, loc, Combiner::max, input,
                                  ValueRange{}, maxBuf);
    buildBody(rewriter, maxOp, 0,
              [](OpBuilder &, Location, ValueRange args) { return args[0]; });

    auto sumOp = ReduceOp::create(rewriter, loc, Combiner::sum, input,
                                  ValueRange{maxBuf}, sumBuf);
    buildBody(rewriter, sumOp, 1,
              [](OpBuilder &b, Location loc, ValueRange args) {
                return shiftedExp(b, loc, args[0], args[1]);
              });

    auto mapOp =
        MapOp::create(rewriter, loc, input, ValueRange{maxBuf, sumBuf}, output);
    buildBody(rewriter, mapOp, 2,
              [](OpBuilder &b, Location loc, ValueRange args) -> Value {
                if (IsLog) {
                  Value d = arith::SubFOp::create(b, loc, args[0], args[1]);
                  Value l = math::LogOp::create(b, loc, args[2]);
                  return arith::SubFOp::create(b, loc, d, l);
                }
                Value e = shiftedExp(b, loc, args[0], args[1]);
                return arith::DivFOp::create(b, loc, e, args[2]);
              });
    mapOp->setAttr(kOriginAttrName,
                   rewriter.getStringAttr(op->getName().stripDialect()));
    // A plan or plan request written on the op is the map's: the map is
    // what becomes the kernel.
    for (StringRef name : {kPlanAttrName, kPlanRequestAttrName})
      if (Attribute attr = op->getAttr(name))
        mapOp->setAttr(name, attr);

    memref::DeallocOp::create(rewriter, loc, sumBuf);
    memref::DeallocOp::create(rewriter, loc, maxBuf);
    rewriter.eraseOp(op);
    return success();
  }
};

/// Applies the decomposition patterns to the whole input.
struct RowRedDecomposePass
    : rowred::impl::RowRedDecomposeBase<RowRedDecomposePass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateDecomposeSoftmaxPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace

void mlir::rowred::populateDecomposeSoftmaxPatterns(
    RewritePatternSet &patterns) {
  patterns.add<DecomposeSoftmaxLike<SoftmaxOp, false>,
               DecomposeSoftmaxLike<LogSoftmaxOp, true>>(patterns.getContext());
}
