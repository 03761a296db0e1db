//===- ChunksEmitter.cpp - Rows cut into chunks by ticket -----------------===//
//
// Part of the softmax kernel compiler.
//
//===----------------------------------------------------------------------===//

#include "ChunksEmitter.h"

using namespace mlir;
using namespace mlir::rowred;

/// `c` and `q` of `n` elements about `from`, moved to about `to`: with d =
/// from - to, c + n d and q + d (2 c + n d). Exact where `from` and `to` are
/// close (d is then exact), which keeps rows of large mean and small spread
/// exact.
static std::pair<Value, Value> moveMoments(ImplicitLocOpBuilder &b, Value c,
                                           Value q, Value n, Value from,
                                           Value to) {
  Value d = arith::SubFOp::create(b, from, to);
  Value nd = arith::MulFOp::create(b, n, d);
  Value twoC = arith::AddFOp::create(b, c, c);
  return {arith::AddFOp::create(b, c, nd),
          arith::AddFOp::create(
              b, q,
              arith::MulFOp::create(b, d, arith::AddFOp::create(b, twoC, nd)))};
}

ChunksEmitter::ChunksEmitter(ImplicitLocOpBuilder &b, Group group,
                             const KernelPlan &plan, gpu::GPUFuncOp func)
    : KernelEmitter(b, group, plan, func),
      workspace(func.getBody().front().getArgument(
          func.getFunctionType().getNumInputs() - 1)) {}

void ChunksEmitter::emit() {
  if (plan.hasStage())
    stage->initBarriers(tid, 1);
  Value count =
      arith::CeilDivUIOp::create(b, cols, constI32(plan.chunkElements()));
  Value total =
      arith::MulIOp::create(b, arith::TruncIOp::create(b, i32, rows), count);
  Value ticketSlot = constIndex(KernelPlan::kTicketSlot);
  Value first = constIndex(0);
  // The loop carries the parity of the stage's mbarrier phase, which each
  // staged chunk completes once (and each chunk flips).
  auto loop =
      scf::WhileOp::create(b, TypeRange{i32, i32}, ValueRange{constI32(0)});
  OpBuilder::InsertionGuard guard(b);
  Block *before = b.createBlock(&loop.getBefore(), {}, {i32}, {b.getLoc()});
  Value parity = before->getArgument(0);
  // A launch of no more chunks than blocks (a few rows) gives block i chunk
  // i, all of them resident at once under the cooperative launch: no
  // ticket's round trip to L2 before its chunk nor after it, and the ticket
  // word stays 0. The grid is read here, not held through the chunk.
  Value grid = arith::IndexCastOp::create(
      b, i32, gpu::GridDimOp::create(b, gpu::Dimension::x));
  Value byTicket =
      arith::CmpIOp::create(b, arith::CmpIPredicate::ugt, total, grid);
  {
    OpBuilder::InsertionGuard inner(b);
    b.setInsertionPointToStart(
        emitIfThen(arith::AndIOp::create(b, isFirstThread(), byTicket)));
    // Every block takes one ticket past the last: the counter wraps to 0
    // after total + grid tickets.
    Value lastTicket = arith::SubIOp::create(
        b, arith::AddIOp::create(b, total, grid), constI32(1));
    Value ticket = LLVM::AtomicRMWOp::create(
        b, LLVM::AtomicBinOp::uinc_wrap, workspace, lastTicket,
        LLVM::AtomicOrdering::monotonic, "device");
    memref::StoreOp::create(b, arith::BitcastOp::create(b, f32, ticket), shared,
                            ValueRange{ticketSlot, first});
  }
  // Also orders the previous chunk's reads of shared memory and of the stage
  // before this chunk's writes.
  gpu::BarrierOp::create(b);
  Value blockId = arith::IndexCastOp::create(
      b, i32, gpu::BlockIdOp::create(b, gpu::Dimension::x));
  Value evenRound =
      arith::CmpIOp::create(b, arith::CmpIPredicate::eq, parity, constI32(0));
  Value blockChunk = arith::SelectOp::create(b, evenRound, blockId, total);
  Value ticket = arith::SelectOp::create(
      b, byTicket,
      arith::BitcastOp::create(
          b, i32,
          memref::LoadOp::create(b, shared, ValueRange{ticketSlot, first})),
      blockChunk);
  scf::ConditionOp::create(
      b, arith::CmpIOp::create(b, arith::CmpIPredicate::ult, ticket, total),
      ValueRange{parity, ticket});
  Block *after =
      b.createBlock(&loop.getAfter(), {}, {i32, i32}, {b.getLoc(), b.getLoc()});
  stageParity = after->getArgument(0);
  ticket = after->getArgument(1);
  scf::YieldOp::create(
      b, arith::XOrIOp::create(b, stageParity, constI32(1)).getResult());
  b.setInsertionPointToStart(after);
  Value row =
      arith::ExtUIOp::create(b, i64, arith::DivUIOp::create(b, ticket, count));
  Value chunk = arith::RemUIOp::create(b, ticket, count);
  sliceStart = arith::MulIOp::create(b, chunk, constI32(plan.chunkElements()));
  emitPaths([&](int64_t vec, bool peeled) {
    if (vec == 1)
      emitChunk(row, chunk, count, 1);
    else
      emitVectorChunk(row, chunk, count, peeled);
  });
}

void ChunksEmitter::emitVectorChunk(Value row, Value chunk, Value count,
                                    bool peeled) {
  OpBuilder::InsertionGuard guard(b);
  Value chunkStart = sliceStart;
  if (peeled) {
    peeledChunk =
        peelRow(rowPointer(x, plan.inType, row, xStride), plan.vectorWidth);
    sliceStart = arith::AddIOp::create(b, peeledChunk->head, chunkStart);
  }
  // A chunk inside the row (all but a row's partial last one) takes the
  // vector path without masks: no compare, branch or select per vector.
  // Groups of two levels keep one masked path: layer_norm's chunks with
  // both ran 11-12% slower at 1024 x 1048576 in bf16 and f16, 2-7% faster
  // at 64 and 8 rows, f32 level (H100; one level: the backward f32 +1% to
  // +4%, rms_norm bf16 +3% to +8%, f32 -1% to +6%).
  if (!isOnlineSoftmaxPair(group) &&
      group.reduceLevels(/*merge=*/true).size() > 1) {
    emitLevelChunk(row, chunk, count, plan.vectorWidth);
    sliceStart = chunkStart;
    peeledChunk.reset();
    return;
  }
  Value end = vectorEnd();
  Value sliceEnd =
      arith::AddIOp::create(b, sliceStart, constI32(plan.chunkElements()));
  auto whole = scf::IfOp::create(
      b, arith::CmpIOp::create(b, arith::CmpIPredicate::sle, sliceEnd, end),
      /*withElseRegion=*/true);
  b.setInsertionPointToStart(&whole.getThenRegion().front());
  wholeChunk = true;
  emitChunk(row, chunk, count, plan.vectorWidth);
  wholeChunk = false;
  b.setInsertionPointToStart(&whole.getElseRegion().front());
  emitChunk(row, chunk, count, plan.vectorWidth);
  sliceStart = chunkStart;
  peeledChunk.reset();
}

void ChunksEmitter::emitChunk(Value row, Value chunk, Value count,
                              int64_t vec) {
  if (!isOnlineSoftmaxPair(group))
    return emitLevelChunk(row, chunk, count, vec);
  Value xRow = rowPointer(x, plan.inType, row, xStride);
  Value yRow = y ? rowPointer(y, plan.outType, row, yStride) : Value();
  if (group.hasRowOperands())
    currentRow = row;
  // Before the exchange: after it, the row's other chunks may write the row
  // (in place) where a gather reads it.
  DenseMap<Value, Value> inputs = rowInputScalars();
  ChunkParts parts = loadChunkParts(xRow, vec);
  SmallVector<Chunk> &held = parts.held;
  // The row's first chunk takes a peeled row's edges (a few elements),
  // loaded once for the pair and again for the map: held with the block's
  // elements through the passes, they spilled the bf16 kernel's 56
  // registers (16 bytes).
  auto edges = [&]() -> SmallVector<Chunk> {
    if (!peeledChunk)
      return {};
    return loadEdges(
        xRow, *peeledChunk, vec, /*oneList=*/true,
        arith::CmpIOp::create(b, arith::CmpIPredicate::eq, chunk, constI32(0)));
  };
  auto forEachStaged = [&](ValueRange inits, StreamBody body) {
    return forEachStreamed(xRow, parts.streamStart, parts.streamed, vec,
                           parts.staged, inits, body);
  };
  // Masks apply per chunk, not per element: the valid elements' max and
  // sum of exponentials of each chunk, or the identity. Two selects per
  // element cost bf16 rows of 1048576 2.5% and f32 ones 1.2% (H200; the
  // bf16 kernel is near issue-bound, with up to 1.75 ex2 per element).
  auto max = [&](Value l, Value r) { return combine(b, Combiner::max, l, r); };
  auto sum = [&](Value l, Value r) { return combine(b, Combiner::sum, l, r); };
  auto chunkMax = [&](const Chunk &c) -> Value {
    return arith::SelectOp::create(b, c.valid, treeReduce<Value>(c.values, max),
                                   negInf());
  };
  Value mt = negInf();
  for (const Chunk &c : held)
    mt = max(mt, chunkMax(c));
  if (parts.staged)
    waitForPhase(b, stage->barrier(constI32(0)), stageParity);
  mt = forEachStaged({mt}, [&](ArrayRef<Chunk> chunks, ValueRange acc) {
         Value m = acc[0];
         for (const Chunk &c : chunks)
           m = max(m, chunkMax(c));
         return SmallVector<Value>{m};
       }).front();
  // Exponents against the thread's max, or 0 when it is -inf (every
  // element -inf or masked) or NaN: -inf elements then give 0, not NaN,
  // and a NaN row stays NaN.
  Value zero = constF32(0.0);
  Value finite =
      arith::CmpFOp::create(b, arith::CmpFPredicate::ONE, mt, negInf());
  Value shift = arith::SelectOp::create(b, finite, mt, zero);
  auto chunkExps = [&](const Chunk &c) {
    SmallVector<Value> exps;
    for (Value v : c.values)
      exps.push_back(emitExp(b, plan, arith::SubFOp::create(b, v, shift)));
    return exps;
  };
  auto chunkSum = [&](const Chunk &c, ArrayRef<Value> exps) -> Value {
    return arith::SelectOp::create(b, c.valid, treeReduce<Value>(exps, sum),
                                   zero);
  };
  SmallVector<SmallVector<Value>> exps;
  Value dt = zero;
  for (const Chunk &c : held) {
    exps.push_back(chunkExps(c));
    dt = sum(dt, chunkSum(c, exps.back()));
  }
  dt = forEachStaged({dt}, [&](ArrayRef<Chunk> chunks, ValueRange acc) {
         Value d = acc[0];
         for (const Chunk &c : chunks)
           d = sum(d, chunkSum(c, chunkExps(c)));
         return SmallVector<Value>{d};
       }).front();
  // The edges join the thread's pair, not its max: the exponentials kept
  // in registers stay those against mt.
  Value pm = mt, pd = dt;
  if (SmallVector<Chunk> edgeChunks = edges(); !edgeChunks.empty())
    std::tie(pm, pd) = onlineFold(mt, dt, edgeChunks);
  auto [m, d] = reduction->reducePairInBlock(pm, pd, pairSlot);
  auto pairStep = [&](ValueRange acc, ValueRange entry) {
    Value mAll = combine(b, Combiner::max, acc[0], entry[0]);
    Value entrySum = reduction->rescale(entry[0], entry[1], mAll);
    Value accSum = reduction->rescale(acc[0], acc[1], mAll);
    return SmallVector<Value, 4>{mAll,
                                 arith::AddFOp::create(b, accSum, entrySum)};
  };
  auto pairAcrossLanes = [&](ValueRange acc) {
    auto [lm, ld] = reduction->butterflyPair(acc[0], acc[1], 32);
    return SmallVector<Value, 4>{lm, ld};
  };
  SmallVector<Value, 4> rowPair = exchangeChunk(row, chunk, count, {m, d},
                                                {{negInf(), constF32(0.0)},
                                                 pairStep,
                                                 pairAcrossLanes,
                                                 /*packed=*/true},
                                                /*slot=*/0, /*last=*/true);
  Value rowMax = rowPair[0], rowSum = rowPair[1];
  DenseMap<Value, Value> scalars = onlineScalars(inputs, rowMax, rowSum);
  RowContext ctx = prepareMap(scalars);
  // The row's first chunk writes its per-row results.
  storeRowOutputs(ctx, arith::CmpIOp::create(b, arith::CmpIPredicate::eq, chunk,
                                             constI32(0)));
  currentRow = Value();
  if (group.outputs.empty())
    return;
  if (isSoftmaxMap(group)) {
    storeScaledExps(yRow, held, exps, mt, rowMax, rowSum);
  } else {
    emitMap(yRow, held, ctx);
  }
  emitMap(yRow, edges(), ctx);
  forEachStaged({}, [&](ArrayRef<Chunk> chunks, ValueRange) {
    emitMap(yRow, chunks, ctx);
    return SmallVector<Value>();
  });
}

ChunkParts ChunksEmitter::loadChunkParts(Value xRow, int64_t vec) {
  ChunkParts parts{{}, sliceStart, plan.chunkElements(), false};
  if (vec == 1)
    return parts;
  parts.streamStart =
      arith::AddIOp::create(b, sliceStart, constI32(plan.blockElements));
  parts.streamed = plan.chunkStaged;
  parts.staged = plan.hasStage();
  if (parts.staged) {
    bulkCopyChunkStage(stagedRowPointers(xRow), parts.streamStart);
  }
  parts.held = loadBlock(xRow, sliceStart, vec);
  return parts;
}

void ChunksEmitter::emitLevelChunk(Value row, Value chunk, Value count,
                                   int64_t vec) {
  Value xRow = rowPointer(x, plan.inType, row, xStride);
  Value yRow = y ? rowPointer(y, plan.outType, row, yStride) : Value();
  if (group.hasSeveralOperands())
    setOperandRows(row, xRow, yRow);
  if (group.hasRowOperands())
    currentRow = row;
  // Before the exchange: after it, the row's other chunks may write the row
  // (in place) where a gather reads it.
  DenseMap<Value, Value> scalars = rowInputScalars();
  Value firstChunk =
      arith::CmpIOp::create(b, arith::CmpIPredicate::eq, chunk, constI32(0));
  ChunkParts parts = loadChunkParts(xRow, vec);
  SmallVector<Chunk> &held = parts.held;
  // The row's first chunk also takes a peeled row's edges.
  if (peeledChunk)
    llvm::append_range(held, loadEdges(xRow, *peeledChunk, vec,
                                       /*oneList=*/true, firstChunk));
  auto forEachStaged = [&](ValueRange inits, StreamBody body,
                           bool together = false) {
    return forEachStreamed(xRow, parts.streamStart, parts.streamed, vec,
                           parts.staged, inits, body, together);
  };
  // The thread's partials of a level over its registers and the streamed
  // part (the first waits for the stage).
  bool waited = false;
  auto partialsOf = [&](PreparedLevel &level) {
    SmallVector<Value> partials = levelPartials(level, held, {});
    if (parts.staged && !waited)
      waitForPhase(b, stage->barrier(constI32(0)), stageParity);
    waited = true;
    return forEachStaged(partials, [&](ArrayRef<Chunk> chunks, ValueRange acc) {
      return levelPartials(level, chunks, acc);
    });
  };
  // Per level (chunkExchanges): the thread's partials, the block's, then the
  // row's.
  if (isShiftedMoments(group)) {
    exchangeMoments(row, chunk, count, scalars, partialsOf);
  } else {
    auto levels = group.reduceLevels(/*merge=*/true);
    for (auto [phase, bounds] : llvm::enumerate(levels)) {
      PreparedLevel level = prepareLevel(bounds.first, bounds.second, scalars);
      SmallVector<Value, 4> rowValues = exchangeChunk(
          row, chunk, count,
          reduction->blockReduce(partialsOf(level), level.combiners,
                                 bounds.first),
          reduceFold(level.reduces), bounds.first, phase + 1 == levels.size());
      for (auto [reduce, value] : llvm::zip_equal(level.reduces, rowValues))
        scalars[ReduceOp(reduce).getInit()] = value;
    }
  }
  RowContext ctx = prepareMap(scalars);
  storeRowOutputs(ctx, firstChunk);
  emitMap(yRow, held, ctx);
  // An iteration's chunks go to the map together where it loads operands
  // the reduces do not read (the norms' weight and bias): all their loads
  // before any store (emitMap). H100, layer_norm f32 1024 x 262144 73.6% ->
  // 83.8% of the copy, rms_norm 77.5% -> 94.6%; the softmax backward, which
  // has none, lost 6% to its loads from the stage taken together.
  forEachStaged(
      {},
      [&](ArrayRef<Chunk> chunks, ValueRange) {
        emitMap(yRow, chunks, ctx);
        return SmallVector<Value>();
      },
      /*together=*/group.hasMapOnlyOperands());
  currentRow = Value();
  extraRows.clear();
  outputRows.clear();
}

void ChunksEmitter::exchangeMoments(
    Value row, Value chunk, Value count, DenseMap<Value, Value> &scalars,
    function_ref<SmallVector<Value>(PreparedLevel &)> partialsOf) {
  // The chunk's sum and count (block slots 0 and 1), then its shifted sums
  // about its own mean (slots 2 and 3), the bodies' row length its count.
  PreparedLevel sums = prepareLevel(0, 1, scalars);
  sums.counts = true;
  sums.combiners.push_back(Combiner::sum);
  SmallVector<Value> chunkSums =
      reduction->blockReduce(partialsOf(sums), sums.combiners, 0);
  Value sumInit = group.reduces[0].getInit();
  scalars[sumInit] = chunkSums[0];
  bodies->rowLength = chunkSums[1];
  PreparedLevel shifted = prepareLevel(1, 3, scalars);
  bodies->rowLength = Value();
  SmallVector<Value> chunkShifted =
      reduction->blockReduce(partialsOf(shifted), shifted.combiners, 2);
  SmallVector<Value, 4> rowValues = exchangeChunk(
      row, chunk, count,
      {chunkSums[0], chunkShifted[0], chunkShifted[1], chunkSums[1]},
      momentsFold(), /*slot=*/0, /*last=*/true);
  for (unsigned i = 0; i < 3; ++i)
    scalars[group.reduces[i].getInit()] = rowValues[i];
}

ChunkFold ChunksEmitter::momentsFold() {
  // s / n, or 0 for no elements (whose c and q are 0).
  auto mean = [this](Value s, Value n) {
    Value some =
        arith::CmpFOp::create(b, arith::CmpFPredicate::OGT, n, constF32(0.0));
    return arith::SelectOp::create(b, some, arith::DivFOp::create(b, s, n),
                                   constF32(0.0))
        .getResult();
  };
  ChunkFold fold;
  fold.identities.assign(4, constF32(0.0));
  // (s, c, q, n) of both, about the mean of both.
  fold.step = [this, mean](ValueRange acc, ValueRange entry) {
    Value s = arith::AddFOp::create(b, acc[0], entry[0]);
    Value n = arith::AddFOp::create(b, acc[3], entry[3]);
    Value m = mean(s, n);
    auto [c0, q0] =
        moveMoments(b, acc[1], acc[2], acc[3], mean(acc[0], acc[3]), m);
    auto [c1, q1] = moveMoments(b, entry[1], entry[2], entry[3],
                                mean(entry[0], entry[3]), m);
    return SmallVector<Value, 4>{s, arith::AddFOp::create(b, c0, c1),
                                 arith::AddFOp::create(b, q0, q1), n};
  };
  // The row's sum, then each lane's moments about the row's mean as the
  // bodies compute it (s / N, N the row length), then their sums.
  fold.acrossLanes = [this, mean](ValueRange acc) {
    auto sum = [this](Value l, Value r) {
      return combine(b, Combiner::sum, l, r);
    };
    Value s = reduction->butterfly(acc[0], 32, sum);
    Value rowMean =
        arith::DivFOp::create(b, s, arith::UIToFPOp::create(b, f32, cols));
    auto [c, q] =
        moveMoments(b, acc[1], acc[2], acc[3], mean(acc[0], acc[3]), rowMean);
    return SmallVector<Value, 4>{s, reduction->butterfly(c, 32, sum),
                                 reduction->butterfly(q, 32, sum),
                                 reduction->butterfly(acc[3], 32, sum)};
  };
  return fold;
}

ChunkFold ChunksEmitter::reduceFold(ArrayRef<ReduceOp> reduces) {
  ChunkFold fold;
  SmallVector<Combiner, 2> combiners;
  for (ReduceOp reduce : reduces) {
    fold.identities.push_back(
        arith::ConstantFloatOp::create(b, f32, reduce.getIdentity()));
    combiners.push_back(reduce.getCombiner());
  }
  fold.step = [this, combiners](ValueRange acc, ValueRange entry) {
    SmallVector<Value, 4> next;
    for (auto [c, l, r] : llvm::zip_equal(combiners, acc, entry))
      next.push_back(combine(b, c, l, r));
    return next;
  };
  fold.acrossLanes = [this, combiners](ValueRange acc) {
    SmallVector<Value, 4> all;
    for (auto [c, v] : llvm::zip_equal(combiners, acc))
      all.push_back(
          reduction->butterfly(v, 32, [this, c = c](Value l, Value r) {
            return combine(b, c, l, r);
          }));
    return all;
  };
  return fold;
}

SmallVector<Value> ChunksEmitter::forEachStreamed(Value xRow, Value start,
                                                  int64_t elements, int64_t vec,
                                                  bool staged, ValueRange inits,
                                                  StreamBody body,
                                                  bool together) {
  int64_t stride = plan.numThreads() * vec;
  int64_t count = elements / stride;
  if (count == 0)
    return SmallVector<Value>(inits);
  int64_t unroll = count % 2 == 0 ? 2 : 1;
  // Chunks taken together come a map batch per iteration (a divisor of
  // count), so that each iteration's loads wait once.
  if (together) {
    unroll = std::min(count, mapBatch(vec));
    while (count % unroll != 0)
      --unroll;
  }
  Value firstLocal = arith::MulIOp::create(b, tid, constI32(vec));
  auto loop = scf::ForOp::create(b, constI32(0), constI32(count * stride),
                                 constI32(unroll * stride), inits);
  // LLVM would unroll the loop fully; kept a loop, the chunks pass through
  // two sets of registers.
  loop->setAttr(
      "loop_annotation",
      LLVM::LoopAnnotationAttr::get(
          b.getContext(), {}, {}, {},
          LLVM::LoopUnrollAttr::get(b.getContext(), b.getBoolAttr(true), {}, {},
                                    {}, {}, {}, {}),
          {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}));
  OpBuilder::InsertionGuard guard(b);
  if (inits.empty())
    b.setInsertionPoint(loop.getBody()->getTerminator());
  else
    b.setInsertionPointToStart(loop.getBody());
  SmallVector<Value> acc(loop.getRegionIterArgs());
  SmallVector<Chunk> loaded;
  for (int64_t u = 0; u < unroll; ++u) {
    Value local = arith::AddIOp::create(
        b, arith::AddIOp::create(b, firstLocal, loop.getInductionVar()),
        constI32(u * stride));
    Value col = arith::AddIOp::create(b, start, local);
    Value valid = wholeChunk
                      ? arith::ConstantIntOp::create(b, 1, 1).getResult()
                      : arith::CmpIOp::create(b, arith::CmpIPredicate::slt, col,
                                              vectorEnd())
                            .getResult();
    loaded.push_back(staged
                         ? loadChunk(stage->current(), col, valid, vec, local)
                         : loadChunk(xRow, col, valid, vec));
    if (!together)
      acc = body(loaded.pop_back_val(), acc);
  }
  if (together)
    acc = body(loaded, acc);
  if (!inits.empty())
    scf::YieldOp::create(b, acc);
  return SmallVector<Value>(loop.getResults());
}

void ChunksEmitter::bulkCopyChunkStage(ArrayRef<Value> rowPtrs,
                                       Value stageStart) {
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(emitIfFirstThread());
  Value stageEnd =
      arith::AddIOp::create(b, stageStart, constI32(plan.chunkStaged));
  Value end = arith::MinSIOp::create(b, vectorEnd(), stageEnd);
  Value elements = arith::MaxSIOp::create(
      b, arith::SubIOp::create(b, end, stageStart), constI32(0));
  Value bytes =
      arith::MulIOp::create(b, elements, constI32(byteWidth(plan.inType)));
  SmallVector<int64_t> slots;
  for (auto [slot, rowPtr] : llvm::enumerate(rowPtrs))
    if (rowPtr)
      slots.push_back(slot);
  bulkCopyToShared(
      b, stage->barrier(constI32(0)), bytes,
      [&](int64_t i) {
        Value rowPtr = rowPtrs[slots[i]];
        return LLVM::GEPOp::create(b, rowPtr.getType(), plan.inType, rowPtr,
                                   ValueRange{stageStart},
                                   LLVM::GEPNoWrapFlags::inbounds);
      },
      [&](int64_t i) -> Value {
        if (slots[i] == 0)
          return stage->current();
        return LLVM::GEPOp::create(
            b, sharedPtr, plan.inType, stage->current(),
            ValueRange{constI32(slots[i] * plan.chunkStaged)},
            LLVM::GEPNoWrapFlags::inbounds);
      },
      /*l2Hint=*/Value(), slots.size());
}

SmallVector<Value, 4> ChunksEmitter::exchangeChunk(Value row, Value chunk,
                                                   Value count,
                                                   ValueRange values,
                                                   const ChunkFold &fold,
                                                   unsigned slot, bool last) {
  assert(!values.empty() && values.size() <= size_t(KernelPlan::kChunkValues) &&
         values.size() == fold.identities.size() &&
         "a chunk exchanges at most kChunkValues f32 values");
  // Row r's record starts 128 + r x chunkRecordBytes bytes into the
  // workspace.
  Value recordBytes = arith::ExtUIOp::create(
      b, i64, chunkRecordBytes(b, b.getLoc(), count, group));
  Value counter = LLVM::GEPOp::create(
      b, workspace.getType(), b.getI8Type(), workspace,
      ValueRange{arith::AddIOp::create(
          b, constI64(128), arith::MulIOp::create(b, row, recordBytes))});
  Value firstEntry = LLVM::GEPOp::create(b, workspace.getType(), b.getI8Type(),
                                         counter, ValueRange{constI64(128)});
  // Entry `index` of region `slot + k`.
  auto entry = [&](unsigned k, Value index) {
    Value at = b.createOrFold<arith::AddIOp>(
        b.createOrFold<arith::MulIOp>(count, constI32(slot + k)), index);
    return LLVM::GEPOp::create(b, workspace.getType(), i64, firstEntry,
                               ValueRange{at});
  };
  unsigned words = fold.packed ? 1 : values.size();
  auto pairType = VectorType::get({2}, f32);
  auto pack = [&](Value low, Value high) {
    Value pair = LLVM::PoisonOp::create(b, pairType);
    pair = LLVM::InsertElementOp::create(b, pair, low, constI32(0));
    pair = LLVM::InsertElementOp::create(b, pair, high, constI32(1));
    return LLVM::BitcastOp::create(b, i64, pair).getResult();
  };
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(emitIfFirstThread());
    // A group that gathers (cross-entropy's label logit) fences first: a
    // chunk of the row may write the gathered column (in place) as soon as
    // it sees the entry.
    if (!group.gathers.empty())
      LLVM::FenceOp::create(b, LLVM::AtomicOrdering::release, "device");
    // One relaxed 8-byte store per entry: no reader sees it in part.
    for (unsigned k = 0; k < words; ++k) {
      // The address first, then the word, whatever order the host compiler
      // evaluates arguments in.
      Value address = entry(k, chunk);
      Value word = fold.packed ? pack(values[0], values[1])
                               : pack(values[k], constF32(1.0));
      LLVM::StoreOp::create(b, word, address, /*alignment=*/8,
                            /*isVolatile=*/false, /*isNonTemporal=*/false,
                            /*isInvariantGroup=*/false,
                            LLVM::AtomicOrdering::monotonic, "device");
    }
    // Orders nothing the row relies on, but thread 0 waits there for the
    // entries to reach L2: without it, the row's chunks wait longer for each
    // other (H200, softmax f32 and bf16 rows of 1048576: 1-5% slower at 1 to
    // 256 rows).
    LLVM::FenceOp::create(b, LLVM::AtomicOrdering::release, "device");
  }
  // The row's values, handed from warp 0 to the block in these slots.
  auto resultSlot = [&](size_t i) {
    return SmallVector<Value, 2>{constIndex(KernelPlan::kRowValuesSlot + i),
                                 constIndex(0)};
  };
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(emitIfThen(isWarp0()));
    SmallVector<Value, 4> rowValues =
        fold.acrossLanes(foldEntries(count, words, fold, entry));
    Value isLane0 =
        arith::CmpIOp::create(b, arith::CmpIPredicate::eq, lane, constI32(0));
    auto leave = scf::IfOp::create(b, last ? TypeRange{i32} : TypeRange{},
                                   isLane0, /*withElseRegion=*/last);
    {
      OpBuilder::InsertionGuard inner(b);
      b.setInsertionPointToStart(&leave.getThenRegion().front());
      for (auto [i, v] : llvm::enumerate(rowValues))
        memref::StoreOp::create(b, v, shared, resultSlot(i));
      if (last) {
        // A relaxed add with no fence ahead of it: the lanes' loads of the
        // entries have returned (the butterfly above consumed them) before
        // it issues, and a fence here would hold the whole block for the
        // device's outstanding traffic (it cost 5-11% on rows of 1048576).
        scf::YieldOp::create(b, LLVM::AtomicRMWOp::create(
                                    b, LLVM::AtomicBinOp::add, counter,
                                    constI32(1),
                                    LLVM::AtomicOrdering::monotonic, "device")
                                    .getResult());
        b.setInsertionPointToStart(&leave.getElseRegion().front());
        scf::YieldOp::create(b, constI32(0));
      }
    }
    // The row's last block out zeroes its entries and its counter, so that
    // the whole workspace is zero again for the next launch, whatever its
    // shape (a row's record moves with the chunks per row).
    if (last)
      clearRecordIfLast(leave.getResult(0), count, firstEntry, counter);
  }
  gpu::BarrierOp::create(b);
  SmallVector<Value, 4> results;
  for (size_t i = 0; i < values.size(); ++i)
    results.push_back(memref::LoadOp::create(b, shared, resultSlot(i)));
  return results;
}

void ChunksEmitter::clearRecordIfLast(Value before, Value count,
                                      Value firstEntry, Value counter) {
  OpBuilder::InsertionGuard guard(b);
  Value entries = arith::MulIOp::create(
      b, count, constI32(static_cast<int64_t>(chunkEntries(group))));
  Value lane0Before =
      gpu::ShuffleOp::create(b, before, 0, 32, gpu::ShuffleMode::IDX)
          .getShuffleResult();
  Value last =
      arith::CmpIOp::create(b, arith::CmpIPredicate::eq, lane0Before,
                            arith::SubIOp::create(b, count, constI32(1)));
  b.setInsertionPointToStart(emitIfThen(last));
  LLVM::FenceOp::create(b, LLVM::AtomicOrdering::acq_rel, "device");
  auto clear = scf::ForOp::create(b, lane, entries, constI32(32));
  {
    OpBuilder::InsertionGuard inner(b);
    b.setInsertionPoint(clear.getBody()->getTerminator());
    LLVM::StoreOp::create(b, constI64(0),
                          LLVM::GEPOp::create(b, workspace.getType(), i64,
                                              firstEntry,
                                              clear.getInductionVar()),
                          /*alignment=*/8);
  }
  b.setInsertionPointToStart(emitIfThen(
      arith::CmpIOp::create(b, arith::CmpIPredicate::eq, lane, constI32(0))));
  LLVM::StoreOp::create(b, constI32(0), counter, /*alignment=*/4);
}

SmallVector<Value>
ChunksEmitter::foldEntries(Value count, unsigned words, const ChunkFold &fold,
                           function_ref<Value(unsigned, Value)> entry) {
  OpBuilder::InsertionGuard guard(b);
  // The warp takes 32 chunks a step, once all of them are in: one uniform
  // loop.
  SmallVector<Value> inits = {constI32(0)};
  llvm::append_range(inits, fold.identities);
  SmallVector<Type> types(inits.size(), f32);
  types[0] = i32;
  SmallVector<Location> locs(inits.size(), b.getLoc());
  auto poll = scf::WhileOp::create(b, types, inits);
  Block *before = b.createBlock(&poll.getBefore(), {}, types, locs);
  scf::ConditionOp::create(b,
                           arith::CmpIOp::create(b, arith::CmpIPredicate::ult,
                                                 before->getArgument(0), count),
                           before->getArguments());
  Block *after = b.createBlock(&poll.getAfter(), {}, types, locs);
  Value base = after->getArgument(0);
  ValueRange acc = after->getArguments().drop_front();
  Value index = arith::AddIOp::create(b, base, lane);
  Value inside =
      arith::CmpIOp::create(b, arith::CmpIPredicate::ult, index, count);
  // A lane past the row's last chunk reads the last one and keeps its
  // values.
  Value at = arith::MinUIOp::create(
      b, index, arith::SubIOp::create(b, count, constI32(1)));
  auto pairType = VectorType::get({2}, f32);
  SmallVector<Value, 2> entryValues;
  Value in;
  for (unsigned k = 0; k < words; ++k) {
    Value word =
        atomicLoad(i64, entry(k, at), 8, LLVM::AtomicOrdering::monotonic);
    Value set =
        arith::CmpIOp::create(b, arith::CmpIPredicate::ne, word, constI64(0));
    in = in ? arith::AndIOp::create(b, in, set).getResult() : set;
    Value pair = LLVM::BitcastOp::create(b, pairType, word);
    for (unsigned i = 0, e = fold.packed ? 2 : 1; i < e; ++i)
      entryValues.push_back(
          LLVM::ExtractElementOp::create(b, pair, constI32(i)));
  }
  Value ready = NVVM::VoteSyncOp::create(b, b.getI1Type(), constI32(-1), in,
                                         NVVM::VoteSyncKind::all);
  SmallVector<Value> next = {arith::SelectOp::create(
      b, ready, arith::AddIOp::create(b, base, constI32(32)), base)};
  Value take = arith::AndIOp::create(b, ready, inside);
  for (auto [folded, old] : llvm::zip_equal(fold.step(acc, entryValues), acc))
    next.push_back(arith::SelectOp::create(b, take, folded, old));
  {
    OpBuilder::InsertionGuard inner(b);
    b.setInsertionPointToStart(emitIfThen(arith::XOrIOp::create(
        b, ready, arith::ConstantIntOp::create(b, 1, 1))));
    NVVM::NanosleepOp::create(b, constI32(kChunkPollNanoseconds));
  }
  scf::YieldOp::create(b, next);
  return SmallVector<Value>(poll.getResults().drop_front());
}

Value ChunksEmitter::atomicLoad(Type type, Value ptr, unsigned alignment,
                                LLVM::AtomicOrdering ordering) {
  return LLVM::LoadOp::create(b, type, ptr, alignment, /*isVolatile=*/false,
                              /*isNonTemporal=*/false, /*isInvariant=*/false,
                              /*isInvariantGroup=*/false, ordering, "device");
}
