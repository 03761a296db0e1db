//===- Stage.h - The prefetch stage in shared memory ----------------------===//
//
// Part of the softmax kernel compiler.
//
// The stage: dynamic shared memory at the start of the kernel's, into which
// the inputs' rows, shares, kept tiles or chunk parts land ahead of their
// reads, one slot per staged input; with keep_ahead = bulk, two buffers that
// the rows take in turn, each with an mbarrier that its bulk copy
// completes. Stage holds its address and the row's buffer, and emits the
// copies into it; the strategies (KernelEmitter's fused, cluster and online
// rows, ChunksEmitter's chunks) decide what goes in and when.
//
//===----------------------------------------------------------------------===//

#ifndef ROWRED_CONVERSION_ROWREDTOGPU_STAGE_H
#define ROWRED_CONVERSION_ROWREDTOGPU_STAGE_H

#include "KernelValues.h"
#include "rowred/Dialect/RowRed/IR/KernelPlan.h"

#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "mlir/IR/Value.h"

namespace mlir {
namespace rowred {

/// The stage of one kernel (KernelPlan::hasStage).
class Stage {
public:
  /// The stage of `plan`'s kernel: its address, created at the insertion
  /// point.
  Stage(ImplicitLocOpBuilder &b, const KernelPlan &plan);

  /// What the stage's loads and copies address (`!llvm.ptr<3>`): the whole
  /// stage, or in a row of keep_ahead = bulk, the row's buffer.
  Value current() const { return ptr; }

  /// Elements of an input's slot: a chunk's staged part, or a share.
  int64_t slotElements() const;

  /// The address of input element `local` (i32) of current().
  Value address(Value local);

  /// Thread `tid` (i32) 0 initializes the stage's `count` mbarriers (two
  /// for keep_ahead = bulk's buffers, one for a chunks kernel's stage).
  void initBarriers(Value tid, int64_t count);

  /// The mbarrier (`!llvm.ptr<3>`) of buffer `index` (i32).
  Value barrier(Value index);

  /// keep_ahead = bulk's buffer `index` (i32, 0 or 1): the stage's first or
  /// second half.
  Value buffer(Value index);

  /// Enters a row of keep_ahead = bulk whose buffer is `index` (i32) and
  /// whose copy completes the phase of parity `parity` of its mbarrier:
  /// current() is that buffer until leaveRow.
  void enterBulkRow(Value index, Value parity);

  /// Leaves the row: current() is the whole stage again.
  void leaveRow();

  /// In a row of keep_ahead = bulk, its buffer (i32) and the parity of its
  /// mbarrier's phase; null otherwise.
  Value rowBuffer() const { return bulkBuffer; }
  Value rowParity() const { return bulkParity; }

  /// Starts cp.async copies of the chunks at `places` (of plan.vectorWidth
  /// elements, under their `valid`) from the rows at `rowPtrs`, the i-th
  /// into slot i (null: none), without a commit: at the chunks' places in
  /// the block, or at their columns from `stageStart` when given.
  void copyChunks(ArrayRef<Value> rowPtrs, ArrayRef<ChunkPlace> places,
                  Value stageStart);

private:
  ImplicitLocOpBuilder &b;
  const KernelPlan &plan;
  /// The stage's start, and what current() returns.
  Value base, ptr;
  /// In a row of keep_ahead = bulk: its buffer and parity.
  Value bulkBuffer, bulkParity;
};

} // namespace rowred
} // namespace mlir

#endif // ROWRED_CONVERSION_ROWREDTOGPU_STAGE_H
