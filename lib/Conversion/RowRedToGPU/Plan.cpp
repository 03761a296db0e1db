//===- Plan.cpp - Choose the plan of a kernel -----------------------------===//
//
// Part of the softmax kernel compiler.
//
// Resolves the pass options and the group's types into a KernelPlan: the
// strategy, the block shape and the memory paths, in the named steps of a
// Planner (Planner.h). This file holds its first steps (the inputs and the
// strategy) and the second kernel of a few rows; `auto`'s choices are made
// in the Planner's steps, by the rules of PlanRules.h, and only there.
//
//===----------------------------------------------------------------------===//

#include "Planner.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::rowred;
using namespace mlir::rowred::rules;

/// What the table's row_lengths and few_rows match the kernel of `group` by,
/// for rows of `cols` elements of `type` (`aligned`: a multiple of the
/// vector width).
static RowLengthKey tableKey(const Group &group, Type type, int64_t cols,
                             bool aligned) {
  return {type,
          cols,
          aligned,
          group.numHeldOperands(),
          static_cast<int64_t>(group.reduces.size()),
          group.writesRows(),
          !group.columnSums.empty()};
}

/// The length of `group`'s rows: the input type's where it has one, else
/// the cols option's (0: not known).
static int64_t rowLength(const Group &group, const PlanOptions &opts) {
  auto inType = cast<MemRefType>(MapOp(group.map).getInput().getType());
  return inType.isDynamicDim(1) ? opts.cols : inType.getDimSize(1);
}

/// What the map of `group` holds beyond softmax's (MapLoad), for rows of
/// rowLength on vectors of `vectorWidth` (0: not known yet, no peeled
/// path).
static MapLoad mapLoad(const Group &group, const PlanOptions &opts,
                       int64_t vectorWidth) {
  // A map of rows that reads per-row inputs per element: cross-entropy's
  // gradient, its labels compared with every element's column.
  bool rowInputsPerElement = !group.rowInputs.empty() && group.writesRows();
  int64_t cols = rowLength(group, opts);
  bool peeled = vectorWidth > 0 && cols > 0 && cols % vectorWidth != 0;
  return {!isSoftmaxMap(group), rowInputsPerElement, peeled,
          !group.hasOneRowOperand(), group.numMapOnlyOperands()};
}

FailureOr<KernelPlan> Planner::run() {
  if (failed(resolveInputs()) || failed(checkShapeOptions()))
    return failure();
  FailureOr<bool> chunks = chooseStrategy();
  if (failed(chunks))
    return failure();
  if (*chunks)
    return planChunks(group, opts, plan, vector, sm);

  KernelPlan unshaped = plan;
  if (failed(plan.strategy != Strategy::online ? shapeRowBlock()
                                               : shapeOnline()))
    return failure();
  fitOperandRegisters();
  // A row of several operands that auto gave a block or a cluster but
  // that does not fit its registers there streams instead (not with sums
  // down the columns: refused).
  if (autoMayStream() && plan.strategy != Strategy::online && !operandsFit()) {
    plan = unshaped;
    plan.strategy = Strategy::online;
    if (failed(shapeOnline()))
      return failure();
  }
  // The scalar path re-reads the row from blocks of 8192, and with several
  // operands from 6144: holding them all, it takes registers from the
  // vector path (H200, bench/family.py --sweep, 4096 and 16384 rows of
  // 5120 and 6144: layer_norm f32 +7% to +19%, bf16 rms_norm +1% to +10%,
  // f32 rms_norm level).
  int64_t rereadFrom = group.hasOneRowOperand() ? 8192 : 6144;
  if (plan.strategy != Strategy::online)
    plan.rereadFallback =
        opts.reread.value_or(plan.blockElements >= rereadFrom);
  // The widest power of two dividing the elements per thread: chunks of
  // vectorWidth elements tile them exactly.
  int64_t perThread = plan.elementsPerThread();
  plan.vectorWidth = std::min(vector, perThread & -perThread);
  if (failed(planPairAndGrid()) || failed(planPrefetch()) ||
      failed(planKeptTiles()) || failed(planCacheHints()) ||
      failed(planMapLoads()) || failed(planColumnSums()) ||
      failed(refuseSpills()))
    return failure();
  return plan;
}

LogicalResult Planner::resolveInputs() {
  auto inType = cast<MemRefType>(map.getInput().getType());
  plan.chip = opts.chip;
  plan.inType = inType.getElementType();
  plan.outType = group.outputType();
  plan.reverseSecondPass = opts.reverseSecondPass;
  plan.fastExp = opts.fastExp;
  sm = chipVersion(opts.chip);
  clustersAvailable = sm >= 90;
  elementBytes = std::max(byteWidth(plan.inType), byteWidth(plan.outType));
  canPair = isOnlineSoftmaxPair(group);
  canChunk = canPair || chunkExchanges(group) > 0;
  // The online kernel's running pair writes no per-row results.
  canOnline = canPair && !group.hasRowOperands();
  // Groups of several operands size their blocks by their registers
  // (fitOperandRegisters).
  maxBlockThreads = group.hasOneRowOperand()
                        ? autoMaxBlockThreads(sm, mapLoad(group, opts, 0))
                        : 1024;
  if (opts.cols < 0)
    return map.emitOpError() << "cols must be positive, got " << opts.cols;
  if (!inType.isDynamicDim(1) && opts.cols != 0 &&
      opts.cols != inType.getDimSize(1))
    return map.emitOpError()
           << "cols=" << opts.cols << " contradicts the input type, which has "
           << inType.getDimSize(1) << " columns";
  cols = rowLength(group, opts);
  // The kernels index columns in 32 bits (docs/abi.md: N < 2^31).
  if (cols >= (int64_t(1) << 31))
    return map.emitOpError()
           << "rows of " << cols
           << " columns are too long: the kernels take N < 2^31";

  // Vector width: 16-byte accesses of the wider of the input and output
  // elements by default (bf16 rows written as f32: 4).
  vector = opts.vectorWidth;
  if (vector == 0)
    vector = 16 / std::max(byteWidth(plan.inType), byteWidth(plan.outType));
  if (vector < 0 || !llvm::isPowerOf2_64(vector) ||
      vector * byteWidth(plan.inType) > 16 ||
      vector * byteWidth(plan.outType) > 16)
    return map.emitOpError()
           << "vector must be a power of two with accesses of at most "
              "16 bytes (at most "
           << 16 / std::max(byteWidth(plan.inType), byteWidth(plan.outType))
           << " elements here), got " << vector;

  return success();
}

LogicalResult Planner::checkShapeOptions() {
  if (opts.numWarps != 0 && !isWarpCount(opts.numWarps))
    return map.emitOpError() << "warps must be from 1 to 32, a power of "
                                "two or three times one, got "
                             << opts.numWarps;
  if (opts.blockSize != 0 && !isBlockShape(opts.blockSize))
    return map.emitOpError() << "block must be a power of two or three "
                                "times one, got "
                             << opts.blockSize;
  if (opts.rowsPerBlock != 0 &&
      (opts.rowsPerBlock < 0 || !llvm::isPowerOf2_64(opts.rowsPerBlock)))
    return map.emitOpError() << "rows_per_block must be a power of two, got "
                             << opts.rowsPerBlock;
  if (opts.clusterSize != 0 &&
      (opts.clusterSize < 1 || opts.clusterSize > kMaxNonPortableClusterSize ||
       !llvm::isPowerOf2_64(opts.clusterSize)))
    return map.emitOpError()
           << "cluster must be 1 (no cluster), 2, 4, 8 or 16 (16 needs "
              "a "
              "launcher that allows non-portable cluster sizes), got "
           << opts.clusterSize;
  // The block a whole row needs (0: row length unknown).
  rowBlock = opts.blockSize;
  if (rowBlock == 0 && cols != 0)
    rowBlock = autoRowBlock(opts.planTable(), cols);
  // A row that auto stages whole in shared memory on a block of its own
  // (autoStagedRow): the online kernel's shape, decided here once. Not a
  // row off the vector width whose map reads per-row inputs: cross-entropy's
  // gradient, comparing its labels with every element's column, spilled 20
  // bytes there on bf16 50257 and keeps its chunks. Groups without the
  // running pair stage each 2-D input for their streamed passes, where
  // they write rows and read no per-row input or gather (not measured).
  bool mayStageStreamed = !canPair && group.writesRows() &&
                          group.rowInputs.empty() && group.gathers.empty() &&
                          stageSlots(group) > 0;
  const RowLengthRow *staged =
      autoMayStream() && (canOnline || mayStageStreamed)
          ? autoStagedRow(opts, plan, rowLengthKey(), sm,
                          group.hasOneRowOperand() && group.rowInputs.empty())
          : nullptr;
  stagedRow = staged != nullptr;
  lengthWarps = staged ? staged->warps : 0;
  return success();
}

RowLengthKey Planner::rowLengthKey() const {
  return tableKey(group, plan.inType, cols, cols % vector == 0);
}

FailureOr<bool> Planner::chooseStrategy() {
  if (opts.strategy == "fused") {
    // A plan of the same fields is refused by its verifier: so is the
    // request, rather than planned without its cluster.
    if (opts.clusterSize > 1)
      return map.emitOpError()
             << "a fused kernel is one block per row, not a cluster of "
             << opts.clusterSize << " (strategy = cluster splits a row)";
    plan.strategy = Strategy::fused;
  } else if (opts.strategy == "cluster") {
    if (!clustersAvailable)
      return map.emitOpError() << "the cluster strategy needs thread-block "
                                  "clusters (sm_90 or newer), not "
                               << opts.chip;
    if (opts.clusterSize == 1)
      return map.emitOpError() << "the cluster strategy needs a cluster of 2 "
                                  "or more; one block per row is "
                                  "strategy = fused";
    plan.strategy = Strategy::cluster;
  } else if (opts.strategy == "online") {
    plan.strategy = Strategy::online;
  } else if (opts.strategy == "chunks") {
    if (!canChunk)
      return map.emitOpError()
             << "the chunks strategy needs a max reduce followed by a sum of "
                "exp(x - max), as produced by rowred-decompose, or levels "
                "of at most two reduces each (a level's reduces read only "
                "earlier levels' results; a row's chunks meet once per "
                "level)";
    return true;
  } else if (autoMayStream() && sm >= 90 && !group.writesRows() &&
             opts.blockSize == 0 && opts.numWarps == 0 &&
             opts.clusterSize == 0 &&
             (opts.rowsPerBlock == 0 || group.hasColumnSums()) &&
             opts.vectorWidth == 0 &&
             opts.planTable().takesRowLength(Strategy::online,
                                             rowLengthKey())) {
    // Rows only reduced (logsumexp, the cross-entropy loss, summed over the
    // rows or not), with the request's fields that shape the kernel left to
    // auto (totals take one row per block): streamed once by the online
    // kernel (measured on sm_90).
    plan.strategy = Strategy::online;
    reducedOnly = true;
  } else if (autoMayStream() && canChunk && !stagedRow &&
             !group.hasColumnSums() &&
             autoChunks(opts, plan, rowLengthKey(), sm,
                        group.hasOneRowOperand())) {
    return true;
  } else if (opts.strategy == "auto") {
    // Fused when the row is known and fits one block's registers, cluster
    // when it fits a cluster's or the table's row_lengths give the row's
    // length to clusters (the softmax backward's f32 16384), else online
    // (streaming the row per level of reduces where it has no running
    // pair).
    plan.strategy = Strategy::online;
    const RowLengthRow *clusterByLength = nullptr;
    if (rowBlock != 0 && !stagedRow) {
      int64_t warps = opts.numWarps
                          ? opts.numWarps
                          : defaultFusedWarps(opts.planTable(), rowBlock);
      bool fitsBlock = std::max<int64_t>(rowBlock / (warps * 32), 1) <=
                           opts.maxElementsPerThread() &&
                       (opts.blockSize != 0 ||
                        rowBlock <= maxAutoFusedBlock(elementBytes, sm >= 80,
                                                      maxBlockThreads)) &&
                       (group.hasOneRowOperand() ||
                        fitsOperandRegisters(rowBlock, registerOperands()));
      bool fitsCluster =
          clustersAvailable && opts.blockSize == 0 && opts.numWarps == 0 &&
          opts.clusterSize != 1 &&
          fitsAutoCluster(rowBlock, elementBytes, cols, maxBlockThreads);
      if (fitsCluster)
        clusterByLength =
            opts.planTable().rowLengthOf(Strategy::cluster, rowLengthKey());
      if (fitsBlock && !clusterByLength)
        plan.strategy = Strategy::fused;
      else if (fitsCluster)
        plan.strategy = Strategy::cluster;
      if (clusterByLength) {
        lengthCluster = clusterByLength->cluster;
        lengthWarps = clusterByLength->warps;
        lengthSumsInRegisters = clusterByLength->sumsInRegisters;
      }
    }
    // Sums down the columns: the table's clusters, else the block holding
    // the row (which the registers refuse where it does not fit). Totals
    // alone (an accumulator per block, not per column) keep the cluster of
    // a row that fits a cluster and not a block.
    bool totalsOnCluster =
        group.columnSums.empty() && plan.strategy == Strategy::cluster;
    if (group.hasColumnSums() && !totalsOnCluster)
      plan.strategy = clusterByLength ? Strategy::cluster : Strategy::fused;
  } else {
    return map.emitOpError() << "unknown strategy '" << opts.strategy
                             << "'; expected fused, cluster, online, chunks or "
                                "auto";
  }
  return false;
}

/// `opts` for a group with column sums (ColumnSums): a block per row
/// holding it (fused), or a cluster holding it in slices (auto's where the
/// table's row_lengths say so), on the persistent grid, which the kernel's
/// grid barrier and partial rows need; a diagnostic where the request asks
/// for another shape. Totals over the rows alone may also stream the row
/// (online).
static FailureOr<PlanOptions> columnSumsOptions(const Group &group,
                                                PlanOptions opts) {
  MapOp map = group.map;
  bool cluster = opts.strategy == "cluster";
  bool online = opts.strategy == "online" && group.columnSums.empty();
  if (opts.strategy != "auto" && opts.strategy != "fused" && !cluster &&
      !online)
    return map.emitOpError()
           << group.sumsName() << ", which needs strategy = fused"
           << (group.columnSums.empty() ? ", cluster or online" : " or cluster")
           << ", not " << opts.strategy;
  if (opts.rowsPerBlock > 1 || (!cluster && opts.clusterSize > 1) ||
      opts.grid == Grid::rows)
    return map.emitOpError() << group.sumsName()
                             << ", which needs one row per block (or "
                                "cluster) and the persistent grid";
  if (opts.strategy == "fused")
    opts.clusterSize = 1;
  opts.rowsPerBlock = 1;
  opts.grid = Grid::persistent;
  return opts;
}

const PlanTable &PlanOptions::planTable() const {
  return table ? *table : PlanTable::get();
}

FailureOr<KernelPlan> mlir::rowred::planKernel(const Group &group,
                                               const PlanOptions &request) {
  FailureOr<PlanOptions> options =
      group.hasColumnSums() ? columnSumsOptions(group, request) : request;
  if (failed(options))
    return failure();
  const PlanOptions &opts = *options;
  FailureOr<KernelPlan> plan = Planner(group, opts).run();
  if (failed(plan))
    return failure();
  // The table's operand_shapes may give the bound their block was measured
  // with.
  if (plan->minBlocksPerSM == 0)
    plan->minBlocksPerSM =
        minBlocksPerSM(*plan, mapLoad(group, opts, plan->vectorWidth));
  return plan;
}

/// Whether `main` leaves a launch of a few rows on too few blocks, or on
/// blocks shaped for many: chunks, and a block per row of a known length:
/// the online kernel of rows only reduced, softmax's pair on the block of a
/// staged row or of a fused kernel, and the norms' fused or online blocks,
/// whose weight (and bias) the map reads (the rows few_rows measured such
/// blocks against).
static bool fewRowsFewBlocks(const Group &group, const KernelPlan &main,
                             int64_t cols) {
  if (main.strategy == Strategy::chunks)
    return true;
  if (cols == 0 || main.clusterSize != 1 || main.rowsPerBlock != 1)
    return false;
  return (main.strategy == Strategy::online && !group.writesRows()) ||
         isOnlineSoftmaxPair(group) ||
         ((main.strategy == Strategy::fused ||
           main.strategy == Strategy::online) &&
          group.hasMapOnlyOperands());
}

/// The plan of the kernel of few_rows' `row` for `group`, or failure where
/// the strategy cannot take the group (its diagnostic is not the user's).
static FailureOr<KernelPlan> planFewRowsRow(const Group &group,
                                            const PlanOptions &opts,
                                            const FewRowsRow &row) {
  PlanOptions fewOpts = opts;
  fewOpts.strategy = stringifyStrategy(row.lengths.strategy).str();
  fewOpts.clusterSize = row.lengths.cluster;
  if (row.lengths.warps)
    fewOpts.numWarps = row.lengths.warps;
  if (row.block) {
    fewOpts.blockSize = row.block;
    fewOpts.chunkStage = row.chunkStage;
  }
  if (row.hoistMapLoads)
    fewOpts.hoistMapLoads = true;
  ScopedDiagnosticHandler quiet(group.map->getContext(),
                                [](Diagnostic &) { return success(); });
  FailureOr<KernelPlan> plan = planKernel(group, fewOpts);
  if (failed(plan))
    return failure();
  plan->maxRows = row.maxRows;
  // Hoisted loads hold the map's operands through the reductions. A launch
  // of a few rows on a block per row needs one block per SM, and asking for
  // no more lets ptxas take the registers: left free, it holds a block of
  // 512 threads to 64 (two per SM), and bf16 layer_norm at 8192 spills 4
  // bytes there (92 registers with the bound, ptxas -v, sm_90). A cluster
  // launches its size times as many blocks: the bound's registers (92-112
  // against 64-80 for 16-bit layer_norm at 12288-16384 over clusters of 4)
  // cost 12-19% at 64 rows (decode_ab.py, H200).
  if (plan->hoistMapLoads && plan->minBlocksPerSM == 0 &&
      plan->clusterSize == 1)
    plan->minBlocksPerSM = 1;
  return plan;
}

/// Whether `a` and `b` build the same kernel but for the rows they take.
static bool sameKernel(const KernelPlan &a, const KernelPlan &b) {
  return a.strategy == b.strategy && a.chunkElements() == b.chunkElements() &&
         a.numWarps == b.numWarps && a.clusterSize == b.clusterSize &&
         a.hoistMapLoads == b.hoistMapLoads;
}

SmallVector<KernelPlan> mlir::rowred::planFewRows(const Group &group,
                                                  const PlanOptions &opts,
                                                  const KernelPlan &main) {
  SmallVector<KernelPlan> plans;
  int64_t cols = rowLength(group, opts);
  if (opts.strategy != "auto" || !fewRowsFewBlocks(group, main, cols))
    return plans;
  // The ladder stops at a row the strategy cannot take (too many operands
  // for a cluster's registers) or that gives the main kernel: the next
  // kernel up takes its launches.
  for (const FewRowsRow *row : opts.planTable().fewRowsOf(
           tableKey(group, main.inType, cols, cols % main.vectorWidth == 0))) {
    FailureOr<KernelPlan> plan = planFewRowsRow(group, opts, *row);
    if (failed(plan) || sameKernel(*plan, main))
      break;
    if (!plans.empty() && sameKernel(*plan, plans.back()))
      plans.back().maxRows = plan->maxRows;
    else
      plans.push_back(*plan);
  }
  return plans;
}
