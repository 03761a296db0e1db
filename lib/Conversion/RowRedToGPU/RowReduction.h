//===- RowReduction.h - A row's values reduced across its threads ---------===//
//
// Part of the softmax kernel compiler.
//
// The reductions of a row's values across the threads that hold it, as
// Triton's ReduceScanCommon does for a tensor's axis: lanes by `gpu.shuffle`
// butterflies, warps through the kernel's shared slots (`memref<slots x
// warps x f32>`, one slot per value), the blocks of a cluster through its
// ClusterExchange. Of single values with a combiner (max or sum), and of
// (max, sum) pairs with the online combiner. Every thread of the row ends
// with the result. The strategies (KernelEmitter's rows, ChunksEmitter's
// chunks) compose them.
//
//===----------------------------------------------------------------------===//

#ifndef ROWRED_CONVERSION_ROWREDTOGPU_ROWREDUCTION_H
#define ROWRED_CONVERSION_ROWREDTOGPU_ROWREDUCTION_H

#include "ClusterExchange.h"
#include "KernelValues.h"
#include "rowred/Dialect/RowRed/IR/KernelPlan.h"

#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "mlir/IR/Value.h"

#include <utility>

namespace mlir {
namespace rowred {

/// Reduces a row's values across the threads of its row, block and
/// cluster, as `plan` lays them out.
class RowReduction {
public:
  /// `lane` (i32) and `warp` (index) of the thread, the kernel's shared
  /// slots `shared` (null where the plan needs none), and the cluster's
  /// exchanges (null without clusters).
  RowReduction(ImplicitLocOpBuilder &b, const KernelPlan &plan, Value lane,
               Value warp, Value shared, ClusterExchange *cluster);

  /// Butterfly over the warp, or over the lanes of one row when a row has
  /// fewer threads than a warp: every lane ends with the result.
  Value warpReduce(Value v, function_ref<Value(Value, Value)> fn);

  /// `gpu.shuffle xor` butterfly over aligned groups of `lanes` lanes (a
  /// power of two up to 32): every lane ends with its group's result.
  Value butterfly(Value v, int32_t lanes, function_ref<Value(Value, Value)> fn);

  /// Lane 0 of each warp stores the warp's `values` in shared memory slots
  /// `firstSlot...` (column: the warp), then one barrier unless `barrier` is
  /// false.
  void publishPerWarp(ArrayRef<Value> values, int64_t firstSlot,
                      bool barrier = true);

  /// The same from slot `firstSlot` (index).
  void publishPerWarp(ArrayRef<Value> values, Value firstSlot,
                      bool barrier = true);

  /// Publishes each warp's `values` (lane 0) in shared memory slots
  /// `firstSlot...`, waits at one barrier, and returns, per value, the
  /// per-warp partials every thread reads back.
  SmallVector<SmallVector<Value>> exchangeAcrossWarps(ArrayRef<Value> values,
                                                      int64_t firstSlot);

  /// Reduces `v` over the row's threads with `c`: warp shuffles, then one
  /// shared-memory step in slot `slot` when the row spans several warps,
  /// then one exchange across the cluster. Every thread gets the result.
  Value blockReduce(Value v, Combiner c, int64_t slot);

  /// blockReduce of several values at once (one reduce level), each with
  /// its combiner, through one shared-memory exchange in the slots from
  /// `firstSlot`. Over a cluster, one value only.
  SmallVector<Value> blockReduce(ValueRange values,
                                 ArrayRef<Combiner> combiners,
                                 int64_t firstSlot);

  /// `d * e^(m - mAll)`: a partial sum rescaled to the combined max `mAll`;
  /// 0 when `m` is -inf (its sum is 0 and the exponent may be NaN).
  Value rescale(Value m, Value d, Value mAll);

  /// Combines the (max, sum) pairs of aligned groups of `lanes` lanes with
  /// the online combiner, (m_a, d_a) + (m_b, d_b) = (m, d_a e^(m_a - m) +
  /// d_b e^(m_b - m)), in the order max butterfly, one rescale per lane, sum
  /// butterfly: one exp per lane instead of two per step.
  std::pair<Value, Value> butterflyPair(Value m, Value d, int32_t lanes);

  /// Reduces a (max, sum) pair over the row's threads with the online
  /// combiner, then over the cluster (reducePairInBlock, then
  /// reducePairAcrossBlocks).
  std::pair<Value, Value> blockReducePair(Value m, Value d, Value pairSlot);

  /// Reduces a (max, sum) pair over the row's threads of this block with the
  /// online combiner: lanes, then one shared-memory step across warps whose
  /// pairs lane w of every warp reads back and combines by butterfly, from
  /// slot `pairSlot` (index; null: slot 0).
  std::pair<Value, Value> reducePairInBlock(Value m, Value d, Value pairSlot);

  /// Combines the block's (max, sum) pair with the other blocks of the row's
  /// cluster.
  std::pair<Value, Value> reducePairAcrossBlocks(Value m, Value d);

private:
  /// Shared slot `base + i` (index): `base` itself for i = 0, a constant
  /// for a constant `base`.
  Value slotAt(Value base, int64_t i);

  /// Combines the block results `v` of every block of the cluster: one
  /// exchange in slot `slot`, then a butterfly over the cluster's entries.
  Value clusterReduce(Value v, function_ref<Value(Value, Value)> fn,
                      int64_t slot);

  /// Combines the block pairs (m, d) of every block of the cluster (the max
  /// in slot 0, the sum in slot 1).
  std::pair<Value, Value> clusterReducePair(Value m, Value d);

  ImplicitLocOpBuilder &b;
  const KernelPlan &plan;
  Value lane, warp, shared;
  ClusterExchange *cluster;
};

} // namespace rowred
} // namespace mlir

#endif // ROWRED_CONVERSION_ROWREDTOGPU_ROWREDUCTION_H
