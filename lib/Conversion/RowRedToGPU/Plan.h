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

struct PlanTable;

/// What the planner is asked for: the pass's strategy, row length, chip and
/// plan table, and the fields of the map's #rowred.plan_request. A field
/// left out (0 or absent) is derived.
struct PlanOptions {
  std::string strategy = "auto";
  int64_t cols = 0;
  std::string chip = "sm_90";
  /// The table auto's rules read; null: the one compiled in.
  const PlanTable *table = nullptr;
  int64_t blockSize = 0, numWarps = 0, rowsPerBlock = 0, clusterSize = 0,
          vectorWidth = 0;
  bool reverseSecondPass = true, fastExp = true;
  std::optional<bool> reread, pairReduce, cacheHints, hoistMapLoads,
      sumsInRegisters;
  std::optional<Prefetch> prefetch;
  std::optional<int64_t> keptElements, chunkStage;
  std::optional<KeepAhead> keepAhead;
  std::optional<Grid> grid;

  /// The options of the pass, with the fields of `request` (may be null).
  static PlanOptions get(StringRef strategy, int64_t cols, StringRef chip,
                         PlanRequestAttr request);

  /// The plan table: `table`, or the one compiled in (PlanTable::get).
  const PlanTable &planTable() const;

  /// Elements per thread a block may hold in registers: 32 where the warps
  /// are derived (auto's exceptions aside), the plan's limit where they are
  /// asked for.
  int64_t maxElementsPerThread() const {
    return numWarps ? kMaxElementsPerThread : 32;
  }
};

/// Resolves the request against the group, with a diagnostic on the map for
/// anything invalid.
FailureOr<KernelPlan> planKernel(const Group &group, const PlanOptions &opts);

/// The plans of the group's kernels for a few rows, by their `maxRows`
/// (the plan table's few_rows: a launch of at most a kernel's maxRows rows
/// takes the first such kernel), or none: only where `main`, the group's
/// plan for `opts`, leaves a few rows on too few blocks (Plan.cpp's
/// fewRowsFewBlocks), for the lengths of a row of the table, while its
/// plan is valid and differs from `main`.
SmallVector<KernelPlan> planFewRows(const Group &group, const PlanOptions &opts,
                                    const KernelPlan &main);

} // namespace rowred
} // namespace mlir

#endif // ROWRED_CONVERSION_ROWREDTOGPU_PLAN_H
