//===- Mbarriers.h - Shared-memory mbarriers and bulk copies --------------===//
//
// Part of the softmax kernel compiler.
//
// The mbarriers the kernels wait on (arrays of i64 in shared memory, each
// named by a global of the kernel): their initialization by thread 0, the
// wait for a phase and the bulk copies from global memory that complete
// one (ClusterExchange has the cluster barriers). Free functions over the
// builder and the values they need; the strategies compose them
// (KernelEmitter's keep_ahead = bulk stage and cluster exchanges,
// ChunksEmitter's chunk stage).
//
//===----------------------------------------------------------------------===//

#ifndef ROWRED_CONVERSION_ROWREDTOGPU_MBARRIERS_H
#define ROWRED_CONVERSION_ROWREDTOGPU_MBARRIERS_H

#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "mlir/IR/Value.h"

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>

namespace mlir {
namespace rowred {

/// The mbarrier number `index` (i32) of the shared array `name`
/// (`!llvm.ptr<3>`).
Value mbarrierAt(ImplicitLocOpBuilder &b, StringRef name, Value index);

/// Thread 0 (`tid`, i32, is 0) initializes the `count` mbarriers of the
/// shared array `name` for one arrival each, then fences their
/// initialization.
void initMbarriers(ImplicitLocOpBuilder &b, Value tid, StringRef name,
                   int64_t count);

/// Waits until the phase of parity `parity` of the mbarrier at `barrier`
/// has completed: a loop around `mbarrier.try_wait.parity`, which may
/// return early.
void waitForPhase(ImplicitLocOpBuilder &b, Value barrier, Value parity);

/// From thread 0: arms `barrier` for `copies` times `bytes` (i32, at least
/// 0) and, when there are any, copies them from global memory at `src(i)`
/// to shared memory at `dst(i)` with one cp.async.bulk each, which together
/// complete the barrier's phase (with the L2 policy `l2Hint` when given);
/// with none, the arrival alone completes it. The addresses are built where
/// they are used.
void bulkCopyToShared(ImplicitLocOpBuilder &b, Value barrier, Value bytes,
                      function_ref<Value(int64_t)> src,
                      function_ref<Value(int64_t)> dst, Value l2Hint,
                      int64_t copies = 1);

} // namespace rowred
} // namespace mlir

#endif // ROWRED_CONVERSION_ROWREDTOGPU_MBARRIERS_H
