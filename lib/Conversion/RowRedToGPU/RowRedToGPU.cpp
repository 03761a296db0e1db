//===- RowRedToGPU.cpp - Lower rowred groups to GPU kernels ---------------===//
//
// Part of the softmax kernel compiler.
//
// Fuses a rowred.map and the rowred.reduce ops that feed it into one gpu.func
// kernel (fused or online strategy) and replaces them on the host by a
// gpu.launch_func. docs/kernels.md describes the generated kernels.
//
//===----------------------------------------------------------------------===//

#include "rowred/Conversion/RowRedToGPU/RowRedToGPU.h"
#include "ChunksEmitter.h"
#include "ColumnSums.h"
#include "LaunchMetadata.h"
#include "OnlineEmitter.h"

#include "llvm/Support/Regex.h"

namespace mlir {
namespace rowred {
#define GEN_PASS_DEF_CONVERTROWREDTOGPU
#include "rowred/Conversion/Passes.h.inc"
} // namespace rowred
} // namespace mlir

using namespace mlir;
using namespace mlir::rowred;

namespace {

//===----------------------------------------------------------------------===//
// Host side
//===----------------------------------------------------------------------===//

/// Returns a `!llvm.ptr<1>` to the first element of `memref`.
static Value hostPointer(ImplicitLocOpBuilder &b, Value memref) {
  auto type = cast<MemRefType>(memref.getType());
  auto md = memref::ExtractStridedMetadataOp::create(b, memref);
  Value base =
      memref::ExtractAlignedPointerAsIndexOp::create(b, md.getBaseBuffer());
  Value offsetBytes = arith::MulIOp::create(
      b, md.getOffset(),
      arith::ConstantIndexOp::create(b, byteWidth(type.getElementType())));
  Value addr = arith::IndexCastOp::create(
      b, b.getI64Type(), arith::AddIOp::create(b, base, offsetBytes));
  return LLVM::IntToPtrOp::create(
      b, LLVM::LLVMPointerType::get(b.getContext(), 1), addr);
}

/// Returns the stride of dimension 0 of `memref`, as i64.
static Value rowStride(ImplicitLocOpBuilder &b, Value memref) {
  auto md = memref::ExtractStridedMetadataOp::create(b, memref);
  return arith::IndexCastOp::create(b, b.getI64Type(), md.getStrides()[0]);
}

//===----------------------------------------------------------------------===//
// Pass
//===----------------------------------------------------------------------===//

struct ConvertRowRedToGPUPass
    : rowred::impl::ConvertRowRedToGPUBase<ConvertRowRedToGPUPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    counter = 0;
    if (failed(verifyDecomposed(module, "the GPU lowering")))
      return signalPassFailure();
    SmallVector<MapOp> maps;
    module.walk([&](MapOp map) { maps.push_back(map); });

    SmallVector<NamedAttribute> kernels;
    if (auto existing = module->getAttrOfType<DictionaryAttr>(kKernelsAttrName))
      llvm::append_range(kernels, existing.getValue());
    SymbolTable symbols(module);
    // The kernels go into this module, which the launches must be in.
    for (MapOp map : maps)
      if (map->getParentOfType<ModuleOp>() != module) {
        auto origin = map->getAttrOfType<StringAttr>(kOriginAttrName);
        map.emitOpError()
            << (origin ? "(from rowred." + origin.getValue().str() + ") "
                       : std::string())
            << "is in a nested module; the GPU lowering puts kernels in the "
               "top-level module, with the functions that launch them: move "
               "the function there";
        return signalPassFailure();
      }
    for (MapOp map : maps) {
      FailureOr<Group> group = collectGroup(map);
      if (failed(group))
        return signalPassFailure();
      FailureOr<KernelPlan> plan = readPlan(*group);
      if (failed(plan))
        return signalPassFailure();
      FailureOr<SmallVector<PlanAttr>> fewAttrs = fewRowsPlans(map);
      if (failed(fewAttrs))
        return signalPassFailure();
      FailureOr<std::string> name = kernelName(map);
      if (failed(name))
        return signalPassFailure();
      // A kernel for launches of at most max_rows rows each, by max_rows.
      SmallVector<KernelPlan> fewRows;
      SmallVector<std::string> fewNames;
      for (PlanAttr attr : *fewAttrs) {
        FailureOr<KernelPlan> few =
            readPlan(*group, attr, kFewRowsPlanAttrName);
        if (failed(few))
          return signalPassFailure();
        fewRows.push_back(*few);
        fewNames.push_back(*name + "_rows" + std::to_string(few->maxRows));
        if (symbols.lookup(fewNames.back())) {
          map.emitOpError() << "its kernel for a few rows, '" << fewNames.back()
                            << "', would take the name of another symbol";
          return signalPassFailure();
        }
      }
      lowerGroup(*group, *plan, *name, fewRows, fewNames, symbols);
      Builder builder(&getContext());
      DictionaryAttr metadata = kernelMetadata(builder, *group, *plan);
      SmallVector<KernelVariant> variants;
      for (auto [few, fewName] : llvm::zip_equal(fewRows, fewNames)) {
        kernels.push_back(builder.getNamedAttr(
            fewName, kernelMetadata(builder, *group, few)));
        variants.push_back({fewName, few.maxRows});
      }
      if (!variants.empty())
        metadata = withVariants(builder, metadata, variants);
      kernels.push_back(builder.getNamedAttr(*name, metadata));
      eraseGroup(*group);
    }
    // Reduces whose results no map consumes have no kernel yet.
    WalkResult leftover = module.walk([](ReduceOp reduce) {
      reduce.emitOpError() << "is not consumed by a rowred.map; only "
                              "reduce chains that feed a map are lowered";
      return WalkResult::interrupt();
    });
    if (leftover.wasInterrupted())
      return signalPassFailure();
    if (!kernels.empty()) {
      module->setAttr(kKernelsAttrName,
                      DictionaryAttr::get(&getContext(), kernels));
      module->setAttr(gpu::GPUDialect::getContainerModuleAttrName(),
                      UnitAttr::get(&getContext()));
    }
  }

  /// The plan in the group's map's rowred.plan, or a diagnostic when it
  /// has none or the group cannot take it.
  FailureOr<KernelPlan> readPlan(const Group &group) {
    MapOp map = group.map;
    auto attr = map->getAttrOfType<PlanAttr>(kPlanAttrName);
    if (!attr)
      return map.emitOpError()
             << "has no #rowred.plan; run --rowred-plan before the GPU "
                "lowering";
    return readPlan(group, attr, kPlanAttrName);
  }

  /// The plan `attr`, from the map's attribute `attrName`, or a diagnostic
  /// when the group cannot take it.
  FailureOr<KernelPlan> readPlan(const Group &group, PlanAttr attr,
                                 StringRef attrName) {
    MapOp map = group.map;
    KernelPlan plan = KernelPlan::get(
        attr, cast<MemRefType>(map.getInput().getType()).getElementType(),
        group.outputType());
    // The online kernel's running pair needs softmax's reduces (with
    // reread, the online kernel streams any chain); with per-row results,
    // a forward second pass and no stage or kept tiles (rowred-plan).
    bool runningPair =
        plan.strategy == Strategy::online && !plan.streamsLevels();
    bool needsPair =
        runningPair || plan.pairReduce ||
        (plan.strategy == Strategy::chunks && chunkExchanges(group) == 0);
    if (runningPair && group.hasRowOperands() &&
        (plan.reverseSecondPass || plan.hasStage() || plan.cacheHints))
      return map.emitOpError()
             << "#rowred.plan asks for online with reverse_second_pass, a "
                "stage, kept tiles or cache hints, which its running pair "
                "does not take with per-row results";
    if (needsPair && !isOnlineSoftmaxPair(group))
      return map.emitOpError()
             << "#rowred.plan asks for "
             << (plan.pairReduce ? StringRef("pair_reduce")
                                 : stringifyStrategy(plan.strategy))
             << ", which needs a max reduce followed by a sum of exp(x - "
                "max), as produced by rowred-decompose"
             << (plan.strategy == Strategy::chunks
                     ? " (or levels of at most two reduces each)"
                     : "");
    if (group.hasColumnSums() &&
        failed(checkColumnSumsPlan(group, plan, attrName)))
      return failure();
    // Generic chunks and staged streamed passes hold a slot of the stage
    // for each 2-D input.
    if ((plan.strategy == Strategy::chunks && !isOnlineSoftmaxPair(group)) ||
        (plan.streamsLevels() && plan.prefetch)) {
      plan.stageInputs = std::max<int64_t>(stageSlots(group), 1);
      if (plan.hasStage() && stageSlots(group) == 0)
        return map.emitOpError()
               << "#rowred.plan asks for "
               << (plan.prefetch ? "prefetch = stage" : "chunk_stage")
               << ", which needs inputs of one element type";
      if (plan.dynamicSharedBytes() > maxDynamicSharedBytes(plan.sm()))
        return map.emitOpError()
               << "#rowred.plan's stage takes " << plan.dynamicSharedBytes()
               << " bytes of shared memory for its inputs; a block has at "
                  "most "
               << maxDynamicSharedBytes(plan.sm());
    }
    return plan;
  }

  /// Whether the kernel of `plan` can sum `group`'s columns (ColumnSums):
  /// a block (or cluster) per row on the persistent grid, each column of a
  /// row on one thread, and the accumulators in shared memory.
  LogicalResult checkColumnSumsPlan(const Group &group, const KernelPlan &plan,
                                    StringRef attrName) {
    MapOp map = group.map;
    if (attrName != kPlanAttrName)
      return map.emitOpError() << group.sumsName()
                               << " in one kernel, which has no second "
                                  "kernel for a few rows ('"
                               << attrName << "')";
    bool online = plan.strategy == Strategy::online && group.columnSums.empty();
    if ((plan.strategy != Strategy::fused &&
         plan.strategy != Strategy::cluster && !online) ||
        plan.rowsPerBlock != 1 || plan.gridPerRowGroup)
      return map.emitOpError()
             << group.sumsName()
             << ", which needs #rowred.plan's strategy = fused or cluster "
                "(or online, for totals alone) with rows_per_block = 1 on "
                "the persistent grid";
    int64_t bytes = kernelDynamicSharedBytes(group, plan);
    if (bytes > maxDynamicSharedBytes(plan.sm()))
      return map.emitOpError()
             << group.sumsName()
             << " with accumulators in "
                "shared memory: "
             << bytes << " bytes, of at most "
             << maxDynamicSharedBytes(plan.sm()) << " a block may take";
    return success();
  }

  /// `<function>_kernel<N>` for the module's N-th map in walk order (see
  /// kernelOrigin), unique in the module, or a diagnostic when the
  /// function's name cannot start a PTX identifier and a file name: letters,
  /// digits and '_', not starting with a digit.
  FailureOr<std::string> kernelName(MapOp map) {
    std::string prefix = "kernel";
    if (auto func = map->getParentOfType<FunctionOpInterface>()) {
      StringRef name = func.getName();
      bool valid = !name.empty() && !llvm::isDigit(name.front()) &&
                   llvm::all_of(name, [](char c) {
                     return llvm::isAlnum(c) || c == '_';
                   });
      if (!valid)
        return map.emitOpError()
               << "is in function '" << name
               << "', whose name cannot name its kernel: a kernel is named "
                  "after its function, in letters, digits and '_' (not "
                  "starting with a digit)";
      prefix = (name + "_kernel").str();
    }
    return prefix + std::to_string(counter++);
  }

  /// Builds the kernels for `group` (of `plan`, and of each of `fewRows`,
  /// named `fewNames`, for launches of at most its maxRows rows) and
  /// launches them in place of the group.
  void lowerGroup(Group &group, const KernelPlan &plan, StringRef name,
                  ArrayRef<KernelPlan> fewRows, ArrayRef<std::string> fewNames,
                  SymbolTable &symbols) {
    gpu::GPUFuncOp func = buildKernel(group, plan, name, symbols);
    SmallVector<gpu::GPUFuncOp> fewFuncs;
    for (auto [few, fewName] : llvm::zip_equal(fewRows, fewNames))
      fewFuncs.push_back(buildKernel(group, few, fewName, symbols));

    // Host launch, guarded against empty inputs (a zero-sized grid is a
    // launch error).
    ImplicitLocOpBuilder b(group.map.getLoc(), &getContext());
    b.setInsertionPoint(group.map);
    Value input = group.map.getInput();
    Value rowsIdx = memref::DimOp::create(b, input, 0);
    Value colsIdx = memref::DimOp::create(b, input, 1);
    Value zero = arith::ConstantIndexOp::create(b, 0);
    Value hasCols =
        arith::CmpIOp::create(b, arith::CmpIPredicate::sgt, colsIdx, zero);
    Value hasRows =
        arith::CmpIOp::create(b, arith::CmpIPredicate::sgt, rowsIdx, zero);
    Value nonEmpty = arith::AndIOp::create(b, hasRows, hasCols);
    auto ifOp = scf::IfOp::create(b, nonEmpty, /*withElseRegion=*/false);
    b.setInsertionPointToStart(&ifOp.getThenRegion().front());
    // A launch of a few rows takes the first kernel for at least as many.
    for (auto [few, fewFunc] : llvm::zip_equal(fewRows, fewFuncs)) {
      Value fits =
          arith::CmpIOp::create(b, arith::CmpIPredicate::ule, rowsIdx,
                                arith::ConstantIndexOp::create(b, few.maxRows));
      auto choice = scf::IfOp::create(b, fits, /*withElseRegion=*/true);
      b.setInsertionPointToStart(&choice.getThenRegion().front());
      emitLaunch(b, group, few, fewFunc, rowsIdx, colsIdx);
      b.setInsertionPointToStart(&choice.getElseRegion().front());
    }
    emitLaunch(b, group, plan, func, rowsIdx, colsIdx);
  }

  /// Builds the kernel of `plan` for `group`, in a GPU module of its own.
  gpu::GPUFuncOp buildKernel(Group &group, const KernelPlan &plan,
                             StringRef name, SymbolTable &symbols) {
    MLIRContext *ctx = &getContext();
    ModuleOp module = getOperation();
    ImplicitLocOpBuilder b(group.map.getLoc(), ctx);

    // Kernel.
    b.setInsertionPointToEnd(module.getBody());
    auto gpuModule = gpu::GPUModuleOp::create(b, name);
    symbols.insert(gpuModule);
    b.setInsertionPointToStart(gpuModule.getBody());
    auto ptr = LLVM::LLVMPointerType::get(ctx, 1);
    Type i64 = b.getI64Type();
    // docs/abi.md: the pointers of the inputs, outputs, per-column
    // operands, per-row inputs and per-row outputs, rows, cols, and the row
    // strides of the inputs and outputs.
    size_t numMatrices = group.inputs.size() + group.outputs.size();
    SmallVector<Type> params(numMatrices + group.columns.size() +
                                 group.rowInputs.size() +
                                 group.rowOutputs.size() +
                                 group.columnSums.size() + group.totals.size(),
                             ptr);
    params.append(2 + numMatrices, i64);
    // Chunks kernels and those with column sums also take their workspace.
    if (plan.strategy == Strategy::chunks || group.hasColumnSums())
      params.push_back(ptr);
    auto funcType = FunctionType::get(ctx, params, {});
    SmallVector<Type> workgroup;
    if (plan.sharedSlots(group.reduces.size()) > 0)
      workgroup.push_back(MemRefType::get(
          {plan.sharedSlots(group.reduces.size()), plan.numWarps},
          b.getF32Type(), MemRefLayoutAttrInterface(),
          gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup)));
    if (plan.clusterSize > 1)
      LLVM::GlobalOp::create(
          b,
          LLVM::LLVMArrayType::get(b.getF32Type(),
                                   plan.clusterSlots(group.reduces.size())),
          /*isConstant=*/false, LLVM::Linkage::Internal, kClusterSlotsName,
          Attribute(), /*alignment=*/4, /*addrSpace=*/3);
    if (plan.clusterSize > 1)
      LLVM::GlobalOp::create(
          b,
          LLVM::LLVMArrayType::get(b.getI64Type(),
                                   plan.clusterBarriers(group.reduces.size())),
          /*isConstant=*/false, LLVM::Linkage::Internal, kClusterBarriersName,
          Attribute(), /*alignment=*/8, /*addrSpace=*/3);
    if (plan.bulkKeep || (plan.strategy == Strategy::chunks && plan.hasStage()))
      LLVM::GlobalOp::create(
          b, LLVM::LLVMArrayType::get(b.getI64Type(), plan.bulkKeep ? 2 : 1),
          /*isConstant=*/false, LLVM::Linkage::Internal, kStageBarriersName,
          Attribute(), /*alignment=*/8,
          /*addrSpace=*/3);
    if (kernelDynamicSharedBytes(group, plan) > 0)
      LLVM::GlobalOp::create(b, LLVM::LLVMArrayType::get(b.getI8Type(), 0),
                             /*isConstant=*/false, LLVM::Linkage::External,
                             kStageName, Attribute(), /*alignment=*/16,
                             /*addrSpace=*/3);
    auto func = gpu::GPUFuncOp::create(b, name, funcType, workgroup);
    func->setAttr(gpu::GPUDialect::getKernelFuncAttrName(), b.getUnitAttr());
    // The slots of the exchange across warps, 16-byte aligned: LLVM reads
    // four warps' partials with one ld.shared.v4 (a layer_norm f32 cluster
    // kernel faulted with a misaligned address where the array, of the
    // default alignment 4, followed the cluster's arrays at 8 bytes past 16).
    if (!workgroup.empty())
      func.setWorkgroupAttributionAttr(0, LLVM::LLVMDialect::getAlignAttrName(),
                                       b.getI64IntegerAttr(16));
    if (plan.clusterSize > 1)
      func->setAttr(NVVM::NVVMDialect::getClusterDimAttrName(),
                    b.getDenseI32ArrayAttr(
                        {static_cast<int32_t>(plan.clusterSize), 1, 1}));
    if (int64_t blocks = plan.minBlocksPerSM)
      func->setAttr(NVVM::NVVMDialect::getMinctasmAttrName(),
                    b.getI32IntegerAttr(blocks));
    func.setKnownBlockSizeAttr(b.getDenseI32ArrayAttr(
        {static_cast<int32_t>(plan.numThreads()), 1, 1}));
    b.setInsertionPointToStart(&func.getBody().front());
    if (plan.strategy == Strategy::chunks)
      ChunksEmitter(b, group, plan, func).emit();
    else if (plan.strategy == Strategy::online)
      OnlineEmitter(b, group, plan, func).emit();
    else
      KernelEmitter(b, group, plan, func).emit();
    gpu::ReturnOp::create(b);
    return func;
  }

  /// A device buffer of `words` (index) zeroed 32-bit words, for a
  /// kernel's workspace.
  static Value zeroedWorkspace(ImplicitLocOpBuilder &b, Value words) {
    Value workspace =
        gpu::AllocOp::create(
            b, MemRefType::get({ShapedType::kDynamic}, b.getI32Type()),
            /*asyncToken=*/Type(), ValueRange(), ValueRange{words},
            ValueRange())
            .getMemref();
    gpu::MemsetOp::create(b, /*asyncToken=*/Type(), ValueRange(), workspace,
                          arith::ConstantIntOp::create(b, 0, 32));
    return workspace;
  }

  /// Launches `func` (of `plan`) over the group's `rows` x `cols` at `b`.
  void emitLaunch(ImplicitLocOpBuilder &b, Group &group, const KernelPlan &plan,
                  gpu::GPUFuncOp func, Value rowsIdx, Value colsIdx) {
    Type i64 = b.getI64Type();
    SmallVector<Value> matrices(group.inputs);
    llvm::append_range(matrices, group.outputs);
    SmallVector<Value> args;
    for (Value operand :
         llvm::concat<Value>(matrices, group.columns, group.rowInputs,
                             group.rowOutputs, group.columnSums, group.totals))
      args.push_back(hostPointer(b, operand));
    args.push_back(arith::IndexCastOp::create(b, i64, rowsIdx));
    args.push_back(arith::IndexCastOp::create(b, i64, colsIdx));
    for (Value matrix : matrices)
      args.push_back(rowStride(b, matrix));
    // One block per group of rows, or one cluster per row.
    Value one = arith::ConstantIndexOp::create(b, 1);
    Value threads = arith::ConstantIndexOp::create(b, plan.numThreads());
    Value blocks = rowsIdx;
    std::optional<gpu::KernelDim3> cluster;
    if (plan.rowsPerBlock > 1)
      blocks = arith::CeilDivUIOp::create(
          b, rowsIdx, arith::ConstantIndexOp::create(b, plan.rowsPerBlock));
    if (plan.clusterSize > 1) {
      Value size = arith::ConstantIndexOp::create(b, plan.clusterSize);
      blocks = arith::MulIOp::create(b, rowsIdx, size);
      cluster = gpu::KernelDim3{size, one, one};
    }
    Value workspace;
    // A chunks kernel: one block per chunk of every row (its blocks take
    // the chunks by ticket, and those past the last end at once; launchers
    // that know the device launch the resident blocks cooperatively
    // instead, which gpu.launch_func cannot ask for), and a zeroed
    // workspace: the ticket's 128 bytes, then per row 128 bytes of counter
    // and its chunks' 8-byte entries (chunkEntries each), 128-byte aligned
    // (docs/abi.md).
    if (plan.strategy == Strategy::chunks) {
      Value chunks = arith::CeilDivUIOp::create(
          b, colsIdx, arith::ConstantIndexOp::create(b, plan.chunkElements()));
      blocks = arith::MulIOp::create(b, rowsIdx, chunks);
      Value bytes = arith::AddIOp::create(
          b, arith::ConstantIndexOp::create(b, 128),
          arith::MulIOp::create(
              b, rowsIdx, chunkRecordBytes(b, b.getLoc(), chunks, group)));
      Value words = arith::DivUIOp::create(
          b, bytes, arith::ConstantIndexOp::create(b, 4));
      workspace = zeroedWorkspace(b, words);
      args.push_back(hostPointer(b, workspace));
    }
    // Column sums: one block or cluster (the kernel loops over every row),
    // whose grid barrier then waits for no other, and a zeroed workspace of
    // its header and partial row (ColumnSums). Launchers that know the
    // device launch the resident blocks cooperatively instead, which
    // gpu.launch_func cannot ask for.
    if (group.hasColumnSums()) {
      blocks = cluster ? cluster->x : one;
      Value partials = arith::MulIOp::create(
          b, colsIdx,
          arith::ConstantIndexOp::create(b, group.columnSums.size()));
      Value words = arith::AddIOp::create(
          b, partials,
          arith::ConstantIndexOp::create(b, kColumnSumsHeaderBytes / 4 +
                                                group.totals.size()));
      workspace = zeroedWorkspace(b, words);
      args.push_back(hostPointer(b, workspace));
    }
    int64_t sharedBytes = kernelDynamicSharedBytes(group, plan);
    gpu::LaunchFuncOp::create(
        b, func, gpu::KernelDim3{blocks, one, one},
        gpu::KernelDim3{threads, one, one},
        /*dynamicSharedMemorySize=*/
        sharedBytes ? arith::ConstantIntOp::create(b, sharedBytes, 32)
                    : Value(),
        args,
        /*asyncTokenType=*/nullptr,
        /*asyncDependencies=*/{}, cluster);
    if (workspace)
      gpu::DeallocOp::create(b, /*asyncToken=*/Type(), ValueRange(), workspace);
  }

  /// Erases the group's ops and its row-scalar buffers.
  void eraseGroup(Group &group) {
    group.map->erase();
    for (GatherOp gather : llvm::reverse(group.gathers))
      gather->erase();
    for (ReduceOp reduce : llvm::reverse(group.reduces))
      reduce->erase();
    for (Operation *op : group.deallocs)
      op->erase();
    for (Operation *op : group.allocs)
      op->erase();
  }

  /// Maps lowered so far in this run.
  unsigned counter = 0;
};

} // namespace

std::optional<KernelOrigin> mlir::rowred::kernelOrigin(StringRef kernel) {
  // `<prefix>kernel<N>` or `<prefix>kernel<N>_rows<max_rows>`.
  static const llvm::Regex name("kernel([0-9]+)(_rows[0-9]+)?$");
  SmallVector<StringRef, 3> groups;
  unsigned index;
  if (!name.match(kernel, &groups) || groups[1].getAsInteger(10, index))
    return std::nullopt;
  int64_t maxRows;
  if (groups[2].empty())
    return KernelOrigin{index, std::nullopt};
  if (groups[2].drop_front(strlen("_rows")).getAsInteger(10, maxRows))
    return std::nullopt;
  return KernelOrigin{index, maxRows};
}
