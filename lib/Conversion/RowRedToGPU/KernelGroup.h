//===- KernelGroup.h - A map and the reduces it reads ---------------------===//
//
// Part of the softmax kernel compiler.
//
// A kernel group: a rowred.map with the rowred.reduce chain that produces its
// row scalars, all over one input. Each group becomes one kernel.
//
//===----------------------------------------------------------------------===//

#ifndef ROWRED_CONVERSION_ROWREDTOGPU_KERNELGROUP_H
#define ROWRED_CONVERSION_ROWREDTOGPU_KERNELGROUP_H

#include "ColumnSums.h"

#include "rowred/Dialect/RowRed/IR/KernelPlan.h"
#include "rowred/Dialect/RowRed/IR/RowRedOps.h"

#include "mlir/IR/BuiltinOps.h"

#include "llvm/ADT/SmallVector.h"

namespace mlir {
namespace rowred {

/// A rowred.map with the rowred.reduce and rowred.gather ops that produce
/// its row scalars, all reading the map's inputs. Lowered to one kernel.
struct Group {
  /// The reduces and gathers, in program order.
  SmallVector<ReduceOp> reduces;
  SmallVector<GatherOp> gathers;
  MapOp map;
  /// The kernel's 2-D inputs (the map's; the reduces read some of them) and
  /// per-column operands (the map's, then those only reduces read). Bodies
  /// see their elements in this order: inputs, then columns.
  SmallVector<Value> inputs, columns;
  /// The map's 2-D outputs and its per-row (rank-1) outputs, and the
  /// positions of their values in the map's yield.
  SmallVector<Value> outputs, rowOutputs;
  SmallVector<unsigned> outputResults, rowOutputResults;
  /// The map's sums down the columns (rank-1 column_sums) and its totals
  /// over the rows (rank 0), and the positions of their values in the map's
  /// yield.
  SmallVector<Value> columnSums, totals;
  SmallVector<unsigned> columnSumResults, totalResults;
  /// The rank-1 `rows` operands that no op of the group writes (labels),
  /// which the kernel reads once per row.
  SmallVector<Value> rowInputs;
  /// The memref.alloc ops of the row-scalar buffers and their deallocs.
  SmallVector<Operation *> allocs;
  SmallVector<Operation *> deallocs;

  /// Whether the kernel reads one input and writes at most one output of
  /// rows, per element (softmax's shape, or logsumexp's and cross-entropy's,
  /// which write only per-row results): the planner gives these softmax's
  /// shapes.
  bool hasOneRowOperand() const {
    return inputs.size() == 1 && columns.empty() && outputs.size() <= 1;
  }
  /// Whether the kernel is not exactly softmax's one input and one output
  /// per element: several inputs, per-column operands, several outputs of
  /// rows or none. The emitter then keeps every operand's row pointers.
  bool hasSeveralOperands() const {
    return !hasOneRowOperand() || outputs.empty() || hasColumnSums();
  }
  /// Whether the kernel writes rows (2-D outputs), not only per-row results
  /// (logsumexp, the loss) or sums.
  bool writesRows() const { return !outputs.empty(); }
  /// Whether the map also sums down the columns or over the rows
  /// (ColumnSums): its blocks meet at a grid barrier.
  bool hasColumnSums() const { return !columnSums.empty() || !totals.empty(); }
  /// What the map sums, for diagnostics: "sums down the columns" (or
  /// "sums over the rows", for totals alone).
  StringRef sumsName() const {
    return columnSums.empty() ? "sums over the rows" : "sums down the columns";
  }
  /// Whether the kernel reads or writes anything once per row: per-row
  /// inputs, gathers or per-row outputs.
  bool hasRowOperands() const {
    return !rowInputs.empty() || !gathers.empty() || !rowOutputs.empty();
  }
  /// The element type of the 2-D outputs (the input's when there are none).
  Type outputType() const;
  /// The position of `operand` (an input or column operand) in the elements
  /// a body sees.
  unsigned elementIndex(Value operand) const;
  /// The input or per-column operand at element index `index`.
  Value operandAt(unsigned index) const {
    return index < inputs.size() ? inputs[index]
                                 : columns[index - inputs.size()];
  }
  /// Whether the operand at element index `index` is one that only the map
  /// reads (the norms' weight and bias): kernels load it where the map needs
  /// it rather than with the row, so that it holds no registers through the
  /// reductions. The first input is always loaded with the row.
  bool isMapOnly(unsigned index) const;
  /// The inputs and per-column operands whose elements a thread holds in
  /// registers through its reductions: not those only the map reads, which
  /// it loads where the map needs them (isMapOnly), nor the outputs, which
  /// the map computes a chunk at a time.
  int64_t numHeldOperands() const {
    int64_t held = 0;
    for (unsigned index = 0, e = inputs.size() + columns.size(); index < e;
         ++index)
      held += !isMapOnly(index);
    return held;
  }
  /// The inputs and per-column operands only the map reads (isMapOnly).
  int64_t numMapOnlyOperands() const {
    return static_cast<int64_t>(inputs.size() + columns.size()) -
           numHeldOperands();
  }
  /// The 2-D inputs only the map reads (isMapOnly).
  int64_t numMapOnlyInputs() const {
    int64_t mapOnly = 0;
    for (unsigned index = 0, e = inputs.size(); index < e; ++index)
      mapOnly += isMapOnly(index);
    return mapOnly;
  }
  /// Whether any operand is one only the map reads (isMapOnly).
  bool hasMapOnlyOperands() const { return numMapOnlyOperands() > 0; }
  /// The reduces in levels, as [begin, end) ranges of `reduces`: runs of
  /// consecutive reduces none of which reads another's row scalar, so that
  /// one exchange between threads serves each run (layer_norm's correction
  /// and sum of squares both read only the first sum). With `merge` false,
  /// one level per reduce.
  SmallVector<std::pair<unsigned, unsigned>> reduceLevels(bool merge) const;
};

/// Collects the group that ends in `map`, or reports why it cannot be lowered.
FailureOr<Group> collectGroup(MapOp map);

/// Returns true when the group is `m = max(x); s = sum(exp(x - m))` over its
/// one input (and at most one output of rows), the pair the online combiner
/// merges into one pass.
bool isOnlineSoftmaxPair(const Group &group);

/// Returns true when the group's reduces are shifted moments of its first
/// input, as rowred-decompose writes layer_norm: `s = sum(x)`, then `c =
/// sum(x - s / N)` and `q = sum((x - s / N)^2)` (N the row length). Such
/// sums over parts of a row, each about its own part's mean, combine into
/// the row's exactly (the pairwise update of Chan, Golub and LeVeque), so
/// that a chunks kernel's chunks meet once (emitMomentsChunk).
bool isShiftedMoments(const Group &group);

/// How many times the chunks of a row of `group` meet in a generic chunks
/// kernel (emitLevelChunk): one exchange per level of reduces, each level
/// of at most two (the block hands a level's results on in two slots of
/// shared memory); 0 when generic chunks cannot take the group. Softmax's
/// pair, the other group chunks take, is two levels in one exchange, and
/// so are shifted moments.
inline unsigned chunkExchanges(const Group &group) {
  if (group.reduces.empty())
    return 0;
  if (isShiftedMoments(group))
    return 1;
  auto levels = group.reduceLevels(/*merge=*/true);
  if (llvm::any_of(levels, [](std::pair<unsigned, unsigned> level) {
        return level.second - level.first > 2;
      }))
    return 0;
  return levels.size();
}

/// The 8-byte entries each chunk of a row of `group` publishes in a chunks
/// kernel's workspace (docs/abi.md's `chunk_entries`): one for softmax's
/// pair, which shares one, else one per reduce, and one more for the count
/// of elements of shifted moments' chunks.
inline unsigned chunkEntries(const Group &group) {
  if (isOnlineSoftmaxPair(group))
    return 1;
  return group.reduces.size() + (isShiftedMoments(group) ? 1 : 0);
}

/// The bytes of one row's record in a chunks kernel's workspace (docs/abi.md):
/// 128 of counter, then the 8-byte entries of `chunks` chunks, chunkEntries
/// each, 128-byte aligned, so that no two rows share a line. `chunks` is of
/// any integer or index type; the result is of its type.
Value chunkRecordBytes(OpBuilder &b, Location loc, Value chunks,
                       const Group &group);

/// The 2-D inputs a chunks kernel or a staged streamed row of `group` stages
/// (KernelPlan::stageInputs): slot i of the stage is input i's, the inputs
/// the map alone reads left out (their slots unused); 0 when the stage
/// cannot hold them, the inputs being of different types.
int64_t stageSlots(const Group &group);

/// Whether the kernel of `group` has the peeled vector path
/// (KernelPlan::peelable): for one input and at most one output of rows
/// (logsumexp and cross-entropy read one and write none) on any strategy,
/// and for several inputs and outputs of rows (the softmax and log-softmax
/// backwards) on a block or cluster holding the row, all peeled alike. Not
/// with per-column operands, whose vectors start at the row's first column
/// whatever its alignment: those rows take the scalar path.
inline bool hasPeeledPath(const Group &group, const KernelPlan &plan) {
  // Nor with column sums, whose accumulators each row's columns must reach
  // from the same threads.
  if (!plan.peelable() || !group.columns.empty() || group.hasColumnSums())
    return false;
  return group.hasOneRowOperand() || plan.strategy == Strategy::fused ||
         plan.strategy == Strategy::cluster;
}

/// Where a kernel of `group` keeps its column sums' accumulators in dynamic
/// shared memory (ColumnSums): after the plan's stage, 16-byte aligned.
inline int64_t columnAccumulatorsOffset(const KernelPlan &plan) {
  return plan.hasStage() ? llvm::alignTo(plan.dynamicSharedBytes(), 16) : 0;
}

/// Bytes of dynamic shared memory a kernel of `group` takes: the plan's
/// stage, then a block's f32 accumulator per column of each column sum and
/// one per total (columnAccumulators).
inline int64_t kernelDynamicSharedBytes(const Group &group,
                                        const KernelPlan &plan) {
  if (!group.hasColumnSums())
    return plan.hasStage() ? plan.dynamicSharedBytes() : 0;
  return columnAccumulatorsOffset(plan) +
         columnAccumulators(group.columnSums.size(), group.totals.size(),
                            plan.blockElements, plan.numThreads()) *
             4;
}

/// Returns true when the group's map is `exp(x - m) / s` over the online
/// pair's max and sum, as rowred-decompose writes softmax.
bool isSoftmaxMap(const Group &group);

} // namespace rowred
} // namespace mlir

#endif // ROWRED_CONVERSION_ROWREDTOGPU_KERNELGROUP_H
