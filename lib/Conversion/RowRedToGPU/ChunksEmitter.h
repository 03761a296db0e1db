//===- ChunksEmitter.h - Emit the body of a chunks kernel -----------------===//
//
// Part of the softmax kernel compiler.
//
// ChunksEmitter writes the body of a chunks kernel (Strategy::chunks): rows
// cut into chunks that blocks take by ticket, whose partial results meet
// through the launch's workspace in global memory. It builds on
// KernelEmitter's accesses, bodies and block reductions; its members are
// defined in ChunksEmitter.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef ROWRED_CONVERSION_ROWREDTOGPU_CHUNKSEMITTER_H
#define ROWRED_CONVERSION_ROWREDTOGPU_CHUNKSEMITTER_H

#include "KernelEmitter.h"

namespace mlir {
namespace rowred {

/// Emits the body of one chunks kernel.
class ChunksEmitter : public KernelEmitter {
public:
  /// The kernel's parameters are KernelEmitter's and, last, the workspace.
  ChunksEmitter(ImplicitLocOpBuilder &b, Group group, const KernelPlan &plan,
                gpu::GPUFuncOp func);

  /// The chunks kernel (Strategy::chunks): blocks take the chunks of the
  /// rows by ticket, one after another, each on the vector path or the
  /// scalar path.
  ///
  /// Thread 0 takes ticket t with an `atom.inc` on the workspace's first
  /// word; the block handles chunk t mod K of row t / K (K = ceil(cols /
  /// chunk)) and takes the next ticket, until one is past the launch's
  /// rows x K. Each block takes one such ticket, and the counter wraps to 0
  /// after rows x K + grid of them. Tickets follow the order in which
  /// blocks ask, so the chunks of the first row not yet done are all taken
  /// before any of a later row: while K of the blocks are resident at once,
  /// one of them is free to take the next, and the kernel cannot hang. The
  /// launcher guarantees it with a cooperative launch of at least K blocks
  /// (docs/abi.md).
  void emit() override;

private:
  /// The vector path of chunk `chunk` (i32) of the `count` of row `row`
  /// (i64): emitChunk without masks for a chunk inside the row, with them
  /// for its last. A `peeled` row's chunks start at its head h (see
  /// peelRow) and end at its vectorEnd; its first chunk also takes the
  /// edges (loadEdges).
  void emitVectorChunk(Value row, Value chunk, Value count, bool peeled);

  /// Chunk `chunk` (i32) of the `count` of row `row` (i64), from column
  /// sliceStart. On the vector path, blockElements elements in registers,
  /// then chunkStaged more in the stage (one cp.async.bulk by thread 0,
  /// issued before the registers' loads); on the scalar path, the whole
  /// chunk streamed from global memory by each of the three passes (mostly
  /// from L2 after the first), so that it keeps few registers next to the
  /// vector path's. Each thread reduces its elements to a (max, sum) pair;
  /// the block's pair meets the row's other chunks' (exchangeChunk),
  /// and the map writes the chunk: a softmax as e_i * exp(m_t - m) / s from
  /// the exponentials e_i = exp(x_i - m_t) kept in registers, the streamed
  /// part and any other map from the inputs.
  void emitChunk(Value row, Value chunk, Value count, int64_t vec);

  /// The chunk from column sliceStart of the row at `xRow` on the `vec`
  /// path: thread 0 starts the bulk copy of each 2-D input's staged part
  /// into its stage slot (bulkCopyChunkStage) before the registers' loads;
  /// on the scalar path, the whole chunk is streamed from global memory.
  ChunkParts loadChunkParts(Value xRow, int64_t vec);

  /// emitChunk for a group other than softmax's pair (chunkExchanges): the
  /// thread's elements of every operand it holds, blockElements per operand
  /// in registers and the rest in the stage; then, level by level, the
  /// level's partial results (at most two) reduced over the block and then
  /// with the row's other chunks (exchangeChunk, once per level); and the
  /// map over the registers and the stage.
  void emitLevelChunk(Value row, Value chunk, Value count, int64_t vec);

  /// The row's shifted moments (isShiftedMoments) in emitLevelChunk, added
  /// to `scalars`, from the chunk's in one exchange: the block's sum s_c and
  /// count n_c of the chunk's elements (`partialsOf` a level gives the
  /// thread's), then its shifted sums about its own mean s_c / n_c (the
  /// bodies' row length taken as n_c), then (s_c, c_c, q_c, n_c) with the
  /// row's other chunks (momentsFold). One exchange instead of one per
  /// level (H100, layer_norm at 1024 x 1048576: f32 77.1% -> 81.9% of the
  /// copy, bf16 59.6% -> 77.6%; at 64 rows 66.1% -> 76.4% and 57.5% ->
  /// 62.1%).
  void
  exchangeMoments(Value row, Value chunk, Value count,
                  DenseMap<Value, Value> &scalars,
                  function_ref<SmallVector<Value>(PreparedLevel &)> partialsOf);

  /// What forEachStreamed calls on its chunks: the values to carry on.
  using StreamBody =
      function_ref<SmallVector<Value>(ArrayRef<Chunk>, ValueRange)>;

  /// Calls `body` on each of this thread's chunks of the `elements` columns
  /// from `start` of the block's chunk: `vec` elements each, interleaved
  /// over the block's threads as loadBlock's, read from the stage when
  /// `staged` (which holds them from its start), else from the row at
  /// `xRow`; chunks past the row's end are masked. An scf.for over them, two
  /// per iteration (more would hold them all in registers), carries `inits`
  /// through `body`'s results, called on each chunk after its load or, when
  /// `together`, once on all of an iteration's chunks (mapBatch of them)
  /// after their loads; returns the last ones.
  SmallVector<Value> forEachStreamed(Value xRow, Value start, int64_t elements,
                                     int64_t vec, bool staged, ValueRange inits,
                                     StreamBody body, bool together = false);

  /// Thread 0 arms the stage's mbarrier for the part of the staged columns
  /// [stageStart, stageStart + chunkStaged) inside the row of each of
  /// `rowPtrs` (stage slot i: rowPtrs[i], skipped when null) and copies it
  /// into its slot with one cp.async.bulk; none when that part is empty,
  /// and the arrival alone completes the phase. Vector path only: the part
  /// is whole 16-byte vectors from a 16-byte aligned address.
  void bulkCopyChunkStage(ArrayRef<Value> rowPtrs, Value stageStart);

  /// The fold of the partial results of `reduces` (one level, at most two):
  /// each by its combiner.
  ChunkFold reduceFold(ArrayRef<ReduceOp> reduces);

  /// The fold of chunks' shifted moments (s, c, q, n): the sum s of n
  /// elements and the sums c of x - m and q of (x - m)^2 about their mean m
  /// = s / n. Two are combined about the mean of both, each moved there
  /// (`c + n d` and `q + d (2 c + n d)`, d the difference of the means,
  /// exact where they are close); across lanes, the lanes' sums first, then
  /// each lane's moments moved to the row's mean s / N once, so that the
  /// row's c and q are about the mean the map computes.
  ChunkFold momentsFold();

  /// The row's values, in every thread, from the block's `values` (at most
  /// kChunkValues f32: the (max, sum) pair, a level's partial results or
  /// shifted moments) of chunk `chunk` (i32) of the row's `count`, through
  /// row `row`'s record in the
  /// workspace (docs/abi.md: a counter, then chunkEntries regions of
  /// `count` 8-byte entries from byte 128, the values' from region `slot`):
  ///
  /// * thread 0 stores the chunk's entries, relaxed, then fences: the
  ///   packed pair in one, or each value with the nonzero marker 1.0 beside
  ///   it in its own, so that an entry that is not zero is the chunk's;
  /// * warp 0 reads the row's entries until none is zero, folding them by
  ///   `fold` (foldEntries), and lane 0 hands the result to the block
  ///   through shared memory;
  /// * after the row's `last` exchange, lane 0 counts the block out on the
  ///   counter, and the row's last block out clears the record, so that
  ///   each launch leaves the workspace as it found it.
  ///
  /// Each exchange has entries of its own: none waits for the row's other
  /// chunks to leave the one before. Against a counter of arrivals that
  /// readers polled before they read the entries, one round trip to L2
  /// fewer on the way to the row's values (H200, 1024 rows of 1048576: the
  /// softmax backward 74.2% -> 87.8% of the copy in f32, 79.1% -> 92.4% in
  /// bf16; bf16 layer_norm 48.0% -> 60.1%, bench/results-h200.txt).
  SmallVector<Value, 4> exchangeChunk(Value row, Value chunk, Value count,
                                      ValueRange values, const ChunkFold &fold,
                                      unsigned slot, bool last);

  /// Warp 0's end of a row's last exchange: the lane whose departure found
  /// the counter at `before` (lane 0's, `count` - 1 for the last) clears
  /// the row's chunkEntries x `count` 8-byte entries from `firstEntry` and
  /// its `counter`.
  void clearRecordIfLast(Value before, Value count, Value firstEntry,
                         Value counter);

  /// Warp 0's fold of a row's `count` chunks' entries by `fold`, 32 chunks
  /// a step, lane l taking chunks l, l + 32, ...: the step's `words` entries
  /// of each chunk (`entry(k, chunk)`) are read (relaxed, gpu scope), and
  /// read again after a sleep until none in the warp is zero; returns the
  /// lane's folded values.
  SmallVector<Value> foldEntries(Value count, unsigned words,
                                 const ChunkFold &fold,
                                 function_ref<Value(unsigned, Value)> entry);

  /// An atomic load (`ordering`, gpu scope) of `type` from `ptr`.
  Value atomicLoad(Type type, Value ptr, unsigned alignment,
                   LLVM::AtomicOrdering ordering);

  /// The workspace (`!llvm.ptr<1>`): the tickets and the rows' records.
  Value workspace;
  /// The parity of the stage's mbarrier phase that the chunk's copy
  /// completes.
  Value stageParity;
};

} // namespace rowred
} // namespace mlir

#endif // ROWRED_CONVERSION_ROWREDTOGPU_CHUNKSEMITTER_H
