//===- RowRedPlan.cpp - Attach a kernel plan to every group ---------------===//
//
// Part of the softmax kernel compiler.
//
// The rowred-plan pass: every rowred.map without a #rowred.plan gets the one
// planKernel chooses for its group; a plan already there is kept.
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
    PlanOptions opts{
        strategy,          cols,        blockSize,      numWarps,
        rowsPerBlock,      clusterSize, vectorWidth,    maxElementsPerThread,
        reverseSecondPass, fastExp,     scalarFallback, chip,
        prefetch,          pairReduce,  onlineKeep,     keepAhead,
        cacheHints,        grid,        chunkStage};
    WalkResult result = module.walk([&](MapOp map) {
      if (map->hasAttr(kPlanAttrName))
        return WalkResult::advance();
      FailureOr<Group> group = collectGroup(map);
      if (failed(group))
        return WalkResult::interrupt();
      FailureOr<KernelPlan> plan = planKernel(*group, opts);
      if (failed(plan))
        return WalkResult::interrupt();
      PlanAttr attr = plan->getCheckedAttr([&] { return map.emitOpError(); },
                                           &getContext());
      if (!attr)
        return WalkResult::interrupt();
      map->setAttr(kPlanAttrName, attr);
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace
