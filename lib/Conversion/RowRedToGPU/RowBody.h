//===- RowBody.h - The bodies of a group's maps and reduces, per row ------===//
//
// Part of the softmax kernel compiler.
//
// A map's or a reduce's body, emitted for a row: its element-independent
// part once per row (prepareBody), the rest once per element
// (emitElements), with `math.exp`, `math.log` and divisions by row scalars
// in their fast forms under the plan's fast_exp. The strategies (the row
// loop's fused rows and levels, the online passes, the chunks) compose it.
//
//===----------------------------------------------------------------------===//

#ifndef ROWRED_CONVERSION_ROWREDTOGPU_ROWBODY_H
#define ROWRED_CONVERSION_ROWREDTOGPU_ROWBODY_H

#include "KernelGroup.h"
#include "KernelValues.h"
#include "rowred/Dialect/RowRed/IR/KernelPlan.h"

#include "mlir/IR/IRMapping.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"

namespace mlir {
namespace rowred {

/// The bodies of `group`'s maps and reduces for one kernel.
class RowBody {
public:
  /// `cols` (i32): the row length that `rowred.row_length` reads.
  RowBody(ImplicitLocOpBuilder &b, const Group &group, const KernelPlan &plan,
          Value cols);

  /// Clones the element-independent part of `body`, whose element arguments
  /// are those of `operands` (inputs, then per-column operands), for the
  /// current row, with the row-scalar arguments bound to `scalars`.
  RowContext prepareBody(Region &body, ValueRange operands, ValueRange scalars);

  /// Evaluates `ctx`'s body on one element of each of the group's operands
  /// (Group::elementIndex's order), at `column` (i32; a map's bodies need
  /// it): the values it yields.
  SmallVector<Value> emitElements(RowContext &ctx, ArrayRef<Value> elements,
                                  Value column = {});

  /// Maps `v` through `mapping`, cloning constants captured from above.
  Value lookupOrClone(Value v, IRMapping &mapping);

  /// The value of `rowred.row_length` in the bodies being prepared (f32),
  /// instead of the row's when set: a chunk's count of elements
  /// (ChunksEmitter's exchangeMoments).
  Value rowLength;

private:
  /// Clones one body op, rewriting exp, log and divisions by row scalars into
  /// their fast forms.
  void emitOp(Operation &op, IRMapping &mapping, RowContext &ctx);

  /// `log(v)`, as `log2(v) * ln(2)` on lg2.approx with fast_exp.
  Value emitLog(Value v);

  ImplicitLocOpBuilder &b;
  const Group &group;
  const KernelPlan &plan;
  Value cols;
};

} // namespace rowred
} // namespace mlir

#endif // ROWRED_CONVERSION_ROWREDTOGPU_ROWBODY_H
