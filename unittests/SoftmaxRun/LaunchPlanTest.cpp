//===- LaunchPlanTest.cpp - Occupancy derivation --------------------------===//
//
// Part of the softmax kernel compiler.
//
//===----------------------------------------------------------------------===//

#include "rowred/Runtime/LaunchPlan.h"

#include <gtest/gtest.h>

using namespace rowred::runtime;

TEST(LaunchPlan, RegistersLimitLikeTheDriver) {
  // Seen on an H200: a 64-thread kernel with 56 registers runs 18 blocks/SM.
  DeviceInfo h200 = *builtinDevice("sm_90");
  KernelResources res;
  res.registers = 56;
  res.sharedBytes = 16;
  LaunchPlan p = planLaunch(h200, res, {64}, 4096);
  EXPECT_EQ(p.byRegisters, 18);
  EXPECT_EQ(p.byThreads, 32);
  EXPECT_EQ(p.blocksPerSM, 18);
  EXPECT_EQ(p.grid, 18 * 132);
}

TEST(LaunchPlan, GridIsCappedByRowsAndIsAtLeastOne) {
  DeviceInfo a100 = *builtinDevice("sm_80");
  KernelResources res;
  res.registers = 32;
  LaunchPlan p = planLaunch(a100, res, {1024}, 7);
  EXPECT_EQ(p.byThreads, 2);
  EXPECT_EQ(p.grid, 7);
  EXPECT_EQ(planLaunch(a100, res, {1024}, 0).grid, 1);
}

TEST(LaunchPlan, SharedMemoryLimits) {
  DeviceInfo h = *builtinDevice("sm_90");
  KernelResources res;
  res.registers = 16;
  res.sharedBytes = 100 * 1024;
  EXPECT_EQ(planLaunch(h, res, {128}, 1 << 20).blocksPerSM, 2);
  // The prefetch stage is dynamic shared memory on top of the static one:
  // 256 + 65536 + 1024 reserved bytes per block leave 3 per SM.
  res.sharedBytes = 256;
  LaunchPlan staged = planLaunch(h, res, {512, 1, 1, 65536}, 1 << 20);
  EXPECT_EQ(staged.byShared, 3);
  EXPECT_NE(staged.explain(h, res, 4096).find("65536 dynamic"),
            std::string::npos);
}

TEST(LaunchPlan, SeveralRowsPerBlockCountRowGroups) {
  DeviceInfo h = *builtinDevice("sm_90");
  KernelResources res;
  res.registers = 32;
  // 4 rows per 128-thread block: 1823 rows are 456 groups, fewer than the
  // 16 x 132 resident blocks.
  LaunchPlan p = planLaunch(h, res, {128, 4, 1}, 1823);
  EXPECT_EQ(p.blocksPerSM, 16);
  EXPECT_EQ(p.grid, 456);
  EXPECT_EQ(planLaunch(h, res, {128, 4, 1}, 1 << 20).grid, 16 * 132);
  EXPECT_NE(p.explain(h, res, 1823).find("456 groups of 4 rows"),
            std::string::npos);
}

TEST(LaunchPlan, ClusterGridIsWholeClusters) {
  DeviceInfo h = *builtinDevice("sm_90");
  KernelResources res;
  res.registers = 64;
  // 512 threads x 64 registers: 2 blocks per SM, 264 resident blocks.
  LaunchPlan estimated = planLaunch(h, res, {512, 1, 8}, 4096);
  EXPECT_EQ(estimated.blocksPerSM, 2);
  EXPECT_EQ(estimated.residentClusters, 33);
  EXPECT_EQ(estimated.grid, 33 * 8);
  // The driver's count of co-resident clusters wins; the grid stays a
  // multiple of the cluster and is capped by the rows.
  LaunchPlan driver = planLaunch(h, res, {512, 1, 8}, 4096, 30);
  EXPECT_EQ(driver.grid, 30 * 8);
  EXPECT_EQ(planLaunch(h, res, {512, 1, 8}, 5, 30).grid, 5 * 8);
  EXPECT_NE(estimated.explain(h, res, 4096).find("clusters launched"),
            std::string::npos);
}

TEST(LaunchPlan, GridPerRowGroupIsOneProgramPerRowGroup) {
  DeviceInfo h = *builtinDevice("sm_90");
  KernelResources res;
  res.registers = 64;
  // 512 threads: 2 resident blocks per SM, but one block per row.
  KernelShape shape{512};
  shape.gridPerRowGroup = true;
  LaunchPlan p = planLaunch(h, res, shape, 4096);
  EXPECT_EQ(p.blocksPerSM, 2);
  EXPECT_EQ(p.grid, 4096);
  EXPECT_NE(p.explain(h, res, 4096).find("one per row"), std::string::npos)
      << p.explain(h, res, 4096);
  // Groups of rows, and clusters, each get one program.
  KernelShape groups{128, 4};
  groups.gridPerRowGroup = true;
  EXPECT_EQ(planLaunch(h, res, groups, 4097).grid, 1025);
  KernelShape clusters{512, 1, 8};
  clusters.gridPerRowGroup = true;
  EXPECT_EQ(planLaunch(h, res, clusters, 100, 30).grid, 100 * 8);
  EXPECT_EQ(planLaunch(h, res, clusters, 0, 30).grid, 8);
}

TEST(LaunchPlan, ChunksRunOnTheResidentBlocks) {
  DeviceInfo h = *builtinDevice("sm_90");
  KernelResources res;
  res.registers = 95;
  // 128 threads with a 32 KiB stage: 5 blocks per SM by registers.
  KernelShape shape{128};
  shape.dynamicSharedBytes = 32768;
  shape.chunkElements = 16384;
  LaunchPlan p = planLaunch(h, res, shape, 1024, 0, 1 << 20);
  EXPECT_EQ(p.blocksPerSM, 5);
  EXPECT_EQ(p.chunksPerRow, 64);
  // 1024 x 64 chunks, taken by the 5 x 132 resident blocks.
  EXPECT_EQ(p.grid, 660);
  // At most a block per chunk; a partial last chunk counts; no rows still
  // take one row's chunks.
  EXPECT_EQ(planLaunch(h, res, shape, 3, 0, 16385).grid, 3 * 2);
  EXPECT_EQ(planLaunch(h, res, shape, 0, 0, 100).grid, 1);
  // More chunks per row than blocks resident at once: no launch.
  LaunchPlan tooLong = planLaunch(h, res, shape, 2, 0, 16384 * 661);
  EXPECT_EQ(tooLong.grid, 0);
  EXPECT_NE(tooLong.explain(h, res, 2).find("must all be resident at once"),
            std::string::npos)
      << tooLong.explain(h, res, 2);
}

TEST(LaunchPlan, ParsesPtxasReports) {
  auto r = parsePtxasReport(
      "ptxas info    : Function properties for k\n"
      "    8 bytes stack frame, 4 bytes spill stores, 4 bytes spill loads\n"
      "ptxas info    : Used 40 registers, used 1 barriers, 128 bytes smem\n");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->registers, 40);
  EXPECT_EQ(r->sharedBytes, 128);
  EXPECT_EQ(r->localBytes, 8);
  EXPECT_EQ(r->spillBytes, 4);
  EXPECT_FALSE(parsePtxasReport("nothing here"));
  EXPECT_FALSE(builtinDevice("sm_75"));
}
