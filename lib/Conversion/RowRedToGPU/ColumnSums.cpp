//===- ColumnSums.cpp - Sums down the columns of a kernel's rows ----------===//
//
// Part of the softmax kernel compiler.
//
// As KernelEmitter, every op is created in a statement of its own, so that
// the ops land in the same order under every host compiler.
//
//===----------------------------------------------------------------------===//

#include "ColumnSums.h"
#include "KernelValues.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::rowred;

/// Partial rows a warp's lane loads before it adds them, in their order.
static constexpr int64_t kPartialsInFlight = 4;
/// Nanoseconds a block waiting at the grid barrier sleeps between polls.
static constexpr int64_t kGridBarrierPollNanoseconds = 64;

ColumnSums::ColumnSums(ImplicitLocOpBuilder &b, ArrayRef<Value> outputs,
                       ArrayRef<Type> types, unsigned numTotals,
                       Value accumulators, int64_t blockElements,
                       PartialRows rows, Value workspace, Value cols, Value tid,
                       int64_t numThreads)
    : b(b), outputs(outputs), types(types), accumulators(accumulators),
      rows(rows), workspace(workspace), cols(cols), tid(tid),
      numTotals(numTotals), blockElements(blockElements),
      numThreads(numThreads) {
  assert(numTotals <= outputs.size() && "the totals are among the sums");
}

Value ColumnSums::f32At(Value base, Value index) {
  return LLVM::GEPOp::create(b, base.getType(), b.getF32Type(), base,
                             ValueRange{index}, LLVM::GEPNoWrapFlags::inbounds);
}

Value ColumnSums::widthOf(unsigned k) {
  return k < numColumnSums() ? cols : constI32(b, 1);
}

int64_t ColumnSums::accumulatorStart(unsigned k) const {
  unsigned sums = std::min(k, numColumnSums());
  return sums * blockElements + (k - sums);
}

Value ColumnSums::partialRow(unsigned k, Value partial) {
  Type i64 = b.getI64Type();
  if (k >= numColumnSums()) {
    // The totals' one f32 per partial row, after the column sums' rows.
    Value cols64 = arith::ExtUIOp::create(b, i64, cols);
    Value sumRows =
        arith::MulIOp::create(b, constI64(b, numColumnSums()), cols64);
    Value total = constI64(b, k - numColumnSums());
    Value before = arith::AddIOp::create(b, sumRows, total);
    Value numPartials64 = arith::ExtUIOp::create(b, i64, rows.numPartials);
    Value partialRows = arith::MulIOp::create(b, before, numPartials64);
    Value partial64 = arith::ExtUIOp::create(b, i64, partial);
    Value offset = arith::AddIOp::create(b, partialRows, partial64);
    Value header = constI64(b, kColumnSumsHeaderBytes / 4);
    return f32At(workspace, arith::AddIOp::create(b, offset, header));
  }
  Value sumRow = arith::MulIOp::create(b, constI32(b, k), rows.numPartials);
  Value row = arith::AddIOp::create(b, sumRow, partial);
  Value row64 = arith::ExtUIOp::create(b, i64, row);
  Value cols64 = arith::ExtUIOp::create(b, i64, cols);
  Value offset = arith::MulIOp::create(b, row64, cols64);
  Value header = constI64(b, kColumnSumsHeaderBytes / 4);
  Value start = arith::AddIOp::create(b, offset, header);
  return f32At(workspace, start);
}

/// A loop over [lower, upper) by `step` (i32) whose body is `body(index)`.
static void forEach(ImplicitLocOpBuilder &b, Value lower, Value upper,
                    Value step, function_ref<void(Value)> body) {
  auto loop = scf::ForOp::create(b, lower, upper, step);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(loop.getBody()->getTerminator());
  body(loop.getInductionVar());
}

void ColumnSums::zero() {
  Value zero = arith::ConstantFloatOp::create(b, b.getF32Type(),
                                              APFloat(0.0f));
  Value total = constI32(b, accumulatorStart(outputs.size()));
  forEach(b, tid, total, constI32(b, numThreads), [&](Value i) {
    LLVM::StoreOp::create(b, zero, f32At(accumulators, i), 4);
  });
  gpu::BarrierOp::create(b);
}

Value ColumnSums::accumulatorAt(unsigned k, Value col) {
  if (rows.sliceStart)
    col = arith::SubIOp::create(b, col, rows.sliceStart);
  Value index = arith::AddIOp::create(b, col, constI32(b, accumulatorStart(k)));
  return f32At(accumulators, index);
}

void ColumnSums::addTotal(unsigned t, Value value, Value valid) {
  auto ifOp = scf::IfOp::create(b, valid, /*withElseRegion=*/false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&ifOp.getThenRegion().front());
  Value ptr =
      f32At(accumulators, constI32(b, accumulatorStart(numColumnSums() + t)));
  Value old = LLVM::LoadOp::create(b, b.getF32Type(), ptr, 4);
  Value sum = arith::AddFOp::create(b, old, value);
  LLVM::StoreOp::create(b, sum, ptr, 4);
}

void ColumnSums::add(unsigned k, Value col, Value value, Value valid,
                     std::optional<int64_t> slot) {
  if (!registers.empty() && slot) {
    Value &sum = registers[k * registerSlots + *slot];
    Value zero =
        arith::ConstantFloatOp::create(b, b.getF32Type(), APFloat(0.0f));
    sum = arith::AddFOp::create(b, sum,
                                arith::SelectOp::create(b, valid, value, zero));
    return;
  }
  auto ifOp = scf::IfOp::create(b, valid, /*withElseRegion=*/false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&ifOp.getThenRegion().front());
  Value ptr = accumulatorAt(k, col);
  Value old = LLVM::LoadOp::create(b, b.getF32Type(), ptr, 4);
  Value sum = arith::AddFOp::create(b, old, value);
  LLVM::StoreOp::create(b, sum, ptr, 4);
}

SmallVector<Value> ColumnSums::registerInits(int64_t slots) {
  Value zero = arith::ConstantFloatOp::create(b, b.getF32Type(), APFloat(0.0f));
  registerSlots = slots;
  return SmallVector<Value>(slots * numColumnSums(), zero);
}

void ColumnSums::holdInRegisters(ValueRange carried) {
  assert(carried.size() == registerSlots * numColumnSums() &&
         "the registers registerInits made");
  registers.assign(carried.begin(), carried.end());
}

void ColumnSums::storeRegisters(ValueRange sums,
                                ArrayRef<std::pair<Value, Value>> columns) {
  assert(columns.size() == static_cast<size_t>(registerSlots) &&
         "a column per register slot");
  registers.clear();
  for (unsigned k = 0; k < numColumnSums(); ++k) {
    for (auto [slot, column] : llvm::enumerate(columns)) {
      auto [col, valid] = column;
      auto ifOp = scf::IfOp::create(b, valid, /*withElseRegion=*/false);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(&ifOp.getThenRegion().front());
      // Each column of the slice is one thread's: a store, not an add.
      LLVM::StoreOp::create(b, sums[k * columns.size() + slot],
                            accumulatorAt(k, col), 4);
    }
  }
}

void ColumnSums::finish() {
  gpu::BarrierOp::create(b);
  Type i32 = b.getI32Type();
  // The slice's columns within the row: [start, start + width) (a total's
  // one column is the first block's of a cluster).
  Value start = rows.sliceStart ? rows.sliceStart : constI32(b, 0);
  auto sliceWidth = [&](Value columns) -> Value {
    return arith::MinSIOp::create(
        b, constI32(b, blockElements),
        arith::MaxSIOp::create(b, arith::SubIOp::create(b, columns, start),
                               constI32(b, 0)));
  };
  Value sumWidth = sliceWidth(cols);
  for (unsigned k = 0; k < outputs.size(); ++k) {
    Value width = k < numColumnSums() ? sumWidth : sliceWidth(widthOf(k));
    Value row = f32At(partialRow(k, rows.partial), start);
    forEach(b, tid, width, constI32(b, numThreads), [&](Value j) {
      Value index =
          arith::AddIOp::create(b, j, constI32(b, accumulatorStart(k)));
      Value v = LLVM::LoadOp::create(b, b.getF32Type(),
                                     f32At(accumulators, index), 4);
      LLVM::StoreOp::create(b, v, f32At(row, j), 4);
    });
  }
  gridBarrier();
  Value grid = arith::IndexCastOp::create(
      b, i32, gpu::GridDimOp::create(b, gpu::Dimension::x));
  Value blockId = arith::IndexCastOp::create(
      b, i32, gpu::BlockIdOp::create(b, gpu::Dimension::x));
  for (unsigned k = 0; k < outputs.size(); ++k)
    sumPartials(k, grid, blockId);
}

void ColumnSums::gridBarrier() {
  gpu::BarrierOp::create(b);
  Type i32 = b.getI32Type();
  Value isFirst =
      arith::CmpIOp::create(b, arith::CmpIPredicate::eq, tid, constI32(b, 0));
  auto first = scf::IfOp::create(b, isFirst, /*withElseRegion=*/false);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&first.getThenRegion().front());
    Value counter = workspace;
    Value generation = LLVM::GEPOp::create(b, workspace.getType(), i32,
                                           workspace, ArrayRef<LLVM::GEPArg>{1});
    // The block's partial rows (ordered before thread 0 by the barrier)
    // reach the device before its arrival.
    LLVM::FenceOp::create(b, LLVM::AtomicOrdering::release, "device");
    // The generation is read before the arrival: the last block starts the
    // next one only after every block has arrived.
    Value before = LLVM::LoadOp::create(
        b, i32, generation, 4, /*isVolatile=*/false, /*isNonTemporal=*/false,
        /*isInvariant=*/false, /*isInvariantGroup=*/false,
        LLVM::AtomicOrdering::monotonic, "device");
    Value one = constI32(b, 1);
    Value arrived = LLVM::AtomicRMWOp::create(
        b, LLVM::AtomicBinOp::add, counter, one,
        LLVM::AtomicOrdering::acq_rel, "device");
    Value lastIndex = arith::SubIOp::create(b, arith::IndexCastOp::create(
        b, i32, gpu::GridDimOp::create(b, gpu::Dimension::x)), one);
    Value isLast =
        arith::CmpIOp::create(b, arith::CmpIPredicate::eq, arrived, lastIndex);
    auto last = scf::IfOp::create(b, isLast, /*withElseRegion=*/true);
    {
      OpBuilder::InsertionGuard inner(b);
      b.setInsertionPointToStart(&last.getThenRegion().front());
      // The counter is 0 again for the next launch (a workspace needs
      // zeroing once), then the new generation releases the others.
      LLVM::StoreOp::create(b, constI32(b, 0), counter, 4, /*isVolatile=*/false,
                            /*isNonTemporal=*/false,
                            /*isInvariantGroup=*/false,
                            LLVM::AtomicOrdering::monotonic, "device");
      LLVM::AtomicRMWOp::create(b, LLVM::AtomicBinOp::add, generation, one,
                                LLVM::AtomicOrdering::release, "device");
      b.setInsertionPointToStart(&last.getElseRegion().front());
      auto wait = scf::WhileOp::create(b, TypeRange{}, ValueRange{});
      b.createBlock(&wait.getBefore());
      Value now = LLVM::LoadOp::create(
          b, i32, generation, 4, /*isVolatile=*/false,
          /*isNonTemporal=*/false, /*isInvariant=*/false,
          /*isInvariantGroup=*/false, LLVM::AtomicOrdering::acquire,
          "device");
      Value same =
          arith::CmpIOp::create(b, arith::CmpIPredicate::eq, now, before);
      scf::ConditionOp::create(b, same, ValueRange{});
      b.createBlock(&wait.getAfter());
      NVVM::NanosleepOp::create(b, constI32(b, kGridBarrierPollNanoseconds));
      scf::YieldOp::create(b);
    }
    LLVM::FenceOp::create(b, LLVM::AtomicOrdering::acquire, "device");
  }
  gpu::BarrierOp::create(b);
}

void ColumnSums::sumPartials(unsigned k, Value grid, Value blockId) {
  FloatType f32 = b.getF32Type();
  int64_t warps = numThreads / 32;
  Value lane = arith::RemUIOp::create(b, tid, constI32(b, 32));
  Value warp = arith::DivUIOp::create(b, tid, constI32(b, 32));
  // This warp's partial rows: [lo, hi), ceil(partials / warps) of them.
  Value partials = rows.numPartials;
  Value perWarp = arith::CeilDivUIOp::create(b, partials, constI32(b, warps));
  Value lo = arith::MulIOp::create(b, warp, perWarp);
  Value loEnd = arith::AddIOp::create(b, lo, perWarp);
  Value hi = arith::MinUIOp::create(b, loEnd, partials);
  Value width = widthOf(k);
  Value tiles = arith::CeilDivUIOp::create(b, width, constI32(b, 32));
  Value zero = arith::ConstantFloatOp::create(b, f32, APFloat(0.0f));
  Value lastCol = arith::SubIOp::create(b, width, constI32(b, 1));
  forEach(b, blockId, tiles, grid, [&](Value tile) {
    Value tileStart = arith::MulIOp::create(b, tile, constI32(b, 32));
    Value col = arith::AddIOp::create(b, tileStart, lane);
    Value inside =
        arith::CmpIOp::create(b, arith::CmpIPredicate::ult, col, width);
    // Lanes past the row's end read its last column and store nothing.
    Value at = arith::MinUIOp::create(b, col, lastCol);
    auto loadPartial = [&](Value p) {
      Value row = partialRow(k, p);
      return LLVM::LoadOp::create(b, f32, f32At(row, at), 4).getResult();
    };
    // kPartialsInFlight rows at a time, added in order, then the rest.
    Value span = arith::SubIOp::create(b, hi, lo);
    Value spanOrZero = arith::MaxSIOp::create(b, span, constI32(b, 0));
    Value whole =
        arith::RemUIOp::create(b, spanOrZero, constI32(b, kPartialsInFlight));
    Value unrolledEnd = arith::SubIOp::create(b, spanOrZero, whole);
    Value unrolledHi = arith::AddIOp::create(b, lo, unrolledEnd);
    auto unrolled = scf::ForOp::create(b, lo, unrolledHi,
                                       constI32(b, kPartialsInFlight), zero);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(unrolled.getBody());
      Value p = unrolled.getInductionVar();
      SmallVector<Value> loaded;
      for (int64_t i = 0; i < kPartialsInFlight; ++i) {
        Value row = arith::AddIOp::create(b, p, constI32(b, i));
        loaded.push_back(loadPartial(row));
      }
      Value acc = unrolled.getRegionIterArgs().front();
      for (Value v : loaded)
        acc = arith::AddFOp::create(b, acc, v);
      scf::YieldOp::create(b, acc);
    }
    auto rest = scf::ForOp::create(b, unrolledHi, hi, constI32(b, 1),
                                   unrolled.getResults());
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(rest.getBody());
      Value v = loadPartial(rest.getInductionVar());
      Value acc = arith::AddFOp::create(b, rest.getRegionIterArgs().front(), v);
      scf::YieldOp::create(b, acc);
    }
    // The warps' sums meet in shared memory (the accumulators, free once
    // the partial rows are written), added in warp order by warp 0.
    Value slot = arith::AddIOp::create(
        b, arith::MulIOp::create(b, warp, constI32(b, 32)), lane);
    LLVM::StoreOp::create(b, rest.getResult(0), f32At(accumulators, slot), 4);
    gpu::BarrierOp::create(b);
    Value isWarp0 = arith::CmpIOp::create(b, arith::CmpIPredicate::eq, warp,
                                          constI32(b, 0));
    Value writes = arith::AndIOp::create(b, isWarp0, inside);
    auto ifOp = scf::IfOp::create(b, writes, /*withElseRegion=*/false);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(&ifOp.getThenRegion().front());
      Value total = zero;
      for (int64_t w = 0; w < warps; ++w) {
        Value index = arith::AddIOp::create(b, lane, constI32(b, w * 32));
        Value v = LLVM::LoadOp::create(b, f32, f32At(accumulators, index), 4);
        total = arith::AddFOp::create(b, total, v);
      }
      Type type = types[k];
      Value rounded =
          type.isF32() ? total
                       : arith::TruncFOp::create(b, type, total).getResult();
      Value ptr =
          LLVM::GEPOp::create(b, outputs[k].getType(), type, outputs[k],
                              ValueRange{col}, LLVM::GEPNoWrapFlags::inbounds);
      LLVM::StoreOp::create(b, rounded, ptr, type.getIntOrFloatBitWidth() / 8);
    }
    // The slots are free again for the next tile.
    gpu::BarrierOp::create(b);
  });
}
