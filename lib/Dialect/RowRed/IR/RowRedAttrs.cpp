//===- RowRedAttrs.cpp - Row-wise reduction attributes --------------------===//
//
// Part of the softmax kernel compiler.
//
// The #rowred.plan attribute and its verification: the checks that need only
// the plan (PlanAttr::verify) and those that need the element types of the
// rowred.map it is attached to (verifyOperationAttribute).
//
//===----------------------------------------------------------------------===//

#include "rowred/Dialect/RowRed/IR/KernelPlan.h"
#include "rowred/Dialect/RowRed/IR/RowRedOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

#include <limits>

using namespace mlir;
using namespace mlir::rowred;

#include "rowred/Dialect/RowRed/IR/RowRedEnums.cpp.inc"

/// Parses a boolean field of a plan request: `true` or `false`.
FailureOr<std::optional<bool>>
mlir::rowred::parseRequestBool(AsmParser &parser) {
  StringRef word;
  SMLoc loc = parser.getCurrentLocation();
  if (parser.parseKeyword(&word) || (word != "true" && word != "false"))
    return parser.emitError(loc, "expected true or false");
  return std::optional<bool>(word == "true");
}

#define GET_ATTRDEF_CLASSES
#include "rowred/Dialect/RowRed/IR/RowRedAttrs.cpp.inc"

void RowRedDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "rowred/Dialect/RowRed/IR/RowRedAttrs.cpp.inc"
      >();
}

/// The checks of PlanAttr::verify on the memory paths: what each strategy
/// can have, what each path needs of the others and of the chip.
static LogicalResult
verifyPaths(function_ref<InFlightDiagnostic(StringRef)> fail, Strategy strategy,
            StringRef chip, int64_t sm, int64_t block, int64_t rowsPerBlock,
            int64_t vector, bool reverseSecondPass, bool reread,
            Prefetch prefetch, bool pairReduce, int64_t stageElements,
            int64_t keptElements, KeepAhead keepAhead, bool cacheHints,
            int64_t chunkStage, Grid grid, int64_t warps) {
  bool online = strategy == Strategy::online;
  bool chunks = strategy == Strategy::chunks;
  if (pairReduce && (online || chunks))
    return fail("pair_reduce")
           << "applies to the fused and cluster strategies only";
  if (reread && chunks)
    return fail("reread") << "applies to the fused, cluster and online "
                             "strategies only";
  // An online kernel that re-reads its row per reduce level streams plain
  // tiles, or stages its share of the row whole (prefetch = stage): none of
  // the running pair's other memory paths (its L2 eviction hints aside).
  if (online && reread && (prefetch == Prefetch::registers || keptElements > 0))
    return fail(keptElements > 0 ? "kept_elements" : "prefetch")
           << "applies to the online kernel's running (max, sum) pair, not "
              "with reread";
  if (cacheHints && !online && strategy != Strategy::fused)
    return fail("cache_hints") << "applies to the fused and online strategies "
                                  "only";
  if (cacheHints && strategy == Strategy::fused && prefetch != Prefetch::none)
    return fail("cache_hints") << "hints a fused block's loads of its own "
                                  "row: not with prefetch, which loads the "
                                  "next row";
  if (grid == Grid::rows && chunks)
    return fail("grid") << "rows is for kernels whose programs need not "
                           "all be resident: not chunks";
  if (prefetch != Prefetch::none) {
    if (chunks || vector == 1)
      return fail("prefetch") << "fetches the vector path's next row or "
                                 "tile: not for chunks, nor with vector = 1";
    if (grid == Grid::rows && !online)
      return fail("prefetch") << "with grid = rows a block has no next row";
  }
  if (prefetch == Prefetch::stage) {
    if (rowsPerBlock > 1)
      return fail("prefetch") << "the stage holds one row's share: not with "
                                 "several rows per block";
    if (stageElements < (online ? 1 : block))
      return fail("stage_elements")
             << "must hold "
             << (online ? "the block's share of a row" : "the block's row")
             << " for prefetch = stage, got " << stageElements;
    if (sm < 80)
      return fail("prefetch") << "the stage is filled with cp.async, which "
                                 "needs sm_80 or newer, not "
                              << chip;
  }
  if (keptElements > 0 &&
      (!online || vector == 1 || keptElements % block != 0 ||
       prefetch == Prefetch::stage))
    return fail("kept_elements")
           << "keeps whole tiles of the online kernel's vector path, not with "
              "prefetch = stage";
  if (keepAhead != KeepAhead::none) {
    if (!online || keptElements == 0 || keptElements >= stageElements)
      return fail("keep_ahead")
             << "fills the online kernel's kept tiles (kept_elements, fewer "
                "than stage_elements)";
    if (!reverseSecondPass || prefetch != Prefetch::registers)
      return fail("keep_ahead")
             << "hands tiles on across the passes: it needs prefetch = "
                "registers and the reversed second pass";
    if (sm < (keepAhead == KeepAhead::bulk ? 90 : 80))
      return fail("keep_ahead")
             << "needs cp.async"
             << (keepAhead == KeepAhead::bulk ? ".bulk (sm_90" : " (sm_80")
             << " or newer), not " << chip;
  }
  if (chunkStage < 0 || (chunkStage > 0 && !chunks))
    return fail("chunk_stage") << "must be 0, or a number of elements for the "
                                  "chunks strategy, got "
                               << chunkStage;
  if (chunkStage > 0 && sm < 90)
    return fail("chunk_stage") << "is filled with cp.async.bulk, which needs "
                                  "sm_90 or newer, not "
                               << chip;
  if (chunkStage % (warps * 32 * vector) != 0)
    return fail("chunk_stage")
           << "must be a multiple of " << warps * 32 * vector
           << " (threads x vector), got " << chunkStage;
  return success();
}

LogicalResult PlanAttr::verify(
    function_ref<InFlightDiagnostic()> emitError, Strategy strategy,
    StringRef chip, int64_t block, int64_t warps, int64_t rowsPerBlock,
    int64_t cluster, int64_t vector, bool reverseSecondPass, bool fastExp,
    bool reread, Prefetch prefetch, bool pairReduce, int64_t maxCols,
    int64_t stageElements, int64_t keptElements, KeepAhead keepAhead,
    bool cacheHints, int64_t chunkStage, Grid grid, int64_t minBlocksPerSm,
    int64_t maxRows, bool hoistMapLoads, bool sumsInRegisters) {
  int64_t sm = chipVersion(chip);
  auto fail = [&](StringRef field) {
    return emitError() << "#rowred.plan field '" << field << "': ";
  };
  if (sm == 0)
    return fail("chip") << "'" << chip
                        << "' is not a supported chip; expected one of "
                        << supportedChips();
  if (!isWarpCount(warps))
    return fail("warps") << "must be from 1 to 32, a power of two or three "
                            "times one, got "
                         << warps;
  if (rowsPerBlock < 1 || !llvm::isPowerOf2_64(rowsPerBlock) ||
      rowsPerBlock > warps * 32)
    return fail("rows_per_block")
           << "must be a power of two of at most the block's " << warps * 32
           << " threads, got " << rowsPerBlock;
  if (rowsPerBlock > 1 && strategy != Strategy::fused)
    return fail("rows_per_block") << "applies to the fused strategy only";
  int64_t threadsPerRow = warps * 32 / rowsPerBlock;
  if (rowsPerBlock > 1 && threadsPerRow > 32)
    return fail("rows_per_block") << rowsPerBlock << " rows over " << warps * 32
                                  << " threads leave more than a warp per row";
  if (block < threadsPerRow || block % threadsPerRow != 0)
    return fail("block") << "must be a positive multiple of the "
                         << threadsPerRow << " threads of a row, got " << block;
  int64_t perThread = block / threadsPerRow;
  if (perThread > kMaxElementsPerThread)
    return fail("block") << block << " elements over " << threadsPerRow
                         << " threads keep " << perThread
                         << " per thread in registers; at most "
                         << kMaxElementsPerThread << " fit";
  if (vector < 1 || !llvm::isPowerOf2_64(vector) || perThread % vector != 0)
    return fail("vector") << "must be a power of two dividing the " << perThread
                          << " elements per thread, got " << vector;
  if (cluster < 1 || cluster > 16 || !llvm::isPowerOf2_64(cluster))
    return fail("cluster") << "must be 1, 2, 4, 8 or 16, got " << cluster;
  if (strategy == Strategy::cluster && cluster == 1)
    return fail("cluster") << "the cluster strategy needs 2 or more blocks";
  if (cluster > 1 && strategy != Strategy::cluster &&
      strategy != Strategy::online)
    return fail("cluster") << "applies to the cluster and online strategies "
                              "only";
  if (cluster > 1 && sm < 90)
    return fail("cluster") << "thread-block clusters need sm_90 or newer, not "
                           << chip;
  if (hoistMapLoads && strategy != Strategy::fused &&
      strategy != Strategy::cluster)
    return fail("hoist_map_loads")
           << "applies to the fused and cluster strategies only";
  if (sumsInRegisters && strategy != Strategy::fused &&
      strategy != Strategy::cluster)
    return fail("sums_in_registers")
           << "applies to the fused and cluster strategies only";
  if (failed(verifyPaths(fail, strategy, chip, sm, block, rowsPerBlock, vector,
                         reverseSecondPass, reread, prefetch, pairReduce,
                         stageElements, keptElements, keepAhead, cacheHints,
                         chunkStage, grid, warps)))
    return failure();
  // Element counts of rows the kernels take (N < 2^31): larger ones would
  // also overflow the byte counts derived from them.
  for (auto [value, field] : {std::pair{maxCols, "max_cols"},
                              {stageElements, "stage_elements"},
                              {keptElements, "kept_elements"}})
    if (value < 0 || value > std::numeric_limits<int32_t>::max())
      return fail(field) << "must be from 0 to 2^31 - 1, got " << value;
  // A fused or cluster kernel holds the whole row: a launcher must know the
  // longest row it can take, or a longer one would be computed wrong.
  bool holdsRow = strategy == Strategy::fused || strategy == Strategy::cluster;
  if (holdsRow && (maxCols < 1 || maxCols > block * cluster))
    return fail("max_cols")
           << "a " << stringifyStrategy(strategy)
           << " kernel holds the whole row: from 1 to " << block * cluster
           << " (block x cluster), got " << maxCols;
  if (maxRows < 0)
    return fail("max_rows") << "must be 0 (any) or positive, got " << maxRows;
  if (minBlocksPerSm < 0 || minBlocksPerSm > 32)
    return fail("min_blocks_per_sm")
           << "must be from 0 to 32, got " << minBlocksPerSm;
  return success();
}

LogicalResult PlanRequestAttr::verify(
    function_ref<InFlightDiagnostic()> emitError, std::optional<Strategy>,
    std::optional<int64_t> block, std::optional<int64_t> warps,
    std::optional<int64_t> rowsPerBlock, std::optional<int64_t> cluster,
    std::optional<int64_t> vector, std::optional<bool>, std::optional<bool>,
    std::optional<bool>, std::optional<Prefetch>, std::optional<bool>,
    std::optional<int64_t> keptElements, std::optional<KeepAhead>,
    std::optional<bool>, std::optional<Grid>, std::optional<int64_t> chunkStage,
    std::optional<bool>, std::optional<bool>) {
  for (auto [field, value] :
       {std::pair{"block", block}, std::pair{"warps", warps},
        std::pair{"rows_per_block", rowsPerBlock},
        std::pair{"cluster", cluster}, std::pair{"vector", vector}})
    if (value && *value < 1)
      return emitError() << "#rowred.plan_request field '" << field
                         << "': must be positive, got " << *value;
  for (auto [field, value] : {std::pair{"kept_elements", keptElements},
                              std::pair{"chunk_stage", chunkStage}})
    if (value && *value < 0)
      return emitError() << "#rowred.plan_request field '" << field
                         << "': must not be negative, got " << *value;
  return success();
}

/// The input and output types of the op a plan or a plan request is attached
/// to: a rowred.map, or a high-level op that decomposes into one. An op
/// without 2-D outputs (per-row results only) gives the input type for both.
static std::optional<std::pair<MemRefType, MemRefType>>
getRowTypes(Operation *op) {
  return TypeSwitch<Operation *,
                    std::optional<std::pair<MemRefType, MemRefType>>>(op)
      .Case<MapOp>([](MapOp map) {
        auto inType = cast<MemRefType>(map.getInput().getType());
        for (Value output : map.getOutputs())
          if (!MapOp::isRowOutput(output))
            return std::pair{inType, cast<MemRefType>(output.getType())};
        return std::pair{inType, inType};
      })
      .Case<LogSumExpOp>([](LogSumExpOp rowOp) {
        auto inType = cast<MemRefType>(rowOp.getInput().getType());
        return std::pair{inType, inType};
      })
      .Case<CrossEntropyOp>([](CrossEntropyOp rowOp) {
        auto inType = cast<MemRefType>(rowOp.getLogits().getType());
        return std::pair{inType, inType};
      })
      .Case<SoftmaxOp, LogSoftmaxOp, RmsNormOp, LayerNormOp>(
          [](auto rowOp) {
            return std::pair{cast<MemRefType>(rowOp.getInput().getType()),
                             cast<MemRefType>(rowOp.getOutput().getType())};
          })
      .Case<SoftmaxBackwardOp, LogSoftmaxBackwardOp>([](auto rowOp) {
        return std::pair{cast<MemRefType>(rowOp.getOutput().getType()),
                         cast<MemRefType>(rowOp.getGradInput().getType())};
      })
      .Case<RmsNormBackwardOp, LayerNormBackwardOp, LogSumExpBackwardOp>(
          [](auto rowOp) {
        return std::pair{cast<MemRefType>(rowOp.getInput().getType()),
                         cast<MemRefType>(rowOp.getGradInput().getType())};
      })
      .Default([](Operation *) { return std::nullopt; });
}

/// Checks a plan against the input and output types of the op it is attached
/// to.
static LogicalResult verifyPlanOn(Operation *op, MemRefType inType,
                                  MemRefType outType, PlanAttr attr) {
  KernelPlan plan =
      KernelPlan::get(attr, inType.getElementType(), outType.getElementType());
  auto fail = [&](StringRef field) {
    return op->emitOpError() << "#rowred.plan field '" << field << "': ";
  };
  int64_t widest = std::max(byteWidth(plan.inType), byteWidth(plan.outType));
  if (plan.vectorWidth * widest > 16)
    return fail("vector") << plan.vectorWidth << " elements of " << widest
                          << " bytes exceed a 16-byte access";
  int64_t sm = chipVersion(plan.chip);
  if (plan.dynamicSharedBytes() > maxDynamicSharedBytes(sm))
    return fail(plan.strategy == Strategy::chunks ? "chunk_stage"
                : plan.keptElements > 0           ? "kept_elements"
                                                  : "stage_elements")
           << "the stage takes " << plan.dynamicSharedBytes()
           << " bytes of shared memory; a block on " << plan.chip
           << " has at most " << maxDynamicSharedBytes(sm);
  if (!inType.isDynamicDim(1) && plan.maxCols != 0 &&
      inType.getDimSize(1) > plan.maxCols)
    return fail("max_cols")
           << "the kernel handles rows of at most " << plan.maxCols
           << " elements, and the input has " << inType.getDimSize(1);
  return success();
}

LogicalResult RowRedDialect::verifyOperationAttribute(Operation *op,
                                                      NamedAttribute attr) {
  bool isPlan = attr.getName() == kPlanAttrName;
  if (!isPlan && attr.getName() != kPlanRequestAttrName)
    return success();
  std::optional<std::pair<MemRefType, MemRefType>> types = getRowTypes(op);
  if (!types)
    return op->emitError()
           << "'" << attr.getName().getValue()
           << "' belongs on a rowred.map or a high-level rowred op "
              "(softmax, rms_norm, ...)";
  if (!isPlan) {
    if (!isa<PlanRequestAttr>(attr.getValue()))
      return op->emitError() << "'" << kPlanRequestAttrName
                             << "' must be a #rowred.plan_request";
    return success();
  }
  auto plan = dyn_cast<PlanAttr>(attr.getValue());
  if (!plan)
    return op->emitError() << "'" << kPlanAttrName
                           << "' must be a #rowred.plan";
  return verifyPlanOn(op, types->first, types->second, plan);
}
