//===- Plan.cpp - Choose the plan of a kernel -----------------------------===//
//
// Part of the softmax kernel compiler.
//
// Resolves the pass options and the group's types into a KernelPlan: the
// strategy, the block shape and the memory paths, in the named steps of a
// Planner. `auto`'s choices are made here, by the rules of PlanRules.h, and
// only here.
//
//===----------------------------------------------------------------------===//

#include "Plan.h"
#include "PlanRules.h"

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
          !group.outputs.empty()};
}

/// The chunks strategy's part of planKernel: `plan` has its types, and
/// `vector` and `sm` are resolved. Default layout (H200, version 69 of
/// version log): 128 threads, each with 64 f32 elements in registers
/// and 64 staged (3947-3954 GB/s on f32 1024 x 1048576, 1.075x the online
/// kernel's), or 32 16-bit elements in registers and 96 staged.
///
/// Other groups (chunkExchanges) share those among the operands their
/// reduces read, in registers and in the stage (each 2-D input's staged
/// elements side by side).
static FailureOr<KernelPlan> planChunks(const Group &group,
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
  int64_t stagedInputs = pair ? 1 : chunkStageInputs(group);
  if (stagedInputs == 0 && opts.chunkStage.value_or(0) > 0)
    return map.emitOpError()
           << "chunk_stage needs inputs of one element type, which the stage "
              "holds side by side";
  plan.chunkStagedInputs = std::max<int64_t>(stagedInputs, 1);
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

/// What the map of `group` holds beyond softmax's (MapLoad), for rows of
/// `opts.cols` on vectors of `vectorWidth` (0: not known yet, no peeled
/// path).
static MapLoad mapLoad(const Group &group, const PlanOptions &opts,
                       int64_t vectorWidth) {
  // A map of rows that reads per-row inputs per element: cross-entropy's
  // gradient, its labels compared with every element's column.
  bool rowInputsPerElement = !group.rowInputs.empty() && !group.outputs.empty();
  bool peeled =
      vectorWidth > 0 && opts.cols > 0 && opts.cols % vectorWidth != 0;
  return {!isSoftmaxMap(group), rowInputsPerElement, peeled,
          !group.hasOneRowOperand(), group.numMapOnlyOperands()};
}

namespace {

/// The steps of planKernel over one group, in order, sharing what they
/// derive: the inputs (types, row length, vector width), the strategy, the
/// block shape of the strategy, then the memory paths. Each step reports
/// an invalid option with a diagnostic on the map.
class Planner {
public:
  Planner(const Group &group, const PlanOptions &opts)
      : group(group), map(group.map), opts(opts) {}

  /// The plan, but for the fields that follow from the others.
  FailureOr<KernelPlan> run() {
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
    // that does not fit its registers there streams instead.
    if (opts.strategy == "auto" && plan.strategy != Strategy::online &&
        !operandsFit()) {
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
        failed(refuseSpills()))
      return failure();
    return plan;
  }

private:
  /// The element types, the row length (`cols`, or the input type's) and
  /// the widest vector.
  LogicalResult resolveInputs() {
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
    cols = opts.cols;
    if (cols < 0)
      return map.emitOpError() << "cols must be positive, got " << cols;
    if (!inType.isDynamicDim(1)) {
      if (cols != 0 && cols != inType.getDimSize(1))
        return map.emitOpError()
               << "cols=" << cols << " contradicts the input type, which has "
               << inType.getDimSize(1) << " columns";
      cols = inType.getDimSize(1);
    }
    // The kernels index columns in 32 bits (docs/abi.md: N < 2^31).
    if (cols >= (int64_t(1) << 31))
      return map.emitOpError()
             << "rows of " << cols
             << " columns are too long: the kernels take N < 2^31";

    // Vector width: 16 bytes of input by default.
    vector = opts.vectorWidth;
    if (vector == 0)
      vector = 16 / byteWidth(plan.inType);
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

  /// The numeric shape options, and the combinations that contradict.
  LogicalResult checkShapeOptions() {
    if (opts.numWarps != 0 &&
        (opts.numWarps > 32 || !isBlockShape(opts.numWarps)))
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
        (opts.clusterSize < 1 ||
         opts.clusterSize > kMaxNonPortableClusterSize ||
         !llvm::isPowerOf2_64(opts.clusterSize)))
      return map.emitOpError()
             << "cluster must be 1 (no cluster), 2, 4, 8 or 16 (16 needs "
                "a "
                "launcher that allows non-portable cluster sizes), got "
             << opts.clusterSize;
    // The block a whole row needs (0: row length unknown).
    rowBlock = opts.blockSize;
    if (rowBlock == 0 && cols != 0)
      rowBlock = autoRowBlock(cols);
    // A 16-bit row that auto stages whole in shared memory on a block of its
    // own (autoStagedRow): the online kernel's shape, decided here once.
    stagedRow =
        opts.strategy == "auto" && canOnline &&
        autoStagedRow(opts, plan, rowLengthKey(), sm, group.hasOneRowOperand());
    return success();
  }

  /// What the table's row_lengths match the kernel by.
  RowLengthKey rowLengthKey() const {
    return tableKey(group, plan.inType, cols, cols % vector == 0);
  }

  /// Sets plan.strategy; true when the kernel is a chunks kernel, which
  /// planChunks shapes.
  FailureOr<bool> chooseStrategy() {
    if (opts.strategy == "fused") {
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
    } else if (opts.strategy == "auto" && sm >= 90 && group.outputs.empty() &&
               opts.blockSize == 0 && opts.numWarps == 0 &&
               opts.clusterSize == 0 && opts.rowsPerBlock == 0 &&
               opts.vectorWidth == 0 &&
               PlanTable::get().takesRowLength(Strategy::online,
                                               rowLengthKey())) {
      // Rows only reduced (logsumexp, the cross-entropy loss), with the
      // request's fields that shape the kernel left to auto: streamed once
      // by the online kernel (measured on sm_90).
      plan.strategy = Strategy::online;
      reducedOnly = true;
    } else if (opts.strategy == "auto" && canChunk &&
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
      if (rowBlock != 0 && !stagedRow) {
        int64_t warps =
            opts.numWarps ? opts.numWarps : defaultFusedWarps(rowBlock);
        bool fitsBlock = std::max<int64_t>(rowBlock / (warps * 32), 1) <=
                             opts.maxElementsPerThread() &&
                         (opts.blockSize != 0 ||
                          rowBlock <= maxAutoFusedBlock(elementBytes, sm >= 80,
                                                        maxBlockThreads)) &&
                         (group.hasOneRowOperand() ||
                          fitsOperandRegisters(rowBlock, numOperands()));
        bool fitsCluster =
            clustersAvailable && opts.blockSize == 0 && opts.numWarps == 0 &&
            opts.clusterSize != 1 &&
            fitsAutoCluster(rowBlock, elementBytes, cols, maxBlockThreads);
        const RowLengthRow *clusterByLength =
            fitsCluster ? PlanTable::get().rowLengthOf(Strategy::cluster,
                                                       rowLengthKey())
                        : nullptr;
        if (fitsBlock && !clusterByLength)
          plan.strategy = Strategy::fused;
        else if (fitsCluster)
          plan.strategy = Strategy::cluster;
        if (clusterByLength)
          lengthCluster = clusterByLength->cluster;
      }
    } else {
      return map.emitOpError()
             << "unknown strategy '" << opts.strategy
             << "'; expected fused, cluster, online, chunks or "
                "auto";
    }
    return false;
  }

  /// The block of a fused kernel or of a cluster's slice: its threads and
  /// rows, the cluster size.
  LogicalResult shapeRowBlock() {
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
    const RowsPerBlockRule &several = PlanTable::get().rowsPerBlock;
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
    } else {
      plan.numWarps = defaultFusedWarps(slice);
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
    if (plan.elementsPerThread() > opts.maxElementsPerThread() &&
        !measuredWarps)
      return map.emitOpError()
             << "a " << stringifyStrategy(plan.strategy) << " block of "
             << plan.blockElements << " elements over " << plan.threadsPerRow()
             << " threads keeps " << plan.elementsPerThread()
             << " elements per thread in registers (limit "
             << opts.maxElementsPerThread() << "); ask for more warps"
             << ", or strategy=online for rows this long";
    return success();
  }

  /// With several operands, fits a block's elements of every operand into
  /// its registers (operandRegisters): a cluster of derived size grows, each
  /// block taking a smaller slice of the row, and then derived warps halve,
  /// fewer threads getting more registers each, also until two blocks fit
  /// an SM (H100 sweep, bench/family.py --sweep, with layer_norm's weight and
  /// bias held through the reductions: bf16 8192 on 256 threads, one block
  /// per SM, 53-55% of the copy; on 128, two, 80-82%). A plan that still
  /// does not fit is refused by refuseSpills.
  void fitOperandRegisters() {
    if (group.hasOneRowOperand() || plan.rowsPerBlock > 1 ||
        plan.strategy == Strategy::online)
      return;
    auto fits = [&](const KernelPlan &p) {
      auto [needed, available] =
          operandRegisters(p, numOperands(p.clusterSize));
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
      if (const OperandShapeRow *shape = PlanTable::get().operandShape(
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
      if (fits(fitted) &&
          (operandBlocksPerSM(fitted, held) >= 2 || !fits(fewer)))
        break;
      fitted = fewer;
    }
    // Blocks the table's operand_shapes measured faster on other warps (f32
    // rms_norm and softmax backward at 2048-8192: 16 elements per thread;
    // 16-bit layer_norm at 6144: 32).
    const OperandShapeRow *shape =
        fitted.clusterSize == 1
            ? PlanTable::get().operandShape(
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

  /// Whether a thread's elements of every operand fit its registers
  /// (operandRegisters); always for a kernel of one row operand.
  bool operandsFit() const {
    if (group.hasOneRowOperand())
      return true;
    auto [needed, available] =
        operandRegisters(plan, numOperands(plan.clusterSize));
    return needed <= available;
  }

  /// The operands of a block of `clusterSize`: inputs and per-column ones,
  /// and in a fused block each 2-D output beyond the first, whose values the
  /// map computes beside the first's (rms_norm's residual form, bf16 x 8192
  /// on H100: 4 warps without its second output 81% of the copy, 8 warps
  /// 98%; cluster slices are sized on the operands read, as measured for the
  /// norms). The table's operand_shapes rows and a streamed tile count these.
  int64_t numOperands(int64_t clusterSize = 1) const {
    int64_t extraOutputs =
        clusterSize == 1 ? std::max<int64_t>(0, group.outputs.size() - 1) : 0;
    return group.inputs.size() + group.columns.size() + extraOutputs;
  }

  /// The online kernel's tile, threads and the blocks sharing a row.
  LogicalResult shapeOnline() {
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
      plan.clusterSize = autoOnlineClusterSize(cols, elementBytes);
    }
    if (opts.blockSize != 0 && !llvm::isPowerOf2_64(opts.blockSize))
      return map.emitOpError() << "an online tile (block) must be a "
                                  "power of two, got "
                               << opts.blockSize;
    const WarpsRow &shape = defaultOnlineShape(plan.inType, plan.clusterSize,
                                               sm, !group.outputs.empty());
    const StreamedTileRule &streamed = PlanTable::get().streamedTiles;
    plan.numWarps = opts.numWarps   ? opts.numWarps
                    : stagedRow     ? stagedRowWarps(cols)
                    : streamsRows() ? streamed.warps
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
    if (cols != 0 && !plan.streamsLevels())
      plan.stageElements =
          llvm::divideCeil(llvm::divideCeil(cols, plan.clusterSize),
                           plan.blockElements) *
          plan.blockElements;
    if (plan.blockElements < plan.numThreads())
      return map.emitOpError()
             << "the online tile (block " << plan.blockElements
             << ") must hold at least one element per thread ("
             << plan.numThreads() << ")";
    if (plan.elementsPerThread() > opts.maxElementsPerThread())
      return map.emitOpError()
             << "an online tile of " << plan.blockElements << " elements keeps "
             << plan.elementsPerThread() << " elements per thread in "
             << "registers (limit " << opts.maxElementsPerThread() << ")";
    return success();
  }

  /// The pair reduction and the grid.
  LogicalResult planPairAndGrid() {
    plan.pairReduce =
        plan.strategy != Strategy::online && canPair &&
        opts.pairReduce.value_or(autoPairReduce(plan, opts, cols));
    // A 16-bit cluster slice of 32 elements per thread or more pairs its
    // reductions only beside the scalar path that re-reads the row
    // (refuseSpills): auto gives it that path.
    if (plan.pairReduce && plan.strategy == Strategy::cluster && !opts.reread &&
        byteWidth(plan.inType) == 2 && plan.elementsPerThread() >= 32)
      plan.rereadFallback = true;

    plan.gridPerRowGroup =
        mayGridPerRowGroup(opts, sm) &&
        (opts.grid == Grid::rows || stagedRow || autoGridPerRowGroup(plan));
    return success();
  }

  /// What is fetched ahead (the stage, registers), and auto's kept tiles.
  LogicalResult planPrefetch() {
    // The stage and the registers ahead hold the next row (or tile) of one
    // input, for the online kernel the tiles of its running pair.
    StringRef without =
        plan.streamsLevels()
            ? "the online kernel's next tile for its running pair; with "
              "reread it streams plain tiles"
        : !group.hasOneRowOperand()
            ? "the next row of one input; this kernel reads several operands"
            : "";
    if (!without.empty()) {
      if (opts.prefetch && opts.prefetch != Prefetch::none)
        return map.emitOpError()
               << "prefetch = " << stringifyPrefetch(*opts.prefetch)
               << " fetches " << without << " (prefetch = none)";
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
    } else if (!opts.prefetch) {
      Prefetch ahead = autoFetchAhead(plan);
      plan.prefetch = prefetchObstacle(plan, true, sm).empty() &&
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

  /// The online kernel's tiles kept between its passes (kept_elements) and
  /// how they are filled (keep_ahead).
  LogicalResult planKeptTiles() {
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
        return map.emitOpError() << "kept_elements " << *opts.keptElements
                                 << " must be whole tiles of "
                                 << plan.blockElements << " elements";
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
        return map.emitOpError()
               << "keep_ahead = bulk copies with cp.async.bulk "
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

  /// Refuses the combinations that ptxas -v (sm_90) showed to spill, with
  /// the fields to change: cluster slices of 32 elements per thread with the
  /// pair reduction and, for 16-bit types, the scalar path's row in
  /// registers (4-8 bytes at 65536-131072 without the next row ahead, 12-32
  /// with it) or, for f32, the next row loaded ahead into registers (48-180
  /// bytes). Without those, the same slices and fused blocks of the same
  /// shape do not spill.
  LogicalResult refuseSpills() {
    if (!group.hasOneRowOperand()) {
      int64_t operands = numOperands(plan.clusterSize);
      auto [needed, available] = operandRegisters(plan, operands);
      if (needed > available)
        return map.emitOpError()
               << "a " << stringifyStrategy(plan.strategy) << " block of "
               << plan.numThreads() << " threads holding "
               << plan.elementsPerThread() << " elements per thread of each of "
               << operands << " operands needs about " << needed
               << " registers per thread and has " << available
               << ": a kernel of several operands holds whole rows in "
                  "registers, and rows this long do not fit (ask for fewer "
                  "warps where the row allows)";
      return success();
    }
    if (plan.strategy != Strategy::online &&
        plan.strategy != Strategy::chunks) {
      auto [needed, available] = rowRegisters(plan);
      if (needed > available)
        return map.emitOpError()
               << "a " << stringifyStrategy(plan.strategy) << " block of "
               << plan.numThreads() << " threads holding "
               << plan.elementsPerThread()
               << " elements per thread needs about " << needed
               << " registers per thread and has " << available
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

  /// Whether the kernel streams its row per level of reduces on one block
  /// and writes rows: the table's streamed_tiles apply to it. Rows only
  /// reduced (the smoothed cross-entropy) and rows over clusters keep
  /// online_warps' shape, without hints.
  bool streamsRows() const {
    return plan.streamsLevels() && plan.clusterSize == 1 &&
           !group.outputs.empty();
  }

  /// The online kernel's L2 eviction hints: its running pair's
  /// (autoCacheHints), and those of the passes that stream the row per
  /// level (the table's streamed_tiles).
  LogicalResult planCacheHints() {
    if (opts.cacheHints == true && plan.strategy != Strategy::online)
      return map.emitOpError() << "cache_hints applies to the online "
                                  "strategy only";
    if (plan.streamsLevels())
      plan.cacheHints = opts.cacheHints.value_or(
          streamsRows() && PlanTable::get().streamedTiles.cacheHints);
    else
      plan.cacheHints = plan.strategy == Strategy::online && canOnline &&
                        opts.cacheHints.value_or(autoCacheHints(plan));
    return success();
  }

  const Group &group;
  MapOp map;
  const PlanOptions &opts;
  KernelPlan plan;
  /// The compute capability, the widest element in bytes, the row length
  /// (0: unknown), the vector width asked for and the block a whole row
  /// needs (0: unknown).
  int64_t sm = 0, elementBytes = 0, cols = 0, vector = 0, rowBlock = 0;
  bool clustersAvailable = false;
  /// Whether the group is the softmax pair of reduces (chunks and the pair
  /// reduction need it), and whether it may also take the online kernel's
  /// running pair (which writes no per-row results; other groups' online
  /// kernels stream the row per level of reduces).
  bool canPair = false, canOnline = false;
  /// Whether the chunks strategy takes the group: the pair, or generic
  /// chunks (chunkExchanges).
  bool canChunk = false;
  /// The most threads auto gives a block of 32 elements per thread
  /// (autoMaxBlockThreads).
  int64_t maxBlockThreads = 1024;
  /// Whether auto stages a 16-bit row whole on a block of its own.
  bool stagedRow = false;
  /// The cluster that the table's row_lengths give the row (0: none).
  int64_t lengthCluster = 0;
  /// The cluster the request or the table's row_lengths name (0: derived).
  int64_t givenCluster() const {
    return opts.clusterSize ? opts.clusterSize : lengthCluster;
  }
  /// Whether auto streams a row it only reduces once, a block per row
  /// (row_lengths' online rows that write no rows).
  bool reducedOnly = false;
};

} // namespace

FailureOr<KernelPlan> mlir::rowred::planKernel(const Group &group,
                                               const PlanOptions &opts) {
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

/// Whether `main` leaves a launch of a few rows on too few blocks: chunks,
/// and a block per row of a known length: the online kernel of rows only
/// reduced, and softmax's pair on the block of a staged row or of a fused
/// kernel (the rows few_rows measured such blocks against).
static bool fewRowsFewBlocks(const Group &group, const KernelPlan &main,
                             int64_t cols) {
  if (main.strategy == Strategy::chunks)
    return true;
  if (cols == 0 || main.clusterSize != 1 || main.rowsPerBlock != 1)
    return false;
  return (main.strategy == Strategy::online && group.outputs.empty()) ||
         isOnlineSoftmaxPair(group);
}

std::optional<KernelPlan> mlir::rowred::planFewRows(const Group &group,
                                                    const PlanOptions &opts,
                                                    const KernelPlan &main) {
  if (opts.strategy != "auto" || !fewRowsFewBlocks(group, main, opts.cols))
    return std::nullopt;
  const FewRowsRow *row = PlanTable::get().fewRowsOf(tableKey(
      group, main.inType, opts.cols, opts.cols % main.vectorWidth == 0));
  if (!row)
    return std::nullopt;
  PlanOptions fewOpts = opts;
  fewOpts.strategy = stringifyStrategy(row->lengths.strategy).str();
  fewOpts.clusterSize = row->lengths.cluster;
  if (row->block) {
    fewOpts.blockSize = row->block;
    fewOpts.chunkStage = row->chunkStage;
  }
  // A row the strategy cannot take (too many operands for a cluster's
  // registers) keeps one kernel: its diagnostic is not the user's.
  ScopedDiagnosticHandler quiet(group.map->getContext(),
                                [](Diagnostic &) { return success(); });
  FailureOr<KernelPlan> plan = planKernel(group, fewOpts);
  if (failed(plan) || (plan->strategy == main.strategy &&
                       plan->chunkElements() == main.chunkElements()))
    return std::nullopt;
  plan->maxRows = row->maxRows;
  return *plan;
}
