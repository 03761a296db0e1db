//===- KernelEmitter.h - Emit the body of a kernel ------------------------===//
//
// Part of the softmax kernel compiler.
//
// KernelEmitter writes one gpu.func kernel body from a Group and its
// KernelPlan. Its members are defined by concern: KernelEmitter.cpp (the
// kernel, its paths and bodies), RowAccess.cpp (loads, stores, and what
// goes into the stage, Stage.h) and RowLoop.cpp (the row loop, fused rows
// and rows read again); the values they share are in KernelValues.h. Its
// building blocks are classes of their own: the stage (Stage.h), the bodies
// (RowBody.h), the reductions across threads (RowReduction.h), the
// cluster's exchanges (ClusterExchange.h), the column sums (ColumnSums.h).
// ChunksEmitter (ChunksEmitter.h) builds the chunks kernel on it and
// OnlineEmitter (OnlineEmitter.h) the online kernel's two passes, through
// the row loop's hooks (startRowLoop, emitLoopRow).
//
// Every op is created in a statement of its own, never as an argument of
// another call (`AndIOp::create(b, CmpIOp::create(...), CmpIOp::create(...))`):
// C++ leaves the order in which a call's arguments are evaluated
// unspecified, so the ops would land in a different order under each host
// compiler, and the PTX would differ between a g++ and a clang build
// (scripts/same-kernels.sh compares them in CI).
//
//===----------------------------------------------------------------------===//

#ifndef ROWRED_CONVERSION_ROWREDTOGPU_KERNELEMITTER_H
#define ROWRED_CONVERSION_ROWREDTOGPU_KERNELEMITTER_H

#include "ClusterExchange.h"
#include "ColumnSums.h"
#include "KernelGroup.h"
#include "KernelValues.h"
#include "Mbarriers.h"
#include "RowBody.h"
#include "RowReduction.h"
#include "ShareTiles.h"
#include "Stage.h"
#include "rowred/Dialect/RowRed/IR/KernelPlan.h"

#include "rowred/Dialect/RowRed/IR/RowRedOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/MathExtras.h"

#include <cmath>
#include <functional>
#include <optional>

namespace mlir {
namespace rowred {

//===----------------------------------------------------------------------===//
// Kernel emission
//===----------------------------------------------------------------------===//

/// The form of the row loop on one path (accesses of `vec` elements, or
/// the peeled rows): what the loop carries from row to row and which body
/// a row takes, from the plan alone.
struct RowLoopForm {
  /// prefetch: the next row's copy into the stage starts before this row.
  bool staged;
  /// keep_ahead: the next row's kept tiles go into the stage during this
  /// row (the first row's before the loop).
  bool keepsAhead;
  /// keep_ahead = bulk: the rows take the stage's buffers by turns.
  bool bulkRow;
  /// Each level of reduces reads the row again (streamed levels, or the
  /// scalar fallback of a block that re-reads its row).
  bool rereads;
  /// softmax's (max, sum) pair meets in one exchange on this path.
  bool pairRow;
  /// The loop counts its iterations (i32): each cluster exchange's
  /// mbarrier completes one phase per row, or every other row with two
  /// buffers, and keep_ahead = bulk's buffers alternate.
  bool countRows;
  /// prefetch = registers: the loop carries the next row's loads.
  bool ahead;
  /// The online kernel's chained tiles: the loop carries the next row's
  /// first tile (emitOnlineRow), loaded evict-last as pass 1 loads it; not
  /// with keep_ahead, whose pass 2 ends on a kept tile.
  bool tileAhead;
  /// A block (or slice) holds its whole row in registers (emitFusedRow).
  bool fusedRow;
};

/// Emits the body of one kernel. The kernel handles every row
/// `blockIdx.x + k * gridDim.x` with `numThreads` threads (with several rows
/// per block, rows `blockIdx.x * R + g + k * gridDim.x * R` for its groups
/// `g`; with clusters, every row `clusterId + k * numClusters`, each block of
/// the cluster on its slice); each thread holds `elementsPerThread` elements
/// of the block, as chunks of `vectorWidth` elements interleaved across the
/// threads of a row so that a warp's accesses coalesce.
class KernelEmitter {
public:
  KernelEmitter(ImplicitLocOpBuilder &b, Group group, const KernelPlan &plan,
                gpu::GPUFuncOp func);
  virtual ~KernelEmitter() = default;

  /// Emits the whole kernel of any strategy but chunks (ChunksEmitter): the
  /// L2 policies and the cluster's mbarriers when used, the paths of
  /// grid-stride loops over rows (emitPaths, emitRowLoop), and the exit of
  /// the cluster.
  virtual void emit();

protected:
  // Protected, not private: ChunksEmitter builds on these.

  /// Zeroes the block's column-sum accumulators (ColumnSums) before its
  /// first row.
  void startColumnSums();

  /// The run-time choice between the vector path, the peeled vector path
  /// (hasPeeledPath; see misalignedAlike) and the scalar path: calls
  /// `emitPath(vec, peeled)` for each, at its place.
  void emitPaths(function_ref<void(int64_t vec, bool peeled)> emitPath);

  /// True (i1) when both matrices' pointers and strides and the row length
  /// allow `vec`-element accesses.
  Value vectorPathAllowed(int64_t vec);

  Value constI32(int64_t v) { return rowred::constI32(b, v); }
  Value constI64(int64_t v) { return rowred::constI64(b, v); }
  Value constF32(double v) { return rowred::constF32(b, v); }
  Value negInf() { return rowred::negInf(b); }

  /// The start of row `row` (i64) of the matrix at `base` with `stride`
  /// elements of type `elem` between rows.
  Value rowPointer(Value base, Type elem, Value row, Value stride);

  /// True (i1) when `ptr` and every row start `ptr + k * stride` are aligned
  /// for `vec`-element accesses.
  Value isAligned(Value ptr, Value stride, Type elem, int64_t vec);

  /// True (i1) when every row of the first input and the same row of every
  /// other input and output of rows start equally far, in elements, from a
  /// `vec`-element boundary: their element offsets agree modulo `vec` at the
  /// base and between rows. Such rows take the peeled vector path
  /// (loadPeeledRow) whatever their alignment. True with the one input of
  /// rows alone.
  Value misalignedAlike(int64_t vec);

  /// Loads the `vec`-wide chunk at column `col` of the row at `rowPtr` (at
  /// `addrCol` of `rowPtr` when given: the stage holds a block's slice from
  /// its column 0) when `valid`; masked-off chunks load nothing and read as
  /// zeros.
  Chunk loadChunk(Value rowPtr, Value col, Value valid, int64_t vec,
                  Value addrCol = {});

  /// `valid` and, with several rows per block, whether this thread's row
  /// exists.
  Value inOwnRow(Value valid);

  /// This thread's row (i64) of the group of rows starting at `groupRow`:
  /// the same row with one row per block.
  Value ownRow(Value groupRow);

  /// The type of one `vec`-wide access of elements of type `elem` (the
  /// input's when not given).
  Type rawType(int64_t vec, Type elem = {});

  /// The `vec`-wide load of loadChunk, as loaded (zeros when not `valid`),
  /// of elements of type `elem` (the input's when not given).
  Value loadRaw(Value rowPtr, Value col, Value valid, int64_t vec,
                Value addrCol = {}, Type elem = {});

  /// A 16-byte global load of `type` from `ptr` with the L2 eviction policy
  /// `policy` (`ld.global.L2::cache_hint`; no NVVM op spells it in MLIR 22).
  Value loadWithPolicy(Type type, Value ptr, Value policy);

  /// The chunk at `col` from the value `loaded` of loadRaw, its elements
  /// extended to f32.
  Chunk unpackChunk(Value col, Value valid, Value loaded);

  /// The elements of `loaded` (a value of loadRaw), extended to f32.
  SmallVector<Value> unpack(Value loaded);

  /// Loads the chunk's elements of the group's other operands (extraRows)
  /// at the chunk's columns into `chunk.extra`, but for those only the map
  /// reads (Group::isMapOnly), which stay empty until withMapOperands. With
  /// `stageCol` (a chunks kernel's place in the stage of the first input's
  /// elements), the other inputs come from their slots of the stage; an
  /// input whose raw vector `ahead` holds (by element index, null where
  /// none: loadRowAhead's) is unpacked from it.
  void loadExtra(Chunk &chunk, Value valid, int64_t vec, Value stageCol = {},
                 ArrayRef<Value> ahead = {});

  /// The `vec` elements at column `col` of the operand at element index
  /// `index` (>= 1: extraRows' order), extended to f32.
  SmallVector<Value> loadOperand(unsigned index, Value col, Value valid,
                                 int64_t vec);

  /// `chunk` with its elements of the operands only the map reads loaded
  /// where they are not yet: the map's loads of the norms' weight and bias,
  /// issued where the map needs them.
  Chunk withMapOperands(const Chunk &chunk);

  /// Rounds `values` to `elem` (the output type when not given) and stores
  /// them at column `col` of the row at `rowPtr` when `valid`.
  void storeChunk(Value rowPtr, Value col, Value valid, ArrayRef<Value> values,
                  Type elem = {});

  /// The chunks a thread holds of a block starting at column `start`: all of
  /// its elements, or `numChunks` chunks when given. A chunk is valid when it
  /// starts before column `end` (the row's end when not given; the peeled
  /// path passes the end of its vectors).
  SmallVector<ChunkPlace> chunkPlaces(Value start, int64_t vec,
                                      int64_t numChunks = 0, Value end = {});

  /// Loads the chunks a thread holds of a block starting at column `start`
  /// (see chunkPlaces, masked at `end` when given) from the row at `rowPtr`,
  /// or from the stage.
  SmallVector<Chunk> loadBlock(Value rowPtr, Value start, int64_t vec,
                               int64_t numChunks = 0, bool fromStage = false,
                               Value end = {});

  /// The head and vector end of the row at `rowPtr` (whose output row
  /// starts equally far from alignment; see misalignedAlike).
  PeeledRow peelRow(Value rowPtr, int64_t vec);

  /// Loads this thread's part of a row whose start at `rowPtr` need not be
  /// aligned for `vec`-element accesses (see peelRow): the vectors of the
  /// block's layout from column h (shifted by h for a cluster's slices),
  /// then its part of the edges (loadEdges).
  SmallVector<Chunk> loadPeeledRow(Value rowPtr, int64_t vec);

  /// The scalar chunks of the edges of a peeled row: the head, columns
  /// [0, h), and the tail, [vectorEnd, cols), fewer than vec elements each,
  /// spread over the row's threads; only the first block of a cluster takes
  /// them (or the row's first chunk: `owner`). Either head and tail side by
  /// side, ceil((vec - 1) / T) of each per thread, or `oneList`: edge e < h
  /// + (cols - vectorEnd) is column e of the head or column vectorEnd + e -
  /// h of the tail, ceil((2 * vec - 2) / T) per thread.
  SmallVector<Chunk> loadEdges(Value rowPtr, PeeledRow row, int64_t vec,
                               bool oneList, Value owner = {});

  /// The end of the columns that vector accesses of the current row cover:
  /// a peeled chunk's vectorEnd, else the row's.
  Value vectorEnd() { return peeledChunk ? peeledChunk->vectorEnd : cols; }

  /// The inputs (element indices) whose next row prefetch = registers
  /// loads ahead: the first and every other that a reduction reads (not
  /// those only the map reads, which it loads where it needs them).
  SmallVector<unsigned> aheadInputs() const;

  /// Loads this thread's chunks of row `row` (i64; the group's first row
  /// with several rows per block) of each of aheadInputs into registers,
  /// as loaded (zeros past the last row or the row's end), input by input:
  /// the row after the current one with prefetch = registers.
  SmallVector<Value> loadRowAhead(Value row, int64_t vec);

  /// Starts copying this thread's chunks of row `row` (i64) of the input
  /// into the stage when the row exists, as one cp.async group (the online
  /// kernel copies its whole share of the row: OnlineEmitter). Each thread
  /// copies exactly the chunks it later reads back, so a cp.async.wait_group
  /// of its own is all the synchronization the stage needs.
  virtual void prefetchRow(Value row);

  /// Emits `body(xRow)` under `row < rows`, with the input's row `row`.
  void ifRowExists(Value row, function_ref<void(Value)> body);

  /// Stage::copyChunks for each tile of [from, to), without a commit.
  void copyTilesToStage(ArrayRef<Value> rowPtrs, Value from, Value to,
                        Value stageStart, Value end);

  /// Starts copying this thread's chunks of the block at column `start` of
  /// row `row` (i64) into the stage when the row exists, as one cp.async
  /// group: at the chunks' places in the block, or at their columns from
  /// `stageStart` when given (the online kernel's share), masked at `end`
  /// when given (else at the row's end).
  void copyToStage(Value row, Value start, Value stageStart, Value end = {});

  /// The current row's 2-D inputs by slot of the stage (null: one only the
  /// map reads, but the first, which every kernel loads).
  SmallVector<Value> stagedRowPointers(Value xRow);

  /// Whether `rowPtr` is the stage: loads read it like a row, at stage
  /// columns.
  bool isStage(Value rowPtr) const {
    return stage && rowPtr == stage->current();
  }

  /// In a row of keep_ahead = bulk, its stage buffer (i32); null otherwise.
  Value bulkRowBuffer() const { return stage ? stage->rowBuffer() : Value(); }

  //===--------------------------------------------------------------------===//
  // Bodies
  //===--------------------------------------------------------------------===//

  /// Element `k` of `chunk` of each of the group's operands.
  SmallVector<Value> elementsAt(const Chunk &chunk, int64_t k);

  /// The column of element `k` of `chunk` (i32) where `ctx`'s body reads it.
  Value columnOf(const RowContext &ctx, const Chunk &chunk, int64_t k) {
    if (!ctx.usesColumn || k == 0)
      return ctx.usesColumn ? chunk.col : Value();
    return arith::AddIOp::create(b, chunk.col, constI32(k));
  }

  /// Emits `scf.if cond` without an else region and returns its body.
  Block *emitIfThen(Value cond);

  /// Emits `scf.if tid == 0` and returns its body.
  Block *emitIfFirstThread();

  //===--------------------------------------------------------------------===//
  // Rows
  //===--------------------------------------------------------------------===//

  /// The first row (i64) of this block's (cluster's) row
  /// loop and the step between its rows.
  std::pair<Value, Value> rowLoopBounds();

  /// In the row loop, row `k` (i32) of this block: the stage buffer
  /// (keep_ahead = bulk, `bulkRow`), the cluster exchange buffer and mbarrier
  /// phase parity, and the online pair's shared slots that alternate by
  /// row.
  void setRowTurns(Value k, bool bulkRow);

  /// The persistent loop: rows blockIdx.x, blockIdx.x + gridDim.x, ... (per
  /// group of R rows, or per cluster). Every thread of a block (of a cluster)
  /// runs the same iterations, so that barriers and shuffles stay uniform;
  /// a group past the last row masks its accesses. `peeled` rows (vector
  /// path only) start anywhere: see peelRow.
  void emitRowLoop(int64_t vec, bool peeled = false);

  /// Before the row loop on a path of form `form`, whose first row is
  /// `first` (i64): what a strategy starts for that row ahead of the loop,
  /// and the values it carries from row to row (emitLoopRow returns the next
  /// row's). None here; the online kernel's kept and chained tiles
  /// (OnlineEmitter).
  virtual SmallVector<Value> startRowLoop(const RowLoopForm &form, Value first,
                                          int64_t vec) {
    return {};
  }

  /// The body of one iteration of the row loop: the row `row` (i64; the
  /// loop's `step` apart from the next) at `xRow` and `yRow`, with `carried`
  /// the values startRowLoop or the previous iteration's body left for it.
  /// Returns the values for the next iteration (none here: prefetch =
  /// registers carries its loads in emitRowLoop). A block holding its row
  /// (emitFusedRow), re-reading it (emitRowPasses), or the peeled path's
  /// chunks.
  virtual SmallVector<Value> emitLoopRow(const RowLoopForm &form, Value row,
                                         Value step, Value xRow, Value yRow,
                                         int64_t vec, bool peeled,
                                         ValueRange carried);

  Value constIndex(int64_t v) { return arith::ConstantIndexOp::create(b, v); }

  /// Whether this thread is in warp 0 (i1).
  Value isWarp0();
  /// Whether this thread is the block's first, tid == 0 (i1).
  Value isFirstThread();

  /// Sets extraRows and outputRows to row `row` (i64) of the group's
  /// operands, whose first input and output rows are `xRow` and `yRow`.
  void setOperandRows(Value row, Value xRow, Value yRow);

  /// The scalars of the online map: the per-row inputs `scalars`
  /// (rowInputScalars, loaded before the row's exchange) and the reduce
  /// inits bound to the row's (max, sum).
  DenseMap<Value, Value> onlineScalars(DenseMap<Value, Value> scalars,
                                       Value rowMax, Value rowSum);

  /// The per-row inputs of the current row (labels, as loaded) and the
  /// gathers' elements (f32; NaN where the index is not a column), by
  /// buffer: the row scalars a row starts with. Empty without per-row
  /// operands.
  DenseMap<Value, Value> rowInputScalars();

  /// The first thread of the row (of the cluster's first block; and where
  /// `writes`, i1, holds) stores the map's per-row results, from the
  /// row-uniform part `ctx` of the map.
  void storeRowOutputs(RowContext &ctx, Value writes = {});

  /// Clones the row-uniform part of the map for the current row.
  RowContext prepareMap(DenseMap<Value, Value> &scalars);

  /// Clones the row-uniform part of `reduce` for the current row.
  RowContext prepareReduce(ReduceOp reduce, DenseMap<Value, Value> &scalars);

  /// Applies the map to `chunks` and stores the results.
  void emitMap(Value yRow, ArrayRef<Chunk> chunks, RowContext &ctx);

  /// How many of a chunk's `vec`-element vectors emitMap takes together in
  /// a chunks kernel whose map reads operands the reduces do not (all their
  /// loads, then all their stores): half as many as each thread holds in
  /// registers, at least one.
  int64_t mapBatch(int64_t vec) const;

  /// Fused: the row is loaded once into registers; every reduce runs over
  /// the registers, then the map writes the row.
  ///
  /// With prefetch (vector path), the row is read from the stage, and the
  /// copy of `nextRow` into it starts as soon as the first reduction has
  /// consumed every value read from it. With prefetch = registers, `loaded`
  /// holds the row's chunks as loadRowAhead loaded them.
  void emitFusedRow(Value xRow, Value yRow, int64_t vec, Value nextRow = {},
                    ValueRange loaded = {});
  /// The chunks of the row a block loads itself (no prefetch) from
  /// global memory, on the vector path or, with `peeled`, the peeled path;
  /// evict-last with cache_hints.
  SmallVector<Chunk> loadOwnRow(Value xRow, int64_t vec, bool peeled);

  /// The rest of a fused row once its `chunks` are in registers: every
  /// reduce, then the map, which writes the row at `yRow`. The stage's copy
  /// of `nextRow` starts once the first reduction has read every chunk.
  void emitFusedChunks(Value yRow, ArrayRef<Chunk> chunks, Value nextRow);

  /// The row scalars of the reduces over `chunks`, added to `scalars`, one
  /// level at a time: each level's partials over the thread's chunks, then
  /// over the block (and cluster: RowReduction::blockReduce). The stage's copy
  /// of `nextRow` starts after the first level's partials.
  void reduceRowLevels(ArrayRef<Chunk> chunks, DenseMap<Value, Value> &scalars,
                       Value nextRow);

  /// The level of reduces [begin, end) of the group, prepared against the
  /// row scalars of the levels before it.
  PreparedLevel prepareLevel(unsigned begin, unsigned end,
                             DenseMap<Value, Value> &scalars);

  /// The thread's partial results of `level`'s reduces over the valid
  /// elements of `chunks`, each combined with its `acc` when given (the
  /// identities when neither has any), then their count where the level
  /// counts them.
  SmallVector<Value> levelPartials(PreparedLevel &level, ArrayRef<Chunk> chunks,
                                   ValueRange acc);

  /// The largest valid value of `chunks` (-inf when none is valid).
  Value maxOfChunks(ArrayRef<Chunk> chunks);

  /// The rest of a fused row over the online pair (see KernelPlan::
  /// pairReduce): the thread's max m_t, e_i = exp(x_i - m_t) and their sum
  /// d_t, then one block-wide (and cluster-wide) combination of the pairs
  /// into the row's (m, s). A softmax map then writes e_i * (exp(m_t - m) /
  /// s), one exp per element in all; any other map is applied to the row's
  /// (m, s) as usual.
  void emitPairRow(Value yRow, ArrayRef<Chunk> chunks, Value nextRow);

  /// softmax's map from the exponentials e_i = exp(x_i - mt) this thread
  /// holds for `chunks` (`exps`, one list per chunk), against its own max
  /// `mt`: writes e_i * (exp(mt - m) / s) for the row's max `m` and sum `s`,
  /// one exp per thread. 0 where the thread's elements are all -inf (e_i = 0
  /// against a shift that the scale must not blow up), NaN when the whole
  /// row is -inf (m = -inf, s = 0), as torch's result.
  void storeScaledExps(Value yRow, ArrayRef<Chunk> chunks,
                       ArrayRef<SmallVector<Value>> exps, Value mt, Value m,
                       Value s);

  /// Elements per thread and tile of the re-reading fallback.
  int64_t rereadChunks() const;

  /// The walk of emitRowPasses at vector width `vec`: the online kernel's
  /// share of the row in its tiles, masked at the share's end; else (the
  /// re-reading scalar fallback) the row, or the block's slice of it, in
  /// tiles of `rereadChunks()` scalars per thread.
  TileWalk rowPassWalk(int64_t vec);

  /// Emits `scf.for start = walk.lower to walk.upper step tile` and calls
  /// `body(start, iterArgs)`, which returns the values to yield.
  scf::ForOp
  emitTileLoop(const TileWalk &walk, ValueRange inits,
               function_ref<SmallVector<Value>(Value, ValueRange)> body);

  /// A row without holding it in registers: each level of reduces walks the
  /// row (rowPassWalk), reading it again (mostly from L2 for a row a block
  /// holds, from DRAM for longer ones), and meets in one exchange; then the
  /// map walks it once more. The re-reading scalar fallback of fused and
  /// cluster kernels (rows whose pointers or strides do not allow vector
  /// accesses, so that the vector path keeps the register budget), and
  /// every path of the online kernel with reread (KernelPlan::
  /// streamsLevels), which takes any chain of reduces at any row length.
  void emitRowPasses(Value xRow, Value yRow, int64_t vec);

  /// This block's share [lo, hi) of a row in the online kernel
  /// (rowred::onlineShare of the kernel's row length and cluster rank).
  std::pair<Value, Value> onlineShare() {
    return rowred::onlineShare(b, plan, cols, clusterRank);
  }

  /// The online kernel's tile at column `start` of the row at `xRow`, or
  /// of the stage, which holds the block's share from its column `lo`;
  /// chunks from column `end` on are masked.
  SmallVector<Chunk> loadOnlineTile(Value xRow, Value start, Value lo,
                                    int64_t vec, bool fromStage, Value end);

  /// Starts copying this thread's chunks of columns [lo, hi) of the rows at
  /// `rowPtrs` into their slots of the stage (see Stage::copyChunks) from
  /// their start, as one cp.async group.
  void stageShare(ArrayRef<Value> rowPtrs, Value lo, Value hi);

  /// One step of the online pass: the running pair (m, d) of this thread
  /// with the valid values of `chunks` folded in, d = sum exp(x - m).
  std::pair<Value, Value> onlineFold(Value m, Value d, ArrayRef<Chunk> chunks);

  ImplicitLocOpBuilder &b;
  Group group;
  const KernelPlan &plan;
  /// The first input and output, their row strides (i64), the rows (i64)
  /// and columns (i32).
  Value x, y, rows, cols, xStride, yStride, shared;
  /// Every input, output and per-column operand (`!llvm.ptr<1>`) and the row
  /// strides of the inputs and outputs, in kernel parameter order.
  SmallVector<Value> inputPtrs, outputPtrs, columnPtrs, inputStrides,
      outputStrides;
  /// The per-row inputs and outputs and the column sums (`!llvm.ptr<1>`),
  /// in kernel parameter order.
  SmallVector<Value> rowInputPtrs, rowOutputPtrs, columnSumPtrs;
  /// The map's sums down the columns, with column sums (emit), and their
  /// workspace (the last parameter).
  std::optional<ColumnSums> columnSums;
  Value columnWorkspace;
  /// In the row loop: the current row (i64), when the group has per-row
  /// operands (clamped to the last row past it, with several rows per
  /// block).
  Value currentRow;
  /// In the row loop of a group with several operands: the current row of
  /// each input but the first, then each per-column operand (loadExtra
  /// reads them), and the current row of each output.
  SmallVector<Value> extraRows, outputRows;
  /// The prefetch stage, with prefetch, kept tiles or a chunk stage
  /// (KernelPlan::hasStage); in the row loop with keep_ahead = bulk, on the
  /// row's buffer.
  std::optional<Stage> stage;
  Value tid, lane, warp;
  /// Thread index among the threads of its row (tid with one row per block).
  Value rowTid;
  /// Row group of this thread within the block (several rows per block).
  Value rowInBlock;
  /// Rank of this block in its cluster, and the first column of its slice.
  Value clusterRank, sliceStart;
  /// With clusters: the row's exchanges across them.
  std::optional<ClusterExchange> cluster;
  /// The row's reductions across its threads, blocks and cluster.
  std::optional<RowReduction> reduction;
  /// The group's bodies, emitted per row and element.
  std::optional<RowBody> bodies;
  /// In the row loop with KernelPlan::alternatesSlots: the first shared slot
  /// (index) of this row's block exchange of the pair; null otherwise.
  Value pairSlot;
  /// L2 eviction policies (cache_hints): evict-last and evict-first, from
  /// createpolicy at the top of the kernel; null without the hints.
  Value evictLast, evictFirst;
  /// The policy that global 16-byte loads and stores take while a pass of
  /// the online kernel is emitted (set for the pass by llvm::SaveAndRestore);
  /// null for plain accesses.
  Value loadPolicy, storePolicy;
  /// Whether the row path being emitted reduces the (max, sum) pair
  /// (KernelPlan::pairReduce, except on the peeled path of
  /// peeledWithoutPair).
  bool pairRow = false;
  /// Whether this thread's row exists, in the row loop with several rows per
  /// block; null otherwise.
  Value rowValid;
  /// Chunks: whether the chunk being emitted lies inside the row, so that
  /// its accesses need no masks.
  bool wholeChunk = false;
  /// Chunks: the peeled row whose chunk is being emitted (emitVectorChunk).
  std::optional<PeeledRow> peeledChunk;
  FloatType f32;
  Type i32, i64;
  /// `!llvm.ptr<3>`: shared memory.
  LLVM::LLVMPointerType sharedPtr;
};

} // namespace rowred
} // namespace mlir

#endif // ROWRED_CONVERSION_ROWREDTOGPU_KERNELEMITTER_H
