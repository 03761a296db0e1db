//===- PlanTable.cpp - auto's measured defaults, as data ------------------===//
//
// Part of the softmax kernel compiler.
//
//===----------------------------------------------------------------------===//

#include "PlanTable.h"
#include "rowred/Conversion/RowRedToGPU/RowRedToGPU.h"

#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"

using namespace mlir;
using namespace mlir::rowred;
namespace json = llvm::json;

/// PlanTable.json as a string literal (configured by CMake).
static const char kPlanTableJson[] =
#include "PlanTable.inc"
    ;

bool TableMatch::matches(const TableKey &key) const {
  if (strategy && *strategy != key.strategy)
    return false;
  // A key without a type (a staged row's warps) matches rows for any.
  if (types != Types::any && (!key.type || !matchesType(types, key.type)))
    return false;
  if (key.block < minBlock || key.block > maxBlock)
    return false;
  if (severalRows && *severalRows != (key.rowsPerBlock > 1))
    return false;
  if (key.threads > maxThreads || key.cluster < minCluster ||
      key.cluster > maxCluster || key.sm < minSm)
    return false;
  if (writesRows && *writesRows != key.writesRows)
    return false;
  return !pairReduce || *pairReduce == key.pairReduce;
}

bool TableMatch::matchesType(Types types, Type type) {
  switch (types) {
  case Types::any:
    return true;
  case Types::f32:
    return byteWidth(type) == 4;
  case Types::bits16:
    return byteWidth(type) == 2;
  case Types::f16:
    return type.isF16();
  case Types::bf16:
    return type.isBF16();
  }
  llvm_unreachable("every kind of types is handled");
}

//===----------------------------------------------------------------------===//
// Reading the table
//===----------------------------------------------------------------------===//

/// Whether every key of the object `value` is one of `allowed` (or "note"),
/// so that a misspelt field is an error rather than a row that matches
/// more than it says.
static bool onlyKeys(const json::Value &value, ArrayRef<StringRef> allowed,
                     json::Path path) {
  const json::Object *object = value.getAsObject();
  if (!object) {
    path.report("expected an object");
    return false;
  }
  for (const auto &entry : *object) {
    StringRef key = entry.first;
    if (key != "note" && !llvm::is_contained(allowed, key)) {
      path.field(key).report("unknown field");
      return false;
    }
  }
  return true;
}

/// A positive integer field.
static bool mapPositive(json::ObjectMapper &mapper, const json::Value &value,
                        StringLiteral field, int64_t &out, json::Path path,
                        bool optional = false) {
  if (optional && !value.getAsObject()->get(field))
    return true;
  if (!mapper.map(field, out))
    return false;
  if (out < 1) {
    path.field(field).report("expected a positive integer");
    return false;
  }
  return true;
}

namespace mlir {
namespace rowred {

static bool fromJSON(const json::Value &value, TableMatch::Types &out,
                     json::Path path) {
  std::optional<StringRef> text = value.getAsString();
  using Types = TableMatch::Types;
  std::optional<Types> types =
      text ? llvm::StringSwitch<std::optional<Types>>(*text)
                 .Case("any", Types::any)
                 .Case("f32", Types::f32)
                 .Case("f16", Types::f16)
                 .Case("bf16", Types::bf16)
                 .Case("16-bit", Types::bits16)
                 .Default(std::nullopt)
           : std::nullopt;
  if (!types) {
    path.report("expected \"f32\", \"f16\", \"bf16\", \"16-bit\" or \"any\"");
    return false;
  }
  out = *types;
  return true;
}

/// An enum of the dialect's attributes from its string, through its
/// `symbolize` function.
template <typename Enum>
static bool fromEnum(const json::Value &value, Enum &out, json::Path path,
                     std::optional<Enum> (*symbolize)(StringRef),
                     StringLiteral expected) {
  std::optional<StringRef> text = value.getAsString();
  std::optional<Enum> symbol = text ? symbolize(*text) : std::nullopt;
  if (!symbol) {
    path.report(expected);
    return false;
  }
  out = *symbol;
  return true;
}

static bool fromJSON(const json::Value &value, Strategy &out, json::Path path) {
  return fromEnum(value, out, path, symbolizeStrategy,
                  "expected a strategy (fused, cluster, online, chunks)");
}

static bool fromJSON(const json::Value &value, Prefetch &out, json::Path path) {
  return fromEnum(value, out, path, symbolizePrefetch,
                  "expected \"none\", \"stage\" or \"registers\"");
}

/// The matching fields of a row (those of TableMatch), besides `extra`.
static bool fromJSON(const json::Value &value, TableMatch &out, json::Path path,
                     ArrayRef<StringRef> extra = {}) {
  SmallVector<StringRef> keys = {"strategy",    "types",       "block",
                                 "min_block",   "max_block",   "rows_per_block",
                                 "max_threads", "pair_reduce", "cluster",
                                 "min_cluster", "max_cluster", "min_sm"};
  keys.append(extra.begin(), extra.end());
  if (!onlyKeys(value, keys, path))
    return false;
  json::ObjectMapper mapper(value, path);
  std::optional<std::string> rows;
  std::optional<int64_t> block, cluster;
  if (!mapper.mapOptional("strategy", out.strategy) ||
      !mapper.mapOptional("cluster", cluster) ||
      !mapper.mapOptional("min_cluster", out.minCluster) ||
      !mapper.mapOptional("max_cluster", out.maxCluster) ||
      !mapper.mapOptional("min_sm", out.minSm) ||
      !mapper.mapOptional("types", out.types) ||
      !mapper.mapOptional("block", block) ||
      !mapper.mapOptional("min_block", out.minBlock) ||
      !mapper.mapOptional("max_block", out.maxBlock) ||
      !mapper.mapOptional("rows_per_block", rows) ||
      !mapper.mapOptional("max_threads", out.maxThreads) ||
      !mapper.mapOptional("pair_reduce", out.pairReduce) ||
      !mapper.mapOptional("writes_rows", out.writesRows))
    return false;
  if (block)
    out.minBlock = out.maxBlock = *block;
  if (cluster)
    out.minCluster = out.maxCluster = *cluster;
  if (rows) {
    if (*rows != "one" && *rows != "several") {
      path.field("rows_per_block").report("expected \"one\" or \"several\"");
      return false;
    }
    out.severalRows = *rows == "several";
  }
  if (out.minBlock > out.maxBlock) {
    path.report("min_block is over max_block");
    return false;
  }
  if (out.minCluster > out.maxCluster) {
    path.report("min_cluster is over max_cluster");
    return false;
  }
  return true;
}

static bool fromJSON(const json::Value &value, WarpsRow &out, json::Path path) {
  // Warps rows (online_warps) also match by whether the kernel writes rows.
  if (!fromJSON(value, out.match, path,
                {"warps", "elements_per_thread", "writes_rows"}))
    return false;
  json::ObjectMapper mapper(value, path);
  return mapPositive(mapper, value, "warps", out.warps, path) &&
         mapPositive(mapper, value, "elements_per_thread",
                     out.elementsPerThread, path, /*optional=*/true);
}

static bool fromJSON(const json::Value &value, WritesRowsMatch &out,
                     json::Path path) {
  return fromJSON(value, out.match, path, {"writes_rows"});
}

static bool fromJSON(const json::Value &value, OnlineClusterRow &out,
                     json::Path path) {
  if (!onlyKeys(value, {"max_row_bytes", "cluster"}, path))
    return false;
  json::ObjectMapper mapper(value, path);
  return mapPositive(mapper, value, "max_row_bytes", out.maxRowBytes, path,
                     /*optional=*/true) &&
         mapPositive(mapper, value, "cluster", out.cluster, path);
}

/// Whether the staged_row_warps rows name their warps alone: a staged row
/// writes rows, and its tile is its stage.
static bool stagedRowsNameWarpsOnly(ArrayRef<WarpsRow> rows, json::Path path) {
  for (auto [i, row] : llvm::enumerate(rows)) {
    if (row.elementsPerThread || row.match.writesRows) {
      path.index(i).report(
          "a staged row's warps name no elements_per_thread nor writes_rows");
      return false;
    }
  }
  return true;
}

/// Whether the last row of a section matches every key (no field but its
/// value and `note`), so that a lookup always finds one.
static bool endsWithCatchAll(const json::Value &table, StringLiteral section,
                             StringRef valueField, json::Path path) {
  const json::Array *rows = table.getAsObject()->getArray(section);
  const json::Object *last =
      rows && !rows->empty() ? rows->back().getAsObject() : nullptr;
  if (last && llvm::all_of(*last, [&](const auto &entry) {
        StringRef key = entry.first;
        return key == valueField || key == "note";
      }))
    return true;
  path.field(section).report("the last row must match every kernel (only "
                             "its value and a note)");
  return false;
}

static bool fromJSON(const json::Value &value, ElementsPerThreadRow &out,
                     json::Path path) {
  if (!onlyKeys(value, {"max_block", "elements_per_thread"}, path))
    return false;
  json::ObjectMapper mapper(value, path);
  return mapPositive(mapper, value, "max_block", out.maxBlock, path,
                     /*optional=*/true) &&
         mapPositive(mapper, value, "elements_per_thread",
                     out.elementsPerThread, path);
}

static bool fromJSON(const json::Value &value, RowsPerBlockRule &out,
                     json::Path path) {
  if (!onlyKeys(value, {"max_block", "rows", "elements_per_thread"}, path))
    return false;
  json::ObjectMapper mapper(value, path);
  return mapPositive(mapper, value, "max_block", out.maxBlock, path) &&
         mapPositive(mapper, value, "rows", out.rows, path) &&
         mapPositive(mapper, value, "elements_per_thread",
                     out.elementsPerThread, path);
}

static bool fromJSON(const json::Value &value, StreamedTileRule &out,
                     json::Path path) {
  if (!onlyKeys(value, {"warps", "values", "cache_hints"}, path))
    return false;
  json::ObjectMapper mapper(value, path);
  return mapPositive(mapper, value, "warps", out.warps, path) &&
         mapPositive(mapper, value, "values", out.values, path) &&
         mapper.map("cache_hints", out.cacheHints);
}

static bool fromJSON(const json::Value &value, BlockShapeRow &out,
                     json::Path path) {
  if (!fromJSON(value, out.match, path,
                {"warps", "needs_row_grid", "needs_free_registers"}))
    return false;
  json::ObjectMapper mapper(value, path);
  return mapPositive(mapper, value, "warps", out.warps, path) &&
         mapper.mapOptional("needs_row_grid", out.needsRowGrid) &&
         mapper.mapOptional("needs_free_registers", out.needsFreeRegisters);
}

static bool fromJSON(const json::Value &value, OperandShapeRow &out,
                     json::Path path) {
  if (!fromJSON(value, out.match, path,
                {"operands", "held", "warps", "elements_per_thread",
                 "min_blocks_per_sm"}))
    return false;
  json::ObjectMapper mapper(value, path);
  return mapPositive(mapper, value, "operands", out.operands, path) &&
         mapPositive(mapper, value, "held", out.held, path,
                     /*optional=*/true) &&
         mapPositive(mapper, value, "warps", out.warps, path,
                     /*optional=*/true) &&
         mapPositive(mapper, value, "elements_per_thread",
                     out.elementsPerThread, path) &&
         mapPositive(mapper, value, "min_blocks_per_sm", out.minBlocksPerSM,
                     path, /*optional=*/true);
}

static bool fromJSON(const json::Value &value, PrefetchRow &out,
                     json::Path path) {
  if (!fromJSON(value, out.match, path, {"prefetch", "held", "column_types"}))
    return false;
  json::ObjectMapper mapper(value, path);
  return mapper.map("prefetch", out.prefetch) &&
         mapper.mapOptional("column_types", out.columnTypes) &&
         mapPositive(mapper, value, "held", out.held, path,
                     /*optional=*/true);
}

/// A row_lengths row (its kernel matched by `held`, `reduces`,
/// `writes_rows` and `column_sums` as well; `cluster`: the blocks of its
/// clusters; `warps`: those of a staged row's block or of each block of
/// such clusters), or the row lengths of a row of a section whose own keys
/// are `extra` instead.
static bool
fromJSON(const json::Value &value, RowLengthRow &out, json::Path path,
         ArrayRef<StringRef> extra = {"held", "reduces", "writes_rows",
                                      "column_sums", "sums_in_registers",
                                      "cluster", "warps"},
         bool fusedWarps = false) {
  SmallVector<StringRef> keys = {"strategy", "types", "aligned", "min_cols",
                                 "max_cols"};
  llvm::append_range(keys, extra);
  if (!onlyKeys(value, keys, path))
    return false;
  json::ObjectMapper mapper(value, path);
  if (!mapper.map("strategy", out.strategy) ||
      !mapper.mapOptional("types", out.types) ||
      !mapper.mapOptional("aligned", out.aligned) ||
      !mapPositive(mapper, value, "min_cols", out.minCols, path,
                   /*optional=*/true) ||
      !mapPositive(mapper, value, "max_cols", out.maxCols, path,
                   /*optional=*/true) ||
      !mapPositive(mapper, value, "held", out.held, path, /*optional=*/true) ||
      !mapPositive(mapper, value, "reduces", out.reduces, path,
                   /*optional=*/true) ||
      !mapper.mapOptional("writes_rows", out.writesRows) ||
      !mapper.mapOptional("column_sums", out.columnSums) ||
      !mapper.mapOptional("sums_in_registers", out.sumsInRegisters) ||
      !mapPositive(mapper, value, "cluster", out.cluster, path,
                   /*optional=*/true) ||
      !mapPositive(mapper, value, "warps", out.warps, path,
                   /*optional=*/true))
    return false;
  bool warpsTaken = out.strategy == Strategy::online ||
                    (fusedWarps && out.strategy == Strategy::fused);
  // A cluster row of a given size may name its blocks' warps.
  bool clusterWarps = out.strategy == Strategy::cluster && out.cluster;
  if (out.warps && (((!warpsTaken || out.cluster) && !clusterWarps) ||
                    !isWarpCount(out.warps))) {
    if (fusedWarps)
      path.report("warps names the 1 to 32 warps (a power of two or three "
                  "times one) of a fused or online row's block, without "
                  "clusters, or of a cluster row's blocks with its cluster");
    else
      path.report("warps names the 1 to 32 warps (a power of two or three "
                  "times one) of an online row's block, without clusters, "
                  "or of a cluster row's blocks with its cluster");
    return false;
  }
  if (out.cluster &&
      (out.strategy == Strategy::fused || out.strategy == Strategy::chunks ||
       !llvm::isPowerOf2_64(out.cluster) || out.cluster > 16)) {
    path.report("cluster names the 2, 4, 8 or 16 blocks of a cluster or "
                "online row's clusters");
    return false;
  }
  if (out.minCols > out.maxCols) {
    path.report("min_cols is over max_cols");
    return false;
  }
  if (out.sumsInRegisters &&
      (out.strategy != Strategy::cluster || out.columnSums != true)) {
    path.report("sums_in_registers names a cluster row of kernels with "
                "column_sums");
    return false;
  }
  return true;
}

static bool fromJSON(const json::Value &value, FewRowsRow &out,
                     json::Path path) {
  if (!fromJSON(value, out.lengths, path,
                {"min_rows", "max_rows", "cluster", "warps", "held", "reduces",
                 "writes_rows", "block", "chunk_stage", "hoist_map_loads"},
                /*fusedWarps=*/true))
    return false;
  json::ObjectMapper mapper(value, path);
  if (!mapPositive(mapper, value, "min_rows", out.minRows, path,
                   /*optional=*/true) ||
      !mapPositive(mapper, value, "max_rows", out.maxRows, path) ||
      !mapPositive(mapper, value, "block", out.block, path,
                   /*optional=*/true) ||
      !mapPositive(mapper, value, "chunk_stage", out.chunkStage, path,
                   /*optional=*/true) ||
      !mapper.mapOptional("hoist_map_loads", out.hoistMapLoads))
    return false;
  if (out.minRows > out.maxRows) {
    path.field("min_rows").report("exceeds max_rows");
    return false;
  }
  // Smaller chunks are the one second kernel of the chunks' own strategy.
  bool chunks = out.lengths.strategy == Strategy::chunks;
  if (chunks != (out.block != 0)) {
    path.report("a row of chunks, and only such a row, names its block");
    return false;
  }
  if (!chunks && out.chunkStage) {
    path.report("only a row of chunks names a chunk_stage");
    return false;
  }
  if (chunks && out.hoistMapLoads) {
    path.report("a row of chunks batches its map's loads: no "
                "hoist_map_loads");
    return false;
  }
  return true;
}

static bool fromJSON(const json::Value &value, PlanTable &out,
                     json::Path path) {
  if (!onlyKeys(value,
                {"about", "three_quarter_blocks_from", "streamed_tiles",
                 "elements_per_thread", "rows_per_block", "block_shapes",
                 "operand_shapes", "row_grid", "cache_hints", "prefetch",
                 "online_cluster", "online_warps", "staged_row_warps",
                 "row_lengths", "few_rows"},
                path))
    return false;
  json::ObjectMapper mapper(value, path);
  if (!mapPositive(mapper, value, "three_quarter_blocks_from",
                   out.threeQuarterBlocksFrom, path) ||
      !mapper.map("streamed_tiles", out.streamedTiles) ||
      !mapper.map("operand_shapes", out.operandShapes) ||
      !mapper.map("elements_per_thread", out.elementsPerThread) ||
      !mapper.map("rows_per_block", out.rowsPerBlock) ||
      !mapper.map("block_shapes", out.blockShapes) ||
      !mapper.map("row_grid", out.rowGrid) ||
      !mapper.map("cache_hints", out.cacheHints) ||
      !mapper.map("prefetch", out.prefetch) ||
      !mapper.map("online_cluster", out.onlineCluster) ||
      !mapper.map("online_warps", out.onlineWarps) ||
      !mapper.map("staged_row_warps", out.stagedRowWarps) ||
      !mapper.map("row_lengths", out.rowLengths) ||
      !mapper.mapOptional("few_rows", out.fewRows))
    return false;
  return endsWithCatchAll(value, "elements_per_thread", "elements_per_thread",
                          path) &&
         endsWithCatchAll(value, "online_cluster", "cluster", path) &&
         endsWithCatchAll(value, "online_warps", "warps", path) &&
         endsWithCatchAll(value, "staged_row_warps", "warps", path) &&
         stagedRowsNameWarpsOnly(out.stagedRowWarps,
                                 path.field("staged_row_warps"));
}

} // namespace rowred
} // namespace mlir

llvm::Expected<PlanTable> PlanTable::parse(StringRef text) {
  llvm::Expected<json::Value> value = json::parse(text);
  if (!value)
    return value.takeError();
  PlanTable table;
  json::Path::Root root("plan table");
  if (!fromJSON(*value, table, root))
    return root.getError();
  return table;
}

const PlanTable &PlanTable::get() {
  static const PlanTable table = [] {
    llvm::Expected<PlanTable> parsed = parse(kPlanTableJson);
    if (!parsed)
      llvm::report_fatal_error(llvm::Twine("PlanTable.json: ") +
                               llvm::toString(parsed.takeError()));
    return std::move(*parsed);
  }();
  return table;
}

FailureOr<std::shared_ptr<const PlanTable>>
mlir::rowred::loadPlanTable(StringRef path, Location loc) {
  if (path.empty())
    return std::shared_ptr<const PlanTable>();
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> file =
      llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  if (!file)
    return emitError(loc) << "cannot read the plan table '" << path
                          << "': " << file.getError().message();
  llvm::Expected<PlanTable> table = PlanTable::parse((*file)->getBuffer());
  if (!table)
    return emitError(loc) << "'" << path << "' is not a plan table: "
                          << llvm::toString(table.takeError());
  return std::make_shared<const PlanTable>(std::move(*table));
}

//===----------------------------------------------------------------------===//
// Lookups
//===----------------------------------------------------------------------===//

int64_t PlanTable::derivedElementsPerThread(int64_t pow2Block) const {
  for (const ElementsPerThreadRow &row : elementsPerThread)
    if (pow2Block <= row.maxBlock)
      return row.elementsPerThread;
  llvm_unreachable("the last row takes every block");
}

const BlockShapeRow *PlanTable::blockShape(const TableKey &key, bool mayRowGrid,
                                           bool registersAsked) const {
  for (const BlockShapeRow &row : blockShapes)
    if (row.match.matches(key) && (!row.needsRowGrid || mayRowGrid) &&
        (!row.needsFreeRegisters || !registersAsked))
      return &row;
  return nullptr;
}

const OperandShapeRow *PlanTable::operandShape(const TableKey &key,
                                               int64_t operands,
                                               int64_t held) const {
  for (const OperandShapeRow &row : operandShapes)
    if (row.operands == operands && (row.held == 0 || row.held == held) &&
        row.match.matches(key))
      return &row;
  return nullptr;
}

bool PlanTable::runsRowGrid(const TableKey &key) const {
  return llvm::any_of(rowGrid, [&](const WritesRowsMatch &row) {
    return row.match.matches(key);
  });
}

bool PlanTable::takesCacheHints(const TableKey &key) const {
  return llvm::any_of(cacheHints, [&](const WritesRowsMatch &row) {
    return row.match.matches(key);
  });
}

SmallVector<const FewRowsRow *>
PlanTable::fewRowsOf(const RowLengthKey &key) const {
  SmallVector<const FewRowsRow *> ladder;
  int64_t covered = 0;
  for (const FewRowsRow &row : fewRows)
    if (row.minRows == covered + 1 && row.lengths.matches(key)) {
      ladder.push_back(&row);
      covered = row.maxRows;
    }
  return ladder;
}

int64_t PlanTable::onlineClusterSize(int64_t rowBytes) const {
  for (const OnlineClusterRow &row : onlineCluster)
    if (rowBytes <= row.maxRowBytes)
      return row.cluster;
  llvm_unreachable("the last row takes every row");
}

const RowLengthRow *PlanTable::rowLengthOf(Strategy strategy,
                                           const RowLengthKey &key) const {
  for (const RowLengthRow &row : rowLengths)
    if (row.strategy == strategy && row.matches(key))
      return &row;
  return nullptr;
}

bool RowLengthRow::matches(const RowLengthKey &key) const {
  return TableMatch::matchesType(types, key.type) &&
         (!aligned || *aligned == key.aligned) && key.cols >= minCols &&
         key.cols <= maxCols && (held == 0 || held == key.held) &&
         (reduces == 0 || reduces == key.reduces) &&
         (!writesRows || *writesRows == key.writesRows) &&
         (!columnSums || *columnSums == key.columnSums);
}

const WarpsRow &PlanTable::warpsRowOf(ArrayRef<WarpsRow> rows,
                                      const TableKey &key) {
  for (const WarpsRow &row : rows)
    if (row.match.matches(key))
      return row;
  llvm_unreachable("the last row matches every kernel");
}

Prefetch PlanTable::prefetchOf(const TableKey &key, int64_t held,
                               TypeRange columnTypes) const {
  auto ofColumnTypes = [&](TableMatch::Types types) {
    return types == TableMatch::Types::any ||
           (!columnTypes.empty() && llvm::all_of(columnTypes, [&](Type t) {
             return TableMatch::matchesType(types, t);
           }));
  };
  for (const PrefetchRow &row : prefetch)
    if (row.held == held && row.match.matches(key) &&
        ofColumnTypes(row.columnTypes))
      return row.prefetch;
  return Prefetch::none;
}
