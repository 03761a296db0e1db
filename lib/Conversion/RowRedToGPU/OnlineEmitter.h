//===- OnlineEmitter.h - Emit the body of an online kernel ----------------===//
//
// Part of the softmax kernel compiler.
//
// OnlineEmitter writes the body of an online kernel (Strategy::online): each
// block walks its share of a row tile by tile in two passes, a running
// (max, sum) pair in the first and the map in the second, with the tiles
// loaded ahead, kept in the stage between the passes, or the whole share
// staged. It builds on KernelEmitter's row loop through its hooks
// (startRowLoop, emitLoopRow, prefetchRow); its members are defined in
// OnlineEmitter.cpp, the share's arithmetic in ShareTiles.h.
//
//===----------------------------------------------------------------------===//

#ifndef ROWRED_CONVERSION_ROWREDTOGPU_ONLINEEMITTER_H
#define ROWRED_CONVERSION_ROWREDTOGPU_ONLINEEMITTER_H

#include "KernelEmitter.h"

namespace mlir {
namespace rowred {

/// Emits the body of one online kernel.
class OnlineEmitter : public KernelEmitter {
public:
  using KernelEmitter::KernelEmitter;

private:
  /// With keep_ahead, the first row's kept tiles copied into the stage;
  /// with chained tiles (RowLoopForm::tileAhead), the first row's first
  /// tile loaded, which the loop carries.
  SmallVector<Value> startRowLoop(const RowLoopForm &form, Value first,
                                  int64_t vec) override;

  /// The row on the online kernel's two passes (emitOnlineRow), or re-read
  /// level by level with streamed levels (emitRowPasses); with chained
  /// tiles, returns the next row's first tile.
  SmallVector<Value> emitLoopRow(const RowLoopForm &form, Value row, Value step,
                                 Value xRow, Value yRow, int64_t vec,
                                 bool peeled, ValueRange carried) override;

  /// The block's share of row `row` into the stage (stageShare), when the
  /// row exists.
  void prefetchRow(Value row) override;

  /// keep_ahead = bulk: thread 0 starts copying the kept tiles of row `row`
  /// (i64) of the input, columns [lo, keptEnd), into stage buffer `buffer`
  /// with one cp.async.bulk (evict-first with cache_hints: nothing reads
  /// them from L2 again), which completes the buffer's mbarrier phase, armed
  /// here for its bytes. Nothing when the row does not exist, and then
  /// nobody waits for the phase.
  void bulkCopyKeptTiles(Value row, Value buffer, Value lo, Value hi);

  /// keep_ahead = bulk, right after the row's block reduction: every thread of
  /// the block has passed the reduction's barrier (or, with a single warp per
  /// row, one emitted here), so it is done with the previous row and its
  /// stage buffer, into which the next row's kept tiles go now, in flight
  /// through the cluster's exchange and pass 2.
  void copyNextRowKeptTiles();

  /// This thread's loads (loadRaw) of the online tile at column `start` of
  /// the row at `xRow`, masked at column `end` and, when given, by `exists`:
  /// the tile the pipelined passes of emitOnlineRow load ahead.
  SmallVector<Value> loadOnlineTileAhead(Value xRow, Value start, Value end,
                                         int64_t vec, Value exists = {});

  /// This thread's loads of the first tile, at column `lo` (masked at `hi`:
  /// none for an empty share), of the block's share of row `row` (i64), or
  /// none when the row does not exist; evict-last with cache_hints, as pass
  /// 1 loads its tiles. The tile a chained pass 1 starts from
  /// (onlineChainsTiles).
  SmallVector<Value> loadFirstTile(Value row, Value lo, Value hi, int64_t vec);

  /// The chunks of the online tile at column `start` from `raw`, its loads
  /// issued ahead by loadOnlineTileAhead (masked at column `end`).
  SmallVector<Chunk> unpackOnlineTile(Value start, Value end, int64_t vec,
                                      ValueRange raw);

  /// This thread's loads of the online tile at column `start` (masked at
  /// `end` and, when given, by `exists`) of the block's share from column
  /// `lo`: from the stage when the tile is one of those kept there
  /// (kept_elements), else from the row at `xRow`.
  SmallVector<Value> loadShareTile(Value xRow, Value start, Value lo, Value end,
                                   int64_t vec, Value exists);

  /// Pass 1's copy of the tile at column `start` (`raw`, as loaded) into the
  /// stage when it is one of the tiles kept for pass 2 (kept_elements).
  void keepTile(Value start, Value lo, Value end, int64_t vec, ValueRange raw);

  /// With keep_ahead, starts copying this thread's chunks of the kept tiles
  /// of row `row` (i64) into the stage, a cp.async group per tile: the
  /// first row's, before the row loop (as one group, bf16 1024 x 131072 on
  /// one block per row ran 2.5% slower on the H200).
  void copyKeptTiles(Value row, Value lo, Value hi);

  /// Online: pass 1 walks the block's share of the row tile by tile keeping
  /// a running (max, sum) per thread (onlineFold); pass 2 reads the share
  /// again and writes the map.
  ///
  /// With the stage (prefetch = stage, a known row length), the share was
  /// copied into shared memory ahead (prefetchRow) and both passes read it
  /// there: one DRAM read per element. The second pass starts copying
  /// `nextRow`'s share into each tile of the stage as soon as it has written
  /// that tile. A peeled row's share starts at its own head, so it is copied
  /// by the row itself, before pass 1 (onlineRowShare).
  ///
  /// With the tiles loaded ahead (onlineTilesAhead), the passes hand loads
  /// on across their boundaries (onlineChainsTiles): a reversed pass 2
  /// starts on pass 1's last tile, still in registers, and, given `next`,
  /// its last iteration loads the next row's first tile, which this returns
  /// for the next call's `firstTile`.
  ///
  /// The per-row inputs are loaded before pass 1 (a gather's element may be
  /// written over by another block's pass 2), the per-row results stored
  /// after the row's exchange; a group without 2-D outputs (logsumexp,
  /// cross-entropy's loss) has no pass 2: one read.
  SmallVector<Value> emitOnlineRow(Value xRow, Value yRow, int64_t vec,
                                   Value nextRow = {}, bool peeled = false,
                                   ValueRange firstTile = {},
                                   const NextTile *next = nullptr);

  /// The share of the row at `xRow`, read from the stage when `staged` (the
  /// previous row copied it in). A `peeled` row (see peelRow) shifts every
  /// share by its head h and clips it at the end of the vectors; its edges
  /// are loaded here, and with prefetch = stage its vectors are copied into
  /// the stage here, from column h on (stageShare).
  OnlineShare onlineRowShare(Value xRow, int64_t vec, bool peeled, bool staged);

  /// Pass 1 of the online kernel over `share`: this thread's running (max,
  /// sum) pair, the edges of a peeled row included. With cache_hints it
  /// reads its tiles evict-last, so that they stay in L2 for pass 2.
  ///
  /// With the tiles loaded ahead, `firstTile` holds the first tile's loads
  /// when the previous row issued them, and with `lastTile` the last tile is
  /// folded after the loop and its loads returned there, for pass 2.
  ///
  /// With keep_ahead, pass 1 first issues the loads of the first tile after
  /// the kept ones, then waits for this thread's copies into the stage and
  /// folds the kept tiles from there while those loads are in flight; the
  /// loop walks the rest of the share.
  std::pair<Value, Value> onlinePassOne(Value xRow, int64_t vec,
                                        const OnlineShare &share,
                                        ValueRange firstTile = {},
                                        SmallVector<Value> *lastTile = nullptr);

  /// Pass 2 of the online kernel over `share`, forwards or from the last
  /// tile back to the first: reads the share again (from the stage when it
  /// is staged, copying `nextRow`'s share in tile by tile when given) and
  /// writes the map of the row's (rowMax, rowSum). With cache_hints its
  /// loads and stores are evict-first.
  ///
  /// With the tiles loaded ahead, `lastTile` holds the loads of pass 1's
  /// last tile (onlineChainsTiles), where a reversed pass 2 starts. With
  /// `next` (reversed as well), the last iteration, on the share's first
  /// tile, runs after the loop and first loads the next row's first tile
  /// (evict-last with cache_hints, as pass 1 loads it); those loads are
  /// returned.
  SmallVector<Value> onlinePassTwo(Value xRow, Value yRow, int64_t vec,
                                   const OnlineShare &share,
                                   DenseMap<Value, Value> &scalars,
                                   Value nextRow, ValueRange lastTile = {},
                                   const NextTile *nextTile = nullptr);

  /// Whether the row path being emitted copies the kept tiles in ahead
  /// (KernelPlan::keepAhead, on the aligned vector path only).
  bool keepAheadRow = false;
  /// With keepAheadRow, the next row of the block (i64), whose kept tiles
  /// pass 2 copies into the stage.
  Value keepAheadNextRow;
};

} // namespace rowred
} // namespace mlir

#endif // ROWRED_CONVERSION_ROWREDTOGPU_ONLINEEMITTER_H
