//===- PlanMemoryPaths.cpp - The memory paths of a kernel plan ------------===//
//
// Part of the softmax kernel compiler.
//
// The Planner's steps after the block shape: the pair reduction and the
// grid, the next row loaded ahead, kept tiles, the online kernel's L2
// hints, and the shapes ptxas showed to spill.
//
//===----------------------------------------------------------------------===//

#include "Planner.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::rowred;
using namespace mlir::rowred::rules;

LogicalResult Planner::planPairAndGrid() {
  plan.pairReduce = plan.strategy != Strategy::online && canPair &&
                    opts.pairReduce.value_or(autoPairReduce(plan, opts, cols));
  // A 16-bit cluster slice of 32 elements per thread or more pairs its
  // reductions only beside the scalar path that re-reads the row
  // (refuseSpills): auto gives it that path.
  if (plan.pairReduce && plan.strategy == Strategy::cluster && !opts.reread &&
      byteWidth(plan.inType) == 2 && plan.elementsPerThread() >= 32)
    plan.rereadFallback = true;

  plan.gridPerRowGroup =
      mayGridPerRowGroup(opts, sm) &&
      (opts.grid == Grid::rows || stagedRow ||
       autoGridPerRowGroup(opts.planTable(), plan, group.writesRows()));
  return success();
}

LogicalResult Planner::planPrefetch() {
  // The stage and the registers ahead hold the next row (or tile) of one
  // input, for the online kernel the tiles of its running pair. The
  // streamed passes (reread) stage their share of every 2-D input instead
  // (stagesStreamedRow), or nothing. A fused block of several operands loads
  // the next row of each input its reductions read into registers where
  // asked (KernelEmitter::aheadInputs), or where a prefetch row of the table
  // names its held operands.
  bool streamedStage = plan.streamsLevels() && stagesStreamedRow();
  bool severalOperands = !group.hasOneRowOperand() && !plan.streamsLevels();
  StringRef without =
      plan.streamsLevels() && !streamedStage
          ? "the online kernel's next tile for its running pair; with "
            "reread it streams plain tiles (prefetch = none) or stages its "
            "share of each input (prefetch = stage)"
      : severalOperands && (plan.strategy != Strategy::fused ||
                            opts.prefetch == Prefetch::stage)
          ? "the next row of one input; of a kernel of several operands "
            "only a fused block loads its inputs' next rows, into registers "
            "(prefetch = registers or none)"
          : "";
  if (!without.empty()) {
    if (opts.prefetch && opts.prefetch != Prefetch::none)
      return map.emitOpError()
             << "prefetch = " << stringifyPrefetch(*opts.prefetch)
             << " fetches " << without;
    return success();
  }
  if (streamedStage) {
    if (stageSlots(group) == 0)
      return map.emitOpError() << "prefetch = stage with reread stages every "
                                  "2-D input side by side, which needs "
                                  "inputs of one element type";
    plan.stageInputs = stageSlots(group);
    StringRef reason = prefetchObstacle(plan, /*stage=*/true, sm);
    if (!reason.empty())
      return map.emitOpError()
             << "prefetch = stage is not possible here: " << reason;
    plan.prefetch = true;
    plan.maxCols = plan.stageElements * plan.clusterSize;
    return success();
  }
  if (!opts.keptElements && !opts.prefetch &&
      opts.keepAhead != KeepAhead::none) {
    // Bulk copies where they measured faster (auto) or were asked for;
    // per-thread copies where asked for or as auto's other rule.
    int64_t bulkKept =
        opts.keepAhead == KeepAhead::tiles ? 0 : autoBulkKeptElements(plan);
    plan.bulkKeep = bulkKept > 0;
    plan.keptElements = bulkKept > 0 ? bulkKept
                        : opts.keepAhead == KeepAhead::bulk
                            ? 0
                            : autoKeepAheadElements(plan);
    plan.keepAhead = plan.keptElements > 0;
  }
  if (opts.prefetch && opts.prefetch != Prefetch::none) {
    bool stage = opts.prefetch == Prefetch::stage;
    StringRef reason = prefetchObstacle(plan, stage, sm);
    if (!reason.empty())
      return map.emitOpError()
             << "prefetch = " << stringifyPrefetch(*opts.prefetch)
             << " is not possible here: " << reason;
    (stage ? plan.prefetch : plan.prefetchRegisters) = true;
  } else if (!opts.prefetch &&
             !(opts.cacheHints == true && plan.strategy == Strategy::fused)) {
    // Auto's fetch ahead; none for a fused block asked for cache_hints,
    // which hint the loads of its own row.
    SmallVector<Type> columnTypes = llvm::map_to_vector(
        group.columns, [](Value c) { return getElementTypeOrSelf(c); });
    Prefetch ahead = autoFetchAhead(
        opts.planTable(), plan, severalOperands ? group.numHeldOperands() : 0,
        columnTypes);
    plan.prefetch = !severalOperands &&
                    prefetchObstacle(plan, true, sm).empty() &&
                    (stagedRow || ahead == Prefetch::stage);
    plan.prefetchRegisters = !plan.prefetch &&
                             prefetchObstacle(plan, false, sm).empty() &&
                             ahead == Prefetch::registers;
  }
  // The online kernel stages its share of rows of at most the known length.
  if (plan.prefetch && plan.strategy == Strategy::online)
    plan.maxCols = plan.stageElements * plan.clusterSize;
  return success();
}

LogicalResult Planner::planKeptTiles() {
  if (opts.keptElements > 0 || opts.keepAhead == KeepAhead::tiles ||
      opts.keepAhead == KeepAhead::bulk) {
    if (plan.streamsLevels())
      return map.emitOpError()
             << (opts.keptElements > 0 ? "kept_elements" : "keep_ahead")
             << " keeps tiles of the online kernel's running pair between "
                "its passes; with reread it keeps none";
  }
  if (opts.keptElements > 0) {
    if (plan.strategy != Strategy::online)
      return map.emitOpError()
             << "kept_elements applies to the online strategy only";
    if (plan.prefetch)
      return map.emitOpError() << "kept_elements and prefetch = stage both "
                                  "use the stage in shared memory; choose "
                                  "one";
    if (plan.vectorWidth == 1)
      return map.emitOpError() << "kept_elements keeps the vector path's "
                                  "tiles and this kernel has none";
    if (*opts.keptElements % plan.blockElements != 0)
      return map.emitOpError()
             << "kept_elements " << *opts.keptElements
             << " must be whole tiles of " << plan.blockElements << " elements";
    int64_t bytes = *opts.keptElements * byteWidth(plan.inType);
    if (bytes > maxDynamicSharedBytes(plan.sm()))
      return map.emitOpError()
             << "kept_elements " << *opts.keptElements << " take " << bytes
             << " bytes, more than the shared memory of a block ("
             << maxDynamicSharedBytes(plan.sm()) << ")";
    plan.keptElements = *opts.keptElements;
  }

  bool bulk = opts.keepAhead == KeepAhead::bulk;
  if (opts.keepAhead == KeepAhead::tiles || bulk || plan.keepAhead) {
    StringRef asked = opts.keepAhead ? stringifyKeepAhead(*opts.keepAhead)
                                     : StringRef("auto's");
    if (plan.keptElements == 0)
      return map.emitOpError()
             << "keep_ahead = " << asked
             << " fills the tiles that kept_elements keeps, and "
             << (opts.keptElements == 0
                     ? "kept_elements = 0 keeps none"
                     : "auto keeps none for this kernel with it")
             << "; ask for kept_elements";
    if (plan.stageElements == 0)
      return map.emitOpError() << "keep_ahead copies the first tiles of each "
                                  "block's share ahead and needs the row "
                                  "length (cols=N)";
    if (plan.keptElements >= plan.stageElements)
      return map.emitOpError()
             << "kept_elements " << plan.keptElements
             << " keeps the whole share of a row, and keep_ahead streams "
                "at least its last tile; keep less, or use prefetch = stage "
                "to stage the whole share";
    if (sm < 80)
      return map.emitOpError() << "keep_ahead copies with cp.async, which "
                                  "needs sm_80 or newer";
    if (bulk && sm < 90)
      return map.emitOpError() << "keep_ahead = bulk copies with cp.async.bulk "
                                  "and an mbarrier, which need sm_90 or newer";
    if (bulk && 2 * plan.keptElements * byteWidth(plan.inType) >
                    maxDynamicSharedBytes(plan.sm()))
      return map.emitOpError()
             << "keep_ahead = bulk keeps two buffers of kept_elements "
             << plan.keptElements << ", more than the shared memory of a "
             << "block (" << maxDynamicSharedBytes(plan.sm()) << " bytes)";
    if (!plan.reverseSecondPass || opts.prefetch == Prefetch::none)
      return map.emitOpError()
             << "keep_ahead hands tiles on across the passes: it needs the "
                "tiles loaded ahead (prefetch = registers or derived) and "
                "the reversed second pass";
    plan.keepAhead = true;
    plan.bulkKeep = bulk || plan.bulkKeep;
    plan.prefetchRegisters = true;
    // The stage holds the last tiles of a share of at most stageElements.
    plan.maxCols = plan.stageElements * plan.clusterSize;
  }
  return success();
}

LogicalResult Planner::refuseSpills() {
  // The block the diagnostics below describe.
  auto blockHolding = [&] {
    return map.emitOpError()
           << "a " << stringifyStrategy(plan.strategy) << " block of "
           << plan.numThreads() << " threads holding "
           << plan.elementsPerThread() << " elements per thread";
  };
  if (!group.hasOneRowOperand()) {
    int64_t operands = registerOperands(plan.clusterSize);
    auto [needed, available] = operandRegisters(plan, operands);
    if (needed > available)
      return blockHolding()
             << " of each of " << operands << " operands needs about " << needed
             << " registers per thread and has " << available
             << ": a kernel of several operands holds whole rows in "
                "registers, and rows this long do not fit (ask for fewer "
                "warps where the row allows)";
    return success();
  }
  if (plan.strategy != Strategy::online && plan.strategy != Strategy::chunks) {
    auto [needed, available] = rowRegisters(plan);
    if (needed > available)
      return blockHolding()
             << " needs about " << needed << " registers per thread and has "
             << available
             << ", and would spill; ask for more warps where the block "
                "has fewer than 1024, split the row over a cluster, or "
                "leave warps to auto";
  }
  if (plan.strategy != Strategy::cluster || !plan.pairReduce ||
      plan.elementsPerThread() < 32)
    return success();
  bool wide = byteWidth(plan.inType) == 4;
  if (!wide && !plan.rereadFallback)
    return map.emitOpError()
           << "a 16-bit cluster slice of " << plan.elementsPerThread()
           << " elements per thread with pair_reduce and reread = false "
              "spills registers; use reread = true (the default here), no "
              "pair_reduce or more warps";
  if (wide && plan.prefetchRegisters)
    return map.emitOpError()
           << "an f32 cluster slice of " << plan.elementsPerThread()
           << " elements per thread with pair_reduce and prefetch = "
              "registers spills registers; use prefetch = none or stage, "
              "no pair_reduce or more warps";
  return success();
}

LogicalResult Planner::planMapLoads() {
  bool holdsRow = plan.strategy == Strategy::fused ||
                  plan.strategy == Strategy::cluster;
  if (opts.hoistMapLoads == true && !holdsRow)
    return map.emitOpError() << "hoist_map_loads applies to the fused and "
                                "cluster strategies only";
  plan.hoistMapLoads =
      opts.hoistMapLoads.value_or(false) && group.hasMapOnlyOperands();
  return success();
}

LogicalResult Planner::planColumnSums() {
  if (opts.sumsInRegisters == true && group.columnSums.empty())
    return map.emitOpError() << "sums_in_registers applies to kernels that "
                                "sum down the columns only";
  plan.sumsInRegisters = !group.columnSums.empty() &&
                         opts.sumsInRegisters.value_or(lengthSumsInRegisters);
  return success();
}

LogicalResult Planner::planCacheHints() {
  if (opts.cacheHints == true && plan.strategy != Strategy::online &&
      plan.strategy != Strategy::fused)
    return map.emitOpError() << "cache_hints applies to the fused and "
                                "online strategies only";
  if (opts.cacheHints == true && plan.strategy == Strategy::fused &&
      (plan.prefetch || plan.prefetchRegisters))
    return map.emitOpError()
           << "cache_hints hints a fused block's loads of its own row: not "
              "with prefetch, which loads the next row; ask for prefetch = "
              "none";
  // A staged row's passes read shared memory.
  if (plan.streamsLevels())
    plan.cacheHints =
        opts.cacheHints.value_or(streamsRows() && !plan.prefetch &&
                                 opts.planTable().streamedTiles.cacheHints);
  else if (plan.strategy == Strategy::fused)
    plan.cacheHints = opts.cacheHints.value_or(
        autoCacheHints(opts.planTable(), plan, sm, group.writesRows()));
  else
    plan.cacheHints = plan.strategy == Strategy::online && canOnline &&
                      opts.cacheHints.value_or(autoCacheHints(
                          opts.planTable(), plan, sm, group.writesRows()));
  return success();
}
