//===- RowRedOps.cpp - Row-wise reduction dialect ops ---------------------===//
//
// Part of the softmax kernel compiler.
//
//===----------------------------------------------------------------------===//

#include "rowred/Dialect/RowRed/IR/RowRedOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;
using namespace mlir::rowred;

#include "rowred/Dialect/RowRed/IR/RowRedOpsDialect.cpp.inc"

void RowRedDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "rowred/Dialect/RowRed/IR/RowRedOps.cpp.inc"
      >();
  registerAttributes();
}

//===----------------------------------------------------------------------===//
// Shared verification helpers
//===----------------------------------------------------------------------===//

/// Returns true for the element types the dialect accepts in rows: f32, f16
/// and bf16.
static bool isRowElementType(Type type) {
  return type.isF32() || type.isF16() || type.isBF16();
}

/// Checks that `value` is a rank-2 memref of f32, f16 or bf16 whose rows are
/// contiguous (the kernels index a row's elements with stride 1; docs/abi.md).
static LogicalResult verifyMatrix(Operation *op, Value value, StringRef name) {
  auto type = dyn_cast<MemRefType>(value.getType());
  if (!type)
    return op->emitOpError()
           << name << " must be a memref, got " << value.getType();
  if (type.getRank() != 2)
    return op->emitOpError()
           << name << " must be a rank-2 memref, got rank " << type.getRank();
  if (!isRowElementType(type.getElementType()))
    return op->emitOpError()
           << name << " element type must be f32, f16 or bf16, got "
           << type.getElementType();
  SmallVector<int64_t> strides;
  int64_t offset = 0;
  if (failed(type.getStridesAndOffset(strides, offset)) || strides[1] != 1) {
    InFlightDiagnostic diag = op->emitOpError()
                              << name << " rows must be contiguous (stride 1 "
                              << "between the elements of a row), got ";
    if (strides.size() == 2 && ShapedType::isDynamic(strides[1]))
      diag << "a dynamic stride";
    else if (strides.size() == 2)
      diag << "stride " << strides[1];
    else
      diag << "layout " << type.getLayout();
    return diag;
  }
  return success();
}

/// Checks that `value` is a rank-1 f32 memref holding one scalar per row of
/// `matrix`.
static LogicalResult verifyRowScalars(Operation *op, Value value,
                                      MemRefType matrix, StringRef name) {
  auto type = dyn_cast<MemRefType>(value.getType());
  if (!type || type.getRank() != 1 || !type.getElementType().isF32())
    return op->emitOpError()
           << name << " must be a rank-1 memref of f32 (one per row), got "
           << value.getType();
  if (failed(verifyCompatibleShape(type.getShape(),
                                   matrix.getShape().take_front())))
    return op->emitOpError()
           << name << " has " << type.getDimSize(0)
           << " elements but the input has " << matrix.getDimSize(0) << " rows";
  return success();
}

/// Checks the body shared by reduce and map: one f32 argument for the element
/// and one per row-scalar operand, terminated by `rowred.yield`.
static LogicalResult verifyBody(Operation *op, Region &body,
                                unsigned numRowScalars) {
  Block &block = body.front();
  unsigned expected = 1 + numRowScalars;
  if (block.getNumArguments() != expected)
    return op->emitOpError() << "body must have " << expected
                             << " arguments (the element and one per row "
                                "scalar), got "
                             << block.getNumArguments();
  for (BlockArgument arg : block.getArguments())
    if (!arg.getType().isF32())
      return op->emitOpError() << "body argument #" << arg.getArgNumber()
                               << " must be f32, got " << arg.getType();
  if (block.empty() || !isa<YieldOp>(block.back()))
    return op->emitOpError() << "body must end with 'rowred.yield'";
  return success();
}

//===----------------------------------------------------------------------===//
// SoftmaxOp / LogSoftmaxOp
//===----------------------------------------------------------------------===//

/// Verifies the operands shared by softmax and log_softmax.
static LogicalResult verifySoftmaxLike(Operation *op, Value input, Value output,
                                       int64_t dimension) {
  if (failed(verifyMatrix(op, input, "input")) ||
      failed(verifyMatrix(op, output, "output")))
    return failure();
  auto inType = cast<MemRefType>(input.getType());
  auto outType = cast<MemRefType>(output.getType());
  if (inType.getElementType() != outType.getElementType())
    return op->emitOpError()
           << "input and output element types differ: "
           << inType.getElementType() << " vs " << outType.getElementType();
  if (failed(verifyCompatibleShape(inType.getShape(), outType.getShape())))
    return op->emitOpError()
           << "input and output shapes differ: " << inType << " vs " << outType;
  if (dimension < 0 || dimension >= inType.getRank())
    return op->emitOpError()
           << "dimension " << dimension << " is out of range for a rank-"
           << inType.getRank() << " input";
  if (dimension != inType.getRank() - 1)
    return op->emitOpError()
           << "only the innermost dimension (" << inType.getRank() - 1
           << ") can be reduced, got " << dimension;
  return success();
}

/// Declares a read of every input and a write of every output.
static void
addEffects(SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
               &effects,
           ArrayRef<OpOperand *> reads, ArrayRef<OpOperand *> writes) {
  for (OpOperand *operand : reads)
    effects.emplace_back(MemoryEffects::Read::get(), operand,
                         SideEffects::DefaultResource::get());
  for (OpOperand *operand : writes)
    effects.emplace_back(MemoryEffects::Write::get(), operand,
                         SideEffects::DefaultResource::get());
}

//===----------------------------------------------------------------------===//
// ReduceOp
//===----------------------------------------------------------------------===//

APFloat ReduceOp::getIdentity() {
  switch (getCombiner()) {
  case Combiner::max:
    return APFloat::getInf(APFloat::IEEEsingle(), /*Negative=*/true);
  case Combiner::sum:
    return APFloat::getZero(APFloat::IEEEsingle());
  }
  llvm_unreachable("unknown combiner");
}

/// Verifies the row-scalar operands of a reduce or map against `matrix`.
static LogicalResult verifyRowOperands(Operation *op, ValueRange rows,
                                       MemRefType matrix) {
  for (auto [index, row] : llvm::enumerate(rows))
    if (failed(verifyRowScalars(op, row, matrix,
                                ("rows operand #" + Twine(index)).str())))
      return failure();
  return success();
}

LogicalResult ReduceOp::verify() {
  if (failed(verifyMatrix(*this, getInput(), "input")))
    return failure();
  auto inType = cast<MemRefType>(getInput().getType());
  if (failed(verifyRowOperands(*this, getRows(), inType)))
    return failure();
  return verifyRowScalars(*this, getInit(), inType, "init");
}

LogicalResult ReduceOp::verifyRegions() {
  return verifyBody(*this, getBody(), getRows().size());
}

void ReduceOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  SmallVector<OpOperand *> reads = {&getInputMutable()};
  for (OpOperand &row : getRowsMutable())
    reads.push_back(&row);
  addEffects(effects, reads, {&getInitMutable()});
}

//===----------------------------------------------------------------------===//
// MapOp
//===----------------------------------------------------------------------===//

LogicalResult MapOp::verify() {
  if (failed(verifyMatrix(*this, getInput(), "input")) ||
      failed(verifyMatrix(*this, getOutput(), "output")))
    return failure();
  auto inType = cast<MemRefType>(getInput().getType());
  auto outType = cast<MemRefType>(getOutput().getType());
  if (failed(verifyCompatibleShape(inType.getShape(), outType.getShape())))
    return emitOpError() << "input and output shapes differ: " << inType
                         << " vs " << outType;
  return verifyRowOperands(*this, getRows(), inType);
}

LogicalResult MapOp::verifyRegions() {
  return verifyBody(*this, getBody(), getRows().size());
}

void MapOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  SmallVector<OpOperand *> reads = {&getInputMutable()};
  for (OpOperand &row : getRowsMutable())
    reads.push_back(&row);
  addEffects(effects, reads, {&getOutputMutable()});
}

#define GET_OP_CLASSES
#include "rowred/Dialect/RowRed/IR/RowRedOps.cpp.inc"
