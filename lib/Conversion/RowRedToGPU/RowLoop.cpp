//===- RowLoop.cpp - The row loop and fused rows --------------------------===//
//
// Part of the softmax kernel compiler.
//
//===----------------------------------------------------------------------===//

#include "KernelEmitter.h"

#include "llvm/Support/SaveAndRestore.h"

using namespace mlir;
using namespace mlir::rowred;

std::pair<Value, Value> KernelEmitter::rowLoopBounds() {
  Value first, step;
  if (plan.clusterSize > 1) {
    first = arith::IndexCastOp::create(
        b, i64, gpu::ClusterIdOp::create(b, gpu::Dimension::x));
    step = arith::IndexCastOp::create(
        b, i64, gpu::ClusterDimOp::create(b, gpu::Dimension::x));
  } else {
    first = arith::IndexCastOp::create(
        b, i64, gpu::BlockIdOp::create(b, gpu::Dimension::x));
    step = arith::IndexCastOp::create(
        b, i64, gpu::GridDimOp::create(b, gpu::Dimension::x));
    if (plan.rowsPerBlock > 1) {
      first = arith::MulIOp::create(b, first, constI64(plan.rowsPerBlock));
      step = arith::MulIOp::create(b, step, constI64(plan.rowsPerBlock));
    }
  }
  return {first, step};
}

void KernelEmitter::setRowTurns(Value k, bool bulkRow) {
  // What alternates by row takes buffer k & 1, and its mbarrier's phase
  // parity flips every other row: (k >> 1) & 1. Each is built once.
  Value turn, turnParity;
  auto rowTurn = [&] {
    if (!turn)
      turn = arith::AndIOp::create(b, k, constI32(1));
    return turn;
  };
  auto rowTurnParity = [&] {
    if (!turnParity)
      turnParity = arith::AndIOp::create(
          b, arith::ShRUIOp::create(b, k, constI32(1)), constI32(1));
    return turnParity;
  };
  if (bulkRow) {
    Value buffer = rowTurn();
    Value parity = rowTurnParity();
    stage->enterBulkRow(buffer, parity);
  }
  if (plan.clusterSize > 1) {
    // Each of two buffers completes a phase every other row; a single
    // buffer completes one every row, so its parity is the turn.
    Value buffer, parity;
    if (cluster->buffers() > 1) {
      buffer = rowTurn();
      parity = rowTurnParity();
    } else {
      parity = rowTurn();
    }
    cluster->startRow(buffer, parity);
    if (plan.alternatesSlots())
      pairSlot = arith::IndexCastOp::create(
          b, b.getIndexType(),
          arith::ShLIOp::create(b, rowTurn(), constI32(1)));
  }
}

/// The column (i32) and validity (i1) of each element of the chunks at
/// `places` of `vec` elements each, in order.
static SmallVector<std::pair<Value, Value>>
elementColumns(ImplicitLocOpBuilder &b, ArrayRef<ChunkPlace> places,
               int64_t vec) {
  SmallVector<std::pair<Value, Value>> columns;
  for (const ChunkPlace &place : places)
    for (int64_t e = 0; e < vec; ++e)
      columns.push_back(
          {e ? arith::AddIOp::create(b, place.col, constI32(b, e)).getResult()
             : place.col,
           place.valid});
  return columns;
}

static RowLoopForm rowLoopForm(const KernelPlan &plan, int64_t vec,
                               bool peeled) {
  RowLoopForm form;
  bool vectors = vec > 1 && !peeled;
  bool online = plan.strategy == Strategy::online;
  form.staged = plan.prefetch && vectors && !plan.streamsLevels();
  form.keepsAhead = plan.keepAhead && vectors;
  form.bulkRow = form.keepsAhead && plan.bulkKeep;
  form.rereads =
      plan.streamsLevels() ||
      (!online && vec == 1 && plan.vectorWidth > 1 && plan.rereadFallback);
  form.pairRow = plan.pairReduce && !(peeled && plan.peeledWithoutPair());
  form.countRows = plan.clusterSize > 1 || form.bulkRow;
  form.ahead = plan.prefetchRegisters && vectors && !online;
  form.tileAhead = online && !peeled &&
                   onlineChainsTiles(plan, form.staged, vec) &&
                   !onlineKeeps(plan, form.staged, vec) && !form.keepsAhead;
  form.fusedRow = !online && !plan.streamsLevels() && !peeled && !form.rereads;
  return form;
}

void KernelEmitter::emitRowLoop(int64_t vec, bool peeled) {
  RowLoopForm form = rowLoopForm(plan, vec, peeled);
  auto [first, step] = rowLoopBounds();
  if (form.staged)
    prefetchRow(first);
  pairRow = form.pairRow;
  if (cluster)
    cluster->setRowExchanges(plan.clusterExchanges(
        group.reduces.size(), form.rereads || (plan.pairReduce && !pairRow)));
  SmallVector<Value> inits;
  if (form.countRows)
    inits.push_back(constI32(0));
  if (form.ahead)
    llvm::append_range(inits, loadRowAhead(first, vec));
  llvm::append_range(inits, startRowLoop(form, first, vec));
  // A block (or slice) holding its whole row in registers takes the same
  // columns on every thread in every row: with sums_in_registers the sums
  // down the columns stay in registers the loop carries, one per column a
  // thread holds (ColumnSums).
  size_t numLoaded = inits.size() - form.countRows;
  SmallVector<std::pair<Value, Value>> sumColumns;
  if (columnSums && plan.sumsInRegisters && form.fusedRow) {
    sumColumns = elementColumns(b, chunkPlaces(sliceStart, vec), vec);
    llvm::append_range(inits, columnSums->registerInits(sumColumns.size()));
  }
  // The first cluster barrier's wait, after the loads of the first row
  // issued ahead of the loop, where there are any.
  if (cluster)
    cluster->awaitCluster();
  auto loop = scf::ForOp::create(b, first, rows, step, inits);
  OpBuilder::InsertionGuard guard(b);
  if (!inits.empty()) {
    b.setInsertionPointToEnd(loop.getBody());
    scf::YieldOp::create(b, loop.getRegionIterArgs());
  }
  b.setInsertionPoint(loop.getBody()->getTerminator());
  Value row = loop.getInductionVar();
  ValueRange loaded = loop.getRegionIterArgs().slice(form.countRows, numLoaded);
  size_t sumsStart = form.countRows + numLoaded;
  if (!sumColumns.empty())
    columnSums->holdInRegisters(loop.getRegionIterArgs().drop_front(sumsStart));
  if (form.ahead) {
    // The next row's loads go first: nothing of this row waits for them.
    SmallVector<Value> next =
        loadRowAhead(arith::AddIOp::create(b, row, step), vec);
    loop.getBody()->getTerminator()->setOperands(form.countRows ? 1 : 0,
                                                 next.size(), next);
  }
  if (plan.rowsPerBlock > 1) {
    row = ownRow(row);
    rowValid = arith::CmpIOp::create(b, arith::CmpIPredicate::slt, row, rows);
  }
  if (form.countRows) {
    Value k = loop.getRegionIterArgs().front();
    loop.getBody()->getTerminator()->setOperand(
        0, arith::AddIOp::create(b, k, constI32(1)));
    setRowTurns(k, form.bulkRow);
  }
  Value xRow = rowPointer(x, plan.inType, row, xStride);
  Value yRow = y ? rowPointer(y, plan.outType, row, yStride) : Value();
  if (group.hasSeveralOperands())
    setOperandRows(row, xRow, yRow);
  if (group.hasRowOperands())
    currentRow = rowValid ? arith::SelectOp::create(
                                b, rowValid, row,
                                arith::SubIOp::create(b, rows, constI64(1)))
                          : row;
  SmallVector<Value> carriedOn =
      emitLoopRow(form, row, step, xRow, yRow, vec, peeled, loaded);
  if (!carriedOn.empty())
    loop.getBody()->getTerminator()->setOperands(form.countRows ? 1 : 0,
                                                 carriedOn.size(), carriedOn);
  // With a single exchange per row, the next row's write of the same shared
  // slots must wait until every thread has read this row's. (With two or
  // more, the barrier of the next exchange orders them. Cluster exchanges
  // alternate between two buffers instead, and so do the online kernel's
  // shared slots over clusters: alternatesSlots.)
  size_t levels = group.reduceLevels(plan.clusterSize == 1).size();
  if (plan.exchangesPerRow(levels, plan.pairReduce && !pairRow) == 1 &&
      !plan.alternatesSlots())
    gpu::BarrierOp::create(b);
  if (!sumColumns.empty()) {
    ArrayRef<Value> sums = columnSums->heldRegisters();
    loop.getBody()->getTerminator()->setOperands(sumsStart, sums.size(), sums);
    b.setInsertionPointAfter(loop);
    columnSums->storeRegisters(loop.getResults().drop_front(sumsStart),
                               sumColumns);
  }
  rowValid = Value();
  currentRow = Value();
  extraRows.clear();
  outputRows.clear();
  pairSlot = Value();
  if (stage)
    stage->leaveRow();
}

void KernelEmitter::setOperandRows(Value row, Value xRow, Value yRow) {
  for (auto [ptr, stride, value] :
       llvm::zip(ArrayRef(inputPtrs).drop_front(),
                 ArrayRef(inputStrides).drop_front(),
                 ArrayRef(group.inputs).drop_front()))
    extraRows.push_back(
        rowPointer(ptr, getElementTypeOrSelf(value), row, stride));
  llvm::append_range(extraRows, columnPtrs);
  if (!yRow)
    return;
  outputRows.push_back(yRow);
  for (auto [ptr, stride, value] :
       llvm::zip(ArrayRef(outputPtrs).drop_front(),
                 ArrayRef(outputStrides).drop_front(),
                 ArrayRef(group.outputs).drop_front()))
    outputRows.push_back(
        rowPointer(ptr, getElementTypeOrSelf(value), row, stride));
}

DenseMap<Value, Value> KernelEmitter::rowInputScalars() {
  DenseMap<Value, Value> scalars;
  if (!currentRow)
    return scalars;
  for (auto [ptr, buffer] : llvm::zip_equal(rowInputPtrs, group.rowInputs)) {
    Type elem = getElementTypeOrSelf(buffer);
    Value at =
        LLVM::GEPOp::create(b, ptr.getType(), elem, ptr, ValueRange{currentRow},
                            LLVM::GEPNoWrapFlags::inbounds);
    scalars[buffer] = LLVM::LoadOp::create(b, elem, at, byteWidth(elem));
  }
  // A gather reads its element where the index is a column of the row, and
  // gives NaN elsewhere (the load is masked).
  for (GatherOp gather : group.gathers) {
    Value index = scalars.lookup(gather.getIndices());
    if (index.getType() != i64)
      index = arith::ExtSIOp::create(b, i64, index);
    Value belowCols =
        arith::CmpIOp::create(b, arith::CmpIPredicate::slt, index,
                              arith::ExtUIOp::create(b, i64, cols));
    Value nonNegative =
        arith::CmpIOp::create(b, arith::CmpIPredicate::sge, index, constI64(0));
    Value inside = arith::AndIOp::create(b, nonNegative, belowCols);
    unsigned k = group.elementIndex(gather.getInput());
    Type elem = getElementTypeOrSelf(gather.getInput());
    Value rowPtr = rowPointer(inputPtrs[k], elem, currentRow, inputStrides[k]);
    Value loaded =
        unpack(loadRaw(rowPtr, arith::TruncIOp::create(b, i32, index), inside,
                       1, Value(), elem))
            .front();
    scalars[gather.getInit()] =
        arith::SelectOp::create(b, inside, loaded, constF32(std::nan("")));
  }
  return scalars;
}

void KernelEmitter::storeRowOutputs(RowContext &ctx, Value writes) {
  if (group.rowOutputs.empty() && group.totals.empty())
    return;
  auto yield = cast<YieldOp>(group.map.getBody().front().back());
  auto valuesOf = [&](ArrayRef<unsigned> results) {
    SmallVector<Value> values;
    for (unsigned result : results)
      values.push_back(
          bodies->lookupOrClone(yield.getValues()[result], ctx.uniform));
    return values;
  };
  SmallVector<Value> values = valuesOf(group.rowOutputResults);
  SmallVector<Value> totals = valuesOf(group.totalResults);
  // One thread per row: the first of the row (of the cluster's first block).
  Value first =
      arith::CmpIOp::create(b, arith::CmpIPredicate::eq, rowTid, constI32(0));
  if (clusterRank)
    first =
        arith::AndIOp::create(b, first,
                              arith::CmpIOp::create(b, arith::CmpIPredicate::eq,
                                                    clusterRank, constI32(0)));
  if (rowValid)
    first = arith::AndIOp::create(b, first, rowValid);
  if (writes)
    first = arith::AndIOp::create(b, first, writes);
  // The row is the element's index in the buffer (storeChunk's column).
  for (auto [ptr, value, output] :
       llvm::zip_equal(rowOutputPtrs, values, group.rowOutputs))
    storeChunk(ptr, currentRow, first, value, getElementTypeOrSelf(output));
  // The same thread adds the row's values into the block's totals.
  for (auto [t, value] : llvm::enumerate(totals))
    columnSums->addTotal(t, value, first);
}

Value KernelEmitter::isWarp0() {
  return arith::CmpIOp::create(b, arith::CmpIPredicate::ult, tid, constI32(32));
}

DenseMap<Value, Value>
KernelEmitter::onlineScalars(DenseMap<Value, Value> scalars, Value rowMax,
                             Value rowSum) {
  scalars[group.reduces[0].getInit()] = rowMax;
  scalars[group.reduces[1].getInit()] = rowSum;
  return scalars;
}

RowContext KernelEmitter::prepareMap(DenseMap<Value, Value> &scalars) {
  SmallVector<Value> mapScalars;
  for (Value row : group.map.getRows())
    mapScalars.push_back(scalars.lookup(row));
  SmallVector<Value> operands(group.map.getInputs());
  llvm::append_range(operands, group.map.getColumns());
  return bodies->prepareBody(group.map.getBody(), operands, mapScalars);
}

RowContext KernelEmitter::prepareReduce(ReduceOp reduce,
                                        DenseMap<Value, Value> &scalars) {
  SmallVector<Value> rowScalars;
  for (Value row : reduce.getRows())
    rowScalars.push_back(scalars.lookup(row));
  SmallVector<Value> operands(reduce.getInputs());
  llvm::append_range(operands, reduce.getColumns());
  return bodies->prepareBody(reduce.getBody(), operands, rowScalars);
}

void KernelEmitter::emitMap(Value yRow, ArrayRef<Chunk> chunks,
                            RowContext &ctx) {
  if (!group.hasSeveralOperands()) {
    unsigned result = group.outputResults.front();
    for (const Chunk &chunk : chunks) {
      SmallVector<Value> outs;
      for (auto [k, v] : llvm::enumerate(chunk.values))
        outs.push_back(
            bodies->emitElements(ctx, v, columnOf(ctx, chunk, k))[result]);
      storeChunk(yRow, chunk.col, chunk.valid, outs);
    }
    return;
  }
  if ((group.outputs.empty() && group.columnSums.empty()) || chunks.empty())
    return;
  // A chunks kernel loads the operands only the map reads (the norms'
  // weight and bias) of a batch of chunks (mapBatch) before it writes any
  // of them: each chunk's masked store would otherwise hold the next chunk's
  // loads behind it, one latency of L2 per vector.
  int64_t batch =
      plan.strategy == Strategy::chunks && group.hasMapOnlyOperands()
          ? mapBatch(chunks.front().values.size())
          : 1;
  SmallVector<Chunk> loaded;
  // Every output's vector of the chunk, from the body's results per element.
  for (auto [index, held] : llvm::enumerate(chunks)) {
    if (index % batch == 0) {
      loaded.clear();
      for (const Chunk &next : chunks.slice(index).take_front(batch))
        loaded.push_back(withMapOperands(next));
    }
    const Chunk &chunk = loaded[index % batch];
    SmallVector<SmallVector<Value>> outs(outputRows.size());
    for (int64_t k = 0, e = chunk.values.size(); k < e; ++k) {
      SmallVector<Value> results = bodies->emitElements(
          ctx, elementsAt(chunk, k), columnOf(ctx, chunk, k));
      for (auto [out, result] : llvm::zip_equal(outs, group.outputResults))
        out.push_back(results[result]);
      if (columnSums) {
        Value col = k == 0 ? chunk.col
                           : arith::AddIOp::create(b, chunk.col, constI32(k))
                                 .getResult();
        // The element's column among those the thread holds (a row loop
        // that keeps the sums in registers takes chunks in place order).
        int64_t slot = int64_t(index) * e + k;
        for (auto [s, result] : llvm::enumerate(group.columnSumResults))
          columnSums->add(s, col, results[result], chunk.valid, slot);
      }
    }
    for (auto [rowPtr, values, output] :
         llvm::zip_equal(outputRows, outs, group.outputs))
      storeChunk(rowPtr, chunk.col, chunk.valid, values,
                 getElementTypeOrSelf(output));
  }
}

void KernelEmitter::emitFusedRow(Value xRow, Value yRow, int64_t vec,
                                 Value nextRow, ValueRange loaded) {
  SmallVector<Chunk> chunks;
  if (!loaded.empty()) {
    // loadRowAhead's order: each of aheadInputs' rows, chunk by chunk.
    SmallVector<ChunkPlace> places = chunkPlaces(sliceStart, vec);
    SmallVector<unsigned> inputs = aheadInputs();
    for (auto [i, place] : llvm::enumerate(places)) {
      chunks.push_back(
          unpackChunk(place.col, inOwnRow(place.valid), loaded[i]));
      if (extraRows.empty())
        continue;
      SmallVector<Value> ahead(group.inputs.size());
      for (auto [k, index] : llvm::enumerate(inputs))
        ahead[index] = loaded[k * places.size() + i];
      loadExtra(chunks.back(), chunks.back().valid, vec, {}, ahead);
    }
  } else if (nextRow) {
    NVVM::CpAsyncWaitGroupOp::create(b, 0);
    chunks = loadBlock(stage->current(), sliceStart, vec, 0,
                       /*fromStage=*/true);
  } else {
    chunks = loadOwnRow(xRow, vec, /*peeled=*/false);
  }
  emitFusedChunks(yRow, chunks, nextRow);
}

SmallVector<Chunk> KernelEmitter::loadOwnRow(Value xRow, int64_t vec,
                                             bool peeled) {
  // With cache_hints (a fused block's) the row's 16-byte loads evict-last.
  llvm::SaveAndRestore<Value> loads(loadPolicy, evictLast);
  return peeled ? loadPeeledRow(xRow, vec) : loadBlock(xRow, sliceStart, vec);
}

void KernelEmitter::emitFusedChunks(Value yRow, ArrayRef<Chunk> chunks,
                                    Value nextRow) {
  if (pairRow)
    return emitPairRow(yRow, chunks, nextRow);
  DenseMap<Value, Value> scalars = rowInputScalars();
  reduceRowLevels(chunks, scalars, nextRow);
  RowContext ctx = prepareMap(scalars);
  storeRowOutputs(ctx);
  emitMap(yRow, chunks, ctx);
}

void KernelEmitter::reduceRowLevels(ArrayRef<Chunk> chunks,
                                    DenseMap<Value, Value> &scalars,
                                    Value nextRow) {
  // The reduces of a level read only the row scalars of earlier levels:
  // their partials go through one exchange.
  for (auto [begin, end] : group.reduceLevels(plan.clusterSize == 1)) {
    PreparedLevel level = prepareLevel(begin, end, scalars);
    SmallVector<Value> partials = levelPartials(level, chunks, {});
    if (nextRow && begin == 0)
      prefetchRow(nextRow);
    for (auto [slot, reduced] : llvm::enumerate(
             reduction->blockReduce(partials, level.combiners, begin)))
      scalars[group.reduces[begin + slot].getInit()] = reduced;
  }
}

PreparedLevel KernelEmitter::prepareLevel(unsigned begin, unsigned end,
                                          DenseMap<Value, Value> &scalars) {
  PreparedLevel level;
  level.reduces = ArrayRef(group.reduces).slice(begin, end - begin);
  for (ReduceOp reduce : level.reduces) {
    level.contexts.push_back(prepareReduce(reduce, scalars));
    level.combiners.push_back(reduce.getCombiner());
    level.identities.push_back(
        arith::ConstantFloatOp::create(b, f32, reduce.getIdentity()));
  }
  return level;
}

SmallVector<Value> KernelEmitter::levelPartials(PreparedLevel &level,
                                                ArrayRef<Chunk> chunks,
                                                ValueRange acc) {
  SmallVector<Value> partials;
  for (auto [i, ctx] : llvm::enumerate(level.contexts)) {
    Value identity = level.identities[i];
    SmallVector<Value> values;
    if (!acc.empty())
      values.push_back(acc[i]);
    else if (chunks.empty())
      values.push_back(identity);
    for (const Chunk &chunk : chunks)
      for (int64_t k = 0, e = chunk.values.size(); k < e; ++k)
        values.push_back(arith::SelectOp::create(
            b, chunk.valid,
            bodies
                ->emitElements(ctx, elementsAt(chunk, k),
                               columnOf(ctx, chunk, k))
                .front(),
            identity));
    Combiner c = level.combiners[i];
    partials.push_back(treeReduce<Value>(
        values, [&](Value l, Value r) { return combine(b, c, l, r); }));
  }
  if (level.counts) {
    SmallVector<Value> counts = {acc.empty() ? constF32(0.0) : acc.back()};
    for (const Chunk &chunk : chunks)
      counts.push_back(arith::SelectOp::create(
          b, chunk.valid, constF32(chunk.values.size()), constF32(0.0)));
    partials.push_back(treeReduce<Value>(counts, [&](Value l, Value r) {
      return combine(b, Combiner::sum, l, r);
    }));
  }
  return partials;
}

Value KernelEmitter::maxOfChunks(ArrayRef<Chunk> chunks) {
  SmallVector<Value> masked;
  for (const Chunk &chunk : chunks)
    for (Value v : chunk.values)
      masked.push_back(arith::SelectOp::create(b, chunk.valid, v, negInf()));
  return treeReduce<Value>(masked, [&](Value l, Value r) {
    return combine(b, Combiner::max, l, r);
  });
}

void KernelEmitter::emitPairRow(Value yRow, ArrayRef<Chunk> chunks,
                                Value nextRow) {
  // Before the exchange: after it, other threads may write the row (in
  // place) where a gather reads it.
  DenseMap<Value, Value> inputs = rowInputScalars();
  Value mt = maxOfChunks(chunks);
  if (nextRow)
    prefetchRow(nextRow);
  // A thread whose elements are all -inf (or masked) contributes (-inf, 0);
  // its exponents would be NaN.
  Value finite =
      arith::CmpFOp::create(b, arith::CmpFPredicate::ONE, mt, negInf());
  Value zero = constF32(0.0);
  SmallVector<SmallVector<Value>> exps;
  SmallVector<Value> terms;
  for (const Chunk &chunk : chunks) {
    Value use = arith::AndIOp::create(b, chunk.valid, finite);
    exps.emplace_back();
    for (Value v : chunk.values) {
      exps.back().push_back(arith::SelectOp::create(
          b, use, emitExp(b, plan, arith::SubFOp::create(b, v, mt)), zero));
      terms.push_back(exps.back().back());
    }
  }
  Value dt = treeReduce<Value>(
      terms, [&](Value l, Value r) { return combine(b, Combiner::sum, l, r); });
  assert(!bulkRowBuffer() &&
         "the online row copies its next kept tiles between the pair's "
         "reductions in and across blocks");
  auto [m, s] = reduction->blockReducePair(mt, dt, pairSlot);
  if (!isSoftmaxMap(group)) {
    DenseMap<Value, Value> scalars = onlineScalars(inputs, m, s);
    RowContext ctx = prepareMap(scalars);
    storeRowOutputs(ctx);
    emitMap(yRow, chunks, ctx);
    return;
  }
  storeScaledExps(yRow, chunks, exps, mt, m, s);
}

void KernelEmitter::storeScaledExps(Value yRow, ArrayRef<Chunk> chunks,
                                    ArrayRef<SmallVector<Value>> exps, Value mt,
                                    Value m, Value s) {
  // exp(x_i - m) / s = e_i * exp(mt - m) / s.
  Value scale = arith::DivFOp::create(
      b, emitExp(b, plan, arith::SubFOp::create(b, mt, m)), s);
  for (auto [chunk, values] : llvm::zip_equal(chunks, exps)) {
    SmallVector<Value> outs;
    for (Value e : values)
      outs.push_back(arith::MulFOp::create(b, e, scale));
    storeChunk(yRow, chunk.col, chunk.valid, outs);
  }
}

int64_t KernelEmitter::rereadChunks() const {
  return std::min<int64_t>(4, plan.elementsPerThread());
}

SmallVector<Value> KernelEmitter::emitLoopRow(const RowLoopForm &form,
                                              Value row, Value step, Value xRow,
                                              Value yRow, int64_t vec,
                                              bool peeled, ValueRange carried) {
  if (form.fusedRow) {
    emitFusedRow(xRow, yRow, vec,
                 form.staged ? arith::AddIOp::create(b, row, step) : Value(),
                 carried);
  } else if (plan.streamsLevels()) {
    emitRowPasses(xRow, yRow, vec);
  } else if (peeled) {
    emitFusedChunks(yRow, loadOwnRow(xRow, vec, /*peeled=*/true), Value());
  } else {
    // The scalar path of a block that re-reads its row.
    emitRowPasses(xRow, yRow, 1);
  }
  return {};
}

TileWalk KernelEmitter::rowPassWalk(int64_t vec) {
  if (plan.strategy == Strategy::online) {
    auto [lo, hi] = onlineShare();
    return {lo, hi, hi, vec, plan.elementsPerThread() / vec};
  }
  Value lower = constI32(0), upper = cols;
  if (sliceStart) {
    lower = sliceStart;
    upper = arith::MinUIOp::create(
        b, cols,
        arith::AddIOp::create(b, sliceStart, constI32(plan.blockElements)));
  }
  return {lower, upper, Value(), 1, rereadChunks()};
}

scf::ForOp KernelEmitter::emitTileLoop(
    const TileWalk &walk, ValueRange inits,
    function_ref<SmallVector<Value>(Value, ValueRange)> body) {
  Value tile = constI32(walk.chunks * walk.vec * plan.threadsPerRow());
  auto loop = scf::ForOp::create(b, walk.lower, walk.upper, tile, inits);
  OpBuilder::InsertionGuard guard(b);
  if (!inits.empty()) {
    b.setInsertionPointToStart(loop.getBody());
    scf::YieldOp::create(
        b, body(loop.getInductionVar(), loop.getRegionIterArgs()));
  } else {
    b.setInsertionPoint(loop.getBody()->getTerminator());
    body(loop.getInductionVar(), {});
  }
  return loop;
}

void KernelEmitter::emitRowPasses(Value xRow, Value yRow, int64_t vec) {
  TileWalk walk = rowPassWalk(vec);
  // A staged streamed row (prefetch = stage, the vector path) first copies
  // its share of each input into the stage; every pass then reads it
  // there. Each thread reads back the vectors it copied. (The re-reading
  // scalar path of fused and cluster kernels, vec = 1, reads global memory.)
  bool staged = plan.streamsLevels() && plan.prefetch && vec > 1;
  if (staged) {
    stageShare(stagedRowPointers(xRow), walk.lower, walk.upper);
    NVVM::CpAsyncWaitGroupOp::create(b, 0);
  }
  auto loadTile = [&](Value start) {
    if (staged)
      return loadOnlineTile(xRow, start, walk.lower, vec, /*fromStage=*/true,
                            walk.end);
    return loadBlock(xRow, start, walk.vec, walk.chunks, /*fromStage=*/false,
                     walk.end);
  };
  DenseMap<Value, Value> scalars = rowInputScalars();
  // With cache_hints (null policies without) the reduces' passes read the
  // row evict-last, so that it stays in L2 for the next pass, and the map's
  // pass reads and writes it evict-first.
  {
    llvm::SaveAndRestore<Value> loads(loadPolicy, evictLast);
    // One pass per level: its reduces read only earlier levels' scalars.
    for (auto [begin, end] : group.reduceLevels(plan.clusterSize == 1)) {
      PreparedLevel level = prepareLevel(begin, end, scalars);
      auto loop = emitTileLoop(
          walk, level.identities, [&](Value start, ValueRange acc) {
            return levelPartials(level, loadTile(start), acc);
          });
      for (auto [slot, reduced] : llvm::enumerate(reduction->blockReduce(
               loop.getResults(), level.combiners, begin)))
        scalars[group.reduces[begin + slot].getInit()] = reduced;
    }
  }
  RowContext ctx = prepareMap(scalars);
  storeRowOutputs(ctx);
  llvm::SaveAndRestore<Value> loads(loadPolicy, evictFirst),
      stores(storePolicy, evictFirst);
  // The map's tile loads every operand before it computes (only the
  // reduces' passes leave out those the map alone reads).
  emitTileLoop(walk, {}, [&](Value start, ValueRange) {
    SmallVector<Chunk> chunks = loadTile(start);
    for (Chunk &chunk : chunks)
      chunk = withMapOperands(chunk);
    emitMap(yRow, chunks, ctx);
    return SmallVector<Value>{};
  });
}

// Half the held vectors, in the held chunk and per iteration of the stage.
// H100, bench.py's time_in_rounds (bench/results-h100.txt), against all the
// held vectors at once and two per iteration of the stage: 1024 x 1048576 f32
// rms_norm 74.2% -> 86.7% of the copy (80 registers -> 64), bf16
// layer_norm 51.9% -> 56.6% (121 -> 96: five blocks per SM instead of four),
// f32 layer_norm 57.5% -> 59.1%; 64 rows +3 to +5%, 262144 +2 to +3%, bf16
// rms_norm level. The held vectors all at once with four per iteration of the
// stage gave f32 layer_norm 62.9% (one latency fewer at the same four blocks
// per SM) but rms_norm 76.9%; eight per iteration took rms_norm to 114
// registers and lost 4%; a quarter (one more latency per chunk) lost up to 17%
// (bf16 rms_norm).
int64_t KernelEmitter::mapBatch(int64_t vec) const {
  return std::max<int64_t>(1, plan.elementsPerThread() / vec / 2);
}

std::pair<Value, Value> KernelEmitter::onlineFold(Value m, Value d,
                                                  ArrayRef<Chunk> chunks) {
  Value mNew = arith::MaximumFOp::create(b, m, maxOfChunks(chunks));
  // While the running max is -inf every contribution so far is 0.
  Value finite =
      arith::CmpFOp::create(b, arith::CmpFPredicate::ONE, mNew, negInf());
  Value zero = constF32(0.0);
  Value scale = arith::SelectOp::create(
      b, finite, emitExp(b, plan, arith::SubFOp::create(b, m, mNew)), zero);
  SmallVector<Value> terms;
  for (const Chunk &chunk : chunks) {
    Value use = arith::AndIOp::create(b, chunk.valid, finite);
    for (Value v : chunk.values)
      terms.push_back(arith::SelectOp::create(
          b, use, emitExp(b, plan, arith::SubFOp::create(b, v, mNew)), zero));
  }
  Value tileSum = treeReduce<Value>(
      terms, [&](Value l, Value r) { return combine(b, Combiner::sum, l, r); });
  Value dNew =
      arith::AddFOp::create(b, arith::MulFOp::create(b, d, scale), tileSum);
  return {mNew, dNew};
}
