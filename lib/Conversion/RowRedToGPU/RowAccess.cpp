//===- RowAccess.cpp - Loads, stores and stages of rows -------------------===//
//
// Part of the softmax kernel compiler.
//
//===----------------------------------------------------------------------===//

#include "KernelEmitter.h"

#include "llvm/Support/SaveAndRestore.h"

using namespace mlir;
using namespace mlir::rowred;

Chunk KernelEmitter::loadChunk(Value rowPtr, Value col, Value valid,
                               int64_t vec, Value addrCol) {
  valid = inOwnRow(valid);
  Chunk chunk =
      unpackChunk(col, valid, loadRaw(rowPtr, col, valid, vec, addrCol));
  if (!extraRows.empty()) {
    bool fromStage = isStage(rowPtr);
    assert((!fromStage || plan.strategy == Strategy::chunks ||
            plan.streamsLevels()) &&
           "only chunks and staged streamed rows stage several operands");
    loadExtra(chunk, valid, vec, fromStage ? addrCol : Value());
  }
  return chunk;
}

void KernelEmitter::loadExtra(Chunk &chunk, Value valid, int64_t vec,
                              Value stageCol, ArrayRef<Value> ahead) {
  for (unsigned index = 1, e = extraRows.size() + 1; index < e; ++index) {
    // Those only the map reads wait for withMapOperands, unless the plan
    // hoists them here. Only chunks and the online kernel's streamed passes
    // stage several operands (a fused or cluster stage holds one input's
    // row), and neither hoists.
    if (index < ahead.size() && ahead[index]) {
      chunk.extra.push_back(unpack(ahead[index]));
    } else if (group.isMapOnly(index) && (!plan.hoistMapLoads || stageCol)) {
      chunk.extra.emplace_back();
    } else if (stageCol && index < group.inputs.size()) {
      // Another input, staged in its own slot of the stage.
      Value local = arith::AddIOp::create(
          b, stageCol, constI32(int64_t(index) * stage->slotElements()));
      chunk.extra.push_back(
          unpack(loadRaw(stage->current(), chunk.col, valid, vec, local,
                         getElementTypeOrSelf(group.operandAt(index)))));
    } else {
      chunk.extra.push_back(loadOperand(index, chunk.col, valid, vec));
    }
  }
}

SmallVector<Value> KernelEmitter::loadOperand(unsigned index, Value col,
                                              Value valid, int64_t vec) {
  // Per-column operands, which every row reads, keep L2's default policy.
  llvm::SaveAndRestore<Value> policy(
      loadPolicy, index < group.inputs.size() ? loadPolicy : Value());
  return unpack(loadRaw(extraRows[index - 1], col, valid, vec, {},
                        getElementTypeOrSelf(group.operandAt(index))));
}

Chunk KernelEmitter::withMapOperands(const Chunk &chunk) {
  Chunk full = chunk;
  for (unsigned index = 1, e = full.extra.size() + 1; index < e; ++index)
    if (group.isMapOnly(index) && full.extra[index - 1].empty())
      full.extra[index - 1] =
          loadOperand(index, chunk.col, chunk.valid, chunk.values.size());
  return full;
}

Value KernelEmitter::inOwnRow(Value valid) {
  return rowValid ? arith::AndIOp::create(b, valid, rowValid) : valid;
}

Value KernelEmitter::ownRow(Value groupRow) {
  if (plan.rowsPerBlock == 1)
    return groupRow;
  return arith::AddIOp::create(b, groupRow,
                               arith::ExtUIOp::create(b, i64, rowInBlock));
}

Type KernelEmitter::rawType(int64_t vec, Type elem) {
  if (!elem)
    elem = plan.inType;
  return vec == 1 ? elem : VectorType::get({vec}, elem);
}

Value KernelEmitter::loadRaw(Value rowPtr, Value col, Value valid, int64_t vec,
                             Value addrCol, Type elem) {
  if (!elem)
    elem = plan.inType;
  Type loadType = rawType(vec, elem);
  auto ifOp = scf::IfOp::create(b, loadType, valid,
                                /*withElseRegion=*/true);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&ifOp.getThenRegion().front());
    Value ptr = LLVM::GEPOp::create(b, rowPtr.getType(), elem, rowPtr,
                                    ValueRange{addrCol ? addrCol : col},
                                    LLVM::GEPNoWrapFlags::inbounds);
    Value loaded;
    if (loadPolicy && !isStage(rowPtr) && vec * byteWidth(elem) == 16)
      loaded = loadWithPolicy(loadType, ptr, loadPolicy);
    else
      loaded = LLVM::LoadOp::create(b, loadType, ptr, vec * byteWidth(elem));
    scf::YieldOp::create(b, loaded);
    b.setInsertionPointToStart(&ifOp.getElseRegion().front());
    Value zero = arith::ConstantOp::create(b, b.getZeroAttr(loadType));
    scf::YieldOp::create(b, zero);
  }
  return ifOp.getResult(0);
}

Value KernelEmitter::loadWithPolicy(Type type, Value ptr, Value policy) {
  auto ld = NVVM::InlinePtxOp::create(
      b, TypeRange{i32, i32, i32, i32}, ValueRange{ptr, policy}, ValueRange(),
      "ld.global.L2::cache_hint.v4.b32 {$0, $1, $2, $3}, [$4], $5;",
      /*predicate=*/Value());
  Value words = LLVM::PoisonOp::create(b, VectorType::get({4}, i32));
  for (int32_t i = 0; i < 4; ++i)
    words =
        LLVM::InsertElementOp::create(b, words, ld.getResult(i), constI32(i));
  return LLVM::BitcastOp::create(b, type, words);
}

Chunk KernelEmitter::unpackChunk(Value col, Value valid, Value loaded) {
  Chunk chunk;
  chunk.col = col;
  chunk.valid = valid;
  chunk.values = unpack(loaded);
  return chunk;
}

SmallVector<Value> KernelEmitter::unpack(Value loaded) {
  auto vecType = dyn_cast<VectorType>(loaded.getType());
  int64_t vec = vecType ? vecType.getNumElements() : 1;
  Type elem = getElementTypeOrSelf(loaded.getType());
  SmallVector<Value> values;
  for (int64_t i = 0; i < vec; ++i) {
    Value v = loaded;
    if (vec > 1)
      v = LLVM::ExtractElementOp::create(b, loaded, constI32(i));
    if (elem != f32)
      v = arith::ExtFOp::create(b, f32, v);
    values.push_back(v);
  }
  return values;
}

void KernelEmitter::storeChunk(Value rowPtr, Value col, Value valid,
                               ArrayRef<Value> values, Type elem) {
  if (!elem)
    elem = plan.outType;
  int64_t vec = values.size();
  auto ifOp = scf::IfOp::create(b, valid, /*withElseRegion=*/false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&ifOp.getThenRegion().front());
  SmallVector<Value> rounded;
  for (Value v : values)
    rounded.push_back(elem == f32 ? v : arith::TruncFOp::create(b, elem, v));
  Value toStore = rounded.front();
  if (vec > 1) {
    toStore = LLVM::PoisonOp::create(b, VectorType::get({vec}, elem));
    for (int64_t i = 0; i < vec; ++i)
      toStore =
          LLVM::InsertElementOp::create(b, toStore, rounded[i], constI32(i));
  }
  Value ptr =
      LLVM::GEPOp::create(b, rowPtr.getType(), elem, rowPtr, ValueRange{col},
                          LLVM::GEPNoWrapFlags::inbounds);
  if (storePolicy && vec * byteWidth(elem) == 16) {
    // `st.global.L2::cache_hint` with the policy.
    Value words =
        LLVM::BitcastOp::create(b, VectorType::get({4}, i32), toStore);
    SmallVector<Value> operands{ptr};
    for (int32_t i = 0; i < 4; ++i)
      operands.push_back(LLVM::ExtractElementOp::create(b, words, constI32(i)));
    operands.push_back(storePolicy);
    NVVM::InlinePtxOp::create(
        b, TypeRange(), operands, ValueRange(),
        "st.global.L2::cache_hint.v4.b32 [$0], {$1, $2, $3, $4}, $5;",
        /*predicate=*/Value());
    return;
  }
  LLVM::StoreOp::create(b, toStore, ptr, vec * byteWidth(elem));
}

SmallVector<ChunkPlace> KernelEmitter::chunkPlaces(Value start, int64_t vec,
                                                   int64_t numChunks,
                                                   Value end) {
  SmallVector<ChunkPlace> places;
  if (numChunks == 0)
    numChunks = plan.elementsPerThread() / vec;
  Value firstLocal = arith::MulIOp::create(b, rowTid, constI32(vec));
  Value first = firstLocal;
  if (start)
    first = arith::AddIOp::create(b, first, start);
  // Chunk k is inside the row when k * stride < end - first: one live
  // value for every mask instead of one column per chunk.
  Value remaining = arith::SubIOp::create(b, end ? end : vectorEnd(), first);
  for (int64_t k = 0; k < numChunks; ++k) {
    Value offset = constI32(k * plan.threadsPerRow() * vec);
    places.push_back({arith::AddIOp::create(b, first, offset),
                      arith::AddIOp::create(b, firstLocal, offset),
                      wholeChunk
                          ? arith::ConstantIntOp::create(b, 1, 1).getResult()
                          : arith::CmpIOp::create(b, arith::CmpIPredicate::slt,
                                                  offset, remaining)
                                .getResult()});
  }
  return places;
}

SmallVector<Chunk> KernelEmitter::loadBlock(Value rowPtr, Value start,
                                            int64_t vec, int64_t numChunks,
                                            bool fromStage, Value end) {
  SmallVector<Chunk> chunks;
  for (const ChunkPlace &place : chunkPlaces(start, vec, numChunks, end))
    chunks.push_back(fromStage
                         ? loadChunk(stage->current(), place.col, place.valid,
                                     vec, place.local)
                         : loadChunk(rowPtr, place.col, place.valid, vec));
  return chunks;
}

PeeledRow KernelEmitter::peelRow(Value rowPtr, int64_t vec) {
  int64_t bytes = byteWidth(plan.inType);
  // h = (-(address / bytes)) mod vec, at most the row's length.
  Value index = arith::DivUIOp::create(
      b, LLVM::PtrToIntOp::create(b, i64, rowPtr), constI64(bytes));
  Value head = arith::TruncIOp::create(
      b, i32,
      arith::AndIOp::create(b, arith::SubIOp::create(b, constI64(0), index),
                            constI64(vec - 1)));
  head = arith::MinUIOp::create(b, head, cols);
  Value vectorEnd = arith::AddIOp::create(
      b, head,
      arith::AndIOp::create(b, arith::SubIOp::create(b, cols, head),
                            constI32(-vec)));
  return {head, vectorEnd};
}

SmallVector<Chunk> KernelEmitter::loadPeeledRow(Value rowPtr, int64_t vec) {
  PeeledRow row = peelRow(rowPtr, vec);
  Value start = row.head;
  if (plan.clusterSize > 1)
    start = arith::AddIOp::create(b, row.head, sliceStart);
  SmallVector<Chunk> chunks;
  for (const ChunkPlace &place : chunkPlaces(start, vec, 0, row.vectorEnd))
    chunks.push_back(loadChunk(rowPtr, place.col, place.valid, vec));
  // One list for a cluster: one scalar per thread instead of two keeps
  // the 64-register slices without spills; on one block, two keep ptxas
  // from spilling the log-softmax warp per row of 1024.
  llvm::append_range(chunks, loadEdges(rowPtr, row, vec,
                                       /*oneList=*/plan.clusterSize > 1));
  return chunks;
}

SmallVector<Chunk> KernelEmitter::loadEdges(Value rowPtr, PeeledRow row,
                                            int64_t vec, bool oneList,
                                            Value owner) {
  auto ult = [&](Value lhs, Value rhs) {
    return arith::CmpIOp::create(b, arith::CmpIPredicate::ult, lhs, rhs);
  };
  if (!owner && plan.clusterSize > 1)
    owner = arith::CmpIOp::create(b, arith::CmpIPredicate::eq, clusterRank,
                                  constI32(0));
  auto taken = [&](Value valid) {
    return owner ? arith::AndIOp::create(b, valid, owner) : valid;
  };
  SmallVector<Chunk> chunks;
  int64_t perRow = plan.threadsPerRow();
  if (!oneList) {
    for (int64_t i = 0; i * perRow < vec - 1; ++i) {
      Value col = arith::AddIOp::create(b, rowTid, constI32(i * perRow));
      chunks.push_back(loadChunk(rowPtr, col, taken(ult(col, row.head)), 1));
      Value tailCol = arith::AddIOp::create(b, row.vectorEnd, col);
      chunks.push_back(
          loadChunk(rowPtr, tailCol, taken(ult(tailCol, cols)), 1));
    }
    return chunks;
  }
  Value edges = arith::AddIOp::create(
      b, row.head, arith::SubIOp::create(b, cols, row.vectorEnd));
  Value tailShift = arith::SubIOp::create(b, row.vectorEnd, row.head);
  for (int64_t i = 0; i * perRow < 2 * vec - 2; ++i) {
    Value edge = arith::AddIOp::create(b, rowTid, constI32(i * perRow));
    Value inHead = ult(edge, row.head);
    Value tailCol = arith::AddIOp::create(b, edge, tailShift);
    Value col = arith::SelectOp::create(b, inHead, edge, tailCol);
    Value valid = taken(ult(edge, edges));
    chunks.push_back(loadChunk(rowPtr, col, valid, 1));
  }
  return chunks;
}

SmallVector<unsigned> KernelEmitter::aheadInputs() const {
  SmallVector<unsigned> inputs = {0};
  for (unsigned index = 1, e = group.inputs.size(); index < e; ++index)
    if (!group.isMapOnly(index))
      inputs.push_back(index);
  return inputs;
}

SmallVector<Value> KernelEmitter::loadRowAhead(Value row, int64_t vec) {
  row = ownRow(row);
  Value exists = arith::CmpIOp::create(b, arith::CmpIPredicate::slt, row, rows);
  SmallVector<ChunkPlace> places = chunkPlaces(sliceStart, vec);
  SmallVector<Value> loaded;
  for (unsigned index : aheadInputs()) {
    Type elem = getElementTypeOrSelf(group.inputs[index]);
    Value rowPtr =
        index ? rowPointer(inputPtrs[index], elem, row, inputStrides[index])
              : rowPointer(x, plan.inType, row, xStride);
    for (const ChunkPlace &place : places)
      loaded.push_back(loadRaw(rowPtr, place.col,
                               arith::AndIOp::create(b, place.valid, exists),
                               vec, {}, elem));
  }
  return loaded;
}

void KernelEmitter::prefetchRow(Value row) {
  copyToStage(row, sliceStart, Value());
}

void KernelEmitter::copyToStage(Value row, Value start, Value stageStart,
                                Value end) {
  ifRowExists(row, [&](Value xRow) {
    stage->copyChunks(xRow, chunkPlaces(start, plan.vectorWidth, 0, end),
                      stageStart);
  });
  NVVM::CpAsyncCommitGroupOp::create(b);
}

void KernelEmitter::ifRowExists(Value row, function_ref<void(Value)> body) {
  auto ifOp = scf::IfOp::create(
      b, arith::CmpIOp::create(b, arith::CmpIPredicate::slt, row, rows),
      /*withElseRegion=*/false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&ifOp.getThenRegion().front());
  body(rowPointer(x, plan.inType, row, xStride));
}

void KernelEmitter::copyTilesToStage(ArrayRef<Value> rowPtrs, Value from,
                                     Value to, Value stageStart, Value end) {
  auto loop = scf::ForOp::create(b, from, to, constI32(plan.blockElements));
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(loop.getBody()->getTerminator());
  stage->copyChunks(
      rowPtrs, chunkPlaces(loop.getInductionVar(), plan.vectorWidth, 0, end),
      stageStart);
}

void KernelEmitter::stageShare(ArrayRef<Value> rowPtrs, Value lo, Value hi) {
  copyTilesToStage(rowPtrs, lo, hi, lo, hi);
  NVVM::CpAsyncCommitGroupOp::create(b);
}

SmallVector<Value> KernelEmitter::stagedRowPointers(Value xRow) {
  SmallVector<Value> rowPtrs = {xRow};
  for (unsigned index = 1, e = group.inputs.size(); index < e; ++index)
    rowPtrs.push_back(group.isMapOnly(index) ? Value() : extraRows[index - 1]);
  return rowPtrs;
}

SmallVector<Chunk> KernelEmitter::loadOnlineTile(Value xRow, Value start,
                                                 Value lo, int64_t vec,
                                                 bool fromStage, Value end) {
  SmallVector<Chunk> chunks;
  for (const ChunkPlace &place : chunkPlaces(start, vec, 0, end))
    chunks.push_back(
        fromStage ? loadChunk(stage->current(), place.col, place.valid, vec,
                              arith::SubIOp::create(b, place.col, lo))
                  : loadChunk(xRow, place.col, place.valid, vec));
  return chunks;
}
