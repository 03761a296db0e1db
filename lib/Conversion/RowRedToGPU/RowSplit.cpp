//===- RowSplit.cpp - Rows split over blocks ------------------------------===//
//
// Part of the softmax kernel compiler.
//
//===----------------------------------------------------------------------===//

#include "KernelEmitter.h"

using namespace mlir;
using namespace mlir::rowred;

Value KernelEmitter::workspaceAt(Value offset) {
  Value groupOffset =
      arith::MulIOp::create(b, arith::ExtUIOp::create(b, i64, splitGroup),
                            constI64(plan.workspaceBytesPerGroup()));
  return LLVM::GEPOp::create(
      b, workspace.getType(), b.getI8Type(), workspace,
      ValueRange{arith::AddIOp::create(
          b, groupOffset, arith::ExtUIOp::create(b, i64, offset))});
}

std::pair<Value, Value> KernelEmitter::splitReducePair(Value m, Value d,
                                                       Value step) {
  publishSplitPair(m, d, step);
  return gatherSplitPair(step);
}

Value KernelEmitter::splitEntry(Value step, Value index) {
  Value entry = arith::AddIOp::create(
      b, arith::MulIOp::create(b, splitBuffer(step), constI32(plan.splitSize)),
      index);
  return workspaceAt(
      arith::AddIOp::create(b, constI32(plan.entriesOffset()),
                            arith::MulIOp::create(b, entry, constI32(8))));
}

Value KernelEmitter::splitCounter(Value step) {
  return workspaceAt(arith::AddIOp::create(
      b, constI32(KernelPlan::kArrivalsOffset),
      arith::MulIOp::create(b, splitBuffer(step), constI32(4))));
}

Value KernelEmitter::splitBuffer(Value step) {
  return arith::AndIOp::create(b, step, constI32(plan.splitBuffers() - 1));
}

void KernelEmitter::publishSplitPair(Value m, Value d, Value step) {
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(emitIfFirstThread());
  publishPair(
      m, d, [&] { return splitEntry(step, shareRank); },
      [&] { return splitCounter(step); });
}

void KernelEmitter::publishPair(Value m, Value d, function_ref<Value()> entry,
                                function_ref<Value()> counter) {
  auto pairType = VectorType::get({2}, f32);
  Value pair = LLVM::PoisonOp::create(b, pairType);
  pair = LLVM::InsertElementOp::create(b, pair, m, constI32(0));
  pair = LLVM::InsertElementOp::create(b, pair, d, constI32(1));
  LLVM::StoreOp::create(b, LLVM::BitcastOp::create(b, i64, pair), entry(),
                        /*alignment=*/8);
  // A release fence, then a relaxed add: the NVPTX backend of LLVM 22
  // drops the ordering of an atomicrmw (plain atom.global.add).
  LLVM::FenceOp::create(b, LLVM::AtomicOrdering::release, "device");
  LLVM::AtomicRMWOp::create(b, LLVM::AtomicBinOp::add, counter(), constI32(1),
                            LLVM::AtomicOrdering::monotonic, "device");
}

std::pair<Value, Value> KernelEmitter::gatherSplitPair(Value step) {
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(emitIfFirstThread());
    waitForSplitRow(step);
  }
  gpu::BarrierOp::create(b);
  // One warp reads the entries: with every warp of every block reading
  // them, groups as wide as the chip (132 blocks of 32 warps) sent
  // megabytes per row to the few L2 lines of a buffer.
  if (plan.numWarps == 1)
    return foldSplitEntries(step);
  OpBuilder::InsertionGuard guard(b);
  {
    OpBuilder::InsertionGuard inner(b);
    b.setInsertionPointToStart(emitIfThen(isWarp0()));
    auto [m, d] = foldSplitEntries(step);
    publishPerWarp({m, d}, 0, /*barrier=*/false);
  }
  gpu::BarrierOp::create(b);
  Value first = arith::ConstantIndexOp::create(b, 0);
  return {
      memref::LoadOp::create(b, shared, ValueRange{first, first}),
      memref::LoadOp::create(
          b, shared, ValueRange{arith::ConstantIndexOp::create(b, 1), first})};
}

void KernelEmitter::waitForSplitRow(Value step) {
  OpBuilder::InsertionGuard guard(b);
  Value counter = splitCounter(step);
  int64_t buffers = plan.splitBuffers();
  Value target = arith::MulIOp::create(
      b,
      arith::AddIOp::create(
          b, arith::ShRUIOp::create(b, step, constI32(llvm::Log2_64(buffers))),
          constI32(1)),
      constI32(plan.splitSize));
  auto loop = scf::WhileOp::create(b, TypeRange(), ValueRange());
  b.setInsertionPointToStart(b.createBlock(&loop.getBefore()));
  Value arrived = atomicLoad(i32, counter, 4, LLVM::AtomicOrdering::acquire);
  // arrived - target < 0 as a signed difference: the counter wraps
  // around after 2^32 / splitSize uses, and never strays more than
  // splitSize x (splitAhead + 1) from the target.
  scf::ConditionOp::create(
      b,
      arith::CmpIOp::create(b, arith::CmpIPredicate::slt,
                            arith::SubIOp::create(b, arrived, target),
                            constI32(0)),
      ValueRange());
  b.setInsertionPointToStart(b.createBlock(&loop.getAfter()));
  scf::YieldOp::create(b);
}

std::pair<Value, Value> KernelEmitter::foldSplitEntries(Value step) {
  int64_t size = plan.splitSize;
  auto pairType = VectorType::get({2}, f32);
  Value m, d;
  for (int64_t first = 0; first < size; first += 32) {
    Value index = arith::AddIOp::create(b, lane, constI32(first));
    Value inRange = arith::CmpIOp::create(b, arith::CmpIPredicate::ult, index,
                                          constI32(size));
    Value loaded =
        atomicLoad(i64,
                   splitEntry(step, arith::SelectOp::create(b, inRange, index,
                                                            constI32(0))),
                   8, LLVM::AtomicOrdering::monotonic);
    Value pair = LLVM::BitcastOp::create(b, pairType, loaded);
    Value em = arith::SelectOp::create(
        b, inRange, LLVM::ExtractElementOp::create(b, pair, constI32(0)),
        negInf());
    Value ed = arith::SelectOp::create(
        b, inRange, LLVM::ExtractElementOp::create(b, pair, constI32(1)),
        constF32(0.0));
    if (first == 0) {
      std::tie(m, d) = std::make_pair(em, ed);
      continue;
    }
    Value mAll = combine(Combiner::max, m, em);
    d = arith::AddFOp::create(b, rescale(m, d, mAll), rescale(em, ed, mAll));
    m = mAll;
  }
  return butterflyPair(m, d, 32);
}

Value KernelEmitter::atomicLoad(Type type, Value ptr, unsigned alignment,
                                LLVM::AtomicOrdering ordering) {
  return LLVM::LoadOp::create(b, type, ptr, alignment, /*isVolatile=*/false,
                              /*isNonTemporal=*/false, /*isInvariant=*/false,
                              /*isInvariantGroup=*/false, ordering, "device");
}

void KernelEmitter::leaveSplitGroup() {
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(emitIfFirstThread());
  Value exits = workspaceAt(constI32(KernelPlan::kExitsOffset));
  // Fences around a relaxed add, as in splitReducePair.
  LLVM::FenceOp::create(b, LLVM::AtomicOrdering::acq_rel, "device");
  Value before =
      LLVM::AtomicRMWOp::create(b, LLVM::AtomicBinOp::add, exits, constI32(1),
                                LLVM::AtomicOrdering::monotonic, "device");
  LLVM::FenceOp::create(b, LLVM::AtomicOrdering::acq_rel, "device");
  Value last = arith::CmpIOp::create(b, arith::CmpIPredicate::eq, before,
                                     constI32(plan.splitSize - 1));
  b.setInsertionPointToStart(emitIfThen(last));
  LLVM::StoreOp::create(b, constI32(0), exits, /*alignment=*/4);
  for (int64_t buffer = 0; buffer < plan.splitBuffers(); ++buffer)
    LLVM::StoreOp::create(b, constI32(0), splitCounter(constI32(buffer)),
                          /*alignment=*/4);
  // The entries too: the counters gate every read of them, but a workspace
  // handed on to a kernel of another layout must be all zero.
  auto loop = scf::ForOp::create(
      b, constIndex(0), constIndex(plan.splitBuffers() * plan.splitSize),
      constIndex(1));
  b.setInsertionPointToStart(loop.getBody());
  Value entry =
      arith::IndexCastOp::create(b, i32, loop.getInductionVar()).getResult();
  Value offset =
      arith::AddIOp::create(b, constI32(plan.entriesOffset()),
                            arith::MulIOp::create(b, entry, constI32(8)));
  LLVM::StoreOp::create(b, constI64(0), workspaceAt(offset), /*alignment=*/8);
}

void KernelEmitter::emitSplitAheadLoop(Value first, Value step, int64_t vec,
                                       bool peeled) {
  // The group's rows: ceil((rows - first) / step), none past the last.
  Value left =
      arith::SubIOp::create(b, rows, arith::MinSIOp::create(b, rows, first));
  Value count = arith::CeilDivUIOp::create(b, left, step);
  OpBuilder::InsertionGuard guard(b);
  if (plan.pipelinesSplit() && vec > 1 && !peeled) {
    // Shares of one tile at most: ceil(N / S) <= tile (onlineShare).
    Value fits =
        arith::CmpIOp::create(b, arith::CmpIPredicate::ule, cols,
                              constI32(plan.splitSize * plan.blockElements));
    auto ifOp = scf::IfOp::create(b, fits, /*withElseRegion=*/true);
    b.setInsertionPointToStart(&ifOp.getThenRegion().front());
    emitSplitPipelinedLoop(first, step, count, vec);
    b.setInsertionPointToStart(&ifOp.getElseRegion().front());
  }
  Value ahead = constI64(plan.splitAhead);
  Value j = emitSplitStepLoop(count, ahead);
  {
    OpBuilder::InsertionGuard inner(b);
    b.setInsertionPointToStart(emitIfThen(
        arith::CmpIOp::create(b, arith::CmpIPredicate::ult, j, count)));
    Value xRow = rowPointer(x, plan.inType, splitRow(first, step, j), xStride);
    OnlineShare share = onlineRowShare(xRow, vec, peeled);
    auto [m, d] = onlinePassOne(xRow, vec, share, /*staged=*/false);
    std::tie(m, d) = blockReducePair(m, d, /*acrossSplit=*/false);
    publishSplitPair(m, d, arith::TruncIOp::create(b, i32, j));
  }
  {
    OpBuilder::InsertionGuard inner(b);
    b.setInsertionPointToStart(emitIfThen(
        arith::CmpIOp::create(b, arith::CmpIPredicate::uge, j, ahead)));
    Value k = arith::SubIOp::create(b, j, ahead);
    Value row = splitRow(first, step, k);
    auto [m, d] = gatherSplitPair(arith::TruncIOp::create(b, i32, k));
    Value xRow = rowPointer(x, plan.inType, row, xStride);
    Value yRow = rowPointer(y, plan.outType, row, yStride);
    OnlineShare share = onlineRowShare(xRow, vec, peeled);
    onlinePassTwo(xRow, yRow, vec, share, m, d, /*nextRow=*/Value());
  }
  // The next iteration's block exchange writes the shared slots that this
  // one's read.
  if (plan.exchangesPerRow(group.reduces.size()) == 1)
    gpu::BarrierOp::create(b);
}

void KernelEmitter::emitSplitPipelinedLoop(Value first, Value step, Value count,
                                           int64_t vec) {
  OpBuilder::InsertionGuard guard(b);
  Value ahead = constI64(plan.splitAhead);
  Value j = emitSplitStepLoop(count, ahead);
  Value passOne = arith::CmpIOp::create(b, arith::CmpIPredicate::ult, j, count);
  Value passTwo = arith::CmpIOp::create(b, arith::CmpIPredicate::uge, j, ahead);
  // Row number k = j - A, clamped to 0 while it does not exist yet.
  Value k = arith::SelectOp::create(
      b, passTwo, arith::SubIOp::create(b, j, ahead), constI64(0));
  Value xRow = rowPointer(x, plan.inType, splitRow(first, step, j), xStride);
  Value xDone = rowPointer(x, plan.inType, splitRow(first, step, k), xStride);
  Value yDone = rowPointer(y, plan.outType, splitRow(first, step, k), yStride);
  Value j32 = arith::TruncIOp::create(b, i32, j);
  Value k32 = arith::TruncIOp::create(b, i32, k);
  auto [lo, hi] = onlineShare();
  loadPolicy = evictLast;
  SmallVector<Value> raw = loadOnlineTileAhead(xRow, lo, hi, vec, passOne);
  loadPolicy = evictFirst;
  SmallVector<Value> rawDone = loadOnlineTileAhead(xDone, lo, hi, vec, passTwo);
  loadPolicy = Value();
  // The group's pair of row k, in the last two shared slots of warp 0.
  int64_t slots = plan.sharedSlots(group.reduces.size());
  Value maxSlot = constIndex(slots - 2), sumSlot = constIndex(slots - 1);
  {
    OpBuilder::InsertionGuard inner(b);
    b.setInsertionPointToStart(
        emitIfThen(arith::AndIOp::create(b, passTwo, isWarp0())));
    {
      OpBuilder::InsertionGuard spin(b);
      b.setInsertionPointToStart(emitIfFirstThread());
      waitForSplitRow(k32);
    }
    // Orders lane 0's acquire before the other lanes' reads.
    NVVM::SyncWarpOp::create(b, constI32(-1));
    auto [m, d] = foldSplitEntries(k32);
    b.setInsertionPointToStart(emitIfThen(
        arith::CmpIOp::create(b, arith::CmpIPredicate::eq, lane, constI32(0))));
    memref::StoreOp::create(b, m, shared, ValueRange{maxSlot, constIndex(0)});
    memref::StoreOp::create(b, d, shared, ValueRange{sumSlot, constIndex(0)});
  }
  auto [m, d] =
      onlineFold(negInf(), constF32(0.0), unpackOnlineTile(lo, hi, vec, raw));
  // Its barrier also orders warp 0's stores before the reads below.
  std::tie(m, d) = blockReducePair(m, d, /*acrossSplit=*/false);
  Value rowMax =
      memref::LoadOp::create(b, shared, ValueRange{maxSlot, constIndex(0)});
  Value rowSum =
      memref::LoadOp::create(b, shared, ValueRange{sumSlot, constIndex(0)});
  {
    OpBuilder::InsertionGuard inner(b);
    b.setInsertionPointToStart(emitIfThen(passOne));
    publishSplitPair(m, d, j32);
  }
  {
    OpBuilder::InsertionGuard inner(b);
    b.setInsertionPointToStart(emitIfThen(passTwo));
    DenseMap<Value, Value> scalars = onlineScalars(rowMax, rowSum);
    RowContext ctx = prepareMap(scalars);
    storePolicy = evictFirst;
    emitMap(yDone, unpackOnlineTile(lo, hi, vec, rawDone), ctx);
    storePolicy = Value();
  }
  // The next iteration's warp 0 and block exchange write the shared slots
  // that this one read.
  gpu::BarrierOp::create(b);
}

Value KernelEmitter::emitSplitStepLoop(Value count, Value ahead) {
  auto loop = scf::ForOp::create(
      b, constI64(0), arith::AddIOp::create(b, count, ahead), constI64(1));
  b.setInsertionPoint(loop.getBody()->getTerminator());
  return loop.getInductionVar();
}

Value KernelEmitter::splitRow(Value first, Value step, Value n) {
  return arith::AddIOp::create(b, first, arith::MulIOp::create(b, n, step));
}
