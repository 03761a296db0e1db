//===- ColumnSums.h - Sums down the columns of a kernel's rows ------------===//
//
// Part of the softmax kernel compiler.
//
// A map's column_sums in a kernel: each block adds the values of the rows
// it works on into an f32 accumulator per column of its slice in shared
// memory, writes them into its partial row of the workspace (a block's own,
// or its cluster's, whose blocks hold disjoint slices of every row), meets
// the other blocks at a grid barrier, and then sums a share of the columns
// over every partial row in a fixed order. Strategies compose it:
// KernelEmitter zeroes the accumulators before its rows, adds each
// element's value where its map computes it, and finishes after its last
// row. A row loop whose threads hold the same columns of every row keeps
// each thread's sums in registers instead (one per column it holds, carried
// by the loop) and stores them into the accumulators after its last row.
// A total over the rows (a rank-0 column_sums: a reduced loss, a count) is
// a sum of one column: the thread that writes the row's per-row results
// adds the row's value into its one accumulator, and its partial rows are
// one f32 each.
//
//===----------------------------------------------------------------------===//

#ifndef ROWRED_CONVERSION_ROWREDTOGPU_COLUMNSUMS_H
#define ROWRED_CONVERSION_ROWREDTOGPU_COLUMNSUMS_H

#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "mlir/IR/Value.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

#include <algorithm>
#include <optional>

namespace mlir {
namespace rowred {

/// The workspace of a kernel with column sums (docs/abi.md): a 128-byte
/// header (the grid barrier's arrival counter and generation, u32 at bytes
/// 0 and 4), then, per sum, one partial row of `cols` f32 per block of the
/// grid (per cluster: its blocks write their slices of one row), then, per
/// total, one f32 per block (or cluster).
inline constexpr int64_t kColumnSumsHeaderBytes = 128;

/// Where a block's accumulators land (i32 values): its partial row
/// `partial` of `numPartials`, the columns from `sliceStart` (null: 0) on.
/// A block of its own writes row blockId of the grid; the blocks of a
/// cluster write their slices into row clusterId of the clusters.
struct PartialRows {
  Value partial, numPartials, sliceStart;
};

/// f32 accumulators in shared memory of a kernel's `numSums` column sums
/// and `numTotals` totals: `blockElements` per column sum, one per total,
/// and at least one per thread (sumPartials' scratch).
inline int64_t columnAccumulators(int64_t numSums, int64_t numTotals,
                                  int64_t blockElements, int64_t numThreads) {
  return std::max(numSums * blockElements + numTotals, numThreads);
}

/// Emits the column sums of one kernel. All values are of the kernel's
/// function: `outputs` the sums' pointers (of `types`), the column sums'
/// first, then the last `numTotals`, the totals'; `accumulators` the start
/// of the block's accumulators in shared memory (`!llvm.ptr<3>`,
/// `blockElements` f32 per column sum, one after another, one per column of
/// the block's slice, then one f32 per total: columnAccumulators), `rows`
/// where they go, `workspace` the workspace (`!llvm.ptr<1>`), `cols` the row
/// length and `tid` the thread (i32) of a block of `numThreads` threads.
class ColumnSums {
public:
  ColumnSums(ImplicitLocOpBuilder &b, ArrayRef<Value> outputs,
             ArrayRef<Type> types, unsigned numTotals, Value accumulators,
             int64_t blockElements, PartialRows rows, Value workspace,
             Value cols, Value tid, int64_t numThreads);

  /// Zeroes the block's accumulators, then one block barrier.
  void zero();

  /// Adds `value` (f32) to sum `k`'s accumulator of column `col` (i32, of
  /// the block's slice) when `valid` (i1): to the thread's register of its
  /// `slot`-th column where a row loop holds them (holdInRegisters), else
  /// in shared memory. Within one row each column has one thread: no two
  /// add to the same accumulator at once.
  void add(unsigned k, Value col, Value value, Value valid,
           std::optional<int64_t> slot = std::nullopt);

  /// Adds `value` (f32, the row's) to total `t`'s accumulator when `valid`
  /// (i1): one thread of the block (of the cluster's first block) per row.
  void addTotal(unsigned t, Value value, Value valid);

  /// The initial values (zeros) of the registers of a row loop whose
  /// threads hold `slots` columns each, the same in every row: one per sum
  /// and column, for the loop to carry.
  SmallVector<Value> registerInits(int64_t slots);
  /// In the body of that loop: `carried`, its registers, take the adds.
  void holdInRegisters(ValueRange carried);
  /// The registers after the body's adds, for the loop to yield.
  ArrayRef<Value> heldRegisters() const { return registers; }
  /// After that loop, its results `sums` (the registers): each thread's into
  /// the accumulators of its columns, `columns[slot]` = (column, valid).
  /// Adds go to shared memory again.
  void storeRegisters(ValueRange sums,
                      ArrayRef<std::pair<Value, Value>> columns);

  /// After the block's last row: its slice of its partial rows into the
  /// workspace, the grid barrier (every block of the grid resident at once:
  /// a cooperative launch), and the final sums of this block's share of the
  /// columns.
  void finish();

private:
  /// Block barrier; thread 0 arrives at the grid barrier and waits for the
  /// last block, which resets the counter for the next launch and starts a
  /// new generation; block barrier.
  void gridBarrier();
  /// The number of column sums (before the totals).
  unsigned numColumnSums() const { return outputs.size() - numTotals; }
  /// Sum `k`'s columns: `cols`, or 1 for a total.
  Value widthOf(unsigned k);
  /// Sums the partial rows for sum `k`, 32 columns per tile, the tiles
  /// shared out over the `grid` blocks (this one `blockId`), each of a
  /// block's warps over a contiguous range of the partial rows, the warps'
  /// results added in warp order: the same order every run.
  void sumPartials(unsigned k, Value grid, Value blockId);
  /// The address of element `index` (i32) of the f32 array at `base`.
  Value f32At(Value base, Value index);
  /// The address of sum `k`'s accumulator of column `col` of the row (of
  /// the block's slice; 0 for a total).
  Value accumulatorAt(unsigned k, Value col);
  /// The index of sum `k`'s first accumulator.
  int64_t accumulatorStart(unsigned k) const;
  /// The start of partial row `partial` of sum `k` (i32 values).
  Value partialRow(unsigned k, Value partial);

  ImplicitLocOpBuilder &b;
  SmallVector<Value> outputs;
  SmallVector<Type> types;
  Value accumulators;
  PartialRows rows;
  /// The registers of the row loop being emitted (sum-major), if any, and
  /// the columns each thread holds there (registerInits' slots).
  SmallVector<Value> registers;
  int64_t registerSlots = 0;
  Value workspace, cols, tid;
  unsigned numTotals;
  int64_t blockElements, numThreads;
};

} // namespace rowred
} // namespace mlir

#endif // ROWRED_CONVERSION_ROWREDTOGPU_COLUMNSUMS_H
