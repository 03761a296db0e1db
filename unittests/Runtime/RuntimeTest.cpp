//===- RuntimeTest.cpp - Launch rules and the C API, without a GPU --------===//
//
// Part of the softmax kernel compiler.
//
//===----------------------------------------------------------------------===//

#include "rowred/Runtime/Kernel.h"
#include "rowred_runtime.h"

#include <gtest/gtest.h>

using namespace rowred::runtime;

namespace {

/// A chunks kernel's metadata as the runtime reads it: 128 threads, chunks
/// of 16384 elements.
KernelSpec chunksSpec() {
  KernelSpec spec;
  spec.kernel = "softmax_kernel0";
  spec.strategy = "chunks";
  spec.blockThreads = 128;
  spec.chunkElements = 16384;
  return spec;
}

bool mentions(const std::string &text, const std::string &part) {
  return text.find(part) != std::string::npos;
}

} // namespace

TEST(Runtime, ShapesOutsideTheKernelAreRefused) {
  KernelSpec fused;
  fused.kernel = "k";
  fused.strategy = "fused";
  fused.maxCols = 1024;
  EXPECT_EQ(fused.checkShape(4096, 1024), "");
  EXPECT_EQ(fused.checkShape(0, 7), "");
  EXPECT_TRUE(mentions(fused.checkShape(4, 1025), "handles 1 to 1024"));
  EXPECT_TRUE(mentions(fused.checkShape(4, 0), "at least one column"));
  EXPECT_TRUE(mentions(fused.checkShape(-1, 8), "no negative rows"));
  KernelSpec any;
  any.kernel = "k";
  EXPECT_TRUE(mentions(any.checkShape(1, int64_t(1) << 31), "N < 2^31"));
  // A chunks kernel's tickets count rows x chunks in 32 bits.
  EXPECT_TRUE(mentions(chunksSpec().checkShape(int64_t(1) << 20, 1 << 25),
                       "rows x chunks"));
}

TEST(Runtime, RequestedGridsAreChecked) {
  KernelSpec spec = chunksSpec();
  LaunchPlan plan;
  plan.chunkElements = spec.chunkElements;
  plan.chunksPerRow = 8;
  std::string error;
  // Derived: every chunk of 4 rows, capped by the 100 resident blocks.
  EXPECT_EQ(chooseGrid(spec, plan, 100, 4, 0, error), 32);
  EXPECT_EQ(chooseGrid(spec, plan, 100, 40, 0, error), 100);
  EXPECT_EQ(error, "");
  EXPECT_EQ(chooseGrid(spec, plan, 100, 4, 101, error), 0);
  EXPECT_TRUE(mentions(error, "exceeds the blocks that can be resident"));
  error.clear();
  EXPECT_EQ(chooseGrid(spec, plan, 100, 4, 7, error), 0);
  EXPECT_TRUE(mentions(error, "less than the 8 chunks of a row"));
  error.clear();
  // A row with more chunks than resident blocks cannot run at all.
  plan.chunksPerRow = 101;
  EXPECT_EQ(chooseGrid(spec, plan, 100, 1, 0, error), 0);
  EXPECT_TRUE(mentions(error, "compile it with a larger chunk"));
  error.clear();
  KernelSpec cluster;
  cluster.kernel = "k";
  cluster.clusterBlocks = 4;
  LaunchPlan clusterPlan;
  clusterPlan.clusterBlocks = 4;
  EXPECT_EQ(chooseGrid(cluster, clusterPlan, 100, 4, 6, error), 0);
  EXPECT_TRUE(mentions(error, "multiple of the kernel's cluster size (4)"));
}

TEST(Runtime, CApiReportsFailuresAsValues) {
  EXPECT_EQ(rowred_runtime_abi_version(), ROWRED_RUNTIME_ABI_VERSION);
  EXPECT_EQ(rowred_kernel_load(nullptr, -1), nullptr);
  EXPECT_TRUE(mentions(rowred_last_error(), "no metadata path"));
  // The missing file is named (or, without a driver, the driver).
  EXPECT_EQ(rowred_kernel_load("/nonexistent/k_kernel0.json", 0), nullptr);
  std::string error = rowred_last_error();
  EXPECT_TRUE(mentions(error, "CUDA driver") || mentions(error, "/nonexistent"))
      << error;
  rowred_kernel_unload(nullptr);
  EXPECT_EQ(rowred_stream_capturing(nullptr, nullptr), 1);
  EXPECT_TRUE(mentions(rowred_last_error(), "no result address"));
  // The default stream captures nothing (or, without a driver, the driver
  // is named).
  int capturing = -1;
  if (rowred_stream_capturing(nullptr, &capturing)) {
    EXPECT_TRUE(mentions(rowred_last_error(), "CUDA driver"))
        << rowred_last_error();
  } else {
    EXPECT_EQ(capturing, 0);
  }
}

TEST(Runtime, NoRowsTakeNullAddresses) {
  KernelSpec spec;
  spec.kernel = "k";
  spec.operands = {{"x", KernelOperand::Role::Input, DType::F32},
                   {"y", KernelOperand::Role::Output, DType::F32}};
  LaunchArgs empty = LaunchArgs::pair(0, 0, 0, 8, 8, 8, 0);
  EXPECT_EQ(checkOperands(spec, empty), "");
  LaunchArgs rows = LaunchArgs::pair(0, 0, 3, 8, 8, 8, 0);
  EXPECT_TRUE(mentions(checkOperands(spec, rows), "'x' is a null address"));
}

TEST(Runtime, FilesWithNoEndAreRefused) {
  std::string contents, error;
  EXPECT_FALSE(readFile("/dev/zero", contents, error));
  EXPECT_TRUE(mentions(error, "'/dev/zero' is not a regular file")) << error;
  EXPECT_FALSE(readFile("/", contents, error));
  EXPECT_TRUE(mentions(error, "not a regular file")) << error;
}

TEST(Runtime, CApiRefusesANullKernel) {
  EXPECT_EQ(rowred_kernel_name(nullptr), nullptr);
  EXPECT_TRUE(mentions(rowred_last_error(), "rowred_kernel_name: no kernel"));
  EXPECT_EQ(rowred_kernel_op(nullptr), nullptr);
  EXPECT_EQ(rowred_kernel_input_type(nullptr), nullptr);
  EXPECT_EQ(rowred_kernel_output_type(nullptr), nullptr);
  EXPECT_EQ(rowred_kernel_min_cols(nullptr), -1);
  EXPECT_EQ(rowred_kernel_max_cols(nullptr), -1);
  EXPECT_EQ(rowred_kernel_num_operands(nullptr), -1);
  uint64_t bytes = 0;
  int64_t blocks = 0, resident = 0, clusters = 0;
  int perSM = 0;
  const char *name, *role, *type;
  EXPECT_EQ(rowred_kernel_workspace_bytes(nullptr, 1, 1, &bytes), 1);
  EXPECT_EQ(rowred_kernel_grid(nullptr, 1, 1, &blocks), 1);
  EXPECT_EQ(rowred_kernel_occupancy(nullptr, &perSM, &resident, &clusters), 1);
  EXPECT_EQ(rowred_kernel_operand(nullptr, 0, &name, &role, &type), 1);
  EXPECT_EQ(rowred_kernel_launch(nullptr, nullptr, 0, 0, 1, 1, 1, 1, 0), 1);
  EXPECT_EQ(rowred_kernel_launch_grid(nullptr, nullptr, 0, 0, 1, 1, 1, 1, 0, 1),
            1);
  uint64_t operand = 0;
  int64_t stride = 1;
  EXPECT_EQ(rowred_kernel_launch_operands(nullptr, nullptr, &operand, 1,
                                          &stride, 1, 1, 1, 0, 0),
            1);
  EXPECT_TRUE(mentions(rowred_last_error(), "no kernel (NULL)"));
}
