//===- PlanRules.cpp - auto's rules, as measured --------------------------===//
//
// Part of the softmax kernel compiler.
//
//===----------------------------------------------------------------------===//

#include "PlanRules.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::rowred;

namespace mlir {
namespace rowred {
namespace rules {

/// The block auto gives a row of `cols` elements: the next power of two P,
/// or 3P/4 when the row fits it and P is at least the table's
/// three_quarter_blocks_from. A row of 12288 then fills 384 threads x 32
/// elements instead of leaving two of the eight chunks of 512 x 32 masked:
/// the same registers per thread, a quarter fewer threads per row, so more
/// rows resident per SM.
int64_t autoRowBlock(const PlanTable &table, int64_t cols) {
  int64_t pow2 = llvm::PowerOf2Ceil(cols);
  if (pow2 >= table.threeQuarterBlocksFrom && cols <= pow2 / 4 * 3)
    return pow2 / 4 * 3;
  return pow2;
}

/// Default warps for a fused block (or cluster slice) of `blockElements`
/// elements: the table's elements per thread for its power of two, at
/// least a warp and at most 1024 threads. A block of three times a power of
/// two (see autoRowBlock) gets three quarters of the warps of the next
/// power of two: the same elements per thread.
int64_t defaultFusedWarps(const PlanTable &table, int64_t blockElements) {
  int64_t pow2 = llvm::PowerOf2Ceil(blockElements);
  if (pow2 != blockElements && pow2 >= table.threeQuarterBlocksFrom)
    return defaultFusedWarps(table, pow2) / 4 * 3;
  int64_t perThread = table.derivedElementsPerThread(pow2);
  return std::clamp<int64_t>(blockElements / perThread, 32, 1024) / 32;
}

TableKey tableKey(const KernelPlan &plan, int64_t block) {
  return {plan.strategy,     plan.inType,       block,
          plan.rowsPerBlock, plan.numThreads(), plan.pairReduce};
}

int64_t measuredBlockWarps(const KernelPlan &plan, int64_t slice,
                           const PlanOptions &opts, int64_t sm) {
  if (opts.numWarps)
    return 0;
  const BlockShapeRow *row = opts.planTable().blockShape(
      tableKey(plan, slice), mayGridPerRowGroup(opts, sm),
      opts.prefetch == Prefetch::registers || opts.pairReduce == true);
  return row ? row->warps : 0;
}

/// Largest fused block `auto` picks: 32768 elements, 1024 threads x 32, one
/// block per SM. With the next row staged in shared memory (sm_80+) such a
/// block beats a cluster of two 512-thread blocks on an H200 (N = 32768:
/// f32 3874 against 3781 GB/s, bf16 3639 against 3435); without the stage
/// only f32 rows stay fused that long (3567 against the online kernel).
int64_t maxAutoFusedBlock(int64_t elementBytes, bool stage,
                          int64_t maxThreads) {
  return std::min<int64_t>(elementBytes == 4 || stage ? 32768 : 16384,
                           32 * maxThreads);
}

/// The plans were measured on sm_90. On the other chips, which cannot be
/// timed here, ptxas holds a block of 1024 threads at 64 registers and
/// spills the values of maps other than softmax's there (ptxas -v: sm_100
/// and sm_120, log-softmax's f16 cluster slices of 32768 48-52 bytes,
/// cross-entropy's gradient in fused blocks of 32768 92-408 bytes; sm_80
/// and sm_89, the smoothed gradient's fused blocks of 32768 12-152 bytes);
/// those maps take blocks of at most 512 threads (a cluster where a fused
/// block of 32768 was, or the online kernel without clusters; twice the
/// slices of 16384). On sm_120 cross-entropy's gradient (labels compared
/// with every element) still spills 8-24 bytes at 128 registers on 512
/// threads, and takes 256.
int64_t autoMaxBlockThreads(int64_t sm, const MapLoad &map) {
  if (sm == 90 || !map.otherMap)
    return 1024;
  return sm >= 120 && map.rowInputsPerElement ? 256 : 512;
}

/// Default slice of a row per cluster block: 512 threads x 32 elements, two
/// blocks per SM.
static constexpr int64_t kClusterSlice = 16384;

/// Whether `auto` gives the cluster blocks of a row of `cols` elements
/// (known) in a row block of `rowBlock` (autoRowBlock) slices of twice
/// kClusterSlice, on 1024 threads (768 for 3/4 blocks): for 16-bit rows that
/// fill at least 7/8 of their block and take the vector path with the pair
/// (a multiple of the vector width). On an H200 (version log) such
/// rows of 45000-131072 run 0.2-2.5% faster over half as many blocks, rows
/// of 240000-262144 3.1-3.7% faster over 8 slices of 32768 than over 16 of
/// 16384 (15 clusters of 8 are resident at once, 120 SMs, against 7 of 16,
/// 112 SMs), and rows of 393216-524288 over 16 slices of 24576-32768 beat
/// the online kernel by 3-7% (bf16) and 17% (f16). Rows that fill 3/4 of
/// their block gain nothing over clusters of 16 and lose 3-7% against the
/// online kernel; rows of odd length, on the peeled path, lose 14-43%. f32
/// slices stay at 16384: on 1024 threads, alone on their SM, the online
/// kernel with its tiles loaded ahead beats them (f32 262144 3609 against
/// 3482 GB/s; they had beaten it without the loads ahead, 3112 against
/// 2700).
static bool autoWideClusterSlice(int64_t rowBlock, int64_t elementBytes,
                                 int64_t cols) {
  return elementBytes < 4 && cols != 0 && cols % (16 / elementBytes) == 0 &&
         cols * 8 >= rowBlock * 7;
}

/// The slice (elements) `auto` gives each cluster block (see
/// autoWideClusterSlice).
int64_t autoClusterSlice(int64_t rowBlock, int64_t elementBytes, int64_t cols,
                         int64_t maxThreads) {
  int64_t slice = autoWideClusterSlice(rowBlock, elementBytes, cols)
                      ? 2 * kClusterSlice
                      : kClusterSlice;
  return std::min(slice, 32 * maxThreads);
}

/// Whether `auto` splits a row block of `rowBlock` elements over a cluster:
/// when it is at most 16 of its slices (autoClusterSlice); longer rows take
/// the online kernel.
bool fitsAutoCluster(int64_t rowBlock, int64_t elementBytes, int64_t cols,
                     int64_t maxThreads) {
  return rowBlock <= kMaxClusterSize * autoClusterSlice(rowBlock, elementBytes,
                                                        cols, maxThreads);
}

/// The online kernel's shape for `type` over clusters of `clusterSize` on
/// compute capability `sm`, writing rows or only per-row results: the
/// table's online_warps.
const WarpsRow &defaultOnlineShape(const PlanTable &table, Type type,
                                   int64_t clusterSize, int64_t sm,
                                   bool writesRows) {
  TableKey key{Strategy::online, type};
  key.cluster = clusterSize;
  key.sm = sm;
  key.writesRows = writesRows;
  return PlanTable::warpsRowOf(table.onlineWarps, key);
}

/// 32-bit registers of one SM (sm_75 to sm_90).
static constexpr int64_t kRegisterFile = 65536;

/// Shared memory the driver reserves for each block (sm_90).
static constexpr int64_t kSharedReservedPerBlock = 1024;

/// Registers per thread a chunks kernel is compiled for (minctasm), beyond
/// one per element it holds: the f32 default (128 x 64) then fits five
/// blocks on an SM at up to 102 registers (ptxas takes 96; left alone, 107
/// and four blocks: 1.045x the online kernel on f32 1024 x 1048576 against
/// 1.079x, H200, version log, version 71), and 32 elements per thread (the
/// 16-bit default, 128 x 32, and the chunks of 4096 + 4096 that launches of
/// a few rows take) eight at 64. At nine (56 registers) those spill: f32
/// 4096 + 4096 40 bytes, 16-bit 8 since chunks poll their row's entries
/// (exchangeChunk; before that nine measured 1.048x the online kernel
/// against eight's 1.030x on bf16 1024 x 1048576).
static constexpr int64_t kChunkSpareRegisters = 25;

/// Registers a chunks kernel of another map than softmax's (log-softmax)
/// takes beyond kChunkSpareRegisters: eight blocks per SM for the bf16
/// log-softmax chunk of 4096 + 12288 (64 registers), which spilled 4 bytes
/// at nine (56).
static constexpr int64_t kChunkOtherMapRegisters = 7;

/// Registers a chunks kernel whose map compares per-row inputs with each
/// element's column (cross-entropy's gradient and its labels) takes beyond
/// those of another map: one per two elements it holds, and one. The bf16
/// chunk of 4096 + 12288 (32 elements) then asks for six blocks per SM and
/// takes 80 registers without spills (ptxas -v, sm_90; left alone 80 and 8
/// bytes of spills, level on the H200: 4096 x 50257 3111 against 3124 GB/s,
/// 4096 x 131072 3658 against 3655; H100 1.00x), the f32 chunk of 8192 (64)
/// three blocks (at four, 128 registers, it spills 4 bytes since chunks poll
/// their row's entries; four measured 1.01x three, H100, softmax-run
/// --bench, 5 rounds, 1024 and 2048 x 131072).
static int64_t chunkRowInputRegisters(const KernelPlan &plan) {
  return plan.elementsPerThread() / 2 + 1;
}

/// Registers a cluster slice of another map than softmax's takes beyond 64
/// on the peeled path (a known row length off the vector width) or holding
/// 32 f32 elements per thread, where a bound holds it there: log-softmax's
/// bf16 slices of 3072 and 4096 (rows of 16411 and 32001 over clusters of 8,
/// the second kernel for a few rows) spill 44-52 bytes at 64 registers, 8-12
/// at 72 and none at 80 (ptxas -v, sm_90), and at 80 measured level (H100,
/// softmax-run --bench, 5 rounds: 32001 at M = 1, 8, 64 0.99-1.02x, 16411 at
/// 8 and 64 1.01x); its f32 slices of 4096 (rows of 32000) spill 44 bytes at
/// 64 registers.
static constexpr int64_t kPeeledSliceRegisters = 16;

/// Resident blocks and threads an SM takes at most (sm_80, sm_90).
static constexpr int64_t kMaxBlocksPerSM = 32, kMaxThreadsPerSM = 2048;

/// Blocks of `plan` that fit one SM's registers at 64 per thread, at least
/// one.
static int64_t blocksAt64Registers(const KernelPlan &plan) {
  return std::max<int64_t>(1, kRegisterFile / (64 * plan.numThreads()));
}

/// Whether auto gives a kernel the pair reduction: 16-bit cluster slices,
/// together with their next row loaded ahead into registers (see
/// autoPrefetchRegisters) unless prefetch says otherwise. On an H200
/// (version log, alternating runs): bf16 65536 3611 -> 3803 GB/s,
/// 131072 3531 -> 3837, 262144 over 16 blocks 3271 -> 3791; the pair
/// reduction alone lost 14%. Not for a known row length that is not a
/// multiple of the vector width (`cols`): contiguous rows of that length
/// take the peeled path, which reduces one value at a time and loads
/// nothing ahead, and ran 2.6-4.0% slower in such kernels (bf16 50257 and
/// 100003) than without the pair.
bool autoPairReduce(const KernelPlan &plan, const PlanOptions &opts,
                    int64_t cols) {
  return plan.strategy == Strategy::cluster && byteWidth(plan.inType) == 2 &&
         (!opts.prefetch || opts.prefetch == Prefetch::registers) &&
         cols % plan.vectorWidth == 0;
}

/// Whether an online kernel may keep tiles of its share at all under auto's
/// rules (autoKeepAheadElements, autoBulkKeptElements): over clusters of 16,
/// on the vector path, with a known row length (a stage to size) and the
/// reversed second pass that hands tiles on across the passes.
static bool autoKeepsTiles(const KernelPlan &plan) {
  return plan.strategy == Strategy::online && plan.clusterSize == 16 &&
         plan.vectorWidth != 1 && plan.stageElements != 0 &&
         plan.reverseSecondPass;
}

/// Elements of each block's share that auto keeps in shared memory, copied
/// in ahead (keep_ahead), or 0: for f16 rows of a known length over clusters
/// of 16 (rows from 2 MiB) and f32 rows there whose share spans 8 tiles or
/// more (rows from 8 MiB), 3/8 of the share in whole tiles, at most what the
/// blocks resident on an SM can hold (f32: 192 KiB for one 1024-thread
/// block; f16: 112 KiB for each of two 512-thread blocks). H200, alternating
/// runs (version log), against the tiles loaded ahead without a
/// stage (f32) and 64 KiB stored by pass 1 (f16): f32 2097152 +9% and
/// 4194304 +4% keeping 192 KiB; f16 1048576 +8 to +9% keeping 48 KiB,
/// 2097152 +13% keeping 96. f32 1048576 (four tiles per share) lost 1.5% at
/// M = 1024 keeping 64 KiB (+1.5% at M = 256) and more keeping 128 or 192;
/// bf16 rows, on 1024 threads, spill 24 bytes with it and lost 12-20%; f32
/// rows over clusters of 8 lost 7-10%.
int64_t autoKeepAheadElements(const KernelPlan &plan) {
  if (!autoKeepsTiles(plan) || plan.inType.isBF16())
    return 0;
  int64_t shareTiles = plan.stageElements / plan.blockElements;
  if (byteWidth(plan.inType) == 4 && shareTiles < 8)
    return 0;
  int64_t tileBytes = plan.blockElements * byteWidth(plan.inType);
  int64_t blocks = blocksAt64Registers(plan);
  // 2 KiB of each block's share of the SM for its static shared memory.
  int64_t fit = std::min(maxDynamicSharedBytes(plan.sm()),
                         sharedBytesPerSM(plan.sm()) / blocks - 2 * 1024) /
                tileBytes;
  int64_t tiles = std::min(shareTiles * 3 / 8, fit);
  return tiles * plan.blockElements;
}

/// Largest share (elements) of a bf16 row over a cluster of 16 whose tiles
/// auto keeps in bulk (autoBulkKeptElements, autoBulkTiles): rows of 2 MiB.
static constexpr int64_t kBulkBF16Share = 65536;

/// Elements of each block's share that auto keeps in two stage buffers with
/// keep_ahead = bulk, or 0: over clusters of 16, one tile of f32 shares of 2
/// to 7 tiles (rows of 2 MiB to under 8 MiB; from 8 tiles,
/// autoKeepAheadElements keeps 3/8), and every tile but the last of bf16
/// shares of at most 65536 elements (rows of 2 MiB, in tiles of 16384: see
/// autoBulkTiles), at most 112 KiB per buffer. H200, alternating runs
/// against the tiles loaded ahead without a stage (version log,
/// version 59): f32 524288 +2.7%, 1048576 +2.2 to +5.2%, bf16 1048576 +1.0
/// to +2.5%; f32 2097152 lost 2.1% against auto's 3/8, bf16 2097152 (three
/// of eight tiles kept) 0.4%, and f32 shares kept in more, smaller tiles 4-7%.
int64_t autoBulkKeptElements(const KernelPlan &plan) {
  if (!autoKeepsTiles(plan))
    return 0;
  int64_t shareTiles = plan.stageElements / plan.blockElements;
  int64_t tileBytes = plan.blockElements * byteWidth(plan.inType);
  if (byteWidth(plan.inType) == 4 && shareTiles >= 2 && shareTiles < 8)
    return plan.blockElements;
  if (plan.inType.isBF16() && plan.stageElements <= kBulkBF16Share &&
      shareTiles >= 2)
    return std::min(shareTiles - 1,
                    maxDynamicSharedBytes(plan.sm()) / 2 / tileBytes) *
           plan.blockElements;
  return 0;
}

/// Whether auto gives the online kernel tiles of two vectors per thread
/// instead of four, so that autoBulkKeptElements keeps three of the four
/// tiles of each share, 96 KiB twice: bf16 rows of a known length up to 2
/// MiB over clusters of 16 on auto's 1024 threads with keep_ahead = bulk
/// (auto or asked for) and auto's kept tiles. H200: bf16 1048576 keeping
/// three of four tiles of 16384 +1.0 to +2.5%, two of four 0.93-0.96, one
/// of two tiles of 32768 (4 bytes of spills) 0.97.
bool autoBulkTiles(const PlanOptions &opts, Type type, int64_t clusterSize,
                   int64_t cols) {
  return type.isBF16() && clusterSize == 16 && cols != 0 &&
         cols <= clusterSize * kBulkBF16Share && opts.blockSize == 0 &&
         opts.numWarps == 0 && !opts.keptElements && !opts.prefetch &&
         (!opts.keepAhead || opts.keepAhead == KeepAhead::bulk) &&
         opts.reverseSecondPass;
}

/// Whether auto gives the online kernel L2 eviction hints (cache_hints): when
/// its second pass reads the row from global memory (no stage, no kept
/// tiles, or kept tiles with keep_ahead, which streams the rest), except f32
/// rows over clusters of 8. H200, alternating runs
/// (version log): f32 1048576 over 16 blocks +4.0%, f32 65536 on one
/// block per row +7.9%, bf16 131072 on one block +4.9%, bf16 524288 over 8
/// +10.1%; f32 over 8 blocks -1.6% (262147) and +1.5% (400000); bf16
/// 1048576 with its kept tiles unchanged.
///
/// A fused block that loads its own row (no prefetch) loads it evict-last
/// where the table's cache_hints say so (rows of 16 KiB and more).
bool autoCacheHints(const PlanTable &table, const KernelPlan &plan, int64_t sm,
                    bool writesRows) {
  if (plan.strategy == Strategy::fused) {
    if (plan.prefetch || plan.prefetchRegisters)
      return false;
    TableKey key = tableKey(plan, plan.blockElements);
    key.sm = sm;
    key.writesRows = writesRows;
    return table.takesCacheHints(key);
  }
  return plan.strategy == Strategy::online && !plan.prefetch &&
         (plan.keptElements == 0 || plan.keepAhead) &&
         !(byteWidth(plan.inType) == 4 && plan.clusterSize == 8);
}

/// What auto fetches ahead for the kernel of `plan`: the table's prefetch
/// for fused blocks and cluster slices; the online kernel loads its next
/// tile (within the row) into registers unless it keeps tiles in shared
/// memory (H200, alternating runs: f32 1048576 +8.7%, 262144 +4.2%, bf16
/// +2.2-2.4%).
Prefetch autoFetchAhead(const PlanTable &table, const KernelPlan &plan,
                        int64_t held, TypeRange columnTypes) {
  if (plan.strategy == Strategy::online)
    return plan.keptElements == 0 ? Prefetch::registers : Prefetch::none;
  return table.prefetchOf(tableKey(plan, plan.blockElements), held,
                          columnTypes);
}

/// Whether auto launches one program per row group (grid = rows) instead of
/// the persistent grid: the table's row_grid blocks, for a kernel that writes
/// rows or only per-row results.
bool autoGridPerRowGroup(const PlanTable &table, const KernelPlan &plan,
                         bool writesRows) {
  TableKey key = tableKey(plan, plan.blockElements);
  key.cluster = plan.clusterSize;
  key.writesRows = writesRows;
  return table.runsRowGrid(key);
}

/// Whether the options let the kernel run one program per row group: asked
/// for (grid = rows), or left to auto on sm_90 and newer with no next row
/// asked for (autoGridPerRowGroup decides).
bool mayGridPerRowGroup(const PlanOptions &opts, int64_t sm) {
  return opts.grid == Grid::rows ||
         (!opts.grid && (!opts.prefetch || opts.prefetch == Prefetch::none) &&
          sm >= 90);
}

/// The row_lengths row by which auto runs a row of `cols` elements as a
/// staged row, or null: the online
/// kernel on one block per row (grid = rows) with the block's share of the
/// row (of each 2-D input, for the streamed passes of other groups than
/// softmax's pair) copied into shared memory by cp.async before its first
/// pass (prefetch = stage). For rows of a known length in the table's
/// row_lengths for the online strategy (57344 16-bit elements at most, in
/// whole tiles of 8192, whose stages of 112 KiB still fit two blocks on an
/// SM), in and out of one width, a multiple of the vector width or a kernel
/// of one input and output of rows whose map reads no per-row input
/// (`peelable`: each row of its peeled path copies its own vectors into the
/// stage), where one program per row group may run, with the request's
/// fields that shape the kernel left to auto.
const RowLengthRow *autoStagedRow(const PlanOptions &opts,
                                  const KernelPlan &plan,
                                  const RowLengthKey &key, int64_t sm,
                                  bool peelable) {
  bool staged = byteWidth(plan.inType) == byteWidth(plan.outType) &&
                (key.aligned || peelable) && !opts.prefetch &&
                mayGridPerRowGroup(opts, sm) && opts.blockSize == 0 &&
                opts.numWarps == 0 && opts.vectorWidth == 0 &&
                opts.clusterSize == 0 && !opts.keptElements &&
                (!opts.keepAhead || opts.keepAhead == KeepAhead::none) &&
                opts.pairReduce != true;
  return staged ? opts.planTable().rowLengthOf(Strategy::online, key) : nullptr;
}

/// Warps auto gives a staged row (autoStagedRow) of `cols` elements: the
/// table's staged_row_warps, by the block a fused kernel would hold the row
/// in.
int64_t stagedRowWarps(const PlanTable &table, int64_t cols) {
  TableKey key;
  key.strategy = Strategy::online;
  key.block = autoRowBlock(table, cols);
  return PlanTable::warpsOf(table.stagedRowWarps, key);
}

/// Why the kernel of `plan` cannot fetch its next row ahead, into the stage
/// (`stage`) or into registers, on compute capability `sm`; empty when it
/// can.
StringRef prefetchObstacle(const KernelPlan &plan, bool stage, int64_t sm) {
  if (plan.gridPerRowGroup && plan.strategy != Strategy::online)
    return "grid = rows gives every block one row group, so there is no next "
           "row to fetch";
  if (stage && plan.strategy == Strategy::online && plan.stageElements == 0)
    return "the online kernel stages its share of a row only for a known "
           "row length (cols=N)";
  if (stage && plan.rowsPerBlock > 1)
    return "blocks with several rows hold no stage";
  if (plan.vectorWidth == 1)
    return stage ? "cp.async copies vectors and this kernel has none"
                 : "only the vector path loads ahead and this kernel has none";
  if (stage && sm < 80)
    return "cp.async needs sm_80 or newer";
  if (stage && plan.stageInputs * plan.stageElements * byteWidth(plan.inType) >
                   maxDynamicSharedBytes(plan.sm()))
    return "the stage would exceed the shared memory of a block";
  return "";
}

/// The blocks per SM that ptxas is asked to fit (`.minnctapersm`), which
/// caps the kernel at 64 registers per thread, or 0 for no request.
///
/// * Cluster slices are sized for 64 registers (32 elements and the rest):
///   two 512-thread blocks share an SM, instead of the exchange's few extra
///   live values halving the occupancy.
/// * A warp per row holding 32 elements per thread (blocks of 1024): ptxas
///   takes 96 registers unasked (five 128-thread blocks per SM); at 64,
///   eight fit without spills, and the bench's 4096 rows then all fit on
///   the GPU at once (H200 sweep: f32 4096 x 1024 2539 -> 2703 GB/s). Not
///   with the next row loaded ahead or with the pair reduction, which need
///   the registers (200 and 8 bytes of spills for f32), nor with fewer
///   threads per row, which take more edge elements on the peeled path
///   (116 bytes of spills for one thread per row).
int64_t minBlocksPerSM(const KernelPlan &plan, const MapLoad &map) {
  // The bounds were measured on one input and output: a group with more
  // operands holds more values per element (softmax backward's two inputs
  // spill 388 bytes at the warp-per-row bound of 64 registers), and so does
  // a map of rows that reads per-row inputs (cross-entropy's gradient, its
  // labels compared with every element's column: 20-56 bytes of spills at
  // the warp-per-row bound), which takes none but on cluster slices and
  // chunks (with the registers its labels take). On the slices the bound's
  // second block per SM pays (H100, gradient of 4096 x 50257 rows: bf16
  // 51% -> 75% of the copy, f32 79% -> 93%; slices of 8 blocks without it
  // 62% and 88%, 1024 threads 49% and 75%). On the chips other than sm_90,
  // every kernel of another map asks for one block (below).
  // Chunks whose map loads two operands the reduces do not read
  // (layer_norm's weight and bias) take the bound with the registers of
  // those loads (below): f32 five blocks per SM at 96 registers instead of
  // four at 109, H100 1024 x 1048576 59.1% -> 63.8% of the copy, 1024 x
  // 262144 85.3% -> 89.4%, 64 x 1048576 58.3% -> 61.4%; bf16 spills 8
  // bytes without it. With one (rms_norm's weight) ptxas' own choice takes
  // fewer registers than the bound would allow (f32 64 against 75, bf16 56
  // against 66 and seven blocks per SM instead of nine).
  bool mapLoads = plan.strategy == Strategy::chunks && map.mapOnlyOperands > 1;
  bool measured =
      (!map.severalOperands || mapLoads) &&
      (!map.rowInputsPerElement || plan.strategy == Strategy::cluster ||
       plan.strategy == Strategy::chunks);
  if (!measured && (plan.sm() == 90 || !map.otherMap))
    return 0;
  // The bounds were measured on sm_90; on sm_100 and sm_120 ptxas spills at
  // them (f32 1024, 16-bit chunks), so it is left free there, but for the
  // 16-bit online kernel, which it otherwise holds at 64 registers with 16
  // bytes of spills (sm_100) and fits in 63 with the bound (ptxas -v), and
  // for chunks, which ask for two blocks: left alone, ptxas holds the f32
  // kernel with its peeled path at 128 registers on sm_120 and spills 4
  // bytes; asked for two, it takes 126 and none.
  if (plan.sm() >= 100 && plan.strategy == Strategy::chunks)
    return 2;
  // On the chips that cannot be timed here, kernels of other maps ask for
  // one block: at sm_90's bounds, or left alone, ptxas holds some below the
  // registers they need and spills (sm_120: layer_norm's 16-bit slices of
  // 8192 at 64 registers, 28 bytes; sm_100: cross-entropy's 16-bit gradient
  // over the online kernel, 12 bytes; sm_89: log-softmax's f32 warp per row
  // at eight blocks, 28 bytes).
  if (plan.sm() != 90 && map.otherMap)
    return 1;
  if (plan.sm() >= 100) {
    if (plan.strategy != Strategy::online || byteWidth(plan.inType) != 2)
      return 0;
    return blocksAt64Registers(plan);
  }
  if (plan.strategy == Strategy::chunks) {
    // The map's batch of loads (KernelEmitter::mapBatch: half the held
    // elements) of each operand only it reads.
    int64_t spare =
        kChunkSpareRegisters + (map.otherMap ? kChunkOtherMapRegisters : 0) +
        (map.rowInputsPerElement ? chunkRowInputRegisters(plan) : 0) +
        map.mapOnlyOperands * plan.elementsPerThread() / 2;
    int64_t blocks = kRegisterFile /
                     ((plan.elementsPerThread() + spare) * plan.numThreads());
    if (plan.hasStage())
      blocks = std::min(
          blocks, sharedBytesPerSM(plan.sm()) /
                      (plan.dynamicSharedBytes() + kSharedReservedPerBlock));
    blocks = std::min(
        {blocks, kMaxBlocksPerSM, kMaxThreadsPerSM / plan.numThreads()});
    return std::max<int64_t>(1, blocks);
  }
  bool warpPerRow = plan.rowsPerBlock > 1 && plan.threadsPerRow() == 32 &&
                    plan.elementsPerThread() >= 32 && !plan.prefetchRegisters &&
                    !plan.pairReduce;
  if (plan.clusterSize == 1 && !warpPerRow)
    return 0;
  int64_t blocks = blocksAt64Registers(plan);
  // Another map's slices on the peeled path or of 32 f32 elements per thread
  // take blocks away, as long as two stay (a slice of 512 threads keeps its
  // second block: see above).
  if (plan.clusterSize > 1 && map.otherMap &&
      (map.peeled ||
       (byteWidth(plan.inType) == 4 && plan.elementsPerThread() >= 32)))
    blocks = std::max(std::min<int64_t>(blocks, 2),
                      kRegisterFile /
                          ((64 + kPeeledSliceRegisters) * plan.numThreads()));
  // Kept online tiles take shared memory: no more blocks than fit in it.
  if (plan.keptElements > 0)
    blocks = std::min(blocks,
                      sharedBytesPerSM(plan.sm()) / plan.dynamicSharedBytes());
  return std::max<int64_t>(1, blocks);
}

/// Registers a thread needs beyond the elements it holds (addresses, masks,
/// the reductions).
static constexpr int64_t kOperandSpareRegisters = 40;

/// A fused kernel with several operands counted as holding each thread's
/// elements of all of them in registers: elements per thread x operands,
/// plus kOperandSpareRegisters, against the 255 registers of a thread or its
/// share of the register file. It was measured when the kernels held the
/// per-column operands too (ptxas -v, sm_90: layer_norm f32 12288 on 384
/// threads 134 registers, 16384 on 512 spilled 28 bytes; rms_norm and the
/// softmax backward f32 32768 on 1024 spilled 116-136 bytes). The map now
/// loads those where it needs them, and ptxas gives layer_norm f32 12288 on
/// 384 threads 72 registers and 16384 on 512 83, without spills: the count
/// is conservative for them. The blocks it refuses measured slower (H200,
/// bench/family.py --sweep, 4096 and 16384 rows: layer_norm 12288-16384 on
/// 512-1024 threads -1% to -39%, rms_norm f32 14336-16384 on 1024 -3% to
/// -7%; bench/results-h200.txt), so it keeps auto's choices.
std::pair<int64_t, int64_t> operandRegisters(const KernelPlan &plan,
                                             int64_t operands) {
  return {plan.elementsPerThread() * operands + kOperandSpareRegisters,
          std::min<int64_t>(255, kRegisterFile / plan.numThreads())};
}

/// Registers a thread of one input needs beyond its elements.
static constexpr int64_t kRowSpareRegisters = 24;

/// A block that holds its row (or slice) of one input in registers needs
/// about one register per f32 element and three per four 16-bit ones,
/// plus kRowSpareRegisters, against the 255 of a thread or its share of
/// the register file. ptxas -v (sm_90), the 74 plans over that with 24
/// spare among 28905 the planner accepted (requested warps): 70 spilled
/// (f32 1024 threads x 48-128 elements, 16-bit 1024 x 64 and 512 x 128:
/// up to 3672 bytes); the 16-bit ones of 1024 x 48, counted at three
/// quarters, did not. Auto's blocks stay within: f32 1024 x 32 takes 64.
std::pair<int64_t, int64_t> rowRegisters(const KernelPlan &plan) {
  int64_t held = plan.elementsPerThread();
  if (byteWidth(plan.inType) < 4)
    held = held * 3 / 4;
  return {held + kRowSpareRegisters,
          std::min<int64_t>(255, kRegisterFile / plan.numThreads())};
}

int64_t operandBlocksPerSM(const KernelPlan &plan, int64_t operands) {
  return kRegisterFile /
         (operandRegisters(plan, operands).first * plan.numThreads());
}

bool fitsOperandRegisters(int64_t elements, int64_t operands) {
  for (int64_t threads = 32; threads <= 1024; threads *= 2) {
    int64_t perThread = llvm::divideCeil(elements, threads);
    if (perThread <= kMaxElementsPerThread &&
        perThread * operands + kOperandSpareRegisters <=
            std::min<int64_t>(255, kRegisterFile / threads))
      return true;
  }
  return false;
}

/// Blocks of the cluster auto gives an online kernel for rows of `cols`
/// elements of `elementBytes`: the table's online_cluster.
int64_t autoOnlineClusterSize(const PlanTable &table, int64_t cols,
                              int64_t elementBytes) {
  return table.onlineClusterSize(cols * elementBytes);
}

/// Whether auto cuts rows of `cols` into chunks (Strategy::chunks): rows
/// in and out of one type on sm_90+, of the lengths and types of the
/// table's row_lengths for chunks, with the options that shape the kernel left
/// to auto; a length that is not a multiple of the vector width only for a
/// kernel of one input and output of rows (`peelable`: others have no peeled
/// path and would go scalar).
bool autoChunks(const PlanOptions &opts, const KernelPlan &plan,
                const RowLengthKey &key, int64_t sm, bool peelable) {
  return plan.inType == plan.outType && (key.aligned || peelable) && sm >= 90 &&
         opts.planTable().takesRowLength(Strategy::chunks, key) &&
         opts.blockSize == 0 && opts.numWarps == 0 && opts.vectorWidth == 0 &&
         opts.rowsPerBlock == 0 && opts.clusterSize == 0 &&
         !opts.keptElements && !opts.keepAhead && !opts.cacheHints &&
         !opts.prefetch && !opts.grid && !opts.reread && !opts.pairReduce &&
         !opts.chunkStage;
}

} // namespace rules
} // namespace rowred
} // namespace mlir
