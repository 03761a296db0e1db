//===- PlanBlockShape.cpp - The block shapes of a kernel plan -------------===//
//
// Part of the softmax kernel compiler.
//
// The Planner's steps that shape the strategy's blocks: a block or a
// cluster of blocks holding the row, the online kernel's tile, the chunks
// of a row, and the operands' registers.
//
//===----------------------------------------------------------------------===//

#include "Planner.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::rowred;
using namespace mlir::rowred::rules;

FailureOr<KernelPlan> Planner::planChunks(const Group &group,
                                          const PlanOptions &opts,
                                          KernelPlan plan, int64_t vector,
                                          int64_t sm) {
  MapOp map = group.map;
  bool pair = isOnlineSoftmaxPair(group);
  auto unsupported = [&](StringRef field) {
    return map.emitOpError()
           << field << " does not apply to the chunks strategy, whose "
           << "blocks each take one chunk of one row";
  };
  if (opts.rowsPerBlock > 1)
    return unsupported("rows_per_block");
  if (opts.clusterSize > 1)
    return unsupported("cluster");
  if (opts.keptElements > 0)
    return unsupported("kept_elements");
  if (opts.prefetch && opts.prefetch != Prefetch::none)
    return unsupported("prefetch");
  if (opts.keepAhead && opts.keepAhead != KeepAhead::none)
    return unsupported("keep_ahead");
  if (opts.cacheHints == true)
    return unsupported("cache_hints");
  if (opts.grid)
    return map.emitOpError()
           << "a chunks kernel's blocks take the chunks of every row by "
              "ticket on a grid of at most the resident blocks; grid cannot "
              "be asked for";
  plan.strategy = Strategy::chunks;
  plan.numWarps = opts.numWarps ? opts.numWarps : 4;
  bool wide = byteWidth(plan.inType) == 4;
  int64_t held = std::max<int64_t>(group.numHeldOperands(), 1);
  int64_t perThread =
      pair ? (wide ? 64 : 32) : int64_t(llvm::bit_floor(uint64_t(32 / held)));
  plan.blockElements =
      opts.blockSize ? opts.blockSize : plan.numThreads() * perThread;
  if (plan.blockElements % plan.numThreads() != 0)
    return map.emitOpError()
           << "block " << plan.blockElements
           << " must be a multiple of the block's " << plan.numThreads()
           << " threads: each holds the same number of a chunk's elements";
  perThread = plan.elementsPerThread();
  if (perThread > kMaxElementsPerThread)
    return map.emitOpError()
           << "a chunk of block " << plan.blockElements << " keeps "
           << perThread << " elements per thread in registers (limit "
           << kMaxElementsPerThread << ")";
  plan.vectorWidth = std::min(vector, perThread & -perThread);
  int64_t stagedInputs = pair ? 1 : stageSlots(group);
  if (stagedInputs == 0 && opts.chunkStage.value_or(0) > 0)
    return map.emitOpError()
           << "chunk_stage needs inputs of one element type, which the stage "
              "holds side by side";
  plan.stageInputs = std::max<int64_t>(stagedInputs, 1);
  plan.chunkStaged =
      opts.chunkStage
          ? *opts.chunkStage
          : plan.numThreads() * (pair ? (wide ? 64 : 96)
                                 : stagedInputs
                                     ? llvm::alignDown((wide ? 64 : 96) / held,
                                                       plan.vectorWidth)
                                     : 0);
  int64_t stagedUnit = plan.numThreads() * plan.vectorWidth;
  if (plan.chunkStaged % stagedUnit != 0)
    return map.emitOpError()
           << "chunk_stage " << plan.chunkStaged << " must be a multiple of "
           << stagedUnit << " (" << plan.numThreads() << " threads x "
           << plan.vectorWidth << "-element vectors)";
  if (plan.dynamicSharedBytes() > maxDynamicSharedBytes(plan.sm()))
    return map.emitOpError() << "chunk_stage " << plan.chunkStaged << " takes "
                             << plan.dynamicSharedBytes()
                             << " bytes of shared memory; a block has at most "
                             << maxDynamicSharedBytes(plan.sm());
  if (plan.hasStage() && sm < 90)
    return map.emitOpError()
           << "chunk_stage fills the stage with cp.async.bulk, which needs "
              "sm_90 or newer, not "
           << opts.chip << " (chunk_stage = 0 holds a chunk in registers only)";
  if (plan.chunkElements() > (int64_t(1) << 30))
    return map.emitOpError() << "a chunk of " << plan.chunkElements()
                             << " elements is too large (at most 2^30)";
  plan.maxCols = 0;
  plan.rereadFallback = false;
  return plan;
}

LogicalResult Planner::shapeRowBlock() {
  if (rowBlock == 0)
    return map.emitOpError()
           << "the " << stringifyStrategy(plan.strategy)
           << " strategy holds the whole row in registers and needs its "
              "length: set cols=N or the request's block"
           << " (or use strategy=online)";
  if (cols > rowBlock)
    return map.emitOpError()
           << "block " << rowBlock << " is smaller than the " << cols
           << " columns; the " << stringifyStrategy(plan.strategy)
           << " kernel holds the whole row";
  int64_t slice = rowBlock;
  if (plan.strategy == Strategy::cluster) {
    if (givenCluster() != 0)
      plan.clusterSize = givenCluster();
    else {
      // From the power-of-two block; a 3 * 2^k row block then gets
      // 3 * 2^j slices.
      int64_t pow2 = llvm::PowerOf2Ceil(rowBlock);
      plan.clusterSize = std::clamp<int64_t>(
          pow2 / std::max(autoClusterSlice(rowBlock, elementBytes, cols,
                                           maxBlockThreads),
                          pow2 / kMaxClusterSize),
          2, kMaxClusterSize);
    }
    if (rowBlock < plan.clusterSize || rowBlock % plan.clusterSize != 0)
      return map.emitOpError() << "a row block of " << rowBlock
                               << " elements cannot be split over "
                               << plan.clusterSize << " blocks";
    slice = rowBlock / plan.clusterSize;
  }
  plan.rowsPerBlock = opts.rowsPerBlock ? opts.rowsPerBlock : 1;
  // A block per row where the stage is asked for: only such blocks hold
  // one.
  const RowsPerBlockRule &several = opts.planTable().rowsPerBlock;
  if (!opts.rowsPerBlock && !opts.numWarps &&
      plan.strategy == Strategy::fused && opts.prefetch != Prefetch::stage &&
      rowBlock <= several.maxBlock)
    plan.rowsPerBlock = several.rows;
  if (plan.rowsPerBlock > 1 && plan.strategy != Strategy::fused)
    return map.emitOpError() << "rows_per_block applies to the fused "
                                "strategy only";
  if (opts.numWarps) {
    plan.numWarps = opts.numWarps;
  } else if (plan.rowsPerBlock > 1) {
    // At most a warp per row (the rows reduce within their warp), each
    // thread holding the table's elements.
    int64_t perRow =
        std::clamp<int64_t>(slice / several.elementsPerThread, 1, 32);
    plan.numWarps = std::max<int64_t>(perRow * plan.rowsPerBlock / 32, 1);
  } else if (plan.strategy == Strategy::cluster && lengthWarps) {
    // The warps of the table's cluster of this row length (row_lengths).
    plan.numWarps = lengthWarps;
  } else {
    plan.numWarps = defaultFusedWarps(opts.planTable(), slice);
  }
  // A shape measured for this block: it may hold more elements per
  // thread than derived warps do.
  int64_t measuredWarps = measuredBlockWarps(plan, slice, opts, sm);
  if (measuredWarps)
    plan.numWarps = measuredWarps;
  if (plan.rowsPerBlock > 1 &&
      (plan.rowsPerBlock > plan.numThreads() || plan.threadsPerRow() > 32 ||
       !llvm::isPowerOf2_64(plan.threadsPerRow())))
    return map.emitOpError()
           << "rows_per_block = " << plan.rowsPerBlock << " over "
           << plan.numThreads()
           << " threads must leave a power of two from 1 to 32 threads per "
              "row";
  // At least one element per thread, the same number for every thread.
  plan.blockElements = std::max(slice, plan.threadsPerRow());
  if (plan.blockElements % plan.threadsPerRow() != 0)
    return map.emitOpError() << "a block of " << plan.blockElements
                             << " elements does not divide evenly over "
                             << plan.threadsPerRow() << " threads per row";
  plan.maxCols = plan.blockElements * plan.clusterSize;
  plan.stageElements = plan.blockElements;
  if (plan.elementsPerThread() > opts.maxElementsPerThread() && !measuredWarps)
    return map.emitOpError()
           << "a " << stringifyStrategy(plan.strategy) << " block of "
           << plan.blockElements << " elements over " << plan.threadsPerRow()
           << " threads keeps " << plan.elementsPerThread()
           << " elements per thread in registers (limit "
           << opts.maxElementsPerThread() << "); ask for more warps"
           << ", or strategy=online for rows this long";
  return success();
}

void Planner::fitOperandRegisters() {
  if (group.hasOneRowOperand() || plan.rowsPerBlock > 1 ||
      plan.strategy == Strategy::online)
    return;
  auto fits = [&](const KernelPlan &p) {
    auto [needed, available] =
        operandRegisters(p, registerOperands(p.clusterSize));
    return needed <= available;
  };
  int64_t held = group.numHeldOperands();
  KernelPlan fitted = plan;
  if (plan.strategy == Strategy::cluster && givenCluster() == 0) {
    auto halveSlices = [&](KernelPlan &p, auto thinner) {
      while (thinner(p) && p.clusterSize * 2 <= kMaxClusterSize &&
             p.elementsPerThread() % 2 == 0) {
        p.clusterSize *= 2;
        p.blockElements /= 2;
        p.stageElements = p.blockElements;
      }
    };
    // Slices the table's operand_shapes measured faster on its warps and
    // thinner (the softmax backward's y and dy at 32768-131072: 16
    // elements per thread on 512 threads): a cluster of twice the blocks,
    // each taking half, until they are; not where no cluster gets there.
    TableKey key = tableKey(fitted, fitted.blockElements);
    key.cluster = fitted.clusterSize;
    if (const OperandShapeRow *shape = opts.planTable().operandShape(
            key, numOperands(fitted.clusterSize), held)) {
      KernelPlan shaped = fitted;
      if (shape->warps && !opts.numWarps)
        shaped.numWarps = shape->warps;
      halveSlices(shaped, [&](const KernelPlan &p) {
        return p.elementsPerThread() > shape->elementsPerThread;
      });
      if (shaped.elementsPerThread() <= shape->elementsPerThread &&
          fits(shaped))
        fitted = shaped;
    }
    // Slices that do not fit: thinner likewise.
    halveSlices(fitted, [&](const KernelPlan &p) { return !fits(p); });
  }
  // More warps while a block of derived warps does not fit (each thread
  // holding fewer elements: the residual norm's four f32 operands at
  // 8192), then fewer while the registers of the operands it holds
  // through its reductions (Group::numHeldOperands) leave room for only one
  // block (one row in flight) per SM and a block of half the threads fits
  // (layer_norm bf16 8192, whose weight and bias the map loads: 8 warps,
  // H100 4096 rows 2643 GB/s against 2539 on 4).
  while (!opts.numWarps && fitted.clusterSize == 1 && !fits(fitted) &&
         fitted.numThreads() * 2 <= 1024 &&
         fitted.elementsPerThread() / 2 >= fitted.vectorWidth) {
    KernelPlan more = fitted;
    more.numWarps *= 2;
    if (!fits(more))
      break;
    fitted = more;
  }
  while (!opts.numWarps && fitted.clusterSize == 1 &&
         fitted.numWarps % 2 == 0 &&
         fitted.elementsPerThread() * 2 <= kMaxElementsPerThread) {
    KernelPlan fewer = fitted;
    fewer.numWarps /= 2;
    if (fits(fitted) && (operandBlocksPerSM(fitted, held) >= 2 || !fits(fewer)))
      break;
    fitted = fewer;
  }
  // Blocks the table's operand_shapes measured faster on other warps (f32
  // rms_norm and softmax backward at 2048-8192: 16 elements per thread;
  // 16-bit layer_norm at 6144: 32).
  const OperandShapeRow *shape =
      fitted.clusterSize == 1
          ? opts.planTable().operandShape(
                tableKey(fitted, fitted.blockElements), numOperands(), held)
          : nullptr;
  if (!opts.numWarps && shape) {
    KernelPlan shaped = fitted;
    shaped.numWarps = fitted.blockElements / (shape->elementsPerThread * 32);
    shaped.minBlocksPerSM = shape->minBlocksPerSM;
    if (shaped.numWarps >= 1 && shaped.numWarps <= 32 && fits(shaped))
      fitted = shaped;
  }
  if (fits(fitted))
    plan = fitted;
}

bool Planner::operandsFit() const {
  if (group.hasOneRowOperand())
    return true;
  auto [needed, available] =
      operandRegisters(plan, registerOperands(plan.clusterSize));
  return needed <= available;
}

LogicalResult Planner::shapeOnline() {
  if (opts.rowsPerBlock > 1)
    return map.emitOpError()
           << "rows_per_block does not apply to the online strategy";
  // Without the running pair (softmax's reduces), or asked not to use
  // it, each level of reduces streams the row.
  if (!canPair && opts.reread == false)
    return map.emitOpError()
           << "an online kernel without reread needs the running (max, "
              "sum) pair: a max reduce followed by a sum of exp(x - max), "
              "as produced by rowred-decompose";
  plan.rereadFallback = !canPair || opts.reread.value_or(false);
  // With per-row results (logsumexp, cross-entropy) the running pair's
  // kernel has no pass 2 to hand tiles on to, or none that auto's rules
  // for it were measured on: its second pass runs forward, and it stages
  // and keeps nothing.
  if (canPair && !canOnline && !plan.streamsLevels()) {
    plan.reverseSecondPass = false;
    if ((opts.prefetch == Prefetch::stage) || opts.keptElements > 0 ||
        opts.keepAhead == KeepAhead::tiles ||
        opts.keepAhead == KeepAhead::bulk || opts.cacheHints == true)
      return map.emitOpError()
             << "the online kernel of a map with per-row results takes "
                "no stage, kept tiles or cache hints";
  }
  if (opts.clusterSize > 1) {
    if (!clustersAvailable)
      return map.emitOpError() << "an online kernel over clusters needs "
                                  "thread-block clusters (sm_90 or newer), "
                                  "not "
                               << opts.chip;
    plan.clusterSize = opts.clusterSize;
  } else if (opts.clusterSize == 0 && opts.strategy == "auto" &&
             clustersAvailable && cols != 0 && !stagedRow && !reducedOnly) {
    plan.clusterSize =
        autoOnlineClusterSize(opts.planTable(), cols, elementBytes);
  }
  if (opts.blockSize != 0 && !llvm::isPowerOf2_64(opts.blockSize))
    return map.emitOpError() << "an online tile (block) must be a "
                                "power of two, got "
                             << opts.blockSize;
  const WarpsRow &shape = defaultOnlineShape(
      opts.planTable(), plan.inType, plan.clusterSize, sm, group.writesRows());
  const StreamedTileRule &streamed = opts.planTable().streamedTiles;
  plan.numWarps = opts.numWarps   ? opts.numWarps
                  : lengthWarps   ? lengthWarps
                  : streamsRows() ? streamed.warps
                  : stagedRow     ? stagedRowWarps(opts.planTable(), cols)
                                  : shape.warps;
  // Tiles of the elements per thread that the table's online_warps row
  // names (rows only reduced), else 4 vectors per thread; 2 for f16,
  // whose conversions make ptxas spill with the reversed second pass at
  // 4, for the bf16 shares kept in bulk (autoBulkTiles) and for staged
  // rows.
  bool twoVectors = plan.inType.isF16() || stagedRow ||
                    autoBulkTiles(opts, plan.inType, plan.clusterSize, cols);
  int64_t tilePerThread = !stagedRow && shape.elementsPerThread
                              ? shape.elementsPerThread
                              : vector * (twoVectors ? 2 : 4);
  plan.blockElements =
      opts.blockSize ? opts.blockSize : plan.numThreads() * tilePerThread;
  // A streamed tile: at most the table's streamed_tiles values per
  // thread of all operands together, at least a vector each.
  if (!opts.blockSize && plan.streamsLevels()) {
    int64_t operands =
        group.hasOneRowOperand() ? 1 : numOperands(plan.clusterSize);
    int64_t perThread = vector * 4;
    while (perThread > vector && perThread * operands > streamed.values)
      perThread /= 2;
    plan.blockElements = plan.numThreads() * perThread;
  }
  plan.maxCols = 0;
  // A block's share of a known row: whole tiles, ceil(ceil(N / C) / tile)
  // of them (emitOnlineRow); the stage's size when it holds the share.
  if (cols != 0 && (!plan.streamsLevels() || stagesStreamedRow()))
    plan.stageElements =
        llvm::divideCeil(llvm::divideCeil(cols, plan.clusterSize),
                         plan.blockElements) *
        plan.blockElements;
  if (plan.blockElements < plan.numThreads())
    return map.emitOpError() << "the online tile (block " << plan.blockElements
                             << ") must hold at least one element per thread ("
                             << plan.numThreads() << ")";
  if (plan.elementsPerThread() > opts.maxElementsPerThread())
    return map.emitOpError()
           << "an online tile of " << plan.blockElements << " elements keeps "
           << plan.elementsPerThread() << " elements per thread in "
           << "registers (limit " << opts.maxElementsPerThread() << ")";
  return success();
}
