//===- FitRegisters.cpp - Plan and lower kernels that do not spill --------===//
//
// Part of the softmax kernel compiler.
//
// The rowred-fit-registers pass: plans every map as rowred-plan does, lowers
// the module to PTX, assembles each kernel with `ptxas -v`, and where a
// kernel spills registers, changes its plan and lowers the module again. The
// plan's own rules (PlanRules.cpp) were measured on sm_90 for softmax's map;
// ptxas' report is what tells whether another map, another chip or a
// requested shape fits.
//
//===----------------------------------------------------------------------===//

#include "rowred/Conversion/RowRedToGPU/RowRedToGPU.h"
#include "rowred/Dialect/RowRed/IR/KernelPlan.h"
#include "rowred/Dialect/RowRed/IR/RowRedOps.h"
#include "rowred/Target/Lowering.h"
#include "rowred/Target/Passes.h"
#include "rowred/Target/Ptxas.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FileSystem.h"

namespace mlir {
namespace rowred {
#define GEN_PASS_DEF_ROWREDFITREGISTERS
#include "rowred/Target/Passes.h.inc"
} // namespace rowred
} // namespace mlir

using namespace mlir;
using namespace mlir::rowred;

/// Blocks of `threads` threads that fit on one SM of `chip` at `registers`
/// registers per thread (allocated in steps of 8, 64K per SM).
static int64_t residentBlocks(StringRef chip, int64_t registers,
                              int64_t threads) {
  int64_t sm = chipVersion(chip);
  int64_t threadsPerSM = sm == 86 || sm == 89 || sm == 120 ? 1536 : 2048;
  int64_t perThread = std::max<int64_t>(llvm::alignTo(registers, 8), 8);
  return std::min({int64_t(65536) / (perThread * threads),
                   threadsPerSM / threads, int64_t(32)});
}

/// A plan request of only a strategy and, for clusters, their size.
static PlanRequestAttr shapeRequest(MLIRContext *context, Strategy strategy,
                                    int64_t cluster) {
  std::optional<int64_t> clusterField;
  if (strategy == Strategy::cluster)
    clusterField = cluster;
  return PlanRequestAttr::get(
      context, strategy, /*block=*/std::nullopt, /*warps=*/std::nullopt,
      /*rows_per_block=*/std::nullopt, clusterField, /*vector=*/std::nullopt,
      /*reverse_second_pass=*/std::nullopt, /*fast_exp=*/std::nullopt,
      /*reread=*/std::nullopt, /*prefetch=*/std::nullopt,
      /*pair_reduce=*/std::nullopt, /*kept_elements=*/std::nullopt,
      /*keep_ahead=*/std::nullopt, /*cache_hints=*/std::nullopt,
      /*grid=*/std::nullopt, /*chunk_stage=*/std::nullopt,
      /*hoist_map_loads=*/std::nullopt, /*sums_in_registers=*/std::nullopt);
}

/// Replaces the operations and attributes of `dst` with copies of `src`'s.
static void replaceContents(ModuleOp dst, ModuleOp src) {
  for (Operation &op : llvm::make_early_inc_range(*dst.getBody()))
    op.erase();
  for (Operation &op : *src.getBody())
    dst.getBody()->push_back(op.clone());
  dst->setAttrs(src->getAttrDictionary());
}

namespace {

/// A map as the input holds it.
struct InputMap {
  Location loc;
  /// Whether the input gives its #rowred.plan, or a #rowred.plan_request.
  bool planned = false, requested = false;
};

/// What the pass changes in the plans of one map.
struct Fit {
  /// The `.minnctapersm` of the main kernel instead of the planner's (0:
  /// the planner's), and of each kernel for a few rows by its max_rows.
  int64_t minBlocksPerSM = 0;
  llvm::SmallDenseMap<int64_t, int64_t> fewRowsMinBlocksPerSM;
  /// The kernels for a few rows the map does without, by their max_rows
  /// (the next kernel up takes their launches).
  llvm::SmallDenseSet<int64_t> droppedFewRows;
  /// Whether auto's shape spilled at one block per SM, and the plan
  /// requests of the smaller shapes left to try, the current one last.
  bool reshaped = false;
  SmallVector<PlanRequestAttr> shapes;
};

/// The plans one map had in a round, before the lowering.
struct RoundPlans {
  PlanAttr main;
  SmallVector<PlanAttr> fewRows;
};

struct RowRedFitRegistersPass
    : rowred::impl::RowRedFitRegistersBase<RowRedFitRegistersPass> {
  using Base::Base;

  void getDependentDialects(DialectRegistry &registry) const override {
    OpPassManager lowering(ModuleOp::getOperationName());
    buildRowRedLoweringPipeline(lowering, chip, cudaPath);
    lowering.getDependentDialects(registry);
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (failed(verifyDecomposed(module, "planning")))
      return signalPassFailure();
    FailureOr<std::shared_ptr<const PlanTable>> loaded =
        loadPlanTable(planTable, module.getLoc());
    if (failed(loaded))
      return signalPassFailure();
    table = *loaded;
    ptxasPath = findPtxas(ptxas, cudaPath);
    if (ptxasPath.empty()) {
      module.emitError() << "no ptxas to assemble the kernels with: none in '"
                         << cudaPath.getValue()
                         << "/bin' nor on the PATH; pass ptxas=PATH";
      return signalPassFailure();
    }
    if (!llvm::sys::fs::can_execute(ptxasPath)) {
      module.emitError() << "cannot run ptxas '" << ptxasPath
                         << "': not an executable file";
      return signalPassFailure();
    }
    inputs.clear();
    module.walk([&](MapOp map) {
      inputs.push_back({map.getLoc(), map->hasAttr(kPlanAttrName),
                        map->hasAttr(kPlanRequestAttrName)});
    });
    fits.assign(inputs.size(), Fit());
    // Kernels the input already holds are not this pass's to assemble.
    inputKernels.clear();
    for (auto binary : module.getOps<gpu::BinaryOp>())
      inputKernels.insert(binary.getSymName());
    OwningOpRef<ModuleOp> input = module.clone();
    // Each round moves the plan of every kernel that spilled a step on (a
    // smaller bound, then a smaller shape), and each map has few steps: a
    // bound on the rounds only guards against a step that changes nothing.
    for (int round = 0; round < kMaxRounds; ++round) {
      if (round > 0)
        replaceContents(module, *input);
      FailureOr<bool> spilled = planLowerAndAssemble(module);
      if (failed(spilled))
        return signalPassFailure();
      if (!*spilled)
        return;
    }
    module.emitError() << "kernels still spill registers after " << kMaxRounds
                       << " plans";
    signalPassFailure();
  }

private:
  static constexpr int kMaxRounds = 64;

  /// Plans and lowers the module with the current fits and assembles every
  /// kernel; returns whether one spilled (and its fit has moved on).
  FailureOr<bool> planLowerAndAssemble(ModuleOp module) {
    SmallVector<MapOp> maps;
    module.walk([&](MapOp map) { maps.push_back(map); });
    assert(maps.size() == inputs.size() &&
           "each round plans a copy of the input");
    SmallVector<RoundPlans> plans;
    for (auto [map, fit] : llvm::zip_equal(maps, fits)) {
      if (failed(planWithFit(map, fit)))
        return failure();
      plans.push_back(
          {map->getAttrOfType<PlanAttr>(kPlanAttrName), *fewRowsPlans(map)});
    }
    OpPassManager lowering(ModuleOp::getOperationName());
    buildRowRedLoweringPipeline(lowering, chip, cudaPath);
    if (failed(runPipeline(lowering, module)))
      return failure();

    bool spilled = false;
    for (auto binary : module.getOps<gpu::BinaryOp>()) {
      std::optional<KernelOrigin> origin = kernelOrigin(binary.getSymName());
      if (!origin || origin->mapIndex >= plans.size() ||
          inputKernels.contains(binary.getSymName()))
        continue;
      auto object = cast<gpu::ObjectAttr>(binary.getObjects()[0]);
      std::string error;
      FailureOr<PtxasReport> report =
          assemblePtx(ptxasPath, chip, object.getObject().getValue(), error);
      // At the binary's location, not on it: the op's dump would print the
      // whole PTX it holds.
      if (failed(report))
        return mlir::emitError(binary.getLoc())
               << "kernel '" << binary.getSymName() << "': " << error;
      if (!report->spills())
        continue;
      const RoundPlans &round = plans[origin->mapIndex];
      PlanAttr plan = round.main;
      if (origin->fewRowsMax) {
        const PlanAttr *few = llvm::find_if(round.fewRows, [&](PlanAttr few) {
          return few.getMaxRows() == origin->fewRowsMax;
        });
        if (few == round.fewRows.end())
          continue;
        plan = *few;
      }
      if (failed(step(binary.getSymName(), origin->mapIndex, origin->fewRowsMax,
                      plan, *report)))
        return failure();
      spilled = true;
    }
    return spilled;
  }

  /// Plans `map` as rowred-plan would, with `fit`'s changes.
  LogicalResult planWithFit(MapOp map, Fit &fit) {
    if (failed(fit.reshaped ? planSmallerShape(map, fit)
                            : planMap(map, strategy, cols, chip, table.get())))
      return failure();
    MLIRContext *context = map.getContext();
    auto withBound = [&](PlanAttr attr, int64_t blocks) {
      if (blocks == 0)
        return attr;
      KernelPlan plan = KernelPlan::get(attr, Type(), Type());
      plan.minBlocksPerSM = blocks;
      return plan.getAttr(context);
    };
    map->setAttr(kPlanAttrName,
                 withBound(map->getAttrOfType<PlanAttr>(kPlanAttrName),
                           fit.minBlocksPerSM));
    FailureOr<SmallVector<PlanAttr>> planned = fewRowsPlans(map);
    if (failed(planned))
      return failure();
    SmallVector<PlanAttr> fewRows;
    for (PlanAttr few : *planned) {
      int64_t maxRows = few.getMaxRows();
      if (!fit.droppedFewRows.contains(maxRows))
        fewRows.push_back(
            withBound(few, fit.fewRowsMinBlocksPerSM.lookup(maxRows)));
    }
    setFewRowsPlans(map, fewRows);
    return success();
  }

  /// Plans `map` in the first of `fit`'s smaller shapes the planner can
  /// give its group (the last, the online kernel, with its diagnostic).
  LogicalResult planSmallerShape(MapOp map, Fit &fit) {
    for (; fit.shapes.size() > 1; fit.shapes.pop_back()) {
      map->setAttr(kPlanRequestAttrName, fit.shapes.back());
      ScopedDiagnosticHandler quiet(map.getContext(),
                                    [](Diagnostic &) { return success(); });
      if (succeeded(planMap(map, strategy, cols, chip, table.get())))
        return success();
    }
    map->setAttr(kPlanRequestAttrName, fit.shapes.back());
    return planMap(map, strategy, cols, chip, table.get());
  }

  /// The plan requests of the shapes to try after auto's `plan` spilled at
  /// one block per SM, the first to try last: chunks of a row (where the
  /// planner takes the group: softmax's pair, or levels of at most two
  /// reduces), a cluster of twice the blocks, the online kernel.
  SmallVector<PlanRequestAttr> smallerShapes(MLIRContext *context,
                                             const KernelPlan &plan) {
    SmallVector<PlanRequestAttr> shapes;
    bool blockPerRow = plan.rowsPerBlock == 1;
    if (plan.strategy != Strategy::online)
      shapes.push_back(shapeRequest(context, Strategy::online, 0));
    if (chipVersion(chip) >= 90 && blockPerRow &&
        (plan.strategy == Strategy::fused ||
         (plan.strategy == Strategy::cluster && plan.clusterSize < 16)))
      shapes.push_back(
          shapeRequest(context, Strategy::cluster, plan.clusterSize * 2));
    if (blockPerRow && (plan.strategy == Strategy::fused ||
                        plan.strategy == Strategy::cluster))
      shapes.push_back(shapeRequest(context, Strategy::chunks, 0));
    return shapes;
  }

  /// Moves the fit of map `index` on after its kernel `kernel` (`fewRows`:
  /// its kernel for launches of at most that many rows) of `plan` spilled
  /// as `report` says, or fails with a diagnostic where no step is left.
  LogicalResult step(StringRef kernel, unsigned index,
                     std::optional<int64_t> fewRows, PlanAttr plan,
                     const PtxasReport &report) {
    const InputMap &input = inputs[index];
    Fit &fit = fits[index];
    auto refuse = [&](StringRef why) {
      InFlightDiagnostic diag = emitError(input.loc);
      diag << "kernel '" << kernel << "' spills " << report.spillStoreBytes
           << " bytes of registers (ptxas -v, " << chip.getValue() << ", "
           << report.registers << " registers per thread) with " << plan << ": "
           << why;
      return diag;
    };
    if (input.planned)
      return refuse("the plan is the input's; give it fewer elements per "
                    "thread or another min_blocks_per_sm");

    KernelPlan kernelPlan = KernelPlan::get(plan, Type(), Type());
    int64_t bound = kernelPlan.minBlocksPerSM;
    int64_t next = bound == 0 ? residentBlocks(chip, report.registers,
                                               kernelPlan.numThreads())
                              : bound - 1;
    if (next >= 1) {
      (fewRows ? fit.fewRowsMinBlocksPerSM[*fewRows] : fit.minBlocksPerSM) =
          next;
      return success();
    }
    if (fewRows) {
      fit.droppedFewRows.insert(*fewRows);
      return success();
    }
    if (input.requested)
      return refuse(
          (Twine("it spills at one block per SM, and the plan "
                 "request fixes the rest; ask for more warps, a "
                 "larger cluster") +
           (kernelPlan.sumsInRegisters ? ", sums_in_registers = false" : "") +
           " or the online strategy")
              .str());
    fit.minBlocksPerSM = 0;
    if (!fit.reshaped)
      fit.shapes = smallerShapes(plan.getContext(), kernelPlan);
    else
      fit.shapes.pop_back();
    fit.reshaped = true;
    if (fit.shapes.empty())
      return refuse("it spills at one block per SM in every shape tried");
    return success();
  }

  std::string ptxasPath;
  /// The plan-table option's table; null: the one compiled in.
  std::shared_ptr<const PlanTable> table;
  llvm::StringSet<> inputKernels;
  SmallVector<InputMap> inputs;
  SmallVector<Fit> fits;
};

} // namespace
