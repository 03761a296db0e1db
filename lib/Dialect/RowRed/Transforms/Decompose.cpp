//===- Decompose.cpp - High-level ops into reduce and map -----------------===//
//
// Part of the softmax kernel compiler.
//
//===----------------------------------------------------------------------===//

#include "rowred/Dialect/RowRed/IR/RowRedOps.h"
#include "rowred/Dialect/RowRed/Transforms/Passes.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir {
namespace rowred {
#define GEN_PASS_DEF_ROWREDDECOMPOSE
#include "rowred/Dialect/RowRed/Transforms/Passes.h.inc"
} // namespace rowred
} // namespace mlir

using namespace mlir;
using namespace mlir::rowred;

namespace {

/// The f32 arithmetic of a body, at one location.
struct BodyBuilder {
  OpBuilder &b;
  Location loc;

  Value sub(Value l, Value r) { return arith::SubFOp::create(b, loc, l, r); }
  Value add(Value l, Value r) { return arith::AddFOp::create(b, loc, l, r); }
  Value mul(Value l, Value r) { return arith::MulFOp::create(b, loc, l, r); }
  Value div(Value l, Value r) { return arith::DivFOp::create(b, loc, l, r); }
  Value max(Value l, Value r) {
    return arith::MaximumFOp::create(b, loc, l, r);
  }
  Value exp(Value v) { return math::ExpOp::create(b, loc, v); }
  Value log(Value v) { return math::LogOp::create(b, loc, v); }
  Value rsqrt(Value v) { return math::RsqrtOp::create(b, loc, v); }
  Value rowLength() {
    return RowLengthOp::create(b, loc, b.getF32Type()).getResult();
  }
  Value constant(APFloat v) {
    return arith::ConstantFloatOp::create(b, loc, b.getF32Type(), v);
  }
  /// `exp(x - m)`, the shifted exponential of softmax's reductions and map.
  Value shiftedExp(Value x, Value m) { return exp(sub(x, m)); }
  /// Whether `v` is `+inf` or `-inf`.
  Value isInf(Value v) {
    Value magnitude = math::AbsFOp::create(b, loc, v);
    return arith::CmpFOp::create(
        b, loc, arith::CmpFPredicate::OEQ, magnitude,
        constant(APFloat::getInf(APFloat::IEEEsingle())));
  }
  /// `v == value` for an f32 `v`.
  Value equals(Value v, APFloat value) {
    return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, v,
                                 constant(value));
  }
  /// `i == value` for an integer `i`.
  Value equals(Value i, int64_t value) {
    Value c = arith::ConstantIntOp::create(b, loc, i.getType(), value);
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, i, c);
  }
  /// `v` rounded to `type` and extended back to f32, as a tensor of `type`
  /// holds it.
  Value roundTo(Value v, Type type) {
    if (type.isF32())
      return v;
    Value narrow = arith::TruncFOp::create(b, loc, type, v);
    return arith::ExtFOp::create(b, loc, b.getF32Type(), narrow);
  }
  Value select(Value cond, Value t, Value f) {
    return arith::SelectOp::create(b, loc, cond, t, f);
  }
  /// `shift + log(s)`: the logsumexp of a row from its shift and its sum of
  /// `exp(x - shift)`.
  Value logSumExp(Value shift, Value s) { return add(shift, log(s)); }
};

/// The row scalars of a logsumexp: `max = max(x)`, `exp = sum(exp(x -
/// max))` (softmax's pair) and, when asked for, `total = sum(x)`.
struct RowSums {
  Value max, exp, total;
};

/// What a body computes from its arguments (elements, then row scalars).
using BodyFn = function_ref<SmallVector<Value>(BodyBuilder &, ValueRange)>;

/// Builds the reduces and the map of one high-level op in front of it, with
/// the f32 row-scalar buffers between them, and hands the op's origin, plan
/// and plan request to the map.
class Decomposition {
public:
  Decomposition(PatternRewriter &rewriter, Operation *op, Value shape)
      : rewriter(rewriter), op(op), loc(op->getLoc()), shape(shape) {}

  /// A reduce of `body` over `inputs` (and the per-column `columns`, the row
  /// scalars `rows`) into a new row-scalar buffer, which it returns.
  Value reduce(Combiner combiner, ValueRange inputs, ValueRange columns,
               ValueRange rows, BodyFn body) {
    Value buffer = allocRowScalars();
    auto reduce = ReduceOp::create(rewriter, loc, combiner, inputs, columns,
                                   rows, buffer);
    buildBody(reduce.getBody(), inputs.size() + columns.size(), rows, body);
    return buffer;
  }

  /// The reduces of a logsumexp of `x`: the max, with `withTotal` the sum of
  /// the elements (in the max's level: it reads no row scalar), then the sum
  /// of the exponentials shifted by the max.
  RowSums shiftedSums(Value x, bool withTotal) {
    RowSums sums;
    auto element = [](BodyBuilder &, ValueRange a) {
      return SmallVector<Value>{a[0]};
    };
    sums.max = reduce(Combiner::max, x, {}, {}, element);
    if (withTotal)
      sums.total = reduce(Combiner::sum, x, {}, {}, element);
    sums.exp = reduce(Combiner::sum, x, {}, sums.max,
                      [](BodyBuilder &bb, ValueRange a) {
                        return SmallVector<Value>{bb.shiftedExp(a[0], a[1])};
                      });
    return sums;
  }

  /// A gather of `input` at the per-row columns `indices` into a new
  /// row-scalar buffer, which it returns.
  Value gather(Value input, Value indices) {
    Value buffer = allocRowScalars();
    GatherOp::create(rewriter, loc, input, indices, buffer);
    return buffer;
  }

  /// The map of `body` into `outputs` (and the sums down the columns
  /// `columnSums`), then the buffers' deallocations; replaces the op.
  void map(ValueRange inputs, ValueRange columns, ValueRange rows,
           ValueRange outputs, BodyFn body, ValueRange columnSums = {}) {
    auto map = MapOp::create(rewriter, loc, inputs, columns, rows, outputs,
                             columnSums);
    buildBody(map.getBody(), inputs.size() + columns.size(), rows, body);
    map->setAttr(kOriginAttrName,
                 rewriter.getStringAttr(op->getName().stripDialect()));
    // The op's parameters, which a launcher needs for the reference.
    for (auto [name, recorded] :
         {std::pair{StringRef("epsilon"), kEpsilonAttrName},
          {"ignore_index", kIgnoreIndexAttrName},
          {"label_smoothing", kLabelSmoothingAttrName},
          {"safe", kSafeAttrName}})
      if (Attribute attr = op->getAttr(name))
        map->setAttr(recorded, attr);
    // A plan or plan request written on the op is the map's: the map is
    // what becomes the kernel.
    for (StringRef name : {kPlanAttrName, kPlanRequestAttrName})
      if (Attribute attr = op->getAttr(name))
        map->setAttr(name, attr);
    for (Value buffer : llvm::reverse(buffers))
      memref::DeallocOp::create(rewriter, loc, buffer);
    rewriter.eraseOp(op);
  }

private:
  /// A new f32 buffer of one element per row, deallocated after the map.
  Value allocRowScalars() {
    auto type = cast<MemRefType>(shape.getType());
    auto scalarsType =
        MemRefType::get({type.getDimSize(0)}, rewriter.getF32Type());
    if (type.isDynamicDim(0) && !numRows)
      numRows = memref::DimOp::create(rewriter, loc, shape, 0);
    Value buffer =
        memref::AllocOp::create(rewriter, loc, scalarsType,
                                numRows ? ValueRange(numRows) : ValueRange());
    buffers.push_back(buffer);
    return buffer;
  }

  /// Fills `region` with a block of `numElements` f32 arguments and one per
  /// `rows` operand (of its element type) whose yield is what `body` returns.
  void buildBody(Region &region, unsigned numElements, ValueRange rows,
                 BodyFn body) {
    SmallVector<Type> types(numElements, rewriter.getF32Type());
    for (Value row : rows)
      types.push_back(getElementTypeOrSelf(row));
    SmallVector<Location> locs(types.size(), loc);
    OpBuilder::InsertionGuard guard(rewriter);
    Block *block = rewriter.createBlock(&region, {}, types, locs);
    BodyBuilder bb{rewriter, loc};
    SmallVector<Value> results = body(bb, block->getArguments());
    YieldOp::create(rewriter, loc, results);
  }

  PatternRewriter &rewriter;
  Operation *op;
  Location loc;
  /// A 2-D operand whose rows the row scalars belong to, and its number of
  /// rows once a buffer of dynamic size needed it.
  Value shape, numRows;
  SmallVector<Value> buffers;
};

/// The operands that are present, of those optional ones given.
static SmallVector<Value> present(std::initializer_list<Value> values) {
  SmallVector<Value> result;
  for (Value v : values)
    if (v)
      result.push_back(v);
  return result;
}

/// Rewrites `rowred.softmax` (or `rowred.log_softmax` when `IsLog`) into a
/// max reduce, a sum reduce of `exp(x - m)` and a map (that gives 0 where `m`
/// is `-inf` when `safe`).
template <typename OpTy, bool IsLog>
struct DecomposeSoftmaxLike : OpRewritePattern<OpTy> {
  using OpRewritePattern<OpTy>::OpRewritePattern;

  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    Value x = op.getInput();
    Decomposition d(rewriter, op, x);
    Value m =
        d.reduce(Combiner::max, x, {}, {}, [](BodyBuilder &, ValueRange a) {
          return SmallVector<Value>{a[0]};
        });
    Value s =
        d.reduce(Combiner::sum, x, {}, m, [](BodyBuilder &bb, ValueRange a) {
          return SmallVector<Value>{bb.shiftedExp(a[0], a[1])};
        });
    bool safe = op.getSafe();
    d.map(x, {}, {m, s}, op.getOutput(), [&](BodyBuilder &bb, ValueRange a) {
      // One statement per op: the order of the ops is the order written.
      Value y;
      if (IsLog) {
        Value shifted = bb.sub(a[0], a[1]);
        y = bb.sub(shifted, bb.log(a[2]));
      } else {
        y = bb.div(bb.shiftedExp(a[0], a[1]), a[2]);
      }
      if (!safe)
        return SmallVector<Value>{y};
      // A row of -inf (max -inf) gives zeros.
      Value masked = bb.equals(
          a[1], APFloat::getInf(APFloat::IEEEsingle(), /*Negative=*/true));
      return SmallVector<Value>{
          bb.select(masked, bb.constant(APFloat(0.0f)), y)};
    });
    return success();
  }
};

/// Rewrites `rowred.softmax_backward` into `s = sum(dy * y)` and the map
/// `y * (dy - s)`.
struct DecomposeSoftmaxBackward : OpRewritePattern<SoftmaxBackwardOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(SoftmaxBackwardOp op,
                                PatternRewriter &rewriter) const override {
    SmallVector<Value> ins = {op.getOutput(), op.getGradOutput()};
    Decomposition d(rewriter, op, ins[0]);
    Value s =
        d.reduce(Combiner::sum, ins, {}, {}, [](BodyBuilder &bb, ValueRange a) {
          return SmallVector<Value>{bb.mul(a[1], a[0])};
        });
    d.map(ins, {}, s, op.getGradInput(), [](BodyBuilder &bb, ValueRange a) {
      return SmallVector<Value>{bb.mul(a[0], bb.sub(a[1], a[2]))};
    });
    return success();
  }
};

/// Rewrites `rowred.log_softmax_backward` into `s = sum(dy)` and the map
/// `dy - exp(y) * s`.
struct DecomposeLogSoftmaxBackward : OpRewritePattern<LogSoftmaxBackwardOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(LogSoftmaxBackwardOp op,
                                PatternRewriter &rewriter) const override {
    SmallVector<Value> ins = {op.getOutput(), op.getGradOutput()};
    Decomposition d(rewriter, op, ins[0]);
    Value s = d.reduce(
        Combiner::sum, op.getGradOutput(), {}, {},
        [](BodyBuilder &, ValueRange a) { return SmallVector<Value>{a[0]}; });
    d.map(ins, {}, s, op.getGradInput(), [](BodyBuilder &bb, ValueRange a) {
      Value scaled = bb.mul(bb.exp(a[0]), a[2]);
      return SmallVector<Value>{bb.sub(a[1], scaled)};
    });
    return success();
  }
};

/// Rewrites `rowred.rms_norm` into `s = sum(x * x)` and the map
/// `x * rsqrt(s / N + eps) * w` (and the per-row `rsqrt(s / N + eps)` when
/// asked for). With a residual, `x` is `h = x + r` as `residual_out` stores
/// it, which both bodies compute from the two inputs and the map writes.
struct DecomposeRmsNorm : OpRewritePattern<RmsNormOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(RmsNormOp op,
                                PatternRewriter &rewriter) const override {
    Value residualOut = op.getResidualOut();
    SmallVector<Value> inputs = present({op.getInput(), op.getResidual()});
    APFloat eps = op.getEpsilon();
    SmallVector<Value> columns = present({op.getWeight()});
    Decomposition d(rewriter, op, inputs[0]);
    // The row element normalized: x, or x + r as stored.
    auto element = [&](BodyBuilder &bb, ValueRange a) {
      if (!residualOut)
        return a[0];
      return bb.roundTo(bb.add(a[0], a[1]),
                        getElementTypeOrSelf(residualOut.getType()));
    };
    Value s = d.reduce(Combiner::sum, inputs, {}, {},
                       [&](BodyBuilder &bb, ValueRange a) {
                         Value h = element(bb, a);
                         return SmallVector<Value>{bb.mul(h, h)};
                       });
    bool weighted = !columns.empty();
    SmallVector<Value> outputs =
        present({op.getOutput(), residualOut, op.getRstd()});
    d.map(inputs, columns, s, outputs, [&](BodyBuilder &bb, ValueRange a) {
      Value h = element(bb, a);
      Value meanSquare = bb.div(a.back(), bb.rowLength());
      Value shifted = bb.add(meanSquare, bb.constant(eps));
      Value scale = bb.rsqrt(shifted);
      Value y = bb.mul(h, scale);
      SmallVector<Value> results = {weighted ? bb.mul(y, a[inputs.size()]) : y};
      if (residualOut)
        results.push_back(h);
      if (op.getRstd())
        results.push_back(scale);
      return results;
    });
    return success();
  }
};

/// Rewrites `rowred.rms_norm_backward` into `s = sum(g * x_hat)` (x_hat = x *
/// rstd, g = dy * w) and the map `rstd * (g - x_hat * s / N)` (plus the
/// grad_residual the map alone reads), whose sums down the columns of `dy *
/// x_hat` are the weight's gradient.
struct DecomposeRmsNormBackward : OpRewritePattern<RmsNormBackwardOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(RmsNormBackwardOp op,
                                PatternRewriter &rewriter) const override {
    SmallVector<Value> ins = {op.getInput(), op.getGradOutput()};
    SmallVector<Value> mapIns =
        present({op.getInput(), op.getGradOutput(), op.getGradResidual()});
    SmallVector<Value> columns = present({op.getWeight()});
    Decomposition d(rewriter, op, ins[0]);
    // (x_hat, g) from the elements (x, dy) of `a`, the weight at
    // `a[weight]` where there is one, and the rstd.
    auto terms = [&](BodyBuilder &bb, ValueRange a, unsigned weight,
                     Value rstd) {
      Value xHat = bb.mul(a[0], rstd);
      Value g = columns.empty() ? a[1] : bb.mul(a[1], a[weight]);
      return std::pair{xHat, g};
    };
    Value s = d.reduce(Combiner::sum, ins, columns, op.getRstd(),
                       [&](BodyBuilder &bb, ValueRange a) {
                         unsigned rstd = ins.size() + columns.size();
                         auto [xHat, g] = terms(bb, a, ins.size(), a[rstd]);
                         return SmallVector<Value>{bb.mul(g, xHat)};
                       });
    d.map(
        mapIns, columns, {op.getRstd(), s}, op.getGradInput(),
        [&](BodyBuilder &bb, ValueRange a) {
          unsigned rows = mapIns.size() + columns.size();
          Value rstd = a[rows], sum = a[rows + 1];
          auto [xHat, g] = terms(bb, a, mapIns.size(), rstd);
          Value mean = bb.div(sum, bb.rowLength());
          Value projected = bb.mul(xHat, mean);
          Value dx = bb.mul(rstd, bb.sub(g, projected));
          if (op.getGradResidual())
            dx = bb.add(dx, a[2]);
          SmallVector<Value> results = {dx};
          if (op.getWeightGrad())
            results.push_back(bb.mul(a[1], xHat));
          return results;
        },
        present({op.getWeightGrad()}));
    return success();
  }
};

/// Rewrites `rowred.layer_norm_backward` into `s = sum(g)` and `t = sum(g *
/// x_hat)` (x_hat = (x - mean) * rstd, g = dy * w; one level: both read only
/// the per-row inputs) and the map `rstd * (g - s / N - x_hat * t / N)`,
/// whose sums down the columns of `dy * x_hat` and `dy` are the weight's and
/// the bias's gradients.
struct DecomposeLayerNormBackward : OpRewritePattern<LayerNormBackwardOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(LayerNormBackwardOp op,
                                PatternRewriter &rewriter) const override {
    SmallVector<Value> ins = {op.getInput(), op.getGradOutput()};
    SmallVector<Value> columns = present({op.getWeight()});
    SmallVector<Value> stats = {op.getMean(), op.getRstd()};
    Decomposition d(rewriter, op, ins[0]);
    unsigned numElements = ins.size() + columns.size();
    // (x_hat, g) from the elements (x, dy[, w]) and the row's mean and rstd.
    auto terms = [&](BodyBuilder &bb, ValueRange a) {
      Value centered = bb.sub(a[0], a[numElements]);
      Value xHat = bb.mul(centered, a[numElements + 1]);
      Value g = columns.empty() ? a[1] : bb.mul(a[1], a[2]);
      return std::pair{xHat, g};
    };
    Value s = d.reduce(Combiner::sum, ins, columns, stats,
                       [&](BodyBuilder &bb, ValueRange a) {
                         return SmallVector<Value>{terms(bb, a).second};
                       });
    Value t = d.reduce(Combiner::sum, ins, columns, stats,
                       [&](BodyBuilder &bb, ValueRange a) {
                         auto [xHat, g] = terms(bb, a);
                         return SmallVector<Value>{bb.mul(g, xHat)};
                       });
    d.map(
        ins, columns, {op.getMean(), op.getRstd(), s, t}, op.getGradInput(),
        [&](BodyBuilder &bb, ValueRange a) {
          auto [xHat, g] = terms(bb, a);
          Value n = bb.rowLength();
          Value meanG = bb.div(a[numElements + 2], n);
          Value meanGX = bb.div(a[numElements + 3], n);
          Value shifted = bb.sub(g, meanG);
          Value projected = bb.mul(xHat, meanGX);
          Value dx = bb.mul(a[numElements + 1], bb.sub(shifted, projected));
          SmallVector<Value> results = {dx};
          if (op.getWeightGrad())
            results.push_back(bb.mul(a[1], xHat));
          if (op.getBiasGrad())
            results.push_back(a[1]);
          return results;
        },
        present({op.getWeightGrad(), op.getBiasGrad()}));
    return success();
  }
};

/// Rewrites `rowred.layer_norm` into three sums and a map around a shifted
/// mean: `s = sum(x)` gives a first mean `m = s / N`; with the shifted
/// elements `e = x - m`, `c = sum(e)` gives the mean's correction `d = c / N`
/// and `q = sum(e^2)` the variance `q / N - d^2`; the map writes
/// `(e - d) * rsqrt(max(q / N - d^2, 0) + eps) * w + b`. The mean is never
/// formed: in f32 a row of mean 1e4 holds it to only about 1e-3, which
/// `e - d` keeps (`e` is exact there, and `d` small), so that rows of large
/// mean and small spread stay exact to f32. `c` and `q` read only `s`: one
/// exchange between threads serves both. The per-row mean `m + d` and rstd
/// are written when asked for.
struct DecomposeLayerNorm : OpRewritePattern<LayerNormOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(LayerNormOp op,
                                PatternRewriter &rewriter) const override {
    Value x = op.getInput();
    APFloat eps = op.getEpsilon();
    SmallVector<Value> columns = present({op.getWeight(), op.getBias()});
    Decomposition d(rewriter, op, x);
    // x - sum / N: one statement per op.
    auto shifted = [](BodyBuilder &bb, Value x, Value n, Value sum) {
      Value mean = bb.div(sum, n);
      return bb.sub(x, mean);
    };
    Value sum =
        d.reduce(Combiner::sum, x, {}, {}, [](BodyBuilder &, ValueRange a) {
          return SmallVector<Value>{a[0]};
        });
    Value correction =
        d.reduce(Combiner::sum, x, {}, sum, [&](BodyBuilder &bb, ValueRange a) {
          return SmallVector<Value>{shifted(bb, a[0], bb.rowLength(), a[1])};
        });
    Value squares =
        d.reduce(Combiner::sum, x, {}, sum, [&](BodyBuilder &bb, ValueRange a) {
          Value e = shifted(bb, a[0], bb.rowLength(), a[1]);
          return SmallVector<Value>{bb.mul(e, e)};
        });
    bool weighted = op.getWeight() != nullptr, biased = op.getBias() != nullptr;
    SmallVector<Value> outputs =
        present({op.getOutput(), op.getMean(), op.getRstd()});
    d.map(x, columns, {sum, correction, squares}, outputs,
          [&](BodyBuilder &bb, ValueRange a) {
            ValueRange scalars = a.take_back(3);
            Value n = bb.rowLength();
            Value e = shifted(bb, a[0], n, scalars[0]);
            Value meanError = bb.div(scalars[1], n);
            Value centered = bb.sub(e, meanError);
            Value meanSquare = bb.div(scalars[2], n);
            Value errorSquare = bb.mul(meanError, meanError);
            Value variance = bb.sub(meanSquare, errorSquare);
            Value positive = bb.max(variance, bb.constant(APFloat(0.0f)));
            Value stabilized = bb.add(positive, bb.constant(eps));
            Value rstd = bb.rsqrt(stabilized);
            Value y = bb.mul(centered, rstd);
            if (weighted)
              y = bb.mul(y, a[1]);
            if (biased)
              y = bb.add(y, a[weighted ? 2 : 1]);
            SmallVector<Value> results = {y};
            if (op.getMean())
              results.push_back(bb.add(bb.div(scalars[0], n), meanError));
            if (op.getRstd())
              results.push_back(rstd);
            return results;
          });
    return success();
  }
};

/// Rewrites `rowred.logsumexp` into softmax's `m = max(x)` and `s = sum(exp(x
/// - m))` and the map of the per-row result `m + log(s)`, or `m` when `m` is
/// infinite (torch.logsumexp: `+inf` with a `+inf`, `-inf` for a row of
/// `-inf`, whose `s` may be NaN or 0).
struct DecomposeLogSumExp : OpRewritePattern<LogSumExpOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(LogSumExpOp op,
                                PatternRewriter &rewriter) const override {
    Value x = op.getInput();
    Decomposition d(rewriter, op, x);
    RowSums sums = d.shiftedSums(x, /*withTotal=*/false);
    d.map(x, {}, {sums.max, sums.exp}, op.getOutput(),
          [](BodyBuilder &bb, ValueRange a) {
            Value lse = bb.logSumExp(a[1], a[2]);
            return SmallVector<Value>{bb.select(bb.isInf(a[1]), a[1], lse)};
          });
    return success();
  }
};

/// Rewrites `rowred.logsumexp_backward` into the map `g * exp(x - lse)`: no
/// reduction, one read of each row.
struct DecomposeLogSumExpBackward : OpRewritePattern<LogSumExpBackwardOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(LogSumExpBackwardOp op,
                                PatternRewriter &rewriter) const override {
    Value x = op.getInput();
    Decomposition d(rewriter, op, x);
    d.map(x, {}, {op.getLse(), op.getGrad()}, op.getGradInput(),
          [](BodyBuilder &bb, ValueRange a) {
            return SmallVector<Value>{bb.mul(bb.shiftedExp(a[0], a[1]), a[2])};
          });
    return success();
  }
};

/// Rewrites `rowred.cross_entropy` into softmax's `m = max(x)` and `s =
/// sum(exp(x - m))` (and, with label smoothing, `t = sum(x)` beside the max),
/// the gather of the label's logit `g`, and the map of the per-row results:
/// the loss `(1 - e) * (lse - g) + e * (lse - t / N)` with `lse = m +
/// log(s)`, NaN where `m` is infinite (log_softmax's NaN rows) and 0 for
/// ignored rows, and the logsumexp as rowred.logsumexp's. With a gradient,
/// the map writes `scale * (exp(x - m) / s - target)` as well, the target
/// `(1 - e) + e / N` at the label's column (rowred.column_index) and `e / N`
/// elsewhere, the scale 0 for ignored rows. A rank-0 loss, and the count of
/// rows not ignored, are the map's totals over the rows (its rank-0
/// column_sums).
struct DecomposeCrossEntropy : OpRewritePattern<CrossEntropyOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(CrossEntropyOp op,
                                PatternRewriter &rewriter) const override {
    Value x = op.getLogits(), labels = op.getLabels();
    float smoothing = op.getLabelSmoothing().convertToFloat();
    int64_t ignoreIndex = op.getIgnoreIndex();
    Decomposition d(rewriter, op, x);
    RowSums sums = d.shiftedSums(x, /*withTotal=*/smoothing != 0.0f);
    Value g = d.gather(x, labels);
    // Row scalars: a[1..4], then the total and the gradient's scale.
    SmallVector<Value> rows = {sums.max, sums.exp, g, labels};
    llvm::append_range(rows, present({sums.total, op.getGradScale()}));
    // A rank-0 loss (and the count) are totals over the rows.
    bool total = MapOp::isTotal(op.getLoss());
    SmallVector<Value> outputs =
        present({total ? Value() : op.getLoss(), op.getLse(), op.getGrad()});
    SmallVector<Value> totals =
        total ? present({op.getLoss(), op.getCount()}) : SmallVector<Value>();
    d.map(
        x, {}, rows, outputs,
        [&](BodyBuilder &bb, ValueRange a) {
          Value lse = bb.logSumExp(a[1], a[2]);
          Value loss = bb.sub(lse, a[3]);
          Value infinite = bb.isInf(a[1]);
          if (smoothing != 0.0f) {
            Value mean = bb.div(a[5], bb.rowLength());
            Value uniform = bb.sub(lse, mean);
            Value smoothed = bb.mul(uniform, bb.constant(APFloat(smoothing)));
            Value kept = bb.mul(loss, bb.constant(APFloat(1.0f - smoothing)));
            loss = bb.add(kept, smoothed);
          }
          loss = bb.select(infinite,
                           bb.constant(APFloat::getNaN(APFloat::IEEEsingle())),
                           loss);
          Value ignored = bb.equals(a[4], ignoreIndex);
          Value zero = bb.constant(APFloat(0.0f));
          loss = bb.select(ignored, zero, loss);
          SmallVector<Value> results;
          if (!total)
            results.push_back(loss);
          if (op.getLse())
            results.push_back(bb.select(infinite, a[1], lse));
          if (op.getGrad()) {
            Value scale =
                op.getGradScale() ? a.back() : bb.constant(APFloat(1.0f));
            scale = bb.select(ignored, zero, scale);
            Value p = bb.div(bb.shiftedExp(a[0], a[1]), a[2]);
            results.push_back(
                bb.mul(bb.sub(p, gradTarget(bb, a[4], smoothing)), scale));
          }
          if (total)
            results.push_back(loss);
          if (op.getCount())
            results.push_back(
                bb.select(ignored, zero, bb.constant(APFloat(1.0f))));
          return results;
        },
        totals);
    return success();
  }

private:
  /// The one-hot target of the element's column against `label`, smoothed:
  /// `(1 - e) + e / N` at the label, `e / N` elsewhere.
  static Value gradTarget(BodyBuilder &bb, Value label, float smoothing) {
    Value column = ColumnIndexOp::create(bb.b, bb.loc, label.getType());
    Value hit = arith::CmpIOp::create(bb.b, bb.loc, arith::CmpIPredicate::eq,
                                      column, label);
    if (smoothing == 0.0f) {
      Value zero = bb.constant(APFloat(0.0f));
      return bb.select(hit, bb.constant(APFloat(1.0f)), zero);
    }
    Value spread = bb.div(bb.constant(APFloat(smoothing)), bb.rowLength());
    Value peak = bb.add(bb.constant(APFloat(1.0f - smoothing)), spread);
    return bb.select(hit, peak, spread);
  }
};

/// Applies the decomposition patterns to the whole input.
struct RowRedDecomposePass
    : rowred::impl::RowRedDecomposeBase<RowRedDecomposePass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateDecomposePatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace

void mlir::rowred::populateDecomposePatterns(RewritePatternSet &patterns) {
  patterns
      .add<DecomposeSoftmaxLike<SoftmaxOp, false>,
           DecomposeSoftmaxLike<LogSoftmaxOp, true>, DecomposeSoftmaxBackward,
           DecomposeLogSoftmaxBackward, DecomposeRmsNorm,
           DecomposeRmsNormBackward, DecomposeLayerNorm,
           DecomposeLayerNormBackward,
           DecomposeLogSumExp, DecomposeLogSumExpBackward,
           DecomposeCrossEntropy>(
          patterns.getContext());
}
