//===- OnlineEmitter.cpp - The online kernel's two passes -----------------===//
//
// Part of the softmax kernel compiler.
//
//===----------------------------------------------------------------------===//

#include "OnlineEmitter.h"

#include "llvm/Support/SaveAndRestore.h"

using namespace mlir;
using namespace mlir::rowred;

SmallVector<Value> OnlineEmitter::startRowLoop(const RowLoopForm &form,
                                               Value first, int64_t vec) {
  keepAheadRow = form.keepsAhead;
  // The two exclude each other (RowLoopForm::tileAhead).
  if (!keepAheadRow && !form.tileAhead)
    return {};
  auto [lo, hi] = onlineShare();
  if (form.tileAhead)
    return loadFirstTile(first, lo, hi, vec);
  if (plan.bulkKeep)
    bulkCopyKeptTiles(first, constI32(0), lo, hi);
  else
    copyKeptTiles(first, lo, hi);
  return {};
}

SmallVector<Value> OnlineEmitter::emitLoopRow(const RowLoopForm &form,
                                              Value row, Value step, Value xRow,
                                              Value yRow, int64_t vec,
                                              bool peeled, ValueRange carried) {
  if (keepAheadRow)
    keepAheadNextRow = arith::AddIOp::create(b, row, step);
  if (form.tileAhead) {
    NextTile next{row, step};
    return emitOnlineRow(xRow, yRow, vec, Value(), peeled, carried, &next);
  }
  if (plan.streamsLevels()) {
    emitRowPasses(xRow, yRow, vec);
    return {};
  }
  return emitOnlineRow(
      xRow, yRow, vec,
      form.staged ? arith::AddIOp::create(b, row, step) : Value(), peeled);
}

void OnlineEmitter::prefetchRow(Value row) {
  // Not a structured binding: a lambda capturing one is C++20.
  Value lo, hi;
  std::tie(lo, hi) = onlineShare();
  ifRowExists(row, [&](Value xRow) { copyTilesToStage(xRow, lo, hi, lo, hi); });
  NVVM::CpAsyncCommitGroupOp::create(b);
}

void OnlineEmitter::bulkCopyKeptTiles(Value row, Value buffer, Value lo,
                                      Value hi) {
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(emitIfFirstThread());
  b.setInsertionPointToStart(emitIfThen(
      arith::CmpIOp::create(b, arith::CmpIPredicate::slt, row, rows)));
  Value bytes = arith::MulIOp::create(
      b, arith::SubIOp::create(b, keptEnd(b, plan, lo, hi), lo),
      constI32(byteWidth(plan.inType)));
  bulkCopyToShared(
      b, stage->barrier(buffer), bytes,
      [&](int64_t) {
        return LLVM::GEPOp::create(b, x.getType(), plan.inType,
                                   rowPointer(x, plan.inType, row, xStride),
                                   ValueRange{lo},
                                   LLVM::GEPNoWrapFlags::inbounds);
      },
      [&](int64_t) { return stage->buffer(buffer); }, evictFirst);
}

void OnlineEmitter::copyNextRowKeptTiles() {
  if (plan.threadsPerRow() <= 32)
    gpu::BarrierOp::create(b);
  auto [lo, hi] = onlineShare();
  bulkCopyKeptTiles(keepAheadNextRow,
                    arith::XOrIOp::create(b, stage->rowBuffer(), constI32(1)),
                    lo, hi);
}

SmallVector<Value> OnlineEmitter::loadOnlineTileAhead(Value xRow, Value start,
                                                      Value end, int64_t vec,
                                                      Value exists) {
  SmallVector<Value> raw;
  for (const ChunkPlace &place : chunkPlaces(start, vec, 0, end))
    raw.push_back(loadRaw(xRow, place.col,
                          exists ? arith::AndIOp::create(b, place.valid, exists)
                                 : place.valid,
                          vec));
  return raw;
}

SmallVector<Value> OnlineEmitter::loadFirstTile(Value row, Value lo, Value hi,
                                                int64_t vec) {
  llvm::SaveAndRestore<Value> policy(loadPolicy, evictLast);
  Value exists = arith::CmpIOp::create(b, arith::CmpIPredicate::slt, row, rows);
  return loadOnlineTileAhead(rowPointer(x, plan.inType, row, xStride), lo, hi,
                             vec, exists);
}

SmallVector<Chunk> OnlineEmitter::unpackOnlineTile(Value start, Value end,
                                                   int64_t vec,
                                                   ValueRange raw) {
  SmallVector<Chunk> chunks;
  for (auto [place, loaded] :
       llvm::zip_equal(chunkPlaces(start, vec, 0, end), raw))
    chunks.push_back(unpackChunk(place.col, place.valid, loaded));
  return chunks;
}

SmallVector<Value> OnlineEmitter::loadShareTile(Value xRow, Value start,
                                                Value lo, Value end,
                                                int64_t vec, Value exists) {
  if (!readsKeptTiles(plan, keepAheadRow))
    return loadOnlineTileAhead(xRow, start, end, vec, exists);
  Value kept = isKeptTile(b, plan, start, lo, end, keepAheadRow);
  SmallVector<Type> types(plan.elementsPerThread() / vec, rawType(vec));
  auto ifOp = scf::IfOp::create(b, types, kept, /*withElseRegion=*/true);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&ifOp.getThenRegion().front());
  SmallVector<Value> fromStage;
  for (const ChunkPlace &place : chunkPlaces(start, vec, 0, end)) {
    Value stageCol = arith::SubIOp::create(b, place.col, lo);
    Value valid = arith::AndIOp::create(b, place.valid, exists);
    fromStage.push_back(
        loadRaw(stage->current(), place.col, valid, vec, stageCol));
  }
  scf::YieldOp::create(b, fromStage);
  b.setInsertionPointToStart(&ifOp.getElseRegion().front());
  scf::YieldOp::create(b, loadOnlineTileAhead(xRow, start, end, vec, exists));
  return SmallVector<Value>(ifOp.getResults());
}

void OnlineEmitter::keepTile(Value start, Value lo, Value end, int64_t vec,
                             ValueRange raw) {
  auto ifOp =
      scf::IfOp::create(b, isKeptTile(b, plan, start, lo, end, keepAheadRow),
                        /*withElseRegion=*/false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&ifOp.getThenRegion().front());
  for (auto [place, loaded] :
       llvm::zip_equal(chunkPlaces(start, vec, 0, end), raw)) {
    auto store = scf::IfOp::create(b, place.valid, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard inner(b);
    b.setInsertionPointToStart(&store.getThenRegion().front());
    LLVM::StoreOp::create(
        b, loaded, stage->address(arith::SubIOp::create(b, place.col, lo)),
        vec * byteWidth(plan.inType));
  }
}

void OnlineEmitter::copyKeptTiles(Value row, Value lo, Value hi) {
  auto loop = scf::ForOp::create(b, lo, keptEnd(b, plan, lo, hi),
                                 constI32(plan.blockElements));
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(loop.getBody()->getTerminator());
  copyToStage(row, loop.getInductionVar(), lo, hi);
}

SmallVector<Value> OnlineEmitter::emitOnlineRow(Value xRow, Value yRow,
                                                int64_t vec, Value nextRow,
                                                bool peeled,
                                                ValueRange firstTile,
                                                const NextTile *next) {
  OnlineShare share =
      onlineRowShare(xRow, vec, peeled, static_cast<bool>(nextRow));
  DenseMap<Value, Value> inputs = rowInputScalars();
  if (share.staged)
    NVVM::CpAsyncWaitGroupOp::create(b, 0);
  SmallVector<Value> lastTile;
  bool chain = onlineChainsTiles(plan, share.staged, vec);
  auto [m, d] =
      onlinePassOne(xRow, vec, share, firstTile, chain ? &lastTile : nullptr);
  std::tie(m, d) = reduction->reducePairInBlock(m, d, pairSlot);
  if (bulkRowBuffer())
    copyNextRowKeptTiles();
  auto [rowMax, rowSum] = reduction->reducePairAcrossBlocks(m, d);
  DenseMap<Value, Value> scalars = onlineScalars(inputs, rowMax, rowSum);
  if (!group.rowOutputs.empty() || !group.totals.empty()) {
    RowContext ctx = prepareMap(scalars);
    storeRowOutputs(ctx);
  }
  if (group.outputs.empty())
    return {};
  return onlinePassTwo(xRow, yRow, vec, share, scalars, nextRow, lastTile,
                       next);
}

OnlineShare OnlineEmitter::onlineRowShare(Value xRow, int64_t vec, bool peeled,
                                          bool staged) {
  OnlineShare share;
  share.staged = staged;
  std::tie(share.lo, share.hi) = onlineShare();
  if (peeled) {
    PeeledRow row = peelRow(xRow, vec);
    share.lo = arith::AddIOp::create(b, share.lo, row.head);
    share.hi = arith::MinUIOp::create(
        b, arith::AddIOp::create(b, share.hi, row.head), row.vectorEnd);
    share.lo = arith::MinUIOp::create(b, share.lo, share.hi);
    // The copies are in flight while the edges load.
    if (plan.prefetch) {
      stageShare(xRow, share.lo, share.hi);
      share.staged = true;
    }
    share.edges = loadEdges(xRow, row, vec, /*oneList=*/true);
  }
  return share;
}

std::pair<Value, Value>
OnlineEmitter::onlinePassOne(Value xRow, int64_t vec, const OnlineShare &share,
                             ValueRange firstTile,
                             SmallVector<Value> *lastTile) {
  bool staged = share.staged;
  Value tile = constI32(plan.blockElements);
  Value lo = share.lo, hi = share.hi;
  Value m0 = negInf(), d0 = constF32(0.0);
  if (!share.edges.empty())
    std::tie(m0, d0) = onlineFold(m0, d0, share.edges);
  bool ahead = onlineTilesAhead(plan, staged, vec);
  bool keep = onlineKeeps(plan, staged, vec);
  llvm::SaveAndRestore<Value> policy(loadPolicy, evictLast);
  // Folds the tile at column `start`, loaded as `raw`, into (m, d).
  auto foldTile = [&](Value start, Value m, Value d, ValueRange raw) {
    if (keep)
      keepTile(start, lo, hi, vec, raw);
    return onlineFold(m, d, unpackOnlineTile(start, hi, vec, raw));
  };
  // The first column of the loop.
  Value from = lo;
  SmallVector<Value> firstLoads(firstTile);
  if (keepAheadRow) {
    assert(ahead && lastTile && firstTile.empty() &&
           "keep_ahead chains its streamed tiles");
    from = keptEnd(b, plan, lo, hi);
    firstLoads = loadOnlineTileAhead(xRow, from, hi, vec);
    if (bulkRowBuffer())
      waitForPhase(b, stage->barrier(bulkRowBuffer()), stage->rowParity());
    else
      NVVM::CpAsyncWaitGroupOp::create(b, 0);
    auto kept = scf::ForOp::create(b, lo, from, tile, ValueRange{m0, d0});
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(kept.getBody());
      auto [m, d] =
          onlineFold(kept.getRegionIterArg(0), kept.getRegionIterArg(1),
                     loadOnlineTile(xRow, kept.getInductionVar(), lo, vec,
                                    /*fromStage=*/true, hi));
      scf::YieldOp::create(b, ValueRange{m, d});
    }
    m0 = kept.getResult(0);
    d0 = kept.getResult(1);
  }
  SmallVector<Value> inits{m0, d0};
  if (ahead)
    llvm::append_range(inits, firstLoads.empty()
                                  ? loadOnlineTileAhead(xRow, from, hi, vec)
                                  : firstLoads);
  // The loop's end: hi, or the start of the last tile when that tile is
  // folded after the loop (`from` for an empty share, whose loads are
  // masked).
  Value end = hi;
  if (lastTile)
    end = arith::AddIOp::create(
        b, from,
        arith::MulIOp::create(
            b, tilesBeforeLast(b, shareTiles(b, plan, from, hi)), tile));
  auto pass1 = scf::ForOp::create(b, from, end, tile, inits);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(pass1.getBody());
    Value m = pass1.getRegionIterArg(0), d = pass1.getRegionIterArg(1);
    Value start = pass1.getInductionVar();
    SmallVector<Value> yields;
    std::pair<Value, Value> folded;
    if (ahead) {
      yields = loadOnlineTileAhead(xRow, arith::AddIOp::create(b, start, tile),
                                   hi, vec);
      folded = foldTile(start, m, d, pass1.getRegionIterArgs().drop_front(2));
    } else if (keep) {
      folded = foldTile(start, m, d, loadOnlineTileAhead(xRow, start, hi, vec));
    } else {
      folded =
          onlineFold(m, d, loadOnlineTile(xRow, start, lo, vec, staged, hi));
    }
    yields.insert(yields.begin(), {folded.first, folded.second});
    scf::YieldOp::create(b, yields);
  }
  if (!lastTile)
    return {pass1.getResult(0), pass1.getResult(1)};
  *lastTile = llvm::to_vector_of<Value>(pass1.getResults().drop_front(2));
  return foldTile(end, pass1.getResult(0), pass1.getResult(1), *lastTile);
}

SmallVector<Value>
OnlineEmitter::onlinePassTwo(Value xRow, Value yRow, int64_t vec,
                             const OnlineShare &share,
                             DenseMap<Value, Value> &scalars, Value nextRow,
                             ValueRange lastTile, const NextTile *nextTile) {
  Value tile = constI32(plan.blockElements);
  Value lo = share.lo, hi = share.hi;
  bool staged = share.staged;
  bool ahead = onlineTilesAhead(plan, staged, vec);
  bool keep = onlineKeeps(plan, staged, vec);
  assert((lastTile.empty() || (ahead && plan.reverseSecondPass)) &&
         "pass 1's last tile is pass 2's first only in reverse");
  assert((!nextTile || (ahead && !keep && plan.reverseSecondPass)) &&
         "the next row's first tile follows a reversed pass 2");
  Value numTiles = shareTiles(b, plan, lo, hi);
  llvm::SaveAndRestore<Value> loads(loadPolicy, evictFirst),
      stores(storePolicy, evictFirst);
  // The first column of the tile of pass 2's iteration `i`.
  auto tileStart = [&](Value i) {
    if (plan.reverseSecondPass)
      i = arith::SubIOp::create(
          b, arith::SubIOp::create(b, numTiles, constI32(1)), i);
    return arith::AddIOp::create(b, lo, arith::MulIOp::create(b, i, tile));
  };
  // Writes the map of the tile at column `start` from its `chunks`.
  auto writeTile = [&](Value start, ArrayRef<Chunk> chunks) {
    // Prepared inside the tile loop; LLVM hoists the row-uniform part (one
    // reciprocal per row in the PTX).
    RowContext ctx = prepareMap(scalars);
    emitMap(yRow, chunks, ctx);
    // Each thread refills exactly the stage entries it has just read and
    // used, so nothing waits for the other threads.
    if (nextRow)
      copyToStage(nextRow, start, lo);
    // With keep_ahead, the same for the kept tiles: the next row's copies
    // are in flight through the rest of this row.
    if (keepAheadRow && !bulkRowBuffer()) {
      auto ifOp =
          scf::IfOp::create(b, isKeptTile(b, plan, start, lo, hi, keepAheadRow),
                            /*withElseRegion=*/false);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(&ifOp.getThenRegion().front());
      copyToStage(keepAheadNextRow, start, lo, hi);
    }
  };
  SmallVector<Value> inits2(lastTile.begin(), lastTile.end());
  if (ahead && lastTile.empty()) {
    Value any = arith::CmpIOp::create(b, arith::CmpIPredicate::sgt, numTiles,
                                      constI32(0));
    inits2 = loadShareTile(xRow, tileStart(constI32(0)), lo, hi, vec, any);
  }
  // With `nextTile`, the loop leaves out the last iteration (none for an
  // empty share).
  Value loopTiles = nextTile ? tilesBeforeLast(b, numTiles) : numTiles;
  auto pass2 =
      scf::ForOp::create(b, constI32(0), loopTiles, constI32(1), inits2);
  {
    OpBuilder::InsertionGuard guard(b);
    if (ahead) {
      b.setInsertionPointToStart(pass2.getBody());
      scf::YieldOp::create(b, pass2.getRegionIterArgs());
    }
    b.setInsertionPoint(pass2.getBody()->getTerminator());
    Value start = tileStart(pass2.getInductionVar());
    SmallVector<Chunk> chunks;
    if (ahead) {
      Value next =
          arith::AddIOp::create(b, pass2.getInductionVar(), constI32(1));
      Value exists =
          arith::CmpIOp::create(b, arith::CmpIPredicate::slt, next, numTiles);
      SmallVector<Value> raw =
          loadShareTile(xRow, tileStart(next), lo, hi, vec, exists);
      pass2.getBody()->getTerminator()->setOperands(raw);
      chunks = unpackOnlineTile(start, hi, vec, pass2.getRegionIterArgs());
    } else if (keep) {
      chunks = unpackOnlineTile(
          start, hi, vec,
          loadShareTile(xRow, start, lo, hi, vec,
                        arith::ConstantIntOp::create(b, 1, 1)));
    } else {
      chunks = loadOnlineTile(xRow, start, lo, vec, staged, hi);
    }
    writeTile(start, chunks);
  }
  SmallVector<Value> nextLoads;
  if (nextTile) {
    nextLoads = loadFirstTile(
        arith::AddIOp::create(b, nextTile->row, nextTile->step), lo, hi, vec);
    writeTile(lo, unpackOnlineTile(lo, hi, vec, pass2.getResults()));
  }
  if (!share.edges.empty()) {
    RowContext ctx = prepareMap(scalars);
    emitMap(yRow, share.edges, ctx);
  }
  return nextLoads;
}
