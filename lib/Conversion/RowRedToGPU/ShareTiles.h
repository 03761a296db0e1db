//===- ShareTiles.h - The online kernel's tiles of a share ----------------===//
//
// Part of the softmax kernel compiler.
//
// The online kernel walks a block's share of a row in tiles of the plan's
// block: the share's columns (the whole row, or a cluster rank's part), how
// many tiles it has, and, with kept_elements, which of its first tiles pass 1
// keeps in the stage for pass 2 (or keep_ahead copies in): index arithmetic
// over i32 values, emitted at the builder's insertion point; and which of
// the tile walk's forms (tiles loaded ahead, chained across the passes,
// kept) a row path takes. The passes (OnlineEmitter), the row loop and the
// stage's copies compose it.
//
//===----------------------------------------------------------------------===//

#ifndef ROWRED_CONVERSION_ROWREDTOGPU_SHARETILES_H
#define ROWRED_CONVERSION_ROWREDTOGPU_SHARETILES_H

#include "rowred/Dialect/RowRed/IR/KernelPlan.h"

#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "mlir/IR/Value.h"

#include <utility>

namespace mlir {
namespace rowred {

/// The columns [lo, hi) of a block's share of a row of `cols` (i32) in the
/// online kernel: the whole row, or with clusters the share of rank
/// `clusterRank` (i32), ceil(ceil(N / C) / g) * g columns each, in units g
/// of whole vectors, or of whole tiles with the stage, whose tiles it copies
/// (computed in i64: N may be close to 2^31). Units of vectors keep the
/// ranks' shares even: in whole tiles, N = 131075 over eight ranks of
/// 16384-element tiles gave four ranks two tiles each and three none.
std::pair<Value, Value> onlineShare(ImplicitLocOpBuilder &b,
                                    const KernelPlan &plan, Value cols,
                                    Value clusterRank);

/// The number of tiles (i32) of the share [lo, hi).
Value shareTiles(ImplicitLocOpBuilder &b, const KernelPlan &plan, Value lo,
                 Value hi);

/// `n - min(n, 1)` (i32): the tiles before the last of `n`, 0 for none.
Value tilesBeforeLast(ImplicitLocOpBuilder &b, Value n);

/// With keep_ahead, the end of the kept tiles of the share [lo, hi): its
/// first tiles, at most keptElements of them and never its last, which
/// pass 1 loads into registers and pass 2 starts on.
Value keptEnd(ImplicitLocOpBuilder &b, const KernelPlan &plan, Value lo,
              Value hi);

/// Whether the tile at column `start` of the share [lo, hi) is one of those
/// kept in the stage (kept_elements): before keptEnd in a row whose kept
/// tiles keep_ahead copies (`keepAheadRow`), else among the share's first
/// keptElements columns.
Value isKeptTile(ImplicitLocOpBuilder &b, const KernelPlan &plan, Value start,
                 Value lo, Value hi, bool keepAheadRow);

/// Whether the online passes load each tile one ahead into registers
/// (prefetch = registers) on a row path of vector width `vec` whose share
/// is not `staged`: its loads are carried by the loop, so that a thread's
/// next loads are in flight while it folds or writes the current tile. The
/// load ahead of the last tile reads nothing: it starts at or past hi.
bool onlineTilesAhead(const KernelPlan &plan, bool staged, int64_t vec);

/// Whether the tiles loaded ahead also cross the passes' boundaries: pass
/// 1's last tile is folded after its loop, and a reversed pass 2, which
/// starts on that tile, takes its loads from registers instead of reading
/// it again. Each thread uses only what it loaded itself.
bool onlineChainsTiles(const KernelPlan &plan, bool staged, int64_t vec);

/// Whether pass 1 also stores the share's first tiles, as loaded, into the
/// stage for pass 2 (kept_elements). A thread reads back only what it
/// stored itself: no barrier.
bool onlineKeeps(const KernelPlan &plan, bool staged, int64_t vec);

/// Whether a row path reads kept tiles from the stage: pass 1 stores them
/// there (onlineKeeps), or keep_ahead copies them in (`keepAheadRow`). A
/// keep_ahead kernel's other paths keep nothing.
bool readsKeptTiles(const KernelPlan &plan, bool keepAheadRow);

} // namespace rowred
} // namespace mlir

#endif // ROWRED_CONVERSION_ROWREDTOGPU_SHARETILES_H
