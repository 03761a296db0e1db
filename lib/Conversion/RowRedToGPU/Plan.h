//===- Plan.h - Choose the plan of a kernel -------------------------------===//
//
// Part of the softmax kernel compiler.
//
//===----------------------------------------------------------------------===//

#ifndef ROWRED_CONVERSION_ROWREDTOGPU_PLAN_H
#define ROWRED_CONVERSION_ROWREDTOGPU_PLAN_H

#include "KernelGroup.h"
#include "rowred/Dialect/RowRed/IR/KernelPlan.h"

namespace mlir {
namespace rowred {

/// Pass options, gathered so the planner does not depend on the pass class.
struct PlanOptions {
  std::string strategy;
  int64_t cols, blockSize, numWarps, rowsPerBlock, clusterSize, vectorWidth,
      maxElementsPerThread;
  bool reverseSecondPass, fastExp;
  std::string scalarFallback, chip, prefetch, pairReduce;
  int64_t onlineKeep;
  std::string keepAhead, cacheHints;
  std::string grid;
  int64_t chunkStage;
};

/// Resolves the options against the group, with a diagnostic on the map for
/// anything invalid.
FailureOr<KernelPlan> planKernel(const Group &group, const PlanOptions &opts);

} // namespace rowred
} // namespace mlir

#endif // ROWRED_CONVERSION_ROWREDTOGPU_PLAN_H
