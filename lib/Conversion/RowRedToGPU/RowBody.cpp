//===- RowBody.cpp - The bodies of a group's maps and reduces, per row ----===//
//
// Part of the softmax kernel compiler.
//
//===----------------------------------------------------------------------===//

#include "RowBody.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "llvm/ADT/DenseSet.h"

#include <cmath>

using namespace mlir;
using namespace mlir::rowred;

RowBody::RowBody(ImplicitLocOpBuilder &b, const Group &group,
                 const KernelPlan &plan, Value cols)
    : b(b), group(group), plan(plan), cols(cols) {}

RowContext RowBody::prepareBody(Region &body, ValueRange operands,
                                ValueRange scalars) {
  RowContext ctx;
  ctx.body = &body;
  Block &block = body.front();
  for (Value operand : operands)
    ctx.elementOperands.push_back(group.elementIndex(operand));
  for (auto [arg, value] :
       llvm::zip(block.getArguments().drop_front(operands.size()), scalars))
    ctx.uniform.map(arg, value);
  DenseSet<Value> dependsOnElement;
  for (BlockArgument arg : block.getArguments().take_front(operands.size()))
    dependsOnElement.insert(arg);
  for (Operation &op : block.without_terminator()) {
    ctx.usesColumn |= isa<ColumnIndexOp>(op);
    bool varying =
        isa<ColumnIndexOp>(op) || llvm::any_of(op.getOperands(), [&](Value v) {
          return dependsOnElement.contains(v);
        });
    if (!varying) {
      emitOp(op, ctx.uniform, ctx);
      continue;
    }
    ctx.varying.push_back(&op);
    for (Value r : op.getResults())
      dependsOnElement.insert(r);
    // a / s with s uniform: one reciprocal per row.
    if (auto div = dyn_cast<arith::DivFOp>(op);
        div && plan.fastExp && !dependsOnElement.contains(div.getRhs()) &&
        !ctx.reciprocals.count(div.getRhs())) {
      Value rhs = lookupOrClone(div.getRhs(), ctx.uniform);
      ctx.reciprocals[div.getRhs()] =
          arith::DivFOp::create(b, constF32(b, 1.0), rhs);
    }
  }
  return ctx;
}

SmallVector<Value>
RowBody::emitElements(RowContext &ctx, ArrayRef<Value> elements, Value column) {
  ctx.column = column;
  IRMapping mapping = ctx.uniform;
  Block &block = ctx.body->front();
  for (auto [arg, operand] :
       llvm::zip(block.getArguments(), ctx.elementOperands)) {
    assert(elements[operand] && "an operand the body reads is not loaded");
    mapping.map(arg, elements[operand]);
  }
  for (Operation *op : ctx.varying)
    emitOp(*op, mapping, ctx);
  SmallVector<Value> results;
  for (Value v : cast<YieldOp>(block.back()).getValues())
    results.push_back(lookupOrClone(v, mapping));
  return results;
}

Value RowBody::lookupOrClone(Value v, IRMapping &mapping) {
  if (Value mapped = mapping.lookupOrNull(v))
    return mapped;
  Operation *def = v.getDefiningOp();
  assert(def && def->hasTrait<OpTrait::ConstantLike>() &&
         "body captures a non-constant");
  Value cloned = b.clone(*def)->getResult(0);
  mapping.map(v, cloned);
  return cloned;
}

void RowBody::emitOp(Operation &op, IRMapping &mapping, RowContext &ctx) {
  for (Value operand : op.getOperands())
    lookupOrClone(operand, mapping);
  Value result;
  if (isa<RowLengthOp>(op))
    result = rowLength
                 ? rowLength
                 : arith::UIToFPOp::create(b, b.getF32Type(), cols).getResult();
  else if (auto index = dyn_cast<ColumnIndexOp>(op)) {
    assert(ctx.column && "a map body's element without its column");
    result = index.getType().isInteger(32)
                 ? ctx.column
                 : arith::ExtUIOp::create(b, index.getType(), ctx.column)
                       .getResult();
  } else if (auto exp = dyn_cast<math::ExpOp>(op); exp && plan.fastExp)
    result = emitExp(b, plan, mapping.lookup(exp.getOperand()));
  else if (auto log = dyn_cast<math::LogOp>(op); log && plan.fastExp)
    result = emitLog(mapping.lookup(log.getOperand()));
  else if (auto div = dyn_cast<arith::DivFOp>(op);
           div && ctx.reciprocals.count(div.getRhs()))
    result = arith::MulFOp::create(b, mapping.lookup(div.getLhs()),
                                   ctx.reciprocals[div.getRhs()]);
  if (result) {
    mapping.map(op.getResult(0), result);
    return;
  }
  b.clone(op, mapping);
}

Value RowBody::emitLog(Value v) {
  if (!plan.fastExp)
    return math::LogOp::create(b, v);
  Value l2 = math::Log2Op::create(b, v, arith::FastMathFlags::afn);
  return arith::MulFOp::create(b, l2, constF32(b, M_LN2));
}
