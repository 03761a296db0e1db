//===- ClusterExchange.h - A row's exchanges across a cluster ---*- C++ -*-===//
//
// Part of the softmax kernel compiler.
//
// How the blocks of a cluster share a row's partial results through
// distributed shared memory. Each block owns, per exchange (and buffer), an
// mbarrier and a `values x clusterSize` f32 array in shared memory. Thread
// `r` (r < clusterSize) of block `q` writes value i into entry `[i][q]` of
// block `r`'s array with `st.async`, which counts its 4 bytes on block
// `r`'s mbarrier (complete_tx); thread 0 of every block arms its own
// mbarriers for all of them at the top of the row, and every thread waits
// for the phase before it reads entry `lane % clusterSize`. Unlike a
// cluster barrier, whose release semantics would make every thread wait for
// its earlier global stores and copies still in flight, only the exchanged
// values are ordered. KernelEmitter's cluster reductions compose it.
//
// The kernel meets at two cluster barriers. A block may write another's
// shared memory only once that block has initialized its mbarriers: every
// thread arrives right after the initialization and waits just before the
// row loop, after the loads of the first row issued ahead of it. Before
// the blocks leave, they meet again with a relaxed arrival, so that no
// thread waits for its own stores to complete first. The memory does not
// need that last meeting (each block waits for every write into its own
// shared memory within the row that reads it), but without it ptxas gives
// several cluster kernels 20-30 more registers, which spill at their
// planned occupancy.
//
//===----------------------------------------------------------------------===//

#ifndef ROWRED_CONVERSION_ROWREDTOGPU_CLUSTEREXCHANGE_H
#define ROWRED_CONVERSION_ROWREDTOGPU_CLUSTEREXCHANGE_H

#include "rowred/Dialect/RowRed/IR/KernelPlan.h"

#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "mlir/IR/Value.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>

namespace mlir {
namespace rowred {

/// The exchanges of a cluster kernel's rows (see the file comment).
class ClusterExchange {
public:
  /// For blocks of `numWarps` warps in clusters of `clusterSize`; `tid` and
  /// `lane` (i32) the thread's, `rank` (i32) the block's in its cluster.
  ClusterExchange(ImplicitLocOpBuilder &b, int64_t clusterSize,
                  int64_t numWarps, Value tid, Value lane, Value rank)
      : b(b), clusterSize(clusterSize), numWarps(numWarps), tid(tid),
        lane(lane), rank(rank) {}

  /// Thread 0 initializes the block's `count` mbarriers (one arrival each:
  /// its own, which arms the expected bytes) and makes them visible to the
  /// cluster; then every thread arrives at the first cluster barrier.
  void initBarriers(int64_t count);
  /// Waits at the first cluster barrier: once, before the row loop (of
  /// each of the kernel's exclusive paths).
  void awaitCluster();
  /// The last cluster barrier, before the blocks leave.
  void finish();

  /// The exchanges of each row on the path being emitted.
  void setRowExchanges(KernelPlan::ClusterExchanges exchanges) {
    rowExchanges = exchanges;
  }
  /// Buffers of each of the row's exchanges (KernelPlan::ClusterExchanges).
  int64_t buffers() const { return rowExchanges.buffers(); }

  /// At the top of a row: its exchanges' buffer (0 or 1, i32; null with one
  /// buffer) and the parity of the mbarrier phase they complete; thread 0
  /// arms their mbarriers for the bytes the blocks of the cluster will send
  /// (one f32 per value and block). Few registers are live there, and every
  /// thread has finished waiting on the previous phases, since a block
  /// barrier separates those waits from this row's first exchange.
  void startRow(Value buffer, Value parity);

  /// Exchange number `exchange` of the row: publishes this block's
  /// `values` to every block of the cluster and returns, per value, the
  /// entry of block `lane % clusterSize` read back.
  SmallVector<Value> exchange(ArrayRef<Value> values, int64_t exchange);

private:
  /// Index (i32) of the mbarrier and entry array of exchange `exchange` in
  /// the current row.
  Value indexOf(int64_t exchange);
  /// The block's own mbarrier number `index` (`!llvm.ptr<3>`).
  Value barrier(Value index);

  ImplicitLocOpBuilder &b;
  int64_t clusterSize, numWarps;
  Value tid, lane, rank;
  KernelPlan::ClusterExchanges rowExchanges;
  /// The current row's buffer and phase parity (startRow).
  Value rowBuffer, rowParity;
};

} // namespace rowred
} // namespace mlir

#endif // ROWRED_CONVERSION_ROWREDTOGPU_CLUSTEREXCHANGE_H
