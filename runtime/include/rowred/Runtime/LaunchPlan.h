//===- LaunchPlan.h - Persistent grid from occupancy ------------*- C++ -*-===//
//
// Part of the softmax kernel compiler.
//
//===----------------------------------------------------------------------===//

#ifndef ROWRED_RUNTIME_LAUNCHPLAN_H
#define ROWRED_RUNTIME_LAUNCHPLAN_H

#include <cstdint>
#include <optional>
#include <string>

namespace rowred::runtime {

/// What occupancy depends on, per streaming multiprocessor.
struct DeviceInfo {
  std::string name;
  int computeMajor = 0, computeMinor = 0;
  int sms = 0;
  int registersPerSM = 0;
  int sharedPerSM = 0; ///< Bytes usable by blocks on one SM.
  int sharedReservedPerBlock = 0;
  int maxThreadsPerSM = 0;
  int maxBlocksPerSM = 0;
  int registerGranularity = 256; ///< Registers are allocated per warp in these.
};

/// The built-in descriptions: "sm_80" (A100 SXM) and "sm_90" (H100/H200 SXM).
std::optional<DeviceInfo> builtinDevice(const std::string &chip);

/// A kernel's resources, from the driver or from `ptxas -v`.
struct KernelResources {
  int registers = 0, sharedBytes = 0, localBytes = 0, spillBytes = 0;
  std::string source; ///< Where the numbers came from.
};

/// Parses the report of `ptxas -v` for one entry point.
std::optional<KernelResources> parsePtxasReport(const std::string &report);

/// Runs `ptxas -arch=<chip> -v` on `ptxPath`; nullopt (with `error`) when
/// ptxas is missing or fails.
std::optional<KernelResources> runPtxas(const std::string &ptxas,
                                        const std::string &ptxPath,
                                        const std::string &chip,
                                        std::string &error);

/// Resident blocks per SM allowed by each limit, and the grid.
struct LaunchPlan {
  int threads = 0;
  int64_t rowsPerBlock = 1, clusterBlocks = 1, dynamicSharedBytes = 0;
  /// One program per row group instead of the persistent grid (grid "rows").
  bool gridPerRowGroup = false;
  /// Chunks kernels (grid "chunks"): elements of a chunk, and chunks per row
  /// of the planned length; 0 otherwise.
  int64_t chunkElements = 0, chunksPerRow = 0;
  int byRegisters = 0, byShared = 0, byThreads = 0, byBlocks = 0;
  int blocksPerSM = 0;
  /// Clusters resident at once: from the driver when given, else estimated
  /// as the resident blocks over the cluster size.
  int64_t residentClusters = 0;
  bool clustersFromDriver = false;
  /// Blocks launched (a multiple of clusterBlocks); 0 when a chunks
  /// kernel's row cannot be resident at once.
  int64_t grid = 0;
  /// The grid for `rows` rows when `residentBlocks` blocks fit on the device
  /// at once (cluster kernels: residentClusters whole clusters instead;
  /// gridPerRowGroup: a block or cluster per row group, whatever fits;
  /// chunks kernels: min(rows x chunks per row, residentBlocks), 0 when a
  /// row has more chunks than blocks fit at once).
  int64_t gridFor(int64_t residentBlocks, int64_t rows) const;
  /// The derivation, as the Triton tutorial reasons about occupancy.
  std::string explain(const DeviceInfo &device, const KernelResources &res,
                      int64_t rows) const;
};

/// How a kernel maps rows to blocks (docs/abi.md).
struct KernelShape {
  int threads = 0;
  int64_t rowsPerBlock = 1, clusterBlocks = 1;
  /// Dynamic shared memory per block (the prefetch stage, the online
  /// kernel's kept tiles, a column-sum kernel's accumulators).
  int64_t dynamicSharedBytes = 0;
  /// One program per row group (grid "rows").
  bool gridPerRowGroup = false;
  /// Elements of each chunk (grid "chunks"), else 0.
  int64_t chunkElements = 0;
};

/// Derives the grid: the persistent min(ceil(rows / rows per block), SMs x
/// resident blocks per SM) blocks, or for cluster kernels min(rows, resident
/// clusters) clusters, with `driverClusters` (when positive) as the number of
/// co-resident clusters; for kernels whose metadata asks for grid "rows",
/// one block (or cluster) per row group; for chunks kernels, the resident
/// blocks, at most one per chunk of the rows of `cols` elements.
LaunchPlan planLaunch(const DeviceInfo &device, const KernelResources &res,
                      const KernelShape &shape, int64_t rows,
                      int64_t driverClusters = 0, int64_t cols = 0);

} // namespace rowred::runtime

#endif // ROWRED_RUNTIME_LAUNCHPLAN_H
