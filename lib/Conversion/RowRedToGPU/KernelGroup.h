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

#include "rowred/Dialect/RowRed/IR/RowRedOps.h"

#include "mlir/IR/BuiltinOps.h"

#include "llvm/ADT/SmallVector.h"

namespace mlir {
namespace rowred {

/// A rowred.map with the rowred.reduce ops that produce its row scalars, all
/// reading the same input. Lowered to one kernel.
struct Group {
  /// The reduces, in program order.
  SmallVector<ReduceOp> reduces;
  MapOp map;
  /// The memref.alloc ops of the row-scalar buffers and their deallocs.
  SmallVector<Operation *> allocs;
  SmallVector<Operation *> deallocs;
};

/// Everything the kernel emitter needs to know, resolved from the pass

/// Reports the first rowred.softmax or rowred.log_softmax left in `module`,
/// which `stage` (a pass) cannot take before rowred-decompose.
LogicalResult verifyDecomposed(ModuleOp module, StringRef stage);

/// Collects the group that ends in `map`, or reports why it cannot be lowered.
FailureOr<Group> collectGroup(MapOp map);

/// Returns true when the group is `m = max(x); s = sum(exp(x - m))`, the pair
/// the online combiner merges into one pass.
bool isOnlineSoftmaxPair(const Group &group);

/// Returns true when the group's map is `exp(x - m) / s` over the online
/// pair's max and sum, as rowred-decompose writes softmax.
bool isSoftmaxMap(const Group &group);

} // namespace rowred
} // namespace mlir

#endif // ROWRED_CONVERSION_ROWREDTOGPU_KERNELGROUP_H
