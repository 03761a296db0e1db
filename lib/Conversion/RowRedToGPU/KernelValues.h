//===- KernelValues.h - What the emitter's members share ------------------===//
//
// Part of the softmax kernel compiler.
//
// The values a thread holds for an access of a row (Chunk), where its
// chunks and a peeled row's vectors lie (ChunkPlace, PeeledRow), a row's
// prepared body (RowContext), a level of reduces (PreparedLevel), what a
// chunks kernel's exchange carries (ChunkParts, ChunkFold), constants, the
// combiners and the exponential (combine, emitExp), the pairwise tree of
// reductions (treeReduce), and the names of the shared-memory globals that the
// kernels and convert-rowred-to-gpu agree on.
//
//===----------------------------------------------------------------------===//

#ifndef ROWRED_CONVERSION_ROWREDTOGPU_KERNELVALUES_H
#define ROWRED_CONVERSION_ROWREDTOGPU_KERNELVALUES_H

#include "rowred/Dialect/RowRed/IR/KernelPlan.h"
#include "rowred/Dialect/RowRed/IR/RowRedOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"

#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Region.h"
#include "mlir/IR/Value.h"
#include "mlir/IR/ValueRange.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <cassert>
#include <functional>
#include <vector>

namespace mlir {
namespace rowred {

/// The values one thread holds for a vector (or scalar) access of a row.
struct Chunk {
  /// Column of the first element (i32).
  Value col;
  /// Whether the access is inside the row (i1); all-or-nothing per chunk.
  Value valid;
  /// The elements, extended to f32.
  SmallVector<Value> values;
  /// The elements of the group's other inputs and per-column operands at the
  /// same columns (Group::elementIndex's order from 1), extended to f32;
  /// empty when the group reads one input, and for an operand only the map
  /// reads until KernelEmitter::withMapOperands loads it.
  SmallVector<SmallVector<Value>> extra;
};

/// Name of the shared-memory array, one f32 per reduce, through which the
/// blocks of a cluster exchange their partial results.
static constexpr StringLiteral kClusterSlotsName = "rowred_cluster_slots";

/// Name of the shared-memory array of mbarriers (i64), one per cluster
/// exchange and buffer, on which the blocks of a cluster count each other's
/// values in.
static constexpr StringLiteral kClusterBarriersName = "rowred_cluster_barriers";

/// Name of the prefetch stage: dynamic shared memory, sized by the launcher
/// (`dynamic_shared_bytes` in the metadata).
static constexpr StringLiteral kStageName = "rowred_stage";

/// Nanoseconds a chunks kernel's warp 0 sleeps between two polls of an
/// entry of its row (version 69: the interval made no difference).
static constexpr int64_t kChunkPollNanoseconds = 64;

/// Name of the shared-memory array of the mbarriers (i64) on which the bulk
/// copies complete: two for keep_ahead = bulk, one per stage buffer; one for
/// a chunks kernel's stage.
static constexpr StringLiteral kStageBarriersName = "rowred_stage_barriers";

/// Per-row clones of the parts of a body that do not depend on the element.
struct RowContext {
  Region *body;
  /// For each element argument of the body, the position of its operand in
  /// the group's elements (Group::elementIndex).
  SmallVector<unsigned> elementOperands;
  /// Block arguments for row scalars and element-independent results.
  IRMapping uniform;
  /// Reciprocals of row-uniform divisors, for `a / s` -> `a * (1 / s)`.
  DenseMap<Value, Value> reciprocals;
  /// Ops that depend on the element (or its column), in order.
  SmallVector<Operation *> varying;
  /// Whether the body reads the element's column (`rowred.column_index`),
  /// and the column of the element being emitted (i32; set by emitElements).
  bool usesColumn = false;
  Value column;
};

/// The reduces of one level, their bodies prepared for the current row
/// (KernelEmitter::prepareLevel).
struct PreparedLevel {
  ArrayRef<ReduceOp> reduces;
  SmallVector<RowContext> contexts;
  SmallVector<Combiner> combiners;
  SmallVector<Value> identities;
  /// Whether levelPartials also counts the valid elements, a last partial
  /// (summed: its combiner is in `combiners`).
  bool counts = false;
};

/// Where one of a thread's chunks lies (KernelEmitter::chunkPlaces).
struct ChunkPlace {
  /// Column in the row (i32).
  Value col;
  /// Column within the block's slice: the chunk's place in the stage.
  Value local;
  /// Whether the chunk is inside the row (i1).
  Value valid;
};

/// Where the vectors of a row that is not aligned for them lie
/// (KernelEmitter::peelRow).
struct PeeledRow {
  /// Elements before the first aligned column, h < vec (i32).
  Value head;
  /// The end of the last whole vector from column h (i32).
  Value vectorEnd;
};

/// Where a chunks kernel's chunk's elements are: `held` in registers (the
/// chunk's first blockElements, vector path), then `streamed` more from
/// column `streamStart`, from the stage when `staged`.
struct ChunkParts {
  SmallVector<Chunk> held;
  Value streamStart;
  int64_t streamed;
  bool staged;
};

/// How a chunks kernel's exchange folds a row's entries
/// (KernelEmitter::exchangeChunk): from `identities` (one per exchanged
/// value), each lane folds its entries with `step`, then `acrossLanes`
/// combines the lanes' results over warp 0. `packed` values share one entry
/// (softmax's pair, whose bits are never all zero); otherwise each value has
/// its own.
struct ChunkFold {
  SmallVector<Value, 4> identities;
  std::function<SmallVector<Value, 4>(ValueRange acc, ValueRange entry)> step;
  std::function<SmallVector<Value, 4>(ValueRange acc)> acrossLanes;
  bool packed = false;
};

/// The columns a thread walks in KernelEmitter::emitRowPasses, and how: [lower,
/// upper) in tiles of `chunks` accesses of `vec` elements per thread, masked at
/// `end` (null: at the row's end).
struct TileWalk {
  Value lower, upper, end;
  int64_t vec, chunks;
};

/// The next row's first tile, which a chained pass 2 loads in its last
/// iteration: row `row + step` (i64), loaded when it exists. Its address
/// is computed where the loads are issued, so that nothing of it stays
/// live through the row.
struct NextTile {
  Value row, step;
};

/// The block's share of one row of the online kernel.
struct OnlineShare {
  /// Columns [lo, hi) of the vector tiles (i32); chunks are masked at hi,
  /// the end of the share, which need not end on a tile
  /// (KernelEmitter::onlineShare).
  Value lo, hi;
  /// A peeled row's edges (KernelEmitter::loadEdges), which the first block of
  /// the row folds before its first tile and writes after pass 2; else empty.
  SmallVector<Chunk> edges;
  /// Whether both passes read the share from the stage.
  bool staged = false;
};

/// An i32 constant.
inline Value constI32(ImplicitLocOpBuilder &b, int64_t v) {
  return arith::ConstantIntOp::create(b, v, 32);
}

/// An i64 constant.
inline Value constI64(ImplicitLocOpBuilder &b, int64_t v) {
  return arith::ConstantIntOp::create(b, v, 64);
}

/// An f32 constant.
inline Value constF32(ImplicitLocOpBuilder &b, double v) {
  return arith::ConstantFloatOp::create(b, b.getF32Type(), APFloat((float)v));
}

/// The f32 constant -inf.
inline Value negInf(ImplicitLocOpBuilder &b) {
  return arith::ConstantFloatOp::create(
      b, b.getF32Type(),
      APFloat::getInf(APFloat::IEEEsingle(), /*Negative=*/true));
}

/// `lhs c rhs`: arith.maximumf for max, arith.addf for sum.
Value combine(ImplicitLocOpBuilder &b, Combiner c, Value lhs, Value rhs);

/// `exp(v)`, as `exp2(v * log2(e))` on `ex2.approx.ftz.f32` with `plan`'s
/// fast_exp. The flush-to-zero form is one MUFU.EX2; the plain
/// `ex2.approx.f32` that `math.exp2 {afn}` becomes also produces subnormal
/// results, which takes a compare and two predicated multiplies around it.
/// Only results below 2^-126 differ (they become 0), and no subnormal input
/// reaches it with a different result (2^x = 1 for |x| < 2^-126).
Value emitExp(ImplicitLocOpBuilder &b, const KernelPlan &plan, Value v);

/// Pairwise tree over `input`, for instruction-level parallelism.
template <typename T>
T treeReduce(ArrayRef<T> input, function_ref<T(T, T)> fn) {
  assert(!input.empty() && "nothing to reduce");
  std::vector<T> values(input.begin(), input.end());
  for (size_t width = values.size(); width > 1; width = (width + 1) / 2) {
    for (size_t i = 0; i < width / 2; ++i)
      values[i] = fn(values[2 * i], values[2 * i + 1]);
    if (width % 2)
      values[width / 2] = values[width - 1];
  }
  return values[0];
}

} // namespace rowred
} // namespace mlir

#endif // ROWRED_CONVERSION_ROWREDTOGPU_KERNELVALUES_H
