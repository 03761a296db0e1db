//===- KernelEmitter.cpp - The kernel, its paths and bodies ---------------===//
//
// Part of the softmax kernel compiler.
//
//===----------------------------------------------------------------------===//

#include "KernelEmitter.h"

using namespace mlir;
using namespace mlir::rowred;

KernelEmitter::KernelEmitter(ImplicitLocOpBuilder &b, Group group,
                             const KernelPlan &plan, gpu::GPUFuncOp func)
    : b(b), group(group), plan(plan) {
  // The parameters (docs/abi.md): the pointers of the inputs, outputs,
  // per-column operands, per-row inputs and per-row outputs, rows, cols, the
  // row strides of the inputs and outputs (and a chunks kernel's workspace:
  // ChunksEmitter).
  ValueRange args = func.getBody().front().getArguments();
  size_t numInputs = group.inputs.size(), numOutputs = group.outputs.size();
  auto take = [&](SmallVector<Value> &into, size_t count) {
    into.assign(args.begin(), args.begin() + count);
    args = args.drop_front(count);
  };
  take(inputPtrs, numInputs);
  take(outputPtrs, numOutputs);
  take(columnPtrs, group.columns.size());
  take(rowInputPtrs, group.rowInputs.size());
  take(rowOutputPtrs, group.rowOutputs.size());
  take(columnSumPtrs, group.columnSums.size() + group.totals.size());
  if (group.hasColumnSums())
    columnWorkspace = func.getBody().front().getArgument(
        func.getFunctionType().getNumInputs() - 1);
  rows = args[0];
  cols = arith::TruncIOp::create(b, b.getI32Type(), args[1]);
  args = args.drop_front(2);
  take(inputStrides, numInputs);
  take(outputStrides, numOutputs);
  x = inputPtrs.front();
  xStride = inputStrides.front();
  if (numOutputs) {
    y = outputPtrs.front();
    yStride = outputStrides.front();
  }
  if (!func.getWorkgroupAttributions().empty())
    shared = func.getWorkgroupAttributions().front();
  sharedPtr = LLVM::LLVMPointerType::get(b.getContext(), 3);
  if (plan.hasStage())
    stage.emplace(b, plan);
  f32 = b.getF32Type();
  i32 = b.getI32Type();
  i64 = b.getI64Type();
  Value tidIndex = gpu::ThreadIdOp::create(b, gpu::Dimension::x);
  tid = arith::IndexCastOp::create(b, i32, tidIndex);
  lane = arith::RemUIOp::create(b, tid, constI32(32));
  warp = arith::IndexCastOp::create(
      b, b.getIndexType(), arith::DivUIOp::create(b, tid, constI32(32)));
  int64_t perRow = plan.threadsPerRow();
  rowTid = tid;
  if (plan.rowsPerBlock > 1) {
    rowTid = arith::RemUIOp::create(b, tid, constI32(perRow));
    rowInBlock = arith::DivUIOp::create(b, tid, constI32(perRow));
  }
  if (plan.clusterSize > 1) {
    clusterRank = arith::IndexCastOp::create(
        b, i32, gpu::ClusterBlockIdOp::create(b, gpu::Dimension::x));
    sliceStart =
        arith::MulIOp::create(b, clusterRank, constI32(plan.blockElements));
    cluster.emplace(b, plan.clusterSize, plan.numWarps, tid, lane, clusterRank);
  }
  reduction.emplace(b, plan, lane, warp, shared, cluster ? &*cluster : nullptr);
  bodies.emplace(b, this->group, plan, cols);
}

void KernelEmitter::emit() {
  assert(plan.strategy != Strategy::chunks && "a ChunksEmitter's kernel");
  if (plan.cacheHints) {
    auto policy = [&](StringRef priority) {
      return NVVM::InlinePtxOp::create(
                 b, TypeRange{i64}, ValueRange(), ValueRange(),
                 ("createpolicy.fractional.L2::" + priority + ".b64 $0, 1.0;")
                     .str(),
                 /*predicate=*/Value())
          .getResult(0);
    };
    evictLast = policy("evict_last");
    // A fused block's row loads are its only hinted accesses.
    if (plan.strategy != Strategy::fused)
      evictFirst = policy("evict_first");
  }
  if (plan.bulkKeep) {
    stage->initBarriers(tid, 2);
    gpu::BarrierOp::create(b);
  }
  if (cluster)
    cluster->initBarriers(plan.clusterBarriers(group.reduces.size()));
  if (group.hasColumnSums())
    startColumnSums();
  emitPaths([&](int64_t vec, bool peeled) { emitRowLoop(vec, peeled); });
  if (columnSums)
    columnSums->finish();
  if (cluster)
    cluster->finish();
}

void KernelEmitter::startColumnSums() {
  // The accumulators follow the stage in dynamic shared memory; the
  // workspace is the last parameter.
  Value base = LLVM::AddressOfOp::create(b, sharedPtr, kStageName);
  Value accumulators = LLVM::GEPOp::create(
      b, sharedPtr, b.getI8Type(), base,
      ArrayRef<LLVM::GEPArg>{
          static_cast<int32_t>(columnAccumulatorsOffset(plan))});
  SmallVector<Type> types;
  for (Value sums : llvm::concat<Value>(group.columnSums, group.totals))
    types.push_back(getElementTypeOrSelf(sums));
  // A cluster's blocks write their slices into the cluster's partial row.
  PartialRows partials;
  auto index = [&](Value v) { return arith::IndexCastOp::create(b, i32, v); };
  if (plan.clusterSize > 1) {
    partials = {index(gpu::ClusterIdOp::create(b, gpu::Dimension::x)),
                index(gpu::ClusterDimOp::create(b, gpu::Dimension::x)),
                sliceStart};
  } else {
    partials = {index(gpu::BlockIdOp::create(b, gpu::Dimension::x)),
                index(gpu::GridDimOp::create(b, gpu::Dimension::x)), Value()};
  }
  columnSums.emplace(b, columnSumPtrs, types, group.totals.size(), accumulators,
                     plan.blockElements, partials, columnWorkspace, cols, tid,
                     plan.numThreads());
  columnSums->zero();
}

void KernelEmitter::emitPaths(function_ref<void(int64_t, bool)> emitPath) {
  int64_t vec = plan.vectorWidth;
  if (vec == 1)
    return emitPath(1, /*peeled=*/false);
  auto ifOp = scf::IfOp::create(b, vectorPathAllowed(vec),
                                /*withElseRegion=*/true);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&ifOp.getThenRegion().front());
  emitPath(vec, /*peeled=*/false);
  b.setInsertionPointToStart(&ifOp.getElseRegion().front());
  if (hasPeeledPath(group, plan)) {
    auto peelIf = scf::IfOp::create(b, misalignedAlike(vec),
                                    /*withElseRegion=*/true);
    b.setInsertionPointToStart(&peelIf.getThenRegion().front());
    emitPath(vec, /*peeled=*/true);
    b.setInsertionPointToStart(&peelIf.getElseRegion().front());
  }
  emitPath(1, /*peeled=*/false);
}

Value KernelEmitter::vectorPathAllowed(int64_t vec) {
  // Every row of every input and output aligned alike, and the per-column
  // operands at their first element.
  Value ok = isAligned(x, xStride, plan.inType, vec);
  for (auto [ptr, stride, value] :
       llvm::zip(ArrayRef(inputPtrs).drop_front(),
                 ArrayRef(inputStrides).drop_front(),
                 ArrayRef(group.inputs).drop_front()))
    ok = arith::AndIOp::create(
        b, ok, isAligned(ptr, stride, getElementTypeOrSelf(value), vec));
  for (auto [ptr, stride, value] :
       llvm::zip(outputPtrs, outputStrides, group.outputs))
    ok = arith::AndIOp::create(
        b, ok, isAligned(ptr, stride, getElementTypeOrSelf(value), vec));
  for (auto [ptr, value] : llvm::zip(columnPtrs, group.columns))
    ok = arith::AndIOp::create(
        b, ok, isAligned(ptr, constI64(0), getElementTypeOrSelf(value), vec));
  Value colsOk = arith::CmpIOp::create(
      b, arith::CmpIPredicate::eq,
      arith::RemUIOp::create(b, cols, constI32(vec)), constI32(0));
  return arith::AndIOp::create(b, ok, colsOk);
}

Value KernelEmitter::rowPointer(Value base, Type elem, Value row,
                                Value stride) {
  return LLVM::GEPOp::create(b, base.getType(), elem, base,
                             ValueRange{arith::MulIOp::create(b, row, stride)});
}

Value KernelEmitter::isAligned(Value ptr, Value stride, Type elem,
                               int64_t vec) {
  Value addr = LLVM::PtrToIntOp::create(b, i64, ptr);
  Value addrOk = arith::CmpIOp::create(
      b, arith::CmpIPredicate::eq,
      arith::RemUIOp::create(b, addr, constI64(vec * byteWidth(elem))),
      constI64(0));
  Value strideOk = arith::CmpIOp::create(
      b, arith::CmpIPredicate::eq,
      arith::RemUIOp::create(b, stride, constI64(vec)), constI64(0));
  return arith::AndIOp::create(b, addrOk, strideOk);
}

Value KernelEmitter::misalignedAlike(int64_t vec) {
  // With only the one input of rows, any row of it can be peeled.
  if (inputPtrs.size() == 1 && outputPtrs.empty())
    return arith::ConstantIntOp::create(b, 1, 1);
  auto sameModVec = [&](Value lhs, Value rhs) {
    Value diff = arith::SubIOp::create(b, lhs, rhs);
    return arith::CmpIOp::create(
        b, arith::CmpIPredicate::eq,
        arith::AndIOp::create(b, diff, constI64(vec - 1)), constI64(0));
  };
  auto elementIndex = [&](Value ptr, Type elem) {
    return arith::DivUIOp::create(b, LLVM::PtrToIntOp::create(b, i64, ptr),
                                  constI64(byteWidth(elem)));
  };
  // Every other input and output of rows against the first input: its
  // stride, then its base. One statement each, so that the ops come in this
  // order; the first input's element index is taken once, after the first
  // operand's, where a kernel of one input and output has always had it
  // (its PTX unchanged).
  Value xIndex;
  Value alike;
  auto against = [&](Value ptr, Value stride, Type elem) {
    Value stridesAlike = sameModVec(xStride, stride);
    Value index = elementIndex(ptr, elem);
    if (!xIndex)
      xIndex = elementIndex(x, plan.inType);
    Value basesAlike = sameModVec(xIndex, index);
    Value both = arith::AndIOp::create(b, basesAlike, stridesAlike);
    alike = alike ? arith::AndIOp::create(b, alike, both).getResult() : both;
  };
  for (auto [ptr, stride, value] :
       llvm::zip(outputPtrs, outputStrides, group.outputs))
    against(ptr, stride, getElementTypeOrSelf(value));
  for (auto [ptr, stride, value] :
       llvm::zip(ArrayRef(inputPtrs).drop_front(),
                 ArrayRef(inputStrides).drop_front(),
                 ArrayRef(group.inputs).drop_front()))
    against(ptr, stride, getElementTypeOrSelf(value));
  return alike;
}

Value mlir::rowred::emitExp(ImplicitLocOpBuilder &b, const KernelPlan &plan,
                            Value v) {
  if (!plan.fastExp)
    return math::ExpOp::create(b, v);
  Value log2e = arith::ConstantFloatOp::create(b, b.getF32Type(),
                                               APFloat((float)M_LOG2E));
  Value scaled = arith::MulFOp::create(b, v, log2e);
  return LLVM::CallIntrinsicOp::create(
             b, b.getF32Type(), b.getStringAttr("llvm.nvvm.ex2.approx.ftz.f32"),
             ValueRange{scaled})
      .getResult(0);
}

Value mlir::rowred::combine(ImplicitLocOpBuilder &b, Combiner c, Value lhs,
                            Value rhs) {
  if (c == Combiner::max)
    return arith::MaximumFOp::create(b, lhs, rhs);
  return arith::AddFOp::create(b, lhs, rhs);
}

SmallVector<Value> KernelEmitter::elementsAt(const Chunk &chunk, int64_t k) {
  // An operand the map alone reads is not loaded before the map: null for
  // the reduces, which do not read it.
  SmallVector<Value> elements = {chunk.values[k]};
  for (const SmallVector<Value> &values : chunk.extra)
    elements.push_back(values.empty() ? Value() : values[k]);
  return elements;
}

Block *KernelEmitter::emitIfThen(Value cond) {
  return &scf::IfOp::create(b, cond, /*withElseRegion=*/false)
              .getThenRegion()
              .front();
}

Value KernelEmitter::isFirstThread() {
  return arith::CmpIOp::create(b, arith::CmpIPredicate::eq, tid, constI32(0));
}

Block *KernelEmitter::emitIfFirstThread() {
  return emitIfThen(isFirstThread());
}
