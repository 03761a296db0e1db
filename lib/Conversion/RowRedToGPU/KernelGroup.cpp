//===- KernelGroup.cpp - Collect kernel groups ----------------------------===//
//
// Part of the softmax kernel compiler.
//
//===----------------------------------------------------------------------===//

#include "KernelGroup.h"

#include "rowred/Conversion/RowRedToGPU/RowRedToGPU.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;
using namespace mlir::rowred;

LogicalResult mlir::rowred::verifyDecomposed(ModuleOp module, StringRef stage) {
  WalkResult undecomposed = module.walk([&](Operation *op) {
    if (isHighLevelOp(op)) {
      op->emitOpError() << "must be decomposed before " << stage
                        << " (run --rowred-decompose first)";
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return failure(undecomposed.wasInterrupted());
}

/// Checks that the body of a reduce or map only holds side-effect-free ops
/// and captures nothing but constants from above.
static LogicalResult verifyLowerableBody(Operation *op, Region &body) {
  WalkResult result =
      body.walk([&](Operation *inner) {
        if (isa<YieldOp>(inner))
          return WalkResult::advance();
        if (!isPure(inner) || inner->getNumRegions() != 0) {
          inner->emitOpError()
              << "cannot be lowered to a GPU kernel: rowred bodies may only "
                 "hold side-effect-free ops without regions";
          return WalkResult::interrupt();
        }
        for (Value operand : inner->getOperands()) {
          if (body.isAncestor(operand.getParentRegion()))
            continue;
          Operation *def = operand.getDefiningOp();
          if (!def || !def->hasTrait<OpTrait::ConstantLike>()) {
            inner->emitOpError()
                << "uses a value defined outside the rowred body; "
                   "only constants can be captured";
            return WalkResult::interrupt();
          }
        }
        return WalkResult::advance();
      });
  return failure(result.wasInterrupted());
}

unsigned Group::elementIndex(Value operand) const {
  for (auto [index, input] : llvm::enumerate(inputs))
    if (input == operand)
      return index;
  for (auto [index, column] : llvm::enumerate(columns))
    if (column == operand)
      return inputs.size() + index;
  llvm_unreachable("not an operand of the group");
}

bool Group::isMapOnly(unsigned index) const {
  if (index == 0)
    return false;
  Value operand = operandAt(index);
  return llvm::none_of(reduces, [&](ReduceOp reduce) {
    return llvm::is_contained(reduce.getInputs(), operand) ||
           llvm::is_contained(reduce.getColumns(), operand);
  });
}

SmallVector<std::pair<unsigned, unsigned>>
Group::reduceLevels(bool merge) const {
  SmallVector<std::pair<unsigned, unsigned>> levels;
  for (unsigned i = 0, e = reduces.size(); i < e; ++i) {
    auto readsLevel = [&](ReduceOp reduce) {
      for (unsigned k = levels.back().first; k < i; ++k) {
        ReduceOp writer = reduces[k];
        if (llvm::is_contained(reduce.getRows(), writer.getInit()))
          return true;
      }
      return false;
    };
    if (merge && !levels.empty() && !readsLevel(reduces[i]))
      levels.back().second = i + 1;
    else
      levels.push_back({i, i + 1});
  }
  return levels;
}

Type Group::outputType() const {
  return getElementTypeOrSelf(outputs.empty() ? inputs.front()
                                              : outputs.front());
}

/// The reduce or gather of `group` that writes `buffer`, or a diagnostic on
/// `map` when two do; null when none does.
static FailureOr<Operation *> rowScalarWriter(MapOp map, Value buffer) {
  Operation *writer = nullptr;
  for (Operation *user : buffer.getUsers()) {
    Value init;
    if (auto reduce = dyn_cast<ReduceOp>(user))
      init = reduce.getInit();
    else if (auto gather = dyn_cast<GatherOp>(user))
      init = gather.getInit();
    if (init != buffer)
      continue;
    if (writer)
      return user->emitOpError()
             << "writes a row-scalar buffer that another op also writes";
    writer = user;
  }
  return writer;
}

/// Files `map`'s outputs into the group's 2-D and per-row outputs.
static void collectOutputs(Group &group, MapOp map) {
  for (auto [index, output] : llvm::enumerate(map.getOutputs())) {
    bool perRow = MapOp::isRowOutput(output);
    (perRow ? group.rowOutputs : group.outputs).push_back(output);
    (perRow ? group.rowOutputResults : group.outputResults).push_back(index);
  }
  unsigned numOutputs = map.getOutputs().size();
  for (auto [index, sums] : llvm::enumerate(map.getColumnSums())) {
    bool total = MapOp::isTotal(sums);
    (total ? group.totals : group.columnSums).push_back(sums);
    (total ? group.totalResults : group.columnSumResults)
        .push_back(numOutputs + index);
  }
}

FailureOr<Group> mlir::rowred::collectGroup(MapOp map) {
  Group group;
  group.map = map;
  llvm::append_range(group.inputs, map.getInputs());
  llvm::append_range(group.columns, map.getColumns());
  collectOutputs(group, map);
  SetVector<Value> buffers;
  SetVector<Value> visited;
  SmallVector<Value> worklist(map.getRows().begin(), map.getRows().end());
  while (!worklist.empty()) {
    Value buffer = worklist.pop_back_val();
    if (!visited.insert(buffer))
      continue;
    FailureOr<Operation *> writer = rowScalarWriter(map, buffer);
    if (failed(writer))
      return failure();
    auto alloc = buffer.getDefiningOp<memref::AllocOp>();
    if (!*writer && !alloc) {
      // Read from memory once per row: labels, or scalars of the caller.
      group.rowInputs.push_back(buffer);
      continue;
    }
    if (!alloc || alloc->getBlock() != map->getBlock())
      return map.emitOpError()
             << "row scalars must come from a memref.alloc in the same block "
                "to be fused into a GPU kernel";
    if (!*writer || (*writer)->getBlock() != map->getBlock() ||
        !(*writer)->isBeforeInBlock(map))
      return map.emitOpError() << "row scalar has no rowred.reduce or "
                                  "rowred.gather writing it before the map";
    buffers.insert(buffer);
    group.allocs.push_back(alloc);
    if (auto gather = dyn_cast<GatherOp>(*writer)) {
      if (!llvm::is_contained(group.inputs, gather.getInput()))
        return gather.emitOpError()
               << "reads an input that the rowred.map it feeds does not "
                  "read; only gathers of the map's inputs can be fused";
      group.gathers.push_back(gather);
      worklist.push_back(gather.getIndices());
      continue;
    }
    auto reduce = cast<ReduceOp>(*writer);
    for (Value input : reduce.getInputs())
      if (!llvm::is_contained(group.inputs, input))
        return reduce.emitOpError()
               << "reads an input that the rowred.map it feeds does not "
                  "read; only reductions of the map's inputs can be fused";
    for (Value column : reduce.getColumns())
      if (!llvm::is_contained(group.columns, column))
        group.columns.push_back(column);
    group.reduces.push_back(reduce);
    worklist.append(reduce.getRows().begin(), reduce.getRows().end());
  }
  auto inOrder = [](Operation *a, Operation *b) {
    return a->isBeforeInBlock(b);
  };
  llvm::sort(group.reduces, inOrder);
  llvm::sort(group.gathers, inOrder);
  // The per-row inputs as the map names them (labels, then a scale), those
  // only a reduce or gather reads after them.
  auto mapPosition = [&](Value v) {
    return llvm::find(map.getRows(), v) - map.getRows().begin();
  };
  llvm::stable_sort(group.rowInputs, [&](Value a, Value b) {
    return mapPosition(a) < mapPosition(b);
  });

  // Every use of a buffer must be inside the group (or its dealloc): the
  // buffers disappear, their values live in registers.
  for (Value buffer : buffers) {
    for (Operation *user : buffer.getUsers()) {
      if (isa<memref::DeallocOp>(user)) {
        group.deallocs.push_back(user);
        continue;
      }
      auto reduce = dyn_cast<ReduceOp>(user);
      auto gather = dyn_cast<GatherOp>(user);
      if (user == map.getOperation() ||
          (reduce && llvm::is_contained(group.reduces, reduce)) ||
          (gather && llvm::is_contained(group.gathers, gather))) {
        continue;
      }
      return user->emitOpError()
             << "uses a row-scalar buffer of a fused group; the buffer "
                "is not materialized by the GPU kernel";
    }
  }
  // Each reduce must read only row scalars produced before it (or read from
  // memory).
  for (ReduceOp reduce : group.reduces)
    for (Value row : reduce.getRows()) {
      if (llvm::is_contained(group.rowInputs, row))
        continue;
      Operation *writer = *rowScalarWriter(map, row);
      if (!writer || !writer->isBeforeInBlock(reduce))
        return reduce.emitOpError()
               << "reads a row scalar that is not computed before it";
    }

  if (failed(verifyLowerableBody(map, map.getBody())))
    return failure();
  for (ReduceOp reduce : group.reduces)
    if (failed(verifyLowerableBody(reduce, reduce.getBody())))
      return failure();
  return group;
}

bool mlir::rowred::isOnlineSoftmaxPair(const Group &group) {
  if (group.reduces.size() != 2 || !group.hasOneRowOperand())
    return false;
  ReduceOp maxOp = group.reduces[0], sumOp = group.reduces[1];
  if (maxOp.getInputs().size() != 1 || sumOp.getInputs().size() != 1)
    return false;
  if (maxOp.getCombiner() != Combiner::max ||
      sumOp.getCombiner() != Combiner::sum || !maxOp.getRows().empty() ||
      sumOp.getRows().size() != 1 || sumOp.getRows()[0] != maxOp.getInit())
    return false;
  // max body: yield %x.
  Block &maxBody = maxOp.getBody().front();
  if (maxBody.getOperations().size() != 1 ||
      cast<YieldOp>(maxBody.back()).getValues().front() !=
          maxBody.getArgument(0))
    return false;
  // sum body: %d = subf %x, %m; %e = exp %d; yield %e.
  Block &sumBody = sumOp.getBody().front();
  auto exp = cast<YieldOp>(sumBody.back())
                 .getValues()
                 .front()
                 .getDefiningOp<math::ExpOp>();
  if (!exp || sumBody.getOperations().size() != 3)
    return false;
  auto sub = exp.getOperand().getDefiningOp<arith::SubFOp>();
  return sub && sub.getLhs() == sumBody.getArgument(0) &&
         sub.getRhs() == sumBody.getArgument(1);
}

/// The value `x - s / N` that `reduce`'s body computes from its element `x`
/// and its row scalar `s` (N the row length), or null.
static Value shiftedElement(ReduceOp reduce) {
  Block &body = reduce.getBody().front();
  if (reduce.getInputs().size() != 1 || reduce.getRows().size() != 1 ||
      !reduce.getColumns().empty())
    return Value();
  for (Operation &op : body.without_terminator()) {
    auto sub = dyn_cast<arith::SubFOp>(op);
    auto div = sub ? sub.getRhs().getDefiningOp<arith::DivFOp>() : nullptr;
    if (div && sub.getLhs() == body.getArgument(0) &&
        div.getLhs() == body.getArgument(1) &&
        div.getRhs().getDefiningOp<RowLengthOp>())
      return sub;
  }
  return Value();
}

bool mlir::rowred::isShiftedMoments(const Group &group) {
  if (group.reduces.size() != 3)
    return false;
  ReduceOp sumOp = group.reduces[0], firstOp = group.reduces[1],
           secondOp = group.reduces[2];
  if (llvm::any_of(group.reduces, [](ReduceOp reduce) {
        return reduce.getCombiner() != Combiner::sum;
      }))
    return false;
  Value x = sumOp.getInputs().size() == 1 ? sumOp.getInputs()[0] : Value();
  if (!x || !sumOp.getRows().empty() || !sumOp.getColumns().empty() ||
      sumOp.getBody().front().getOperations().size() != 1 ||
      cast<YieldOp>(sumOp.getBody().front().back()).getValues().front() !=
          sumOp.getBody().front().getArgument(0))
    return false;
  for (ReduceOp reduce : {firstOp, secondOp})
    if (reduce.getInputs()[0] != x || reduce.getRows().empty() ||
        reduce.getRows()[0] != sumOp.getInit())
      return false;
  // c: yield %e; q: yield %e * %e, with %e = %x - %s / N. Nothing else in
  // the bodies (the count of ops) but the row length and the division.
  Value first = shiftedElement(firstOp), second = shiftedElement(secondOp);
  if (!first || !second ||
      firstOp.getBody().front().getOperations().size() != 4 ||
      secondOp.getBody().front().getOperations().size() != 5)
    return false;
  auto yielded = [](ReduceOp reduce) {
    return cast<YieldOp>(reduce.getBody().front().back()).getValues().front();
  };
  auto square = yielded(secondOp).getDefiningOp<arith::MulFOp>();
  return yielded(firstOp) == first && square && square.getLhs() == second &&
         square.getRhs() == second;
}

bool mlir::rowred::isSoftmaxMap(const Group &group) {
  if (!isOnlineSoftmaxPair(group))
    return false;
  MapOp map = group.map;
  ReduceOp maxOp = group.reduces[0], sumOp = group.reduces[1];
  if (map.getRows().size() != 2 || map.getRows()[0] != maxOp.getInit() ||
      map.getRows()[1] != sumOp.getInit())
    return false;
  Block &body = map.getBody().front();
  if (body.getOperations().size() != 4)
    return false;
  auto div = cast<YieldOp>(body.back())
                 .getValues()
                 .front()
                 .getDefiningOp<arith::DivFOp>();
  if (!div || div.getRhs() != body.getArgument(2))
    return false;
  auto exp = div.getLhs().getDefiningOp<math::ExpOp>();
  auto sub = exp ? exp.getOperand().getDefiningOp<arith::SubFOp>() : nullptr;
  return sub && sub.getLhs() == body.getArgument(0) &&
         sub.getRhs() == body.getArgument(1);
}

int64_t mlir::rowred::stageSlots(const Group &group) {
  Type type = getElementTypeOrSelf(group.inputs.front());
  for (Value input : group.inputs)
    if (getElementTypeOrSelf(input) != type)
      return 0;
  return group.inputs.size();
}

Value mlir::rowred::chunkRecordBytes(OpBuilder &b, Location loc, Value chunks,
                                     const Group &group) {
  auto constant = [&](int64_t value) -> Value {
    return arith::ConstantOp::create(b, loc,
                                     b.getIntegerAttr(chunks.getType(), value));
  };
  Value entryBytes = arith::MulIOp::create(
      b, loc, chunks, constant(8 * int64_t(chunkEntries(group))));
  Value aligned = arith::AndIOp::create(
      b, loc, arith::AddIOp::create(b, loc, entryBytes, constant(127)),
      constant(-128));
  return arith::AddIOp::create(b, loc, aligned, constant(128));
}
