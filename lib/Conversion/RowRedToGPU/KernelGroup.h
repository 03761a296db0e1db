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

#include "rowred/Dialect/RowRed/IR/KernelPlan.h"
#include "rowred/Dialect/RowRed/IR/RowRedOps.h"

#include "mlir/IR/BuiltinOps.h"

#include "llvm/ADT/SmallVector.h"

namespace mlir {
namespace rowred {

/// A rowred.map with the rowred.reduce ops that produce its row scalars, all
/// reading the map's inputs. Lowered to one kernel.
struct Group {
  /// The reduces, in program order.
  SmallVector<ReduceOp> reduces;
  MapOp map;
  /// The kernel's 2-D inputs (the map's; the reduces read some of them) and
  /// per-column operands (the map's, then those only reduces read). Bodies
  /// see their elements in this order: inputs, then columns.
  SmallVector<Value> inputs, columns;
  /// The memref.alloc ops of the row-scalar buffers and their deallocs.
  SmallVector<Operation *> allocs;
  SmallVector<Operation *> deallocs;

  /// The map's 2-D outputs.
  ValueRange outputs() const { return const_cast<MapOp &>(map).getOutputs(); }
  /// Whether the kernel reads or writes more than one input and one output
  /// (softmax's shape): several inputs or outputs, per-column operands.
  bool hasSeveralOperands() const {
    return inputs.size() > 1 || !columns.empty() || outputs().size() > 1;
  }
  /// The position of `operand` (an input or column operand) in the elements
  /// a body sees.
  unsigned elementIndex(Value operand) const;
  /// The reduces in levels, as [begin, end) ranges of `reduces`: runs of
  /// consecutive reduces none of which reads another's row scalar, so that
  /// one exchange between threads serves each run (layer_norm's correction
  /// and sum of squares both read only the first sum). With `merge` false,
  /// one level per reduce.
  SmallVector<std::pair<unsigned, unsigned>> reduceLevels(bool merge) const;
};

/// Reports the first rowred.softmax or rowred.log_softmax left in `module`,
/// which `stage` (a pass) cannot take before rowred-decompose.
LogicalResult verifyDecomposed(ModuleOp module, StringRef stage);

/// Collects the group that ends in `map`, or reports why it cannot be lowered.
FailureOr<Group> collectGroup(MapOp map);

/// Returns true when the group is `m = max(x); s = sum(exp(x - m))` over its
/// one input and output, the pair the online combiner merges into one pass.
bool isOnlineSoftmaxPair(const Group &group);

/// Whether the kernel of `group` has the peeled vector path
/// (KernelPlan::peelable): not for groups with several operands, whose
/// misaligned rows take the scalar path.
inline bool hasPeeledPath(const Group &group, const KernelPlan &plan) {
  return plan.peelable() && !group.hasSeveralOperands();
}

/// Returns true when the group's map is `exp(x - m) / s` over the online
/// pair's max and sum, as rowred-decompose writes softmax.
bool isSoftmaxMap(const Group &group);

} // namespace rowred
} // namespace mlir

#endif // ROWRED_CONVERSION_ROWREDTOGPU_KERNELGROUP_H
