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

/// Checks that `type` (of the operand `name`) is in global memory: the
/// default memory space, 0 or 1 (the kernels take global pointers;
/// docs/abi.md).
static LogicalResult verifyGlobalMemory(Operation *op, MemRefType type,
                                        StringRef name) {
  Attribute space = type.getMemorySpace();
  auto number = dyn_cast_or_null<IntegerAttr>(space);
  if (!space || (number && (number.getInt() == 0 || number.getInt() == 1)))
    return success();
  return op->emitOpError() << name
                           << " must be in global memory (the default memory "
                              "space, 0 or 1), got "
                           << type;
}

/// Checks that the outputs `values` (named `names`; absent ones null) are
/// distinct buffers: two results written to one would race.
static LogicalResult verifyDistinctOutputs(Operation *op,
                                           ArrayRef<Value> values,
                                           ArrayRef<StringRef> names) {
  for (size_t i = 0; i < values.size(); ++i)
    for (size_t j = i + 1; j < values.size(); ++j)
      if (values[i] && values[i] == values[j])
        return op->emitOpError() << names[i] << " and " << names[j]
                                 << " must be different buffers";
  return success();
}

/// Checks that `value` is a rank-2 memref of f32, f16 or bf16 whose rows are
/// contiguous (the kernels index a row's elements with stride 1; docs/abi.md).
static LogicalResult verifyMatrix(Operation *op, Value value, StringRef name) {
  auto type = dyn_cast<MemRefType>(value.getType());
  if (!type)
    return op->emitOpError()
           << name << " must be a memref, got " << value.getType();
  if (failed(verifyGlobalMemory(op, type, name)))
    return failure();
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

/// Checks that the rank-1 memref `type` is in global memory with its
/// elements one apart.
static LogicalResult verifyContiguousVector(Operation *op, MemRefType type,
                                            StringRef name) {
  if (failed(verifyGlobalMemory(op, type, name)))
    return failure();
  SmallVector<int64_t> strides;
  int64_t offset = 0;
  if (failed(type.getStridesAndOffset(strides, offset)) || strides[0] != 1)
    return op->emitOpError()
           << name << " must be contiguous (stride 1), got " << type;
  return success();
}

/// What a rank-1 buffer with one element per row may hold.
enum class RowElements {
  /// f32 only: row scalars (a reduce's init, a gather's result).
  F32,
  /// f32, or i32 and i64 (labels): a `rows` operand.
  ScalarsOrIntegers,
  /// f32, f16 or bf16: a per-row result.
  Results,
  /// i32 or i64: a gather's indices.
  Integers,
};

/// Checks that `value` is a contiguous rank-1 memref of `kind`'s element
/// types holding one element per row of `matrix`.
static LogicalResult verifyRowScalars(Operation *op, Value value,
                                      MemRefType matrix, StringRef name,
                                      RowElements kind = RowElements::F32) {
  auto type = dyn_cast<MemRefType>(value.getType());
  Type elem = type ? type.getElementType() : Type();
  // Signless: the bodies compare and the kernels load them as i32 or i64.
  bool integer =
      elem && (elem.isSignlessInteger(32) || elem.isSignlessInteger(64));
  bool valid = false;
  StringRef expected;
  switch (kind) {
  case RowElements::F32:
    valid = elem && elem.isF32();
    expected = "f32";
    break;
  case RowElements::ScalarsOrIntegers:
    valid = elem && (elem.isF32() || integer);
    expected = "f32, i32 or i64";
    break;
  case RowElements::Results:
    valid = elem && isRowElementType(elem);
    expected = "f32, f16 or bf16";
    break;
  case RowElements::Integers:
    valid = integer;
    expected = "i32 or i64";
    break;
  }
  if (!type || type.getRank() != 1 || !valid)
    return op->emitOpError()
           << name << " must be a rank-1 memref of " << expected
           << " (one per row), got " << value.getType();
  if (failed(verifyContiguousVector(op, type, name)))
    return failure();
  if (failed(verifyCompatibleShape(type.getShape(),
                                   matrix.getShape().take_front())))
    return op->emitOpError()
           << name << " has " << type.getDimSize(0)
           << " elements but the input has " << matrix.getDimSize(0) << " rows";
  return success();
}

/// Whether `value` is a rank-0 memref: a total over the rows.
static bool isTotal(Value value) {
  auto type = dyn_cast<MemRefType>(value.getType());
  return type && type.getRank() == 0;
}

/// `value`'s type where it is a memref of rank `rank` with elements of f32,
/// f16 or bf16; else null.
static MemRefType rowTypedMemRef(Value value, int64_t rank) {
  auto type = dyn_cast<MemRefType>(value.getType());
  if (!type || type.getRank() != rank ||
      !isRowElementType(type.getElementType()))
    return {};
  return type;
}

/// Checks that `value` is a rank-0 memref of f32, f16 or bf16 in global
/// memory: one value for the whole launch (a total over the rows).
static LogicalResult verifyTotal(Operation *op, Value value, StringRef name) {
  MemRefType type = rowTypedMemRef(value, 0);
  if (!type)
    return op->emitOpError() << name
                             << " must be a rank-0 memref of f32, f16 or bf16, "
                                "got "
                             << value.getType();
  return verifyGlobalMemory(op, type, name);
}

/// Checks that `value` is a rank-1 memref of f32, f16 or bf16 with one
/// contiguous element per column of `matrix`.
static LogicalResult verifyColumnVector(Operation *op, Value value,
                                        MemRefType matrix, StringRef name) {
  MemRefType type = rowTypedMemRef(value, 1);
  if (!type)
    return op->emitOpError() << name
                             << " must be a rank-1 memref of f32, f16 or bf16 "
                                "(one element per column), got "
                             << value.getType();
  if (failed(verifyContiguousVector(op, type, name)))
    return failure();
  if (failed(verifyCompatibleShape(type.getShape(),
                                   matrix.getShape().take_back())))
    return op->emitOpError() << name << " has " << type.getDimSize(0)
                             << " elements but the rows have "
                             << matrix.getDimSize(1) << " columns";
  return success();
}

/// Checks that every one of `values` (named `name` #k) is a matrix of the
/// shape of `shape`.
static LogicalResult verifyMatrices(Operation *op, ValueRange values,
                                    MemRefType shape, StringRef name) {
  for (auto [index, value] : llvm::enumerate(values)) {
    std::string label =
        values.size() == 1 ? name.str() : (name + " #" + Twine(index)).str();
    if (failed(verifyMatrix(op, value, label)))
      return failure();
    auto type = cast<MemRefType>(value.getType());
    if (failed(verifyCompatibleShape(type.getShape(), shape.getShape())))
      return op->emitOpError() << label << " has shape " << type
                               << ", which differs from " << shape;
  }
  return success();
}

/// Checks the rank-1 operands of a reduce or map against the 2-D `matrix`:
/// per-column vectors and per-row f32 scalars.
static LogicalResult verifyVectorOperands(Operation *op, ValueRange columns,
                                          ValueRange rows, MemRefType matrix) {
  for (auto [index, column] : llvm::enumerate(columns))
    if (failed(verifyColumnVector(op, column, matrix,
                                  ("cols operand #" + Twine(index)).str())))
      return failure();
  for (auto [index, row] : llvm::enumerate(rows))
    if (failed(verifyRowScalars(op, row, matrix,
                                ("rows operand #" + Twine(index)).str(),
                                RowElements::ScalarsOrIntegers)))
      return failure();
  return success();
}

/// Checks the body shared by reduce and map: one f32 argument per element
/// (input and per-column operand) and one per `rows` operand, of its element
/// type, terminated by a `rowred.yield` of `numResults` values.
static LogicalResult verifyBody(Operation *op, Region &body,
                                unsigned numElements, ValueRange rows,
                                unsigned numResults) {
  Block &block = body.front();
  unsigned expected = numElements + rows.size();
  if (block.getNumArguments() != expected)
    return op->emitOpError()
           << "body must have " << expected
           << " arguments (one per input, per cols operand and per row "
              "scalar), got "
           << block.getNumArguments();
  for (BlockArgument arg : block.getArguments()) {
    Type type = arg.getArgNumber() < numElements
                    ? Type(Float32Type::get(op->getContext()))
                    : getElementTypeOrSelf(rows[arg.getArgNumber() -
                                                numElements]);
    if (arg.getType() != type)
      return op->emitOpError() << "body argument #" << arg.getArgNumber()
                               << " must be " << type << ", got "
                               << arg.getType();
  }
  auto yield =
      dyn_cast_or_null<YieldOp>(block.empty() ? nullptr : &block.back());
  if (!yield)
    return op->emitOpError() << "body must end with 'rowred.yield'";
  if (yield.getValues().size() != numResults)
    return yield.emitOpError()
           << "yields " << yield.getValues().size() << " values; "
           << op->getName() << " takes " << numResults
           << (isa<ReduceOp>(op) ? "" : " (one per output)");
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

/// Verifies the operands shared by softmax_backward and
/// log_softmax_backward.
static LogicalResult verifyBackward(Operation *op, Value output,
                                    Value gradOutput, Value gradInput,
                                    int64_t dimension) {
  if (failed(verifyMatrix(op, output, "output")))
    return failure();
  auto type = cast<MemRefType>(output.getType());
  if (failed(verifyMatrices(op, gradOutput, type, "grad_output")) ||
      failed(verifyMatrices(op, gradInput, type, "grad_input")))
    return failure();
  if (dimension != 1)
    return op->emitOpError()
           << "only the innermost dimension (1) can be reduced, got "
           << dimension;
  return success();
}

/// Verifies a normalization: input and output of one shape, optional
/// per-column operands and per-row statistics, a non-negative epsilon.
static LogicalResult
verifyNorm(Operation *op, Value input, Value output,
           ArrayRef<std::pair<Value, StringRef>> columns,
           ArrayRef<std::pair<Value, StringRef>> statistics, APFloat epsilon) {
  if (failed(verifyMatrix(op, input, "input")))
    return failure();
  auto type = cast<MemRefType>(input.getType());
  if (failed(verifyMatrices(op, output, type, "output")))
    return failure();
  for (auto [column, name] : columns)
    if (column && failed(verifyColumnVector(op, column, type, name)))
      return failure();
  for (auto [statistic, name] : statistics)
    if (statistic && failed(verifyRowScalars(op, statistic, type, name,
                                             RowElements::Results)))
      return failure();
  if (epsilon.isNegative() || !epsilon.isFinite())
    return op->emitOpError() << "epsilon must be finite and not negative, got "
                             << epsilon.convertToFloat();
  return success();
}

/// `first`, then the operands of each of `groups` (an op's optional and
/// variadic operand groups), in order.
static SmallVector<OpOperand *>
operandList(ArrayRef<OpOperand *> first, ArrayRef<MutableOperandRange> groups) {
  SmallVector<OpOperand *> operands(first);
  for (MutableOperandRange group : groups)
    for (OpOperand &operand : group)
      operands.push_back(&operand);
  return operands;
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

LogicalResult ReduceOp::verify() {
  if (getInputs().empty())
    return emitOpError() << "needs at least one input";
  if (failed(verifyMatrix(*this, getInput(), "input")))
    return failure();
  auto inType = cast<MemRefType>(getInput().getType());
  if (failed(verifyMatrices(*this, getInputs(), inType, "input")) ||
      failed(verifyVectorOperands(*this, getColumns(), getRows(), inType)))
    return failure();
  return verifyRowScalars(*this, getInit(), inType, "init");
}

LogicalResult ReduceOp::verifyRegions() {
  return verifyBody(*this, getBody(), getInputs().size() + getColumns().size(),
                    getRows(), 1);
}

/// The operands of a reduce or map that it reads.
template <typename OpTy> static SmallVector<OpOperand *> readOperands(OpTy op) {
  return operandList(
      {}, {op.getInputsMutable(), op.getColumnsMutable(), op.getRowsMutable()});
}

void ReduceOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  addEffects(effects, readOperands(*this), {&getInitMutable()});
}

//===----------------------------------------------------------------------===//
// MapOp
//===----------------------------------------------------------------------===//

bool MapOp::isRowOutput(Value output) {
  return cast<MemRefType>(output.getType()).getRank() == 1;
}

bool MapOp::isTotal(Value sums) { return ::isTotal(sums); }

LogicalResult MapOp::verify() {
  if (getInputs().empty() || (getOutputs().empty() && getColumnSums().empty()))
    return emitOpError()
           << "needs at least one input and one output or column sum";
  if (failed(verifyMatrix(*this, getInput(), "input")))
    return failure();
  auto inType = cast<MemRefType>(getInput().getType());
  if (failed(verifyMatrices(*this, getInputs(), inType, "input")))
    return failure();
  for (auto [index, output] : llvm::enumerate(getOutputs())) {
    std::string label = getOutputs().size() == 1
                            ? std::string("output")
                            : ("output #" + Twine(index)).str();
    auto type = dyn_cast<MemRefType>(output.getType());
    LogicalResult valid =
        type && type.getRank() == 1
            ? verifyRowScalars(*this, output, inType, label,
                               RowElements::Results)
            : verifyMatrices(*this, output, inType, label);
    if (failed(valid))
      return failure();
  }
  for (auto [index, sums] : llvm::enumerate(getColumnSums())) {
    std::string label = getColumnSums().size() == 1
                            ? std::string("column_sums")
                            : ("column_sums #" + Twine(index)).str();
    LogicalResult valid = isTotal(sums)
                              ? verifyTotal(*this, sums, label)
                              : verifyColumnVector(*this, sums, inType, label);
    if (failed(valid))
      return failure();
  }
  SmallVector<Value> written(getOutputs());
  llvm::append_range(written, getColumnSums());
  SmallVector<std::string> labels;
  for (size_t i = 0; i < written.size(); ++i)
    labels.push_back(i < getOutputs().size()
                         ? "output #" + std::to_string(i)
                         : "column_sums #" +
                               std::to_string(i - getOutputs().size()));
  SmallVector<StringRef> names(labels.begin(), labels.end());
  if (failed(verifyDistinctOutputs(*this, written, names)))
    return failure();
  return verifyVectorOperands(*this, getColumns(), getRows(), inType);
}

LogicalResult MapOp::verifyRegions() {
  unsigned numElements = getInputs().size() + getColumns().size();
  if (failed(verifyBody(*this, getBody(), numElements, getRows(),
                        getOutputs().size() + getColumnSums().size())))
    return failure();
  // A per-row result, and a total over the rows, is computed once per row:
  // from the row scalars only.
  Block &block = getBody().front();
  auto yield = cast<YieldOp>(block.back());
  unsigned numOutputs = getOutputs().size();
  for (auto [index, written] :
       llvm::enumerate(llvm::concat<Value>(getOutputs(), getColumnSums()))) {
    bool perRow = index < numOutputs ? isRowOutput(written) : isTotal(written);
    if (!perRow)
      continue;
    std::string what =
        index < numOutputs
            ? "output #" + std::to_string(index) + " has one element per row"
            : "column_sums #" + std::to_string(index - numOutputs) +
                  " is a total over the rows";
    SmallVector<Value> worklist = {yield.getValues()[index]};
    DenseSet<Value> seen;
    while (!worklist.empty()) {
      Value v = worklist.pop_back_val();
      if (!seen.insert(v).second)
        continue;
      if (auto arg = dyn_cast<BlockArgument>(v)) {
        if (arg.getOwner() == &block && arg.getArgNumber() < numElements)
          return emitOpError()
                 << what
                 << ", but the value yielded for it depends on the row's "
                    "elements (body argument #"
                 << arg.getArgNumber() << "): it may use only row scalars";
        continue;
      }
      Operation *def = v.getDefiningOp();
      if (isa_and_nonnull<ColumnIndexOp>(def))
        return emitOpError()
               << what
               << ", but the value yielded for it depends on the element's "
                  "column (rowred.column_index): it may use only row scalars";
      if (def && def->getBlock() == &block)
        llvm::append_range(worklist, def->getOperands());
    }
  }
  return success();
}

void MapOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  addEffects(effects, readOperands(*this),
             operandList({}, {getOutputsMutable(), getColumnSumsMutable()}));
}

//===----------------------------------------------------------------------===//
// Normalizations
//===----------------------------------------------------------------------===//

LogicalResult RmsNormOp::verify() {
  if (!getResidual() != !getResidualOut())
    return emitOpError() << "takes residual and residual_out together, got "
                         << (getResidual() ? "residual" : "residual_out")
                         << " alone";
  if (failed(verifyNorm(*this, getInput(), getOutput(),
                        {{getWeight(), "weight"}}, {{getRstd(), "rstd"}},
                        getEpsilon())))
    return failure();
  auto type = cast<MemRefType>(getInput().getType());
  if (getResidual() &&
      (failed(verifyMatrices(*this, getResidual(), type, "residual")) ||
       failed(verifyMatrices(*this, getResidualOut(), type, "residual_out"))))
    return failure();
  return verifyDistinctOutputs(*this, {getOutput(), getResidualOut()},
                               {"output", "residual_out"});
}

void RmsNormOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  addEffects(effects,
             operandList({&getInputMutable()},
                         {getResidualMutable(), getWeightMutable()}),
             operandList({&getOutputMutable()},
                         {getResidualOutMutable(), getRstdMutable()}));
}

/// Checks a norm's backward: x, dy and dx of one shape, its f32 per-row
/// statistics, and its per-column weight and gradients (a weight's
/// gradient needs the weight).
static LogicalResult
verifyNormBackward(Operation *op, Value input, Value gradOutput,
                   Value gradInput, ArrayRef<std::pair<Value, StringRef>> stats,
                   ArrayRef<std::pair<Value, StringRef>> columns,
                   Value weight, Value weightGrad) {
  if (failed(verifyMatrix(op, input, "input")))
    return failure();
  auto type = cast<MemRefType>(input.getType());
  if (failed(verifyMatrices(op, gradOutput, type, "grad_output")) ||
      failed(verifyMatrices(op, gradInput, type, "grad_input")))
    return failure();
  for (auto [value, name] : stats)
    if (failed(verifyRowScalars(op, value, type, name)))
      return failure();
  for (auto [value, name] : columns)
    if (value && failed(verifyColumnVector(op, value, type, name)))
      return failure();
  if (weightGrad && !weight)
    return op->emitOpError() << "has a weight_grad but no weight";
  return success();
}

LogicalResult RmsNormBackwardOp::verify() {
  if (failed(verifyNormBackward(
          *this, getInput(), getGradOutput(), getGradInput(),
          {{getRstd(), "rstd"}},
          {{getWeight(), "weight"}, {getWeightGrad(), "weight_grad"}},
          getWeight(), getWeightGrad())))
    return failure();
  if (Value residual = getGradResidual())
    return verifyMatrices(*this, residual,
                          cast<MemRefType>(getInput().getType()),
                          "grad_residual");
  return success();
}

void RmsNormBackwardOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  addEffects(effects,
             operandList({&getInputMutable(), &getGradOutputMutable(),
                          &getRstdMutable()},
                         {getWeightMutable(), getGradResidualMutable()}),
             operandList({&getGradInputMutable()}, {getWeightGradMutable()}));
}

LogicalResult LayerNormBackwardOp::verify() {
  return verifyNormBackward(*this, getInput(), getGradOutput(), getGradInput(),
                            {{getMean(), "mean"}, {getRstd(), "rstd"}},
                            {{getWeight(), "weight"},
                             {getWeightGrad(), "weight_grad"},
                             {getBiasGrad(), "bias_grad"}},
                            getWeight(), getWeightGrad());
}

void LayerNormBackwardOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  addEffects(effects,
             operandList({&getInputMutable(), &getGradOutputMutable(),
                          &getMeanMutable(), &getRstdMutable()},
                         {getWeightMutable()}),
             operandList({&getGradInputMutable()},
                         {getWeightGradMutable(), getBiasGradMutable()}));
}

LogicalResult LayerNormOp::verify() {
  if (failed(verifyNorm(*this, getInput(), getOutput(),
                        {{getWeight(), "weight"}, {getBias(), "bias"}},
                        {{getMean(), "mean"}, {getRstd(), "rstd"}},
                        getEpsilon())))
    return failure();
  return verifyDistinctOutputs(*this, {getMean(), getRstd()},
                               {"mean", "rstd"});
}

void LayerNormOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  addEffects(
      effects,
      operandList({&getInputMutable()}, {getWeightMutable(), getBiasMutable()}),
      operandList({&getOutputMutable()}, {getMeanMutable(), getRstdMutable()}));
}

//===----------------------------------------------------------------------===//
// Per-row results
//===----------------------------------------------------------------------===//

LogicalResult GatherOp::verify() {
  if (failed(verifyMatrix(*this, getInput(), "input")))
    return failure();
  auto type = cast<MemRefType>(getInput().getType());
  if (failed(verifyRowScalars(*this, getIndices(), type, "indices",
                              RowElements::Integers)))
    return failure();
  return verifyRowScalars(*this, getInit(), type, "init");
}

void GatherOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  addEffects(effects, {&getInputMutable(), &getIndicesMutable()},
             {&getInitMutable()});
}

LogicalResult LogSumExpOp::verify() {
  if (failed(verifyMatrix(*this, getInput(), "input")))
    return failure();
  return verifyRowScalars(*this, getOutput(),
                          cast<MemRefType>(getInput().getType()), "output",
                          RowElements::Results);
}

void LogSumExpOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  addEffects(effects, {&getInputMutable()}, {&getOutputMutable()});
}

LogicalResult LogSumExpBackwardOp::verify() {
  if (failed(verifyMatrix(*this, getInput(), "input")))
    return failure();
  auto type = cast<MemRefType>(getInput().getType());
  if (failed(verifyRowScalars(*this, getLse(), type, "lse")) ||
      failed(verifyRowScalars(*this, getGrad(), type, "grad")))
    return failure();
  return verifyMatrices(*this, getGradInput(), type, "grad_input");
}

void LogSumExpBackwardOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  addEffects(effects,
             {&getInputMutable(), &getLseMutable(), &getGradMutable()},
             {&getGradInputMutable()});
}

LogicalResult CrossEntropyOp::verify() {
  if (failed(verifyMatrix(*this, getLogits(), "logits")))
    return failure();
  auto type = cast<MemRefType>(getLogits().getType());
  if (failed(verifyRowScalars(*this, getLabels(), type, "labels",
                              RowElements::Integers)) ||
      failed(isTotal(getLoss())
                 ? verifyTotal(*this, getLoss(), "loss")
                 : verifyRowScalars(*this, getLoss(), type, "loss",
                                    RowElements::Results)) ||
      (getLse() && failed(verifyRowScalars(*this, getLse(), type, "lse",
                                           RowElements::Results))) ||
      (getGrad() && failed(verifyMatrices(*this, getGrad(), type, "grad"))) ||
      (getGradScale() &&
       failed(verifyRowScalars(*this, getGradScale(), type, "grad_scale"))))
    return failure();
  if (getGradScale() && !getGrad())
    return emitOpError() << "has a grad_scale but no grad to scale";
  if (Value count = getCount()) {
    if (!isTotal(getLoss()))
      return emitOpError() << "has a count, which needs a rank-0 loss (the "
                              "sum of the rows' losses)";
    if (getElementTypeOrSelf(count) != Float32Type::get(getContext()) ||
        failed(verifyTotal(*this, count, "count")))
      return emitOpError() << "count must be a rank-0 memref of f32, got "
                           << count.getType();
  }
  if (failed(verifyDistinctOutputs(*this, {getLoss(), getCount(), getLse()},
                                   {"loss", "count", "lse"})))
    return failure();
  unsigned labelBits = getElementTypeOrSelf(getLabels()).getIntOrFloatBitWidth();
  if (!llvm::isIntN(labelBits, getIgnoreIndex()))
    return emitOpError() << "ignore_index " << getIgnoreIndex()
                         << " does not fit the labels' i" << labelBits;
  APFloat smoothing = getLabelSmoothing();
  if (smoothing.isNegative() || !smoothing.isFinite() ||
      smoothing.convertToFloat() > 1.0f)
    return emitOpError() << "label_smoothing must be in [0, 1], got "
                         << smoothing.convertToFloat();
  return success();
}

void CrossEntropyOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  addEffects(
      effects,
      operandList({&getLogitsMutable(), &getLabelsMutable()},
                  {getGradScaleMutable()}),
      operandList({&getLossMutable()},
                  {getCountMutable(), getLseMutable(), getGradMutable()}));
}

/// `ignore_index(N)`: N an integer of 64 bits (a larger literal is an error,
/// not wrapped).
static ParseResult parseIgnoreIndex(OpAsmParser &parser, IntegerAttr &attr) {
  SMLoc loc = parser.getCurrentLocation();
  APInt value;
  OptionalParseResult parsed = parser.parseOptionalInteger(value);
  if (!parsed.has_value() || failed(*parsed))
    return parser.emitError(loc, "expected an integer ignore_index");
  if (!value.isSignedIntN(64))
    return parser.emitError(loc)
           << "ignore_index " << llvm::toString(value, 10, /*Signed=*/true)
           << " does not fit in 64 bits";
  attr = parser.getBuilder().getI64IntegerAttr(value.getSExtValue());
  return success();
}

static void printIgnoreIndex(OpAsmPrinter &printer, Operation *,
                             IntegerAttr attr) {
  printer << attr.getInt();
}

#define GET_OP_CLASSES
#include "rowred/Dialect/RowRed/IR/RowRedOps.cpp.inc"
