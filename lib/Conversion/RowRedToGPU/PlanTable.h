//===- PlanTable.h - auto's measured defaults, as data ---------*- C++ -*-===//
//
// Part of the softmax kernel compiler.
//
// The table of measured defaults that rowred-plan's auto reads for the
// blocks that hold a row or a slice of one and for the online kernel
// (PlanTable.json, compiled into the library): the derived warps, several
// rows per block, the shapes measured per element type, the grid of one
// block per row group, what a block fetches ahead, the online kernel's
// clusters and warps and the tile of its kernel that streams the row per
// level, the row lengths that decide a strategy, and those that get kernels
// for launches of a few rows. Each section is a list of rows; a lookup takes
// the first row that matches the block (its strategy, element type, size,
// rows and threads; few_rows a ladder of rows by their rows). Each row's
// `note` says the runs behind it.
//
//===----------------------------------------------------------------------===//

#ifndef ROWRED_CONVERSION_ROWREDTOGPU_PLANTABLE_H
#define ROWRED_CONVERSION_ROWREDTOGPU_PLANTABLE_H

#include "rowred/Dialect/RowRed/IR/KernelPlan.h"

#include "llvm/Support/Error.h"

#include <limits>
#include <optional>
#include <vector>

namespace mlir {
namespace rowred {

/// The block a row of the table is matched against.
struct TableKey {
  Strategy strategy = Strategy::fused;
  /// The input's element type.
  Type type;
  /// Elements of the block (or cluster slice), its rows and threads.
  int64_t block = 0, rowsPerBlock = 1, threads = 0;
  bool pairReduce = false;
  /// Blocks per cluster, and the compute capability.
  int64_t cluster = 1, sm = 90;
  /// Whether the kernel writes rows (2-D outputs) or only per-row results.
  bool writesRows = true;
};

/// What a row of the table applies to; a field left out of the row matches
/// every block.
struct TableMatch {
  /// The element types: "f32", "f16", "bf16", "16-bit" or "any".
  enum class Types { any, f32, f16, bf16, bits16 };

  std::optional<Strategy> strategy;
  Types types = Types::any;
  /// Elements of the block, inclusive ("block" sets both).
  int64_t minBlock = 0, maxBlock = std::numeric_limits<int64_t>::max();
  /// "one" or "several" rows per block.
  std::optional<bool> severalRows;
  int64_t maxThreads = std::numeric_limits<int64_t>::max();
  std::optional<bool> pairReduce;
  /// Blocks per cluster, inclusive ("cluster" sets both).
  int64_t minCluster = 1, maxCluster = std::numeric_limits<int64_t>::max();
  int64_t minSm = 0;
  /// Whether the kernel writes rows or only per-row results ("writes_rows").
  std::optional<bool> writesRows;

  bool matches(const TableKey &key) const;
  /// Whether `type` is one of `types`.
  static bool matchesType(Types types, Type type);
};

/// Derived elements per thread of a block of one row whose power of two is
/// at most `maxBlock`.
struct ElementsPerThreadRow {
  int64_t maxBlock = std::numeric_limits<int64_t>::max();
  int64_t elementsPerThread = 0;
};

/// Blocks of at most `maxBlock` elements hold `rows` rows; a row of a block
/// of several rows is spread over threads of `elementsPerThread` elements,
/// at most a warp.
struct RowsPerBlockRule {
  int64_t maxBlock = 0, rows = 1, elementsPerThread = 0;
};

/// A fused block of one row measured faster on `warps` warps than on the
/// derived ones; only where one block per row group may run
/// (`needsRowGrid`), or not where the request asks for the next row in
/// registers or the pair reduction (`needsFreeRegisters`).
struct BlockShapeRow {
  TableMatch match;
  int64_t warps = 0;
  bool needsRowGrid = false, needsFreeRegisters = false;
};

/// A block of one row of `operands` operands (inputs and per-column ones),
/// `held` of them (0: any number) held through the reductions, measured
/// faster on `elementsPerThread` elements per thread than on the shape that
/// fits its registers: a fused block on other warps, a cluster on `warps`
/// warps (0: its own) and more, thinner slices; a fused block with the
/// `.minnctapersm` it was measured with (`minBlocksPerSM`, 0: derived).
struct OperandShapeRow {
  TableMatch match;
  int64_t operands = 0, held = 0, warps = 0, elementsPerThread = 0;
  int64_t minBlocksPerSM = 0;
};

/// The warps of a kernel that matches, and for an online kernel the
/// elements per thread of its tile (0: derived from the vector width).
struct WarpsRow {
  TableMatch match;
  int64_t warps = 0, elementsPerThread = 0;
};

/// A row of a section whose rows name nothing but what they match, which
/// includes whether the kernel writes rows ("writes_rows"): row_grid and
/// cache_hints.
struct WritesRowsMatch {
  TableMatch match;
};

/// Blocks of the cluster of an online kernel over rows of at most
/// `maxRowBytes`.
struct OnlineClusterRow {
  int64_t maxRowBytes = std::numeric_limits<int64_t>::max();
  int64_t cluster = 1;
};

/// What a block that matches fetches ahead: its next row staged in shared
/// memory, or loaded into registers.
struct PrefetchRow {
  TableMatch match;
  /// The operands a kernel of several holds through its reductions
  /// (Group::numHeldOperands); 0, the default: kernels of one input and
  /// output, the only ones a row without it applies to.
  int64_t held = 0;
  /// The element types of the per-column operands ("column_types"): a row
  /// naming them applies to kernels whose every column operand is of them
  /// (a weight's type sets the registers of its kernel).
  TableMatch::Types columnTypes = TableMatch::Types::any;
  Prefetch prefetch = Prefetch::none;
};

/// What row_lengths matches a kernel by: its rows' element type and length,
/// whether that is a multiple of the vector width, and what the kernel
/// holds, reduces and writes.
struct RowLengthKey {
  Type type;
  int64_t cols = 0;
  bool aligned = true;
  /// Operands held through the reductions (0: not known, matching only rows
  /// that name no number).
  int64_t held = 0;
  /// Reduces (0: not known, likewise): softmax's pair is two, a max and
  /// then a sum of exponentials against it; layer_norm's three.
  int64_t reduces = 0;
  /// Whether the kernel writes rows (2-D outputs) or only per-row results.
  bool writesRows = true;
  /// Whether the kernel sums down the columns (ColumnSums).
  bool columnSums = false;
};

/// Rows of `minCols` to `maxCols` elements (inclusive) of the types that
/// auto gives `strategy` by their length: those that are a multiple of the
/// vector width, or those that are not, or both (`aligned` unset).
struct RowLengthRow {
  Strategy strategy = Strategy::fused;
  TableMatch::Types types = TableMatch::Types::any;
  std::optional<bool> aligned;
  int64_t minCols = 1, maxCols = std::numeric_limits<int64_t>::max();
  /// Operands the kernel holds through its reductions, and its reduces (0:
  /// any number).
  int64_t held = 0, reduces = 0;
  /// Whether the kernel writes rows (2-D outputs) or only per-row results
  /// (unset: either).
  std::optional<bool> writesRows;
  /// Whether the kernel sums down the columns (unset: either), and for a
  /// cluster row of such kernels whether it keeps the sums in registers.
  std::optional<bool> columnSums;
  bool sumsInRegisters = false;
  /// Blocks of the clusters of a row of the cluster or online strategy (0:
  /// derived from the row).
  int64_t cluster = 0;
  /// Warps of the block of a row the online strategy stages whole (0: the
  /// table's staged_row_warps, or streamed_tiles' for streamed passes), of
  /// each block of a cluster row's clusters of a given size (0: derived
  /// from the slice), or of a few_rows row's fused block or its clusters'
  /// blocks (0: derived as for the main kernel).
  int64_t warps = 0;

  /// Whether the kernel of `key` is among the row's.
  bool matches(const RowLengthKey &key) const;
};

/// Rows of the `lengths` whose main kernel (chunks, or a block per row:
/// Plan.cpp's fewRowsFewBlocks) also gets a second one for launches of
/// `minRows` to `maxRows` rows, of `lengths.strategy` over clusters of
/// `lengths.cluster` blocks (0: derived), or of smaller chunks of `block`
/// elements in registers and `chunkStage` staged: a few rows' chunks are too
/// few blocks, each waiting for the row's exchange, and a few blocks per row
/// too few threads, to keep the memory system busy. A row from `minRows`
/// above 1 continues the ladder of the rows before it (PlanTable::fewRowsOf).
struct FewRowsRow {
  RowLengthRow lengths;
  int64_t minRows = 1, maxRows = 0;
  int64_t block = 0, chunkStage = 0;
  /// Whether the second kernel loads the operands only the map reads with
  /// the row (hoist_map_loads).
  bool hoistMapLoads = false;
};

/// The tile of the online kernel that streams its row per level of reduces
/// (`reread`): its warps, its elements per thread over every operand it
/// loads, and whether its passes take L2 eviction hints.
struct StreamedTileRule {
  int64_t warps = 0, values = 0;
  bool cacheHints = false;
};

/// The table: PlanTable.json, parsed.
struct PlanTable {
  /// Row blocks of three quarters of a power of two from this size on.
  int64_t threeQuarterBlocksFrom = 0;
  std::vector<ElementsPerThreadRow> elementsPerThread;
  RowsPerBlockRule rowsPerBlock;
  std::vector<BlockShapeRow> blockShapes;
  std::vector<OperandShapeRow> operandShapes;
  StreamedTileRule streamedTiles;
  /// Kernels that run one program per row group where the grid may be so.
  std::vector<WritesRowsMatch> rowGrid;
  /// Fused blocks whose row loads carry an L2 evict-last hint (cache_hints).
  std::vector<WritesRowsMatch> cacheHints;
  std::vector<PrefetchRow> prefetch;
  std::vector<OnlineClusterRow> onlineCluster;
  /// Warps of the online kernel (matched by type, cluster and chip), and of
  /// a staged row (by the block a fused kernel would hold it in).
  std::vector<WarpsRow> onlineWarps, stagedRowWarps;
  std::vector<RowLengthRow> rowLengths;
  std::vector<FewRowsRow> fewRows;

  /// The table in `json`, or an error naming the field at fault.
  static llvm::Expected<PlanTable> parse(StringRef json);
  /// The table compiled into the library (PlanTable.json).
  static const PlanTable &get();

  /// Elements per thread of the derived warps of a block of one row whose
  /// power of two is `pow2Block`.
  int64_t derivedElementsPerThread(int64_t pow2Block) const;
  /// The measured shape of the block of `key`, or null.
  const BlockShapeRow *blockShape(const TableKey &key, bool mayRowGrid,
                                  bool registersAsked) const;
  /// The measured shape of the block (or cluster slice) of `key` of
  /// `operands` operands, `held` of them through the reductions, or null.
  const OperandShapeRow *operandShape(const TableKey &key, int64_t operands,
                                      int64_t held) const;
  /// Whether the kernel of `key` runs one program per row group.
  bool runsRowGrid(const TableKey &key) const;
  /// Whether the fused block of `key` loads its row evict-last (the
  /// cache_hints section).
  bool takesCacheHints(const TableKey &key) const;
  /// What the block of `key` fetches ahead (Prefetch::none for nothing):
  /// a kernel of several operands, `held` of them held through its
  /// reductions (0: one input and output), whose per-column operands are of
  /// `columnTypes` (none: empty).
  Prefetch prefetchOf(const TableKey &key, int64_t held = 0,
                      TypeRange columnTypes = {}) const;
  /// Blocks of the cluster of an online kernel over rows of `rowBytes`.
  int64_t onlineClusterSize(int64_t rowBytes) const;
  /// Whether auto gives `strategy` to the kernel of `key` by its rows'
  /// length (row_lengths).
  bool takesRowLength(Strategy strategy, const RowLengthKey &key) const {
    return rowLengthOf(strategy, key) != nullptr;
  }
  /// The first row_lengths row of `strategy` that matches `key`, or null.
  const RowLengthRow *rowLengthOf(Strategy strategy,
                                  const RowLengthKey &key) const;
  /// The few_rows rows of the kernels for a few rows of `key`, by their
  /// rows: the first row that matches from one row, then each later one
  /// that matches from the row after the last one's maxRows (none: the
  /// main kernel takes every launch).
  SmallVector<const FewRowsRow *> fewRowsOf(const RowLengthKey &key) const;
  /// The first row of `rows` that matches `key` (the last matches every
  /// key).
  static const WarpsRow &warpsRowOf(ArrayRef<WarpsRow> rows,
                                    const TableKey &key);
  /// The warps of the first row of `rows` that matches `key`.
  static int64_t warpsOf(ArrayRef<WarpsRow> rows, const TableKey &key) {
    return warpsRowOf(rows, key).warps;
  }
};

} // namespace rowred
} // namespace mlir

#endif // ROWRED_CONVERSION_ROWREDTOGPU_PLANTABLE_H
