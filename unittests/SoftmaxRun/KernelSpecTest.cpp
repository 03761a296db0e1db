//===- KernelSpecTest.cpp - JSON reader and kernel metadata ---------------===//
//
// Part of the softmax kernel compiler.
//
//===----------------------------------------------------------------------===//

#include "rowred/Runtime/KernelSpec.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <cstring>
#include <fstream>

using namespace rowred::runtime;

TEST(Json, ParsesNestedValues) {
  std::string error;
  auto v = Json::parse(
      R"({"a": [1, 2.5, -3e2], "b": {"c": "x\"y\u00e9"}, "t": true, "n": null})",
      error);
  ASSERT_TRUE(v) << error;
  ASSERT_EQ(v->get("a")->array.size(), 3u);
  EXPECT_EQ(v->get("a")->array[2].number, -300);
  EXPECT_EQ(v->get("b")->get("c")->string, "x\"y\xc3\xa9");
  EXPECT_TRUE(v->get("t")->boolean);
  EXPECT_EQ(v->get("n")->kind, Json::Kind::Null);
}

TEST(Json, ReportsErrorsWithOffsets) {
  std::string error;
  EXPECT_FALSE(Json::parse(R"({"a": [1, 2)", error));
  EXPECT_NE(error.find("at offset"), std::string::npos) << error;
  EXPECT_FALSE(Json::parse(R"({"a": 1} trailing)", error));
  EXPECT_FALSE(Json::parse(R"({"a": tru})", error));
  EXPECT_FALSE(Json::parse(std::string(100, '['), error));
}

/// The PTX of a kernel `k` of `params` parameters.
static std::string ptxOf(int64_t params) {
  std::string ptx = ".version 7.8\n.visible .entry k(\n";
  for (int64_t i = 0; i < params; ++i)
    ptx += std::string(i ? ",\n" : "") + "\t.param .u64 k_param_" +
           std::to_string(i);
  return ptx + "\n)\n{\nret;\n}\n";
}

/// Writes `json` as a kernel's metadata, with its PTX next to it unless
/// `withPtx` is false, into a folder of the current test's own: CTest runs
/// the tests of this file as separate processes, in parallel with -j.
static std::string writeKernel(const std::string &json, bool withPtx = true) {
  std::string dir =
      ::testing::TempDir() + "/kernelspec-" +
      ::testing::UnitTest::GetInstance()->current_test_info()->name();
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/k.json") << json;
  // The entry takes the parameters its metadata describes (a metadata the
  // parser refuses gets none).
  std::string error;
  std::optional<KernelSpec> spec = KernelSpec::parse(json, "k.json", error);
  if (withPtx)
    std::ofstream(dir + "/k.ptx") << ptxOf(spec ? spec->parameterCount() : 0);
  else
    std::remove((dir + "/k.ptx").c_str());
  return dir + "/k.json";
}

static const char *kGood = R"({"abi_version": 1, "kernel": "k", "ptx": "k.ptx",
  "op": "softmax", "strategy": "fused", "input_type": "bf16",
  "output_type": "bf16", "block_threads": 64, "block_elements": 1024,
  "max_cols": 1024, "min_cols": 1, "vector_width": 8, "shared_bytes": 16,
  "chip": "sm_90"})";

TEST(KernelSpec, FindsEntries) {
  EXPECT_TRUE(KernelSpec::definesEntry(ptxOf(6), "k"));
  EXPECT_FALSE(KernelSpec::definesEntry(ptxOf(6), "kk"));
  EXPECT_FALSE(KernelSpec::definesEntry(".entry kk(", "k"));
  EXPECT_TRUE(KernelSpec::definesEntry(".entry a(\n.entry k(", "k"));
  EXPECT_FALSE(KernelSpec::definesEntry(".entry k", "k"));
}

TEST(KernelSpec, RefusesMetadataThatDisagreesWithItself) {
  // Each: the change to kGood, what the error names.
  std::pair<std::pair<const char *, const char *>, const char *> cases[] = {
      {{"\"block_threads\": 64", "\"block_threads\": 33"},
       "invalid block_threads"},
      {{"\"vector_width\": 8", "\"vector_width\": 3"},
       "invalid vector_width"},
      {{"\"vector_width\": 8", "\"vector_width\": 16"},
       "invalid vector_width"},
      {{"\"strategy\": \"fused\"", "\"strategy\": \"magic\""},
       "unknown strategy 'magic'"},
      {{"\"max_cols\": 1024", "\"max_cols\": 0"},
       "fused kernel of 1024 elements per row whose max_cols is 0"},
      {{"\"max_cols\": 1024", "\"max_cols\": 2048"},
       "whose max_cols is 2048"},
      {{"\"shared_bytes\": 16", "\"cluster_blocks\": 7, \"shared_bytes\": 16"},
       "invalid rows_per_block or cluster_blocks"}};
  for (auto [change, message] : cases) {
    std::string json = kGood;
    json.replace(json.find(change.first), std::strlen(change.first),
                 change.second);
    std::string error;
    EXPECT_FALSE(KernelSpec::parse(json, "k.json", error)) << json;
    EXPECT_NE(error.find(message), std::string::npos) << error;
  }
}

TEST(KernelSpec, RefusesPtxThatDisagreesWithTheMetadata) {
  std::string path = writeKernel(kGood), error;
  std::string dir = path.substr(0, path.rfind('/'));
  // Too few parameters for its operands.
  std::ofstream(dir + "/k.ptx") << ptxOf(5);
  EXPECT_FALSE(KernelSpec::load(path, error));
  EXPECT_NE(error.find("the kernel takes 5 parameters, the metadata's "
                       "operands 6"),
            std::string::npos)
      << error;
  // Another block size.
  std::string ptx = ptxOf(6);
  ptx.insert(ptx.find("{"), ".maxntid 128, 1, 1\n");
  std::ofstream(dir + "/k.ptx") << ptx;
  EXPECT_FALSE(KernelSpec::load(path, error));
  EXPECT_NE(error.find("runs at most 128 threads a block, the metadata's "
                       "block_threads 64"),
            std::string::npos)
      << error;
  // A cluster the metadata does not have.
  ptx = ptxOf(6);
  ptx.insert(ptx.find("{"), ".maxntid 64, 1, 1\n.reqnctapercluster 4, 1, 1\n");
  std::ofstream(dir + "/k.ptx") << ptx;
  EXPECT_FALSE(KernelSpec::load(path, error));
  EXPECT_NE(error.find("cluster has 4 blocks, the metadata's cluster_blocks 1"),
            std::string::npos)
      << error;
}

TEST(KernelSpec, LoadsMetadataAndPtx) {
  std::string error;
  auto spec = KernelSpec::load(writeKernel(kGood), error);
  ASSERT_TRUE(spec) << error;
  EXPECT_EQ(spec->kernel, "k");
  EXPECT_EQ(spec->inputType, DType::BF16);
  EXPECT_EQ(spec->blockThreads, 64);
  EXPECT_EQ(spec->maxCols, 1024);
  EXPECT_EQ(spec->ptx, ptxOf(6));
  EXPECT_EQ(spec->dynamicSharedBytes, 0);
  // Without a grid field the launcher keeps the persistent grid.
  EXPECT_FALSE(spec->gridPerRowGroup);

  std::string rows = kGood;
  rows.replace(rows.find("\"shared_bytes\""), 1, "\"grid\": \"rows\", \"");
  spec = KernelSpec::load(writeKernel(rows), error);
  ASSERT_TRUE(spec) << error;
  EXPECT_TRUE(spec->gridPerRowGroup);

  // Version 2 adds the prefetch stage.
  std::string v2 = kGood;
  v2.replace(v2.find("1, \"kernel\""), 1, "2");
  v2.replace(v2.find("\"shared_bytes\""), 1,
             "\"dynamic_shared_bytes\": 65536, \"");
  spec = KernelSpec::load(writeKernel(v2), error);
  ASSERT_TRUE(spec) << error;
  EXPECT_EQ(spec->dynamicSharedBytes, 65536);

  // Version 3 and 4 row-split kernels are refused: this runner does not
  // launch them.
  std::string v3 = kGood;
  v3.replace(v3.find("1, \"kernel\""), 1, "3");
  v3.replace(v3.find("\"shared_bytes\""), 1,
             "\"row_split\": 32, \"workspace_bytes_per_group\": 640, \"");
  EXPECT_FALSE(KernelSpec::load(writeKernel(v3), error));
  EXPECT_NE(error.find("is a row-split kernel (row_split 32)"),
            std::string::npos)
      << error;
}

/// Chunks kernels: from version 5, whose blocks loop over the chunks; a
/// version 4 one needed a block per chunk of every row and is refused.
TEST(KernelSpec, LoadsChunksKernelsOfVersion5) {
  std::string json = kGood;
  json.replace(json.find("\"fused\""), 7, "\"chunks\"");
  json.replace(json.find("\"max_cols\": 1024"), 16, "\"max_cols\": 0");
  json.replace(json.find("\"shared_bytes\""), 1,
               "\"grid\": \"chunks\", \"chunk_elements\": 4096, \"");
  std::string v5 = json, v4 = json;
  v5.replace(v5.find("1, \"kernel\""), 1, "5");
  v4.replace(v4.find("1, \"kernel\""), 1, "4");
  std::string error;
  auto spec = KernelSpec::load(writeKernel(v5), error);
  ASSERT_TRUE(spec) << error;
  EXPECT_EQ(spec->chunkElements, 4096);
  EXPECT_TRUE(spec->blocksWait());
  EXPECT_FALSE(KernelSpec::load(writeKernel(v4), error));
  EXPECT_NE(error.find("chunks kernel of ABI version 4"), std::string::npos)
      << error;
  // One 8-byte entry per chunk before version 7: a row of 10000 elements is
  // 3 chunks, 24 bytes of entries rounded up to 128.
  EXPECT_EQ(spec->chunkEntries, 1);
  EXPECT_EQ(spec->chunkWorkspaceBytes(2, 10000), 128 + 2 * (128 + 128));
}

/// Version 7 chunks kernels name their entries per chunk (chunk_entries),
/// which size each row's record of the workspace.
TEST(KernelSpec, SizesTheWorkspaceByChunkEntries) {
  std::string json = kGood;
  json.replace(json.find("\"fused\""), 7, "\"chunks\"");
  json.replace(json.find("\"max_cols\": 1024"), 16, "\"max_cols\": 0");
  json.replace(json.find("1, \"kernel\""), 1, "7");
  std::string three = json, bad = json;
  three.replace(three.find("\"shared_bytes\""), 1,
                "\"grid\": \"chunks\", \"chunk_elements\": 4096, "
                "\"chunk_entries\": 3, \"");
  bad.replace(bad.find("\"shared_bytes\""), 1,
              "\"grid\": \"chunks\", \"chunk_elements\": 4096, "
              "\"chunk_entries\": 0, \"");
  std::string error;
  auto spec = KernelSpec::load(writeKernel(three), error);
  ASSERT_TRUE(spec) << error;
  EXPECT_EQ(spec->chunkEntries, 3);
  // 3 chunks of 3 entries: 72 bytes, rounded up to 128; 100 chunks: 2400,
  // rounded up to 2432.
  EXPECT_EQ(spec->chunkWorkspaceBytes(2, 10000), 128 + 2 * (128 + 128));
  EXPECT_EQ(spec->chunkWorkspaceBytes(1, 409600), 128 + 128 + 2432);
  EXPECT_FALSE(KernelSpec::load(writeKernel(bad), error));
  EXPECT_NE(error.find("invalid chunk_entries"), std::string::npos) << error;
}

/// An online kernel with kept tiles: keep_ahead, and keep_ahead_bulk, whose
/// stage holds the kept tiles twice.
static std::string keptTiles(bool bulk) {
  std::string json = kGood;
  json.replace(json.find("\"fused\""), 7, "\"online\"");
  json.replace(json.find("\"shared_bytes\""), 1,
               std::string("\"dynamic_shared_bytes\": 131072, "
                           "\"prefetch\": \"registers\", "
                           "\"keep_ahead\": true, \"keep_ahead_bulk\": ") +
                   (bulk ? "true" : "false") + ", \"");
  return json;
}

TEST(KernelSpec, DescribesKeptTiles) {
  std::string error;
  auto spec = KernelSpec::load(writeKernel(keptTiles(true)), error);
  ASSERT_TRUE(spec) << error;
  EXPECT_TRUE(spec->keepAhead);
  EXPECT_TRUE(spec->keepAheadBulk);
  std::string text = spec->describe();
  EXPECT_NE(text.find("64 KiB of each block's share kept in shared memory "
                      "between the passes, in two buffers by turns"),
            std::string::npos)
      << text;

  spec = KernelSpec::load(writeKernel(keptTiles(false)), error);
  ASSERT_TRUE(spec) << error;
  EXPECT_FALSE(spec->keepAheadBulk);
  text = spec->describe();
  EXPECT_NE(text.find("128 KiB of each block's share kept in shared memory "
                      "between the passes, copied in (cp.async)"),
            std::string::npos)
      << text;

  // Bulk keeping without keep_ahead or without its buffers is rejected.
  std::string noKeep = keptTiles(true);
  noKeep.replace(noKeep.find("\"keep_ahead\": true"), 18,
                 "\"keep_ahead\": false");
  EXPECT_FALSE(KernelSpec::load(writeKernel(noKeep), error));
  EXPECT_NE(error.find("keep_ahead_bulk without keep_ahead"), std::string::npos)
      << error;
  std::string noStage = keptTiles(true);
  noStage.replace(noStage.find("131072"), 6, "0");
  EXPECT_FALSE(KernelSpec::load(writeKernel(noStage), error));
  EXPECT_NE(error.find("keep_ahead_bulk without keep_ahead"), std::string::npos)
      << error;
}

/// kGood with `operands` (version 6).
static std::string withOperands(const std::string &operands) {
  std::string text = kGood;
  text.replace(text.find("\"chip\""), 1, "\"operands\": " + operands + ", \"");
  return text;
}

TEST(KernelSpec, ReadsOperands) {
  std::string error;
  auto pair = KernelSpec::load(writeKernel(kGood), error);
  ASSERT_TRUE(pair) << error;
  ASSERT_EQ(pair->operands.size(), 2u);
  EXPECT_EQ(pair->operands[1].name, "y");
  EXPECT_EQ(pair->operands[1].type, DType::BF16);

  auto norm =
      KernelSpec::load(writeKernel(withOperands(
                           R"([{"name": "x", "role": "input", "type": "bf16"},
              {"name": "y", "role": "output", "type": "bf16"},
              {"name": "w", "role": "column", "type": "f32"}])")),
                       error);
  ASSERT_TRUE(norm) << error;
  EXPECT_EQ(norm->count(KernelOperand::Role::Column), 1);
  EXPECT_EQ(norm->operands[2].type, DType::F32);

  // Cross-entropy: labels in, per-row results out, no output of rows.
  auto loss =
      KernelSpec::load(writeKernel(withOperands(
                           R"([{"name": "x", "role": "input", "type": "bf16"},
              {"name": "r", "role": "row", "type": "i64"},
              {"name": "z", "role": "row_output", "type": "f32"}])")),
                       error);
  ASSERT_TRUE(loss) << error;
  EXPECT_EQ(loss->count(KernelOperand::Role::Output), 0);
  EXPECT_EQ(loss->operands[1].type, DType::I64);
  EXPECT_EQ(dtypeBytes(loss->operands[1].type), 8);
  EXPECT_STREQ(roleName(loss->operands[2].role), "row_output");

  // Cross-entropy's gradient: its per-row f32 scale is a per-row input.
  auto grad =
      KernelSpec::load(writeKernel(withOperands(
                           R"([{"name": "x", "role": "input", "type": "bf16"},
              {"name": "y", "role": "output", "type": "bf16"},
              {"name": "r", "role": "row", "type": "i64"},
              {"name": "r1", "role": "row", "type": "f32"},
              {"name": "z", "role": "row_output", "type": "f32"}])")),
                       error);
  ASSERT_TRUE(grad) << error;
  EXPECT_EQ(grad->count(KernelOperand::Role::Row), 2);
  EXPECT_EQ(grad->operands[3].type, DType::F32);

  // Cross-entropy's loss summed over the rows, and the count of rows not
  // ignored: totals only, whose blocks meet in a workspace of the grid
  // barrier's 128 bytes and an f32 per block and total.
  auto sum =
      KernelSpec::load(writeKernel(withOperands(
                           R"([{"name": "x", "role": "input", "type": "bf16"},
              {"name": "r", "role": "row", "type": "i64"},
              {"name": "t", "role": "total", "type": "f32"},
              {"name": "t1", "role": "total", "type": "f32"}])")),
                       error);
  ASSERT_TRUE(sum) << error;
  EXPECT_EQ(sum->count(KernelOperand::Role::Total), 2);
  EXPECT_STREQ(roleName(sum->operands[3].role), "total");
  EXPECT_TRUE(sum->hasColumnSums());
  EXPECT_TRUE(sum->blocksWait());
  EXPECT_EQ(sum->columnSumsWorkspaceBytes(132, 32000), 128 + 132 * 4 * 2);

  // Operand lists the reader refuses, and what its message names.
  const std::pair<const char *, const char *> refused[] = {
      {R"([{"name": "y", "role": "output", "type": "bf16"},
           {"name": "x", "role": "input", "type": "bf16"}])",
       "out of order"},
      {R"([{"name": "x", "role": "input", "type": "bf16"},
           {"name": "t", "role": "total", "type": "f32"},
           {"name": "s", "role": "column_sum", "type": "f32"}])",
       "out of order"},
      {R"([{"name": "x", "role": "input", "type": "bf16"},
           {"name": "y", "role": "weight", "type": "bf16"}])",
       "unknown role 'weight'"},
      {R"([{"name": "x", "role": "input", "type": "f32"},
           {"name": "y", "role": "output", "type": "bf16"}])",
       "disagree with input_type"},
      {R"([{"name": 1}])", "invalid operand"},
      {R"([{"name": "x", "role": "input", "type": "bf16"},
           {"name": "r", "role": "row", "type": "bf16"},
           {"name": "z", "role": "row_output", "type": "f32"}])",
       "per-row inputs are i32, i64 or f32"},
      {R"([{"name": "x", "role": "input", "type": "bf16"},
           {"name": "z", "role": "row_output", "type": "i32"}])",
       "per-row inputs are i32, i64 or f32"},
      {R"([{"name": "x", "role": "input", "type": "bf16"},
           {"name": "z", "role": "row_output", "type": "f32"},
           {"name": "r", "role": "row", "type": "i64"}])",
       "out of order"},
      {R"([{"name": "x", "role": "input", "type": "bf16"},
           {"name": "r", "role": "row", "type": "i64"}])",
       "lack an input or an output"},
  };
  for (auto [operands, message] : refused) {
    EXPECT_FALSE(KernelSpec::load(writeKernel(withOperands(operands)), error))
        << operands;
    EXPECT_NE(error.find(message), std::string::npos) << error;
  }
}

/// kGood with `field` (a JSON member, "name": value) added.
static std::string withField(const std::string &field) {
  std::string text = kGood;
  text.replace(text.find("\"chip\""), 1, field + ", \"");
  return text;
}

TEST(KernelSpec, ReadsVariantsByRows) {
  std::string error;
  auto spec = KernelSpec::load(
      writeKernel(withField(R"("variants": [{"kernel": "k_rows64", "max_rows":
          64}, {"kernel": "k_rows16", "max_rows": 16}])")),
      error);
  ASSERT_TRUE(spec) << error;
  ASSERT_EQ(spec->variants.size(), 2u);
  EXPECT_EQ(spec->variants[0].kernel, "k_rows16");
  EXPECT_EQ(spec->variants[0].maxRows, 16);
  EXPECT_EQ(spec->variants[1].maxRows, 64);
  // Next to the kernel's own files.
  std::string path = spec->variantPath(spec->variants[0]);
  EXPECT_EQ(path.substr(path.size() - 14), "/k_rows16.json") << path;

  auto variant =
      KernelSpec::load(writeKernel(withField(R"("max_rows": 16)")), error);
  ASSERT_TRUE(variant) << error;
  EXPECT_EQ(variant->maxRows, 16);
  EXPECT_TRUE(variant->variants.empty());

  for (const char *bad :
       {R"("variants": {"kernel": "k"})", R"("variants": [{"kernel": "k"}])",
        R"("variants": [{"kernel": "k", "max_rows": 0}])",
        R"("variants": [{"kernel": "../k", "max_rows": 4}])",
        R"("variants": [{"kernel": "", "max_rows": 4}])",
        R"("variants": [{"kernel": "k", "max_rows": 2.5}])"}) {
    EXPECT_FALSE(KernelSpec::load(writeKernel(withField(bad)), error)) << bad;
    EXPECT_NE(error.find("invalid variants"), std::string::npos) << error;
  }
}

TEST(KernelSpec, RejectsMissingFieldsVersionsAndFiles) {
  std::string error, good = kGood;
  std::string noKernel = good;
  noKernel.replace(noKernel.find("\"kernel\""), 4, "\"kern");
  EXPECT_FALSE(KernelSpec::load(writeKernel(noKernel), error));
  EXPECT_NE(error.find("lacks the field 'kernel'"), std::string::npos) << error;

  std::string v8 = good;
  v8.replace(v8.find("1, \"kernel\""), 1, "8");
  EXPECT_FALSE(KernelSpec::load(writeKernel(v8), error));
  EXPECT_NE(error.find("ABI version 8"), std::string::npos) << error;

  std::string badGrid = good;
  badGrid.replace(badGrid.find("\"shared_bytes\""), 1,
                  "\"grid\": \"waves\", \"");
  EXPECT_FALSE(KernelSpec::load(writeKernel(badGrid), error));
  EXPECT_NE(error.find("unknown grid 'waves'"), std::string::npos) << error;

  std::string badStage = good;
  badStage.replace(badStage.find("\"shared_bytes\""), 1,
                   "\"dynamic_shared_bytes\": 300000, \"");
  EXPECT_FALSE(KernelSpec::load(writeKernel(badStage), error));
  EXPECT_NE(error.find("invalid dynamic_shared_bytes"), std::string::npos)
      << error;

  EXPECT_FALSE(KernelSpec::load(writeKernel(kGood, false), error));
  EXPECT_NE(error.find("cannot open"), std::string::npos) << error;

  // A kernel the PTX does not define (the plan would report another
  // entry's resources).
  std::string other(kGood);
  other.replace(other.find("\"kernel\": \"k\""), 13, "\"kernel\": \"kk\"");
  EXPECT_FALSE(KernelSpec::load(writeKernel(other), error));
  EXPECT_NE(error.find("names kernel 'kk', which"), std::string::npos) << error;

  // Numbers that are no int64 (their conversion was undefined behaviour,
  // found by kernel-metadata-fuzzer): kGood's `from` replaced by `to`.
  struct NotInteger {
    const char *from, *to, *field;
  };
  const NotInteger notIntegers[] = {
      {"\"shared_bytes\": 16", "\"shared_bytes\": 1e300", "shared_bytes"},
      {"\"shared_bytes\": 16", "\"shared_bytes\": -1e19", "shared_bytes"},
      {"\"shared_bytes\": 16", "\"shared_bytes\": 1.5", "shared_bytes"},
      {"\"op\": \"softmax\"", "\"op\": \"softmax\", \"ignore_index\": -1e56",
       "ignore_index"},
      {"\"abi_version\": 1", "\"abi_version\": 9e99", "abi_version"},
  };
  for (auto [from, to, field] : notIntegers) {
    std::string bad(kGood);
    bad.replace(bad.find(from), std::string(from).size(), to);
    EXPECT_FALSE(KernelSpec::parse(bad, "k.json", error)) << to;
    EXPECT_NE(
        error.find("field '" + std::string(field) + "' that is not an integer"),
        std::string::npos)
        << error;
  }

  EXPECT_FALSE(KernelSpec::load(writeKernel("[1, 2]"), error));
  EXPECT_NE(error.find("not a JSON object"), std::string::npos) << error;
}
