//===- PlanTableTest.cpp - Tests of auto's table of defaults --------------===//
//
// Part of the softmax kernel compiler.
//
//===----------------------------------------------------------------------===//

#include "PlanTable.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/MLIRContext.h"

#include "gtest/gtest.h"

using namespace mlir;
using namespace mlir::rowred;

namespace {

/// The smallest valid table, with `rows` as its block_shapes.
std::string tableWith(StringRef blockShapes) {
  return (R"({"three_quarter_blocks_from": 8192, "streamed_tiles": {"warps": 16, "values": 24, "cache_hints": true},
              "operand_shapes": [],
              "elements_per_thread": [{"elements_per_thread": 16}],
              "rows_per_block": {"max_block": 1024, "rows": 4,
                                 "elements_per_thread": 8},
              "row_grid": [], "cache_hints": [], "prefetch": [],
              "online_cluster": [{"cluster": 8}],
              "online_warps": [{"warps": 16}],
              "staged_row_warps": [{"warps": 4}], "row_lengths": [],
              "block_shapes": )" +
          blockShapes + "}")
      .str();
}

std::string parseError(StringRef json) {
  llvm::Expected<PlanTable> table = PlanTable::parse(json);
  if (table)
    return "parsed";
  return llvm::toString(table.takeError());
}

/// The smallest valid table with its text `from` replaced by `to`.
std::string tableReplacing(StringRef from, StringRef to) {
  std::string json = tableWith("[]");
  json.replace(json.find(from.str()), from.size(), to.str());
  return json;
}

/// The row of the kernel for the fewest rows of `key`, or null.
const FewRowsRow *firstFewRows(const PlanTable &table,
                               const RowLengthKey &key) {
  SmallVector<const FewRowsRow *> ladder = table.fewRowsOf(key);
  return ladder.empty() ? nullptr : ladder.front();
}

/// Expects `json` to fail to parse with an error that contains `message`.
void expectParseError(StringRef json, StringRef message) {
  std::string error = parseError(json);
  EXPECT_NE(error.find(message.str()), std::string::npos) << error;
}

TEST(PlanTableTest, CompiledTableHoldsTheMeasuredShapes) {
  MLIRContext context;
  Type f32 = Float32Type::get(&context), bf16 = BFloat16Type::get(&context),
       f16 = Float16Type::get(&context);
  const PlanTable &table = PlanTable::get();
  EXPECT_EQ(table.derivedElementsPerThread(1024), 16);
  EXPECT_EQ(table.derivedElementsPerThread(4096), 32);
  EXPECT_EQ(table.derivedElementsPerThread(8192), 16);
  EXPECT_EQ(table.derivedElementsPerThread(int64_t(1) << 20), 32);

  // f32 8192: 128 threads x 64, not with registers asked for.
  TableKey wide{Strategy::fused, f32, 8192, 1, 512, false};
  const BlockShapeRow *row = table.blockShape(wide, false, false);
  ASSERT_NE(row, nullptr);
  EXPECT_EQ(row->warps, 4);
  EXPECT_EQ(table.blockShape(wide, false, true), nullptr);
  // bf16 8192: 256 threads only where one block per row group may run.
  TableKey narrow{Strategy::fused, bf16, 8192, 1, 512, false};
  EXPECT_EQ(table.blockShape(narrow, false, false), nullptr);
  ASSERT_NE(table.blockShape(narrow, true, false), nullptr);
  EXPECT_EQ(table.blockShape(narrow, true, false)->warps, 8);
  // A cluster slice of the same size keeps the derived warps.
  TableKey slice{Strategy::cluster, bf16, 8192, 1, 512, false};
  EXPECT_EQ(table.blockShape(slice, true, false), nullptr);

  // One block per row group: bf16 16384 on at most 512 threads.
  EXPECT_TRUE(table.runsRowGrid({Strategy::fused, bf16, 16384, 1, 256}));
  EXPECT_FALSE(table.runsRowGrid({Strategy::fused, bf16, 16384, 1, 1024}));
  EXPECT_FALSE(table.runsRowGrid({Strategy::fused, bf16, 2048, 1, 64}));
  EXPECT_TRUE(table.runsRowGrid({Strategy::fused, f32, 2048, 1, 64}));
  EXPECT_FALSE(table.runsRowGrid({Strategy::fused, f32, 1024, 4, 128}));
  // The online kernel of 16-bit rows only reduced, without clusters; not
  // where it writes rows, nor f32.
  TableKey reduced{Strategy::online, bf16, 4096, 1, 128};
  reduced.writesRows = false;
  EXPECT_TRUE(table.runsRowGrid(reduced));
  TableKey written = reduced;
  written.writesRows = true;
  EXPECT_FALSE(table.runsRowGrid(written));
  TableKey clustered = reduced;
  clustered.cluster = 4;
  EXPECT_FALSE(table.runsRowGrid(clustered));
  TableKey wider = reduced;
  wider.type = f32;
  EXPECT_FALSE(table.runsRowGrid(wider));

  // Row loads evict-last: fused blocks of one row of 16 KiB and more on
  // sm_90+ (f32 from 4096, 16-bit from 8192) where the kernel writes rows.
  auto hinted = [&](Type type, int64_t block, int64_t rows, int64_t sm,
                    bool writesRows = true) {
    TableKey key{Strategy::fused, type, block, rows, 256};
    key.sm = sm;
    key.writesRows = writesRows;
    return table.takesCacheHints(key);
  };
  EXPECT_TRUE(hinted(f32, 4096, 1, 90));
  EXPECT_TRUE(hinted(f32, 32768, 1, 100));
  EXPECT_FALSE(hinted(f32, 4096, 1, 90, /*writesRows=*/false));
  EXPECT_FALSE(hinted(f32, 2048, 1, 90));
  EXPECT_FALSE(hinted(f32, 4096, 1, 80));
  EXPECT_FALSE(hinted(f32, 4096, 4, 90));
  EXPECT_TRUE(hinted(bf16, 8192, 1, 90));
  EXPECT_TRUE(hinted(f16, 16384, 1, 90));
  EXPECT_FALSE(hinted(bf16, 4096, 1, 90));
  EXPECT_FALSE(hinted(f16, 4096, 1, 90));
  EXPECT_FALSE(hinted(bf16, 8192, 1, 90, /*writesRows=*/false));
  EXPECT_FALSE(hinted(f16, 16384, 1, 90, /*writesRows=*/false));
  TableKey online{Strategy::online, f32, 4096, 1, 512};
  EXPECT_FALSE(table.takesCacheHints(online));

  EXPECT_EQ(table.prefetchOf({Strategy::fused, f32, 32768, 1, 1024}),
            Prefetch::stage);
  EXPECT_EQ(table.prefetchOf({Strategy::fused, bf16, 4096, 1, 128}),
            Prefetch::registers);
  EXPECT_EQ(table.prefetchOf({Strategy::fused, f32, 4096, 1, 128}),
            Prefetch::none);
  EXPECT_EQ(table.prefetchOf({Strategy::cluster, bf16, 16384, 1, 512, true}),
            Prefetch::registers);
  EXPECT_EQ(table.prefetchOf({Strategy::cluster, bf16, 16384, 1, 512, false}),
            Prefetch::none);

  // The online kernel: clusters of 8 under 2 MiB rows, 16 from 2 MiB.
  EXPECT_EQ(table.onlineClusterSize((2 << 20) - 1), 8);
  EXPECT_EQ(table.onlineClusterSize(2 << 20), 16);
  auto onlineShape = [&](Type type, int64_t cluster, int64_t sm,
                         bool writesRows = true) {
    TableKey key{Strategy::online, type};
    key.cluster = cluster;
    key.sm = sm;
    key.writesRows = writesRows;
    return PlanTable::warpsRowOf(table.onlineWarps, key);
  };
  auto onlineWarps = [&](Type type, int64_t cluster, int64_t sm) {
    return onlineShape(type, cluster, sm).warps;
  };
  // Rows only reduced, a block per row: 32 elements per thread, f32 on 8
  // warps and 16-bit rows on 4. Kernels writing rows and clusters keep their
  // warps and derived tiles (f16 over clusters on 16 warps).
  for (Type type : {f32, bf16, f16}) {
    EXPECT_EQ(onlineShape(type, 1, 90, /*writesRows=*/false).warps,
              type == f32 ? 8 : 4);
    EXPECT_EQ(onlineShape(type, 1, 90, /*writesRows=*/false).elementsPerThread,
              32);
    EXPECT_EQ(onlineShape(type, 1, 90).elementsPerThread, 0);
    EXPECT_EQ(onlineShape(type, 16, 90, /*writesRows=*/false).warps,
              type == f16 ? 16 : 32);
  }
  EXPECT_EQ(onlineShape(f32, 1, 90).warps, 32);
  EXPECT_EQ(onlineShape(bf16, 1, 90).warps, 16);
  EXPECT_EQ(onlineWarps(f32, 16, 90), 32);
  EXPECT_EQ(onlineWarps(f32, 16, 120), 16);
  EXPECT_EQ(onlineWarps(f32, 1, 120), 32);
  EXPECT_EQ(onlineWarps(bf16, 16, 90), 32);
  EXPECT_EQ(onlineWarps(bf16, 8, 90), 16);
  EXPECT_EQ(onlineWarps(f16, 16, 90), 16);
  TableKey staged{Strategy::online, Type(), 12288};
  EXPECT_EQ(PlanTable::warpsOf(table.stagedRowWarps, staged), 4);
  staged.block = 16384;
  EXPECT_EQ(PlanTable::warpsOf(table.stagedRowWarps, staged), 16);
}

TEST(PlanTableTest, CompiledTableCutsLongRowsIntoChunks) {
  MLIRContext context;
  Type f32 = Float32Type::get(&context), bf16 = BFloat16Type::get(&context),
       f16 = Float16Type::get(&context);
  const PlanTable &table = PlanTable::get();
  // Softmax's pair: one operand held, two reduces.
  auto chunks = [&](Type type, int64_t cols, bool aligned) {
    return table.takesRowLength(Strategy::chunks,
                                {type, cols, aligned, /*held=*/1,
                                 /*reduces=*/2});
  };
  // Aligned rows from 65536 to 1048576, every type.
  EXPECT_TRUE(chunks(f32, 65536, /*aligned=*/true));
  EXPECT_TRUE(chunks(bf16, 1048576, /*aligned=*/true));
  EXPECT_TRUE(chunks(f16, 65536, /*aligned=*/true));
  EXPECT_FALSE(chunks(f32, 32768, /*aligned=*/true));
  // Kernels that write rows to 4194304; those that only reduce them (the
  // loss, logsumexp) to 1048576.
  EXPECT_TRUE(chunks(bf16, 2097152, /*aligned=*/true));
  EXPECT_TRUE(chunks(f32, 4194304, /*aligned=*/true));
  EXPECT_FALSE(chunks(f32, 4194305, /*aligned=*/true));
  EXPECT_FALSE(table.takesRowLength(Strategy::chunks,
                                    {bf16, 2097152, /*aligned=*/true,
                                     /*held=*/1, /*reduces=*/2,
                                     /*writesRows=*/false}));
  // Odd rows from 32769 (f32) and 20481 (16-bit; shorter ones are staged,
  // and so are those to 57344 of kernels the staged rows take: Plan.cpp).
  EXPECT_TRUE(chunks(f32, 32771, /*aligned=*/false));
  EXPECT_FALSE(chunks(f32, 32001, /*aligned=*/false));
  EXPECT_TRUE(chunks(bf16, 20483, /*aligned=*/false));
  EXPECT_FALSE(chunks(bf16, 20479, /*aligned=*/false));
  EXPECT_FALSE(chunks(bf16, 16411, /*aligned=*/false));
  EXPECT_TRUE(chunks(bf16, 1048579, /*aligned=*/false));
  EXPECT_FALSE(chunks(bf16, 4194307, /*aligned=*/false));
  EXPECT_TRUE(chunks(f16, 50257, /*aligned=*/false));
  EXPECT_TRUE(chunks(f16, 1048584, /*aligned=*/false));
  EXPECT_FALSE(chunks(f16, 20479, /*aligned=*/false));
  // The generic chunks: rows of 131073 to 1048576 holding two operands
  // (f32 and bf16; f16 from 131072) with one reduce; one operand and one
  // reduce (rms_norm), bf16 from 65536 and f32 and f16 from 262144;
  // layer_norm's three reduces from 262144, every type. Not softmax's
  // rows of the pair's two reduces, nor an unknown number.
  auto levelChunks = [&](Type type, int64_t cols, int64_t held,
                         int64_t reduces = 1) {
    return table.takesRowLength(Strategy::chunks,
                                {type, cols, /*aligned=*/true, held, reduces});
  };
  EXPECT_TRUE(levelChunks(f32, 262144, 2));
  EXPECT_TRUE(levelChunks(bf16, 1048576, 2));
  EXPECT_FALSE(levelChunks(f32, 131072, 2));
  EXPECT_FALSE(levelChunks(f32, 65536, 1));
  EXPECT_FALSE(levelChunks(f32, 131072, 1));
  EXPECT_TRUE(levelChunks(f32, 262144, 1));
  EXPECT_TRUE(levelChunks(bf16, 65536, 1));
  EXPECT_TRUE(levelChunks(bf16, 1048576, 1));
  EXPECT_FALSE(levelChunks(bf16, 2097152, 1));
  EXPECT_FALSE(levelChunks(f32, 262144, 2, /*reduces=*/0));
  EXPECT_FALSE(levelChunks(bf16, 131072, 2));
  EXPECT_FALSE(levelChunks(f32, 131072, 1, /*reduces=*/3));
  EXPECT_TRUE(levelChunks(f32, 262144, 1, /*reduces=*/3));
  EXPECT_TRUE(levelChunks(bf16, 262144, 1, /*reduces=*/3));
  EXPECT_TRUE(levelChunks(f16, 262144, 1, /*reduces=*/3));
  EXPECT_TRUE(levelChunks(bf16, 1048576, 1, /*reduces=*/3));
  EXPECT_FALSE(levelChunks(bf16, 131072, 1, /*reduces=*/3));
  EXPECT_TRUE(levelChunks(f16, 1048576, 1, /*reduces=*/3));
  EXPECT_TRUE(levelChunks(f16, 131072, 2));
  EXPECT_FALSE(levelChunks(f16, 65536, 2));
  // One operand held: 16-bit rows from 65536, f16 as bf16.
  EXPECT_TRUE(levelChunks(f16, 262144, 1));
  EXPECT_TRUE(levelChunks(f16, 65536, 1));
  EXPECT_FALSE(levelChunks(f16, 32768, 1));
}

TEST(PlanTableTest, CompiledTableGivesStagedRowsTheOnlineKernel) {
  MLIRContext context;
  Type f32 = Float32Type::get(&context), bf16 = BFloat16Type::get(&context),
       f16 = Float16Type::get(&context);
  const PlanTable &table = PlanTable::get();
  // Staged rows: softmax's pair (one operand held, two reduces) on 16-bit
  // rows of 8193 to 57344 on the online kernel, odd ones as well.
  auto online = [&](Type type, int64_t cols, bool aligned) {
    return table.takesRowLength(Strategy::online,
                                {type, cols, aligned, /*held=*/1,
                                 /*reduces=*/2});
  };
  EXPECT_TRUE(online(f16, 57344, true));
  EXPECT_TRUE(online(bf16, 12288, true));
  EXPECT_FALSE(online(bf16, 8192, true));
  EXPECT_FALSE(online(bf16, 65536, true));
  EXPECT_FALSE(online(f32, 12288, true));
  EXPECT_TRUE(online(bf16, 8209, false));
  EXPECT_TRUE(online(bf16, 16411, false));
  EXPECT_TRUE(online(f16, 24577, false));
  EXPECT_TRUE(online(bf16, 57343, false));
  EXPECT_FALSE(online(bf16, 8191, false));
  EXPECT_FALSE(online(bf16, 57345, false));
  EXPECT_FALSE(online(f32, 16411, false));
  EXPECT_FALSE(table.takesRowLength(Strategy::online, {bf16, 12288, true}));
  // Staged streamed rows, by what the kernel holds and reduces: the
  // backwards (two held, one reduce) on 16-bit rows of 8193 to 24576 and
  // f32 rows of 16385 to 24576,
  // rms_norm (one held, one reduce) on 16-bit rows of 8193 to 12288 and
  // 16385 to 57344 and f32 rows of 12289 to 24576, layer_norm (three
  // reduces) on 16-bit rows of 8193 to 10240 and 16385 to 20480 on 8 warps
  // and of 24577 to 57344 on the streamed tiles'; aligned rows only.
  auto streamed = [&](Type type, int64_t cols, int64_t held, int64_t reduces,
                      bool aligned = true) {
    return table.takesRowLength(Strategy::online,
                                {type, cols, aligned, held, reduces});
  };
  EXPECT_TRUE(streamed(bf16, 8193, 2, 1));
  EXPECT_TRUE(streamed(f16, 24576, 2, 1));
  EXPECT_FALSE(streamed(bf16, 8192, 2, 1));
  EXPECT_FALSE(streamed(bf16, 32768, 2, 1));
  EXPECT_FALSE(streamed(f32, 12288, 2, 1));
  EXPECT_FALSE(streamed(f32, 16384, 2, 1));
  EXPECT_TRUE(streamed(f32, 16385, 2, 1));
  EXPECT_TRUE(streamed(f32, 24576, 2, 1));
  EXPECT_FALSE(streamed(f32, 24577, 2, 1));
  EXPECT_FALSE(streamed(bf16, 10001, 2, 1, /*aligned=*/false));
  EXPECT_TRUE(streamed(bf16, 12288, 1, 1));
  EXPECT_FALSE(streamed(bf16, 14336, 1, 1));
  EXPECT_FALSE(streamed(bf16, 16384, 1, 1));
  EXPECT_TRUE(streamed(bf16, 16385, 1, 1));
  EXPECT_TRUE(streamed(bf16, 57344, 1, 1));
  EXPECT_FALSE(streamed(bf16, 65536, 1, 1));
  EXPECT_FALSE(streamed(f32, 12288, 1, 1));
  EXPECT_TRUE(streamed(f32, 12289, 1, 1));
  EXPECT_TRUE(streamed(f32, 24576, 1, 1));
  EXPECT_FALSE(streamed(f32, 24577, 1, 1));
  auto streamedWarps = [&](Type type, int64_t cols, int64_t reduces) {
    return table.rowLengthOf(Strategy::online, {type, cols, true, 1, reduces})
        ->warps;
  };
  EXPECT_FALSE(streamed(bf16, 8192, 1, 3));
  EXPECT_EQ(streamedWarps(bf16, 8193, 3), 8);
  EXPECT_EQ(streamedWarps(f16, 10240, 3), 8);
  EXPECT_FALSE(streamed(bf16, 10241, 1, 3));
  EXPECT_FALSE(streamed(bf16, 16384, 1, 3));
  EXPECT_EQ(streamedWarps(bf16, 16385, 3), 8);
  EXPECT_EQ(streamedWarps(bf16, 20480, 3), 8);
  EXPECT_FALSE(streamed(bf16, 24576, 1, 3));
  EXPECT_EQ(streamedWarps(bf16, 24577, 3), 0);
  EXPECT_TRUE(streamed(bf16, 57344, 1, 3));
  EXPECT_FALSE(streamed(f32, 10000, 1, 3));
  EXPECT_FALSE(streamed(f32, 32768, 1, 3));
  EXPECT_EQ(streamedWarps(bf16, 12288, 1), 0);
}

TEST(PlanTableTest, CompiledTableGivesRowsTheirClusters) {
  MLIRContext context;
  Type f32 = Float32Type::get(&context), bf16 = BFloat16Type::get(&context),
       f16 = Float16Type::get(&context);
  const PlanTable &table = PlanTable::get();
  // Clusters for f32 rows of 12289 to 16384 holding two operands through
  // their reductions (the backwards' y and dy), not one or an unknown number.
  auto cluster = [&](Type type, int64_t cols, int64_t held) {
    return table.takesRowLength(Strategy::cluster,
                                {type, cols, /*aligned=*/cols % 4 == 0, held});
  };
  EXPECT_TRUE(cluster(f32, 16384, 2));
  EXPECT_TRUE(cluster(f32, 16383, 2));
  EXPECT_FALSE(cluster(f32, 12288, 2));
  EXPECT_FALSE(cluster(f32, 16384, 1));
  EXPECT_FALSE(cluster(f32, 16384, 0));
  EXPECT_FALSE(cluster(bf16, 16384, 2));
  // Softmax's pair (one operand held, two reduces) on f32 rows of 16385 to
  // 24576: a cluster of 8, which the row names.
  const RowLengthRow *pair = table.rowLengthOf(
      Strategy::cluster, {f32, 20480, /*aligned=*/true, /*held=*/1,
                          /*reduces=*/2});
  ASSERT_TRUE(pair);
  EXPECT_EQ(pair->cluster, 8);
  EXPECT_TRUE(table.takesRowLength(Strategy::cluster,
                                   {f32, 16385, /*aligned=*/false, 1, 2}));
  EXPECT_FALSE(table.takesRowLength(Strategy::cluster,
                                    {f32, 24577, /*aligned=*/false, 1, 2}));
  EXPECT_FALSE(table.takesRowLength(Strategy::cluster,
                                    {f32, 20480, /*aligned=*/true, 1, 1}));
  EXPECT_EQ(table
                .rowLengthOf(Strategy::cluster,
                             {f32, 16384, /*aligned=*/true, /*held=*/2})
                ->cluster,
            0);
}

TEST(PlanTableTest, CompiledTableGivesColumnSumsTheirClusters) {
  MLIRContext context;
  Type f32 = Float32Type::get(&context), bf16 = BFloat16Type::get(&context),
       f16 = Float16Type::get(&context);
  const PlanTable &table = PlanTable::get();
  // Kernels that sum down the columns (the norms' backwards: three held):
  // clusters of 8 on 4 warps for rows of 12289 to 16384 of any type (on 8
  // for f32 of one reduce), of 2 on 16 for f32 rows of 8193 to 12288 and
  // bf16 ones of one reduce.
  auto sums = [&](Type type, int64_t cols, int64_t reduces) {
    return table.rowLengthOf(Strategy::cluster,
                             {type, cols, /*aligned=*/true, /*held=*/3,
                              reduces, /*writesRows=*/true,
                              /*columnSums=*/true});
  };
  auto shape = [&](const RowLengthRow *row) {
    return row ? std::make_pair(row->cluster, row->warps)
               : std::make_pair(int64_t(0), int64_t(0));
  };
  using Shape = std::pair<int64_t, int64_t>;
  EXPECT_EQ(shape(sums(f32, 16384, 1)), Shape(8, 8));
  EXPECT_EQ(shape(sums(bf16, 16384, 1)), Shape(8, 4));
  EXPECT_EQ(shape(sums(f32, 16384, 2)), Shape(8, 4));
  EXPECT_EQ(shape(sums(bf16, 12289, 2)), Shape(8, 4));
  EXPECT_EQ(shape(sums(f16, 16384, 2)), Shape(8, 4));
  EXPECT_EQ(shape(sums(f32, 12288, 2)), Shape(2, 16));
  EXPECT_EQ(shape(sums(f32, 8193, 1)), Shape(2, 16));
  EXPECT_EQ(shape(sums(bf16, 12288, 1)), Shape(2, 16));
  EXPECT_EQ(shape(sums(f16, 10240, 1)), Shape(2, 16));
  EXPECT_EQ(sums(bf16, 12288, 2), nullptr);
  // layer_norm_backward's two reduces keep their sums in registers there.
  EXPECT_TRUE(sums(bf16, 16384, 2)->sumsInRegisters);
  EXPECT_TRUE(sums(f32, 12289, 2)->sumsInRegisters);
  EXPECT_FALSE(sums(bf16, 16384, 1)->sumsInRegisters);
  EXPECT_FALSE(sums(f32, 12288, 2)->sumsInRegisters);
  EXPECT_EQ(sums(f16, 12288, 2), nullptr);
  EXPECT_EQ(sums(f32, 8192, 1), nullptr);
  EXPECT_EQ(sums(f32, 16385, 1), nullptr);
  // Not the same kernels without the sums.
  EXPECT_FALSE(table.takesRowLength(
      Strategy::cluster, {f32, 16384, /*aligned=*/true, /*held=*/3, 1}));
}

TEST(PlanTableTest, CompiledTableGivesRowsOnlyReducedTheOnlineKernel) {
  MLIRContext context;
  Type f32 = Float32Type::get(&context), bf16 = BFloat16Type::get(&context),
       f16 = Float16Type::get(&context);
  const PlanTable &table = PlanTable::get();
  // The online kernel for rows of 32000-151936 only reduced (no row
  // written), any type; a kernel writing rows keeps the staged 16-bit rows.
  auto reduced = [&](Type type, int64_t cols, bool writesRows) {
    return table.takesRowLength(Strategy::online,
                                {type, cols, /*aligned=*/true, /*held=*/1,
                                 /*reduces=*/2, writesRows});
  };
  EXPECT_TRUE(reduced(f32, 32000, /*writesRows=*/false));
  EXPECT_TRUE(reduced(bf16, 151936, /*writesRows=*/false));
  EXPECT_FALSE(reduced(f32, 262144, /*writesRows=*/false));
  EXPECT_FALSE(reduced(f32, 32000, /*writesRows=*/true));
  EXPECT_TRUE(reduced(bf16, 32768, /*writesRows=*/true));
  EXPECT_FALSE(reduced(bf16, 65536, /*writesRows=*/true));
}

TEST(PlanTableTest, CompiledTableShapesBlocksOfSeveralOperands) {
  MLIRContext context;
  Type f32 = Float32Type::get(&context), bf16 = BFloat16Type::get(&context),
       f16 = Float16Type::get(&context);
  const PlanTable &table = PlanTable::get();
  EXPECT_EQ(table.streamedTiles.values, 24);
  EXPECT_EQ(table.streamedTiles.warps, 16);
  EXPECT_TRUE(table.streamedTiles.cacheHints);
  auto shape = [&](Type type, int64_t block, int64_t operands,
                   int64_t held = 1) {
    const OperandShapeRow *row =
        table.operandShape({Strategy::fused, type, block}, operands, held);
    return row ? row->elementsPerThread : 0;
  };
  EXPECT_EQ(shape(f32, 2048, 2), 16);
  EXPECT_EQ(shape(f32, 8192, 2), 16);
  EXPECT_EQ(shape(bf16, 4096, 2), 0);
  // Rows of the operands held through the reductions: rms_norm's x alone,
  // layer_norm's (16-bit at 6144), the backward's two.
  EXPECT_EQ(shape(f32, 12288, 2, /*held=*/1), 16);
  EXPECT_EQ(shape(bf16, 12288, 2, /*held=*/1), 0);
  EXPECT_EQ(
      table.operandShape({Strategy::fused, f32, 12288}, 2, 1)->minBlocksPerSM,
      2);
  EXPECT_EQ(
      table.operandShape({Strategy::fused, f32, 16384}, 2, 1)->minBlocksPerSM,
      0);
  EXPECT_EQ(shape(f32, 16384, 2, /*held=*/1), 32);
  EXPECT_EQ(shape(bf16, 16384, 2, /*held=*/1), 32);
  EXPECT_EQ(shape(bf16, 6144, 3, /*held=*/1), 32);
  EXPECT_EQ(shape(f32, 6144, 3, /*held=*/1), 0);
  // f32 layer_norm: 16 per thread at 2048-4096, 32 at 8192.
  EXPECT_EQ(shape(f32, 2048, 3, /*held=*/1), 16);
  EXPECT_EQ(shape(f32, 4096, 3, /*held=*/1), 16);
  EXPECT_EQ(shape(f32, 8192, 3, /*held=*/1), 32);
  EXPECT_EQ(shape(bf16, 4096, 3, /*held=*/1), 0);
  EXPECT_EQ(shape(f32, 12288, 2, /*held=*/2), 12);
  EXPECT_EQ(shape(bf16, 12288, 2, /*held=*/2), 24);
  EXPECT_EQ(shape(bf16, 16384, 2, /*held=*/2), 32);
  // The residual backward (four operands, three held): 16-bit on 8 per
  // thread at 2048-4096, 16 at 6144, 32 at 8192; its forward (four, one
  // held) on 16 at 2048-4096.
  for (Type type : {bf16, f16}) {
    EXPECT_EQ(shape(type, 2048, 4, /*held=*/3), 8);
    EXPECT_EQ(shape(type, 4096, 4, /*held=*/3), 8);
    EXPECT_EQ(shape(type, 6144, 4, /*held=*/3), 16);
    EXPECT_EQ(shape(type, 8192, 4, /*held=*/3), 32);
    EXPECT_EQ(shape(type, 2048, 4, /*held=*/1), 16);
    EXPECT_EQ(shape(type, 4096, 4, /*held=*/1), 16);
  }
  // Cluster slices, with their warps.
  TableKey slices{Strategy::cluster, f32, 16384};
  slices.cluster = 4;
  const OperandShapeRow *cluster = table.operandShape(slices, 2, 2);
  ASSERT_TRUE(cluster);
  EXPECT_EQ(cluster->warps, 16);
  EXPECT_EQ(cluster->elementsPerThread, 16);
  const OperandShapeRow *norm = table.operandShape(slices, 2, 1);
  ASSERT_TRUE(norm);
  EXPECT_EQ(norm->warps, 32);
  slices.cluster = 2;
  EXPECT_FALSE(table.operandShape(slices, 2, 1));
}

TEST(PlanTableTest, CompiledTableGivesFewRowsTheirKernel) {
  MLIRContext context;
  Type f32 = Float32Type::get(&context), bf16 = BFloat16Type::get(&context),
       f16 = Float16Type::get(&context);
  const PlanTable &table = PlanTable::get();
  const FewRowsRow *row = firstFewRows(table, {f32, 128256, /*aligned=*/true});
  ASSERT_TRUE(row);
  EXPECT_EQ(row->lengths.strategy, Strategy::cluster);
  EXPECT_EQ(row->lengths.cluster, 16);
  EXPECT_EQ(row->maxRows, 16);
  EXPECT_TRUE(firstFewRows(table, {f32, 100277, /*aligned=*/false}));
  // bf16 from 120000: at most 48 rows; 100277 at most 16.
  const FewRowsRow *vocab =
      firstFewRows(table, {bf16, 256000, /*aligned=*/true});
  ASSERT_TRUE(vocab);
  EXPECT_EQ(vocab->maxRows, 48);
  ASSERT_TRUE(firstFewRows(table, {bf16, 100277, /*aligned=*/false}));
  EXPECT_EQ(firstFewRows(table, {bf16, 100277, /*aligned=*/false})->maxRows,
            16);
  // Shorter rows over a cluster of 8: odd bf16 at most 64 rows up to 32768,
  // odd 16-bit at most 32 to 57344, longer ones at most 64.
  // Keyed by the kernel: f32 rms_norm (one operand held, one reduce) at
  // 262144 keeps its cluster for at most 8 rows, layer_norm (three
  // reduces) its chunks; softmax's pair (two reduces) takes smaller chunks
  // there (below).
  const FewRowsRow *norm = firstFewRows(table, {f32, 262144, /*aligned=*/true,
                                                /*held=*/1, /*reduces=*/1});
  ASSERT_TRUE(norm);
  EXPECT_EQ(norm->lengths.strategy, Strategy::cluster);
  EXPECT_EQ(norm->maxRows, 8);
  EXPECT_FALSE(firstFewRows(
      table, {f32, 262144, /*aligned=*/true, /*held=*/1, /*reduces=*/3}));
  EXPECT_EQ(firstFewRows(table, {f32, 262144, /*aligned=*/true, /*held=*/1,
                                 /*reduces=*/2})
                ->lengths.strategy,
            Strategy::chunks);
  EXPECT_FALSE(firstFewRows(table, {f32, 262144, /*aligned=*/true}));
  // Decode-size norms of 2048-8192 (rms_norm one reduce, layer_norm three)
  // take a fused block of 8 warps (16 for rms_norm beyond 4096) for at most
  // 64 rows, loading the weight (and bias) with the row; softmax's pair
  // (two reduces) none.
  for (int64_t reduces : {1, 3}) {
    const FewRowsRow *decode = firstFewRows(
        table, {bf16, 4096, /*aligned=*/true, /*held=*/1, reduces});
    ASSERT_TRUE(decode);
    EXPECT_EQ(decode->lengths.strategy, Strategy::fused);
    EXPECT_EQ(decode->lengths.warps, 8);
    EXPECT_EQ(decode->maxRows, 64);
    EXPECT_TRUE(decode->hoistMapLoads);
  }
  EXPECT_EQ(firstFewRows(table, {f32, 8192, /*aligned=*/true, /*held=*/1,
                                 /*reduces=*/1})
                ->lengths.warps,
            16);
  EXPECT_EQ(firstFewRows(table, {f32, 8192, /*aligned=*/true, /*held=*/1,
                                 /*reduces=*/3})
                ->lengths.warps,
            8);
  EXPECT_FALSE(
      firstFewRows(table, {bf16, 32001, /*aligned=*/false})->hoistMapLoads);
  EXPECT_FALSE(firstFewRows(
      table, {f32, 4096, /*aligned=*/true, /*held=*/1, /*reduces=*/2}));
  EXPECT_FALSE(firstFewRows(
      table, {f32, 1024, /*aligned=*/true, /*held=*/1, /*reduces=*/1}));
  const FewRowsRow *shorter =
      firstFewRows(table, {bf16, 32001, /*aligned=*/false});
  ASSERT_TRUE(shorter);
  EXPECT_EQ(shorter->lengths.cluster, 8);
  EXPECT_EQ(shorter->maxRows, 64);
  ASSERT_TRUE(firstFewRows(table, {bf16, 50257, /*aligned=*/false}));
  EXPECT_EQ(firstFewRows(table, {bf16, 50257, /*aligned=*/false})->maxRows, 32);
  EXPECT_EQ(firstFewRows(table, {f16, 50257, /*aligned=*/false})->maxRows, 32);
  EXPECT_EQ(firstFewRows(table, {bf16, 57345, /*aligned=*/false})->maxRows, 64);
  EXPECT_TRUE(firstFewRows(table, {f32, 65536, /*aligned=*/true}));
  // Rows a block per row holds, of kernels writing rows: f32 of 24577 to
  // 32768 at most 1024 rows (shorter ones are over clusters of 8 at every
  // row count), even bf16 at most 16 up to 32768 and 64 beyond (staged
  // rows; odd ones 64 up to 32768 and 32 to 57344, above). Rows only
  // reduced: a cluster of 8 for at most 64 rows, f32 and 16-bit, and the
  // cluster of 16 to 64 rows of 120000-160000.
  ASSERT_TRUE(firstFewRows(table, {f32, 32000, /*aligned=*/true}));
  EXPECT_EQ(firstFewRows(table, {f32, 32000, /*aligned=*/true})->maxRows, 1024);
  EXPECT_FALSE(firstFewRows(table, {f32, 24576, /*aligned=*/true}));
  const FewRowsRow *reduced = firstFewRows(table, {f32, 32000, /*aligned=*/true,
                                                   /*held=*/1, /*reduces=*/2,
                                                   /*writesRows=*/false});
  ASSERT_TRUE(reduced);
  EXPECT_EQ(reduced->lengths.cluster, 8);
  EXPECT_EQ(reduced->maxRows, 64);
  EXPECT_FALSE(firstFewRows(table, {f32, 24576, /*aligned=*/true, /*held=*/1,
                                    /*reduces=*/2, /*writesRows=*/false}));
  EXPECT_EQ(firstFewRows(table, {bf16, 128256, /*aligned=*/true, /*held=*/1,
                                 /*reduces=*/2, /*writesRows=*/false})
                ->maxRows,
            64);
  EXPECT_EQ(firstFewRows(table, {bf16, 128256, /*aligned=*/true})->maxRows, 48);
  ASSERT_TRUE(firstFewRows(table, {bf16, 40960, /*aligned=*/true}));
  EXPECT_EQ(firstFewRows(table, {bf16, 40960, /*aligned=*/true})->maxRows, 64);
  EXPECT_EQ(firstFewRows(table, {bf16, 40961, /*aligned=*/false})->maxRows, 32);
  EXPECT_EQ(firstFewRows(table, {bf16, 32000, /*aligned=*/true})->maxRows, 64);
  EXPECT_EQ(firstFewRows(table, {bf16, 20480, /*aligned=*/true})->maxRows, 16);
  // f16 staged rows take the same clusters as bf16's (the same bytes).
  for (auto [cols, aligned, maxRows] :
       {std::tuple{20480, true, 16}, {32000, true, 64}, {40960, true, 64},
        {32001, false, 64}}) {
    const FewRowsRow *half = firstFewRows(table, {f16, cols, aligned});
    ASSERT_TRUE(half) << cols;
    EXPECT_EQ(half->lengths.cluster, 8) << cols;
    EXPECT_EQ(half->maxRows, maxRows) << cols;
  }
  for (Type type : {bf16, f16}) {
    const FewRowsRow *sixteen = firstFewRows(
        table, {type, 32000, /*aligned=*/true, /*held=*/1, /*reduces=*/2,
                /*writesRows=*/false});
    ASSERT_TRUE(sixteen);
    EXPECT_EQ(sixteen->lengths.cluster, 8);
    EXPECT_EQ(sixteen->maxRows, 64);
  }
  // Softmax's pair (one operand held, two reduces) beyond the clusters:
  // chunks of 8192, for at most 16 f32 rows and 8 bf16 ones.
  const FewRowsRow *smaller = firstFewRows(
      table, {f32, 256000, /*aligned=*/true, /*held=*/1, /*reduces=*/2});
  ASSERT_TRUE(smaller);
  EXPECT_EQ(smaller->lengths.strategy, Strategy::chunks);
  EXPECT_EQ(smaller->block + smaller->chunkStage, 8192);
  EXPECT_EQ(smaller->maxRows, 16);
  const FewRowsRow *smaller16 = firstFewRows(
      table, {bf16, 1048573, /*aligned=*/false, /*held=*/1, /*reduces=*/2});
  ASSERT_TRUE(smaller16);
  EXPECT_EQ(smaller16->lengths.strategy, Strategy::chunks);
  EXPECT_EQ(smaller16->maxRows, 8);
  // bf16 rows of 262144 keep their clusters.
  EXPECT_EQ(firstFewRows(table, {bf16, 262144, /*aligned=*/true, /*held=*/1,
                                 /*reduces=*/2})
                ->lengths.strategy,
            Strategy::cluster);
  // f16 takes bf16's rows (from 16385 columns: above).
  EXPECT_EQ(
      firstFewRows(table, {f16, 128256, /*aligned=*/true})->lengths.cluster,
      16);
  EXPECT_EQ(firstFewRows(table, {f16, 65536, /*aligned=*/true})->maxRows, 64);
  // Not measured: other kernels' chunks there.
  EXPECT_FALSE(firstFewRows(table, {f32, 256000, /*aligned=*/true}));
  EXPECT_FALSE(firstFewRows(
      table, {f32, 1048576, /*aligned=*/true, /*held=*/2, /*reduces=*/1}));
  EXPECT_FALSE(firstFewRows(table, {f32, 16411, /*aligned=*/false}));
}

TEST(PlanTableTest, CompiledTableGivesWideNormsAndReducedRowsClusters) {
  MLIRContext context;
  Type f32 = Float32Type::get(&context), bf16 = BFloat16Type::get(&context),
       f16 = Float16Type::get(&context);
  const PlanTable &table = PlanTable::get();
  auto few = [&](Type type, int64_t cols, int64_t held, int64_t reduces,
                 bool writesRows, bool aligned = true) {
    return firstFewRows(table,
                        {type, cols, aligned, held, reduces, writesRows});
  };
  // Decode-size norms of 12288-16384: a cluster of 4 blocks of 8 warps that
  // load the weight (and bias) with the row, to 64 rows; f32 layer_norm of
  // 16384 to 56 rows, then a cluster of 2 blocks of 16 warps; 16-bit
  // layer_norm a fused block of 8 warps.
  for (Type type : {f32, bf16, f16}) {
    for (int64_t reduces : {1, 3}) {
      bool fused = type != f32 && reduces == 3;
      for (int64_t cols : {12288, 14336, 16384}) {
        SmallVector<const FewRowsRow *> ladder =
            table.fewRowsOf({type, cols, true, 1, reduces, true});
        bool twoRungs = type == f32 && reduces == 3 && cols == 16384;
        ASSERT_EQ(ladder.size(), twoRungs ? 2u : 1u) << cols;
        EXPECT_EQ(ladder[0]->lengths.strategy,
                  fused ? Strategy::fused : Strategy::cluster);
        EXPECT_EQ(ladder[0]->lengths.cluster, fused ? 0 : 4);
        EXPECT_EQ(ladder[0]->lengths.warps, 8);
        EXPECT_EQ(ladder[0]->maxRows, twoRungs ? 56 : 64);
        EXPECT_TRUE(ladder[0]->hoistMapLoads);
        if (!twoRungs)
          continue;
        EXPECT_EQ(ladder[1]->lengths.cluster, 2);
        EXPECT_EQ(ladder[1]->lengths.warps, 16);
        EXPECT_EQ(ladder[1]->minRows, 57);
        EXPECT_EQ(ladder[1]->maxRows, 64);
        EXPECT_TRUE(ladder[1]->hoistMapLoads);
      }
    }
  }
  EXPECT_EQ(few(f32, 16385, 1, 1, true), nullptr);
  EXPECT_EQ(few(f32, 12288, 1, 1, true, /*aligned=*/false), nullptr);
  // A ladder's kernels: (cluster, min_rows, max_rows) each.
  using Rungs = SmallVector<std::tuple<int64_t, int64_t, int64_t>>;
  auto expectLadder = [&](const RowLengthKey &key, const Rungs &rungs) {
    SmallVector<const FewRowsRow *> ladder = table.fewRowsOf(key);
    ASSERT_EQ(ladder.size(), rungs.size()) << key.cols;
    for (auto [row, rung] : llvm::zip_equal(ladder, rungs)) {
      EXPECT_EQ(row->lengths.cluster, std::get<0>(rung)) << key.cols;
      EXPECT_EQ(row->minRows, std::get<1>(rung)) << key.cols;
      EXPECT_EQ(row->maxRows, std::get<2>(rung)) << key.cols;
    }
  };
  for (Type type : {f32, bf16, f16}) {
    // Rows only reduced of 100000-119999, any type: a cluster of 16 to 4
    // rows, then a cluster of 8 to 64.
    expectLadder({type, 100277, false, 1, 2, false},
                 Rungs{{16, 1, 4}, {8, 5, 64}});
    // Softmax's pair (held 1, reduces 2, writing rows): the cluster of 16
    // to 16 rows, then a cluster of 8 to 48 (16-bit) or 24 (f32); at
    // 128256 (to 131072) 16-bit's cluster of 16 to 48, then 8 to 64.
    int64_t last = type == f32 ? 24 : 48;
    expectLadder({type, 100277, false, 1, 2, true},
                 Rungs{{16, 1, 16}, {8, 17, last}});
    expectLadder({type, 128256, true, 1, 2, true},
                 type == f32 ? Rungs{{16, 1, 16}, {8, 17, 24}}
                             : Rungs{{16, 1, 48}, {8, 49, 64}});
    // 151936 and the norms' rows keep one kernel.
    EXPECT_EQ(table.fewRowsOf({type, 151936, true, 1, 2, true}).size(), 1u);
    EXPECT_EQ(table.fewRowsOf({type, 128256, true, 1, 1, true}).size(), 1u);
  }
  EXPECT_EQ(few(bf16, 128256, 1, 2, false)->lengths.cluster, 16);
}

TEST(PlanTableTest, MinimalTableParses) {
  EXPECT_EQ(parseError(tableWith("[]")), "parsed");
  EXPECT_EQ(parseError(tableWith(R"([{"types": "16-bit", "block": 8192,
      "warps": 8, "needs_row_grid": true, "note": "why"}])")),
            "parsed");
}

TEST(PlanTableTest, ErrorsNameTheField) {
  struct Case {
    const char *rows, *message;
  } cases[] = {
      {R"([{"types": "f32", "block": 8192, "wraps": 4}])", "unknown field"},
      {R"([{"types": "f64", "block": 8192, "warps": 4}])",
       "expected \"f32\", \"f16\", \"bf16\", \"16-bit\" or \"any\""},
      {R"([{"strategy": "fast", "warps": 4}])", "expected a strategy"},
      {R"([{"types": "f32", "block": 8192}])", "missing value"},
      {R"([{"types": "f32", "warps": 0}])", "expected a positive integer"},
      {R"([{"min_block": 4096, "max_block": 2048, "warps": 4}])",
       "min_block is over max_block"},
      {R"([{"rows_per_block": "many", "warps": 4}])",
       "expected \"one\" or \"several\""},
      {R"({"warps": 4})", "expected array"},
  };
  for (const Case &c : cases) {
    std::string error = parseError(tableWith(c.rows));
    EXPECT_NE(error.find(c.message), std::string::npos)
        << c.rows << " gave: " << error;
    EXPECT_NE(error.find("block_shapes"), std::string::npos)
        << c.rows << " gave: " << error;
  }
}

TEST(PlanTableTest, TableErrors) {
  expectParseError("{", "Expected");
  expectParseError(
      tableReplacing(R"("cache_hints": true)", R"("cache_hints": 1)"),
      "at plan table.streamed_tiles.cache_hints");
  expectParseError(
      tableReplacing(R"("warps": 16, "values")", R"("warps": 0, "values")"),
      "expected a positive integer at "
      "plan table.streamed_tiles.warps");
  expectParseError(
      tableReplacing(R"({"elements_per_thread": 16})",
                     R"({"max_block": 1024, "elements_per_thread": 16})"),
      "the last row must match every kernel (only its value and a note) at "
      "plan table.elements_per_thread");
  expectParseError(tableReplacing(R"([{"warps": 16}])",
                                  R"([{"types": "f32", "warps": 16}])"),
                   "at plan table.online_warps");
  // A table whose row_lengths hold `row` alone.
  auto withRowLength = [](StringRef row) {
    return tableReplacing(R"("row_lengths": [])",
                          (R"("row_lengths": [)" + row + "]").str());
  };
  expectParseError(withRowLength(R"({"strategy": "chunks", "min_cols": 65536,
                                     "max_cols": 4096})"),
                   "min_cols is over max_cols at plan table.row_lengths[0]");
  expectParseError(
      tableReplacing(R"("row_lengths": [])",
                     R"("row_lengths": [], "few_rows": [{"strategy": "cluster",
                                           "cluster": 16, "rows": 16}])"),
      "unknown field at plan table.few_rows[0]");
  expectParseError(withRowLength(R"({"strategy": "chunks", "reduces": 0})"),
                   "at plan table.row_lengths[0].reduces");
  // Only clusters name their blocks.
  expectParseError(withRowLength(R"({"strategy": "chunks", "cluster": 8})"),
                   "cluster names the 2, 4, 8 or 16 blocks of a cluster or "
                   "online row's clusters at plan table.row_lengths[0]");
  expectParseError(withRowLength(R"({"strategy": "cluster", "cluster": 6})"),
                   "cluster names the 2, 4, 8 or 16 blocks");
  // Only online rows without clusters, and cluster rows with theirs, name
  // their blocks' warps.
  expectParseError(withRowLength(R"({"strategy": "fused", "warps": 8})"),
                   "warps names the 1 to 32 warps (a power of two or three "
                   "times one) of an online row's block, without clusters, "
                   "or of a cluster row's blocks with its cluster at plan "
                   "table.row_lengths[0]");
  expectParseError(withRowLength(R"({"strategy": "online", "warps": 10})"),
                   "warps names the 1 to 32 warps");
  expectParseError(withRowLength(R"({"strategy": "cluster", "warps": 4})"),
                   "warps names the 1 to 32 warps");
  expectParseError(withRowLength(R"({"strategy": "online", "cluster": 8,
                                     "warps": 4})"),
                   "warps names the 1 to 32 warps");
  EXPECT_EQ(parseError(withRowLength(R"({"strategy": "cluster", "cluster": 8,
                                         "warps": 4, "column_sums": true})")),
            "parsed");
  expectParseError(withRowLength(R"({"strategy": "cluster",
                                     "column_sums": 1})"),
                   "at plan table.row_lengths[0].column_sums");
  // Only cluster rows of kernels with column sums keep them in registers.
  EXPECT_EQ(parseError(withRowLength(R"({"strategy": "cluster", "cluster": 8,
                                         "column_sums": true,
                                         "sums_in_registers": true})")),
            "parsed");
  expectParseError(withRowLength(R"({"strategy": "cluster",
                                     "sums_in_registers": true})"),
                   "sums_in_registers names a cluster row of kernels with "
                   "column_sums at plan table.row_lengths[0]");
  expectParseError(withRowLength(R"({"strategy": "online", "column_sums": true,
                                     "sums_in_registers": true})"),
                   "sums_in_registers names a cluster row");
  // Whether a kernel writes rows is a key of online_warps, row_grid and
  // cache_hints alone; a staged row's warps name nothing else.
  expectParseError(tableWith(R"([{"writes_rows": false, "warps": 8}])"),
                   "unknown field at plan table.block_shapes[0].writes_rows");
  EXPECT_EQ(
      parseError(tableReplacing(
          R"("row_grid": [])",
          R"("row_grid": [{"strategy": "online", "writes_rows": false}])")),
      "parsed");
  expectParseError(tableReplacing(R"("cache_hints": [])",
                                  R"("cache_hints": [{"warps": 8}])"),
                   "unknown field at plan table.cache_hints[0].warps");
  EXPECT_EQ(
      parseError(tableReplacing(
          R"("cache_hints": [])",
          R"("cache_hints": [{"types": "16-bit", "writes_rows": true}])")),
      "parsed");
  expectParseError(tableReplacing(R"("prefetch": [])",
                                  R"("prefetch": [{"writes_rows": false,
                                      "prefetch": "stage"}])"),
                   "unknown field at plan table.prefetch[0].writes_rows");
  expectParseError(tableReplacing(R"("online_warps": [{"warps": 16}])",
                                  R"("online_warps": [{"writes_rows": false,
                                       "warps": 8, "elements_per_thread": 0},
                                      {"warps": 16}])"),
                   "at plan table.online_warps[0].elements_per_thread");
  EXPECT_EQ(parseError(tableReplacing(R"("online_warps": [{"warps": 16}])",
                                      R"("online_warps": [{"writes_rows": false,
                                           "warps": 8,
                                           "elements_per_thread": 32},
                                          {"warps": 16}])")),
            "parsed");
  expectParseError(
      tableReplacing(R"("staged_row_warps": [{"warps": 4}])",
                     R"("staged_row_warps": [{"max_block": 12288, "warps": 4,
                                               "elements_per_thread": 32},
                                              {"warps": 4}])"),
      "a staged row's warps name no elements_per_thread nor writes_rows at "
      "plan table.staged_row_warps[0]");
}

TEST(PlanTableTest, FewRowsRowsAndTheirLadders) {
  // A few_rows row's second kernel may be a fused block of its own warps.
  auto withFewRows = [](StringRef row) {
    return tableReplacing(R"("row_lengths": [])",
                          (R"("row_lengths": [], "few_rows": [)" + row + "]")
                              .str());
  };
  // A ladder of few_rows rows: the first match, then each later match that
  // starts where the last one ended; a row from more rows than a launch of
  // one, where no match ended just before, takes no launch.
  {
    llvm::Expected<PlanTable> ladder =
        PlanTable::parse(tableReplacing(R"("row_lengths": [])",
                                        R"("row_lengths": [], "few_rows": [
          {"strategy": "cluster", "cluster": 16, "min_cols": 1000,
           "max_rows": 4},
          {"strategy": "cluster", "cluster": 4, "min_cols": 1000,
           "min_rows": 6, "max_rows": 32},
          {"strategy": "cluster", "cluster": 8, "min_cols": 1000,
           "min_rows": 5, "max_rows": 64},
          {"strategy": "cluster", "cluster": 2, "types": "f32",
           "min_rows": 65, "max_rows": 128}])"));
    ASSERT_TRUE(static_cast<bool>(ladder)) << toString(ladder.takeError());
    MLIRContext context;
    Type f32 = Float32Type::get(&context), bf16 = BFloat16Type::get(&context);
    SmallVector<const FewRowsRow *> rows = ladder->fewRowsOf({f32, 2048, true});
    ASSERT_EQ(rows.size(), 3u);
    EXPECT_EQ(rows[0]->lengths.cluster, 16);
    EXPECT_EQ(rows[1]->lengths.cluster, 8);
    EXPECT_EQ(rows[2]->lengths.cluster, 2);
    EXPECT_EQ(ladder->fewRowsOf({bf16, 2048, true}).size(), 2u);
    // f32 rows below the first row's columns: the last row, which matches
    // them, continues no ladder.
    EXPECT_TRUE(ladder->fewRowsOf({f32, 512, true}).empty());
  }
  expectParseError(withFewRows(R"({"strategy": "fused", "min_rows": 65,
                                   "max_rows": 64})"),
                   "exceeds max_rows at plan table.few_rows[0].min_rows");
  expectParseError(withFewRows(R"({"strategy": "fused", "min_rows": 0,
                                   "max_rows": 64})"),
                   "expected a positive integer");
  EXPECT_EQ(parseError(withFewRows(R"({"strategy": "fused", "warps": 16,
                                       "max_rows": 64})")),
            "parsed");
  EXPECT_EQ(parseError(withFewRows(R"({"strategy": "fused", "warps": 16,
                                       "max_rows": 64,
                                       "hoist_map_loads": true})")),
            "parsed");
  expectParseError(withFewRows(R"({"strategy": "fused", "max_rows": 64,
                                   "hoist_map_loads": 1})"),
                   "at plan table.few_rows[0].hoist_map_loads");
  // Chunks batch their map's loads (ChunksEmitter): no hoist.
  expectParseError(withFewRows(R"({"strategy": "chunks", "block": 4096,
                                   "max_rows": 8, "hoist_map_loads": true})"),
                   "a row of chunks batches its map's loads: no "
                   "hoist_map_loads at plan table.few_rows[0]");
  // ... or a cluster of blocks of its own warps.
  EXPECT_EQ(parseError(withFewRows(R"({"strategy": "cluster", "cluster": 4,
                                       "warps": 8, "max_rows": 64})")),
            "parsed");
  expectParseError(withFewRows(R"({"strategy": "cluster", "warps": 8,
                                   "max_rows": 64})"),
                   "warps names the 1 to 32 warps (a power of two or three "
                   "times one) of a fused or online row's block, without "
                   "clusters, or of a cluster row's blocks with its cluster "
                   "at plan table.few_rows[0]");
  // Smaller chunks name their block; a cluster has none.
  expectParseError(
      tableReplacing(R"("row_lengths": [])",
                     R"("row_lengths": [], "few_rows": [{"strategy": "chunks",
                                           "max_rows": 16}])"),
      "a row of chunks, and only such a row, names its block at plan "
      "table.few_rows[0]");
  expectParseError(
      tableReplacing(R"("row_lengths": [])",
                     R"("row_lengths": [], "few_rows": [{"strategy": "cluster",
                                           "max_rows": 16, "block": 4096}])"),
      "a row of chunks, and only such a row, names its block at plan "
      "table.few_rows[0]");
  expectParseError(
      tableReplacing(R"("row_lengths": [])",
                     R"("row_lengths": [], "few_rows": [{"strategy": "online",
                                           "max_rows": 8, "chunk_stage": 4096}])"),
      "only a row of chunks names a chunk_stage at plan table.few_rows[0]");
}

} // namespace
