//===- RowRedPlan.cpp - Attach a kernel plan to every group ---------------===//
//
// Part of the softmax kernel compiler.
//
// The rowred-plan pass: every rowred.map without a #rowred.plan gets the one
// planKernel chooses for its group, around the fields of its
// #rowred.plan_request if it has one; a plan already there is kept. auto's
// plans of rows that the table gives kernels for launches of a few rows get
// those kernels' plans as well (rowred.few_rows_plan: one, or a ladder).
//
//===----------------------------------------------------------------------===//

#include "Plan.h"
#include "rowred/Conversion/RowRedToGPU/RowRedToGPU.h"

namespace mlir {
namespace rowred {
#define GEN_PASS_DEF_ROWREDPLAN
#include "rowred/Conversion/Passes.h.inc"
} // namespace rowred
} // namespace mlir

using namespace mlir;
using namespace mlir::rowred;

namespace {

struct RowRedPlanPass : rowred::impl::RowRedPlanBase<RowRedPlanPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (failed(verifyDecomposed(module, "planning")))
      return signalPassFailure();
    FailureOr<std::shared_ptr<const PlanTable>> table =
        loadPlanTable(planTable, module.getLoc());
    if (failed(table))
      return signalPassFailure();
    WalkResult result = module.walk([&](MapOp map) {
      return failed(planMap(map, strategy, cols, chip, table->get()))
                 ? WalkResult::interrupt()
                 : WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace

LogicalResult mlir::rowred::planMap(MapOp map, StringRef strategy, int64_t cols,
                                    StringRef chip, const PlanTable *table) {
  if (map->hasAttr(kPlanAttrName)) {
    // A request beside a whole plan would be ignored.
    if (map->hasAttr(kPlanRequestAttrName))
      return map.emitOpError()
             << "has both a #rowred.plan and a #rowred.plan_request; give the "
                "whole plan or the fields to request";
    return success();
  }
  FailureOr<Group> group = collectGroup(map);
  if (failed(group))
    return failure();
  auto request = map->getAttrOfType<PlanRequestAttr>(kPlanRequestAttrName);
  PlanOptions opts = PlanOptions::get(strategy, cols, chip, request);
  opts.table = table;
  FailureOr<KernelPlan> plan = planKernel(*group, opts);
  if (failed(plan))
    return failure();
  PlanAttr attr =
      plan->getCheckedAttr([&] { return map.emitOpError(); }, map.getContext());
  if (!attr)
    return failure();
  map->setAttr(kPlanAttrName, attr);
  // Only where the whole plan is auto's: a request states the kernel.
  if (!request && !group->hasColumnSums()) {
    SmallVector<PlanAttr> few;
    for (const KernelPlan &fewPlan : planFewRows(*group, opts, *plan))
      few.push_back(fewPlan.getAttr(map.getContext()));
    setFewRowsPlans(map, few);
  }
  map->removeAttr(kPlanRequestAttrName);
  return success();
}

FailureOr<SmallVector<PlanAttr>> mlir::rowred::fewRowsPlans(MapOp map) {
  SmallVector<PlanAttr> plans;
  Attribute attr = map->getAttr(kFewRowsPlanAttrName);
  if (!attr)
    return plans;
  auto array = dyn_cast<ArrayAttr>(attr);
  for (Attribute element : array ? array.getValue() : ArrayRef(attr)) {
    auto plan = dyn_cast<PlanAttr>(element);
    if (!plan)
      break;
    plans.push_back(plan);
  }
  if (plans.empty() || (array && array.size() != plans.size()))
    return map.emitOpError()
           << "'" << kFewRowsPlanAttrName
           << "' is neither a #rowred.plan nor an array of them";
  bool increasing = true;
  int64_t previous = 0;
  for (PlanAttr plan : plans) {
    increasing &= plan.getMaxRows() > previous;
    previous = plan.getMaxRows();
  }
  if (!increasing || plans.size() > kMaxFewRowsKernels)
    return map.emitOpError()
           << "'" << kFewRowsPlanAttrName << "' needs at most "
           << kMaxFewRowsKernels
           << " plans, each with a max_rows above the one before";
  return plans;
}

void mlir::rowred::setFewRowsPlans(MapOp map, ArrayRef<PlanAttr> plans) {
  if (plans.empty())
    map->removeAttr(kFewRowsPlanAttrName);
  else if (plans.size() == 1)
    map->setAttr(kFewRowsPlanAttrName, plans.front());
  else
    map->setAttr(
        kFewRowsPlanAttrName,
        ArrayAttr::get(map.getContext(),
                       SmallVector<Attribute>(plans.begin(), plans.end())));
}

PlanOptions PlanOptions::get(StringRef strategy, int64_t cols, StringRef chip,
                             PlanRequestAttr request) {
  PlanOptions opts;
  opts.strategy = strategy.str();
  opts.cols = cols;
  opts.chip = chip.str();
  if (!request)
    return opts;
  if (request.getStrategy())
    opts.strategy = stringifyStrategy(*request.getStrategy()).str();
  opts.blockSize = request.getBlock().value_or(0);
  opts.numWarps = request.getWarps().value_or(0);
  opts.rowsPerBlock = request.getRowsPerBlock().value_or(0);
  opts.clusterSize = request.getCluster().value_or(0);
  opts.vectorWidth = request.getVector().value_or(0);
  opts.reverseSecondPass = request.getReverseSecondPass().value_or(true);
  opts.fastExp = request.getFastExp().value_or(true);
  opts.reread = request.getReread();
  opts.pairReduce = request.getPairReduce();
  opts.cacheHints = request.getCacheHints();
  opts.hoistMapLoads = request.getHoistMapLoads();
  opts.sumsInRegisters = request.getSumsInRegisters();
  opts.prefetch = request.getPrefetch();
  opts.keptElements = request.getKeptElements();
  opts.chunkStage = request.getChunkStage();
  opts.keepAhead = request.getKeepAhead();
  opts.grid = request.getGrid();
  return opts;
}
