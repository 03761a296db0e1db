//===- LaunchPlan.cpp - Persistent grid from occupancy --------------------===//
//
// Part of the softmax kernel compiler.
//
//===----------------------------------------------------------------------===//

#include "rowred/Runtime/LaunchPlan.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <regex>
#include <sstream>
#include <sys/wait.h>

using namespace rowred::runtime;

std::optional<DeviceInfo>
rowred::runtime::builtinDevice(const std::string &chip) {
  DeviceInfo d;
  if (chip == "sm_80") {
    d.name = "sm_80 (A100 SXM, built-in description)";
    d.computeMajor = 8;
    d.sms = 108;
    d.sharedPerSM = 167936; // 164 KiB
  } else if (chip == "sm_90") {
    d.name = "sm_90 (H100/H200 SXM, built-in description)";
    d.computeMajor = 9;
    d.sms = 132;
    d.sharedPerSM = 233472; // 228 KiB
  } else {
    return std::nullopt;
  }
  d.registersPerSM = 65536;
  d.sharedReservedPerBlock = 1024;
  d.maxThreadsPerSM = 2048;
  d.maxBlocksPerSM = 32;
  return d;
}

std::optional<KernelResources>
rowred::runtime::parsePtxasReport(const std::string &report) {
  std::smatch m;
  KernelResources r;
  if (!std::regex_search(report, m, std::regex("Used (\\d+) registers")))
    return std::nullopt;
  r.registers = std::stoi(m[1]);
  if (std::regex_search(report, m, std::regex("(\\d+) bytes smem")))
    r.sharedBytes = std::stoi(m[1]);
  if (std::regex_search(report, m, std::regex("(\\d+) bytes stack frame")))
    r.localBytes = std::stoi(m[1]);
  if (std::regex_search(report, m, std::regex("(\\d+) bytes spill stores")))
    r.spillBytes = std::stoi(m[1]);
  r.source = "ptxas -v";
  return r;
}

std::optional<KernelResources>
rowred::runtime::runPtxas(const std::string &ptxas, const std::string &ptxPath,
                          const std::string &chip, std::string &error) {
  std::string cmd = "'" + ptxas + "' -arch=" + chip + " -v '" + ptxPath +
                    "' -o /dev/null 2>&1";
  FILE *pipe = popen(cmd.c_str(), "r");
  if (!pipe) {
    error = "cannot run ptxas";
    return std::nullopt;
  }
  std::string out;
  std::array<char, 4096> buffer;
  size_t n;
  while ((n = fread(buffer.data(), 1, buffer.size(), pipe)) > 0)
    out.append(buffer.data(), n);
  int status = pclose(pipe);
  if (status != 0) {
    error = "ptxas failed on '" + ptxPath + "':\n" + out;
    return std::nullopt;
  }
  std::optional<KernelResources> r = parsePtxasReport(out);
  if (!r)
    error = "cannot read ptxas' resource report:\n" + out;
  return r;
}

LaunchPlan rowred::runtime::planLaunch(const DeviceInfo &device,
                                       const KernelResources &res,
                                       const KernelShape &shape, int64_t rows,
                                       int64_t driverClusters, int64_t cols) {
  LaunchPlan p;
  int threads = shape.threads;
  p.threads = threads;
  p.rowsPerBlock = shape.rowsPerBlock;
  p.clusterBlocks = shape.clusterBlocks;
  p.dynamicSharedBytes = shape.dynamicSharedBytes;
  p.gridPerRowGroup = shape.gridPerRowGroup;
  p.chunkElements = shape.chunkElements;
  if (p.chunkElements > 0)
    p.chunksPerRow =
        std::max<int64_t>(1, (cols + p.chunkElements - 1) / p.chunkElements);
  int warps = (threads + 31) / 32;
  int gran = device.registerGranularity;
  int regsPerWarp = (std::max(res.registers, 1) * 32 + gran - 1) / gran * gran;
  p.byRegisters = device.registersPerSM / (regsPerWarp * warps);
  int64_t sharedPerBlock = res.sharedBytes + shape.dynamicSharedBytes +
                           device.sharedReservedPerBlock;
  p.byShared = device.sharedPerSM / sharedPerBlock;
  p.byThreads = device.maxThreadsPerSM / threads;
  p.byBlocks = device.maxBlocksPerSM;
  p.blocksPerSM =
      std::min({p.byRegisters, p.byShared, p.byThreads, p.byBlocks});
  int64_t resident = int64_t(p.blocksPerSM) * device.sms;
  if (p.clusterBlocks > 1) {
    p.clustersFromDriver = driverClusters > 0;
    p.residentClusters =
        p.clustersFromDriver ? driverClusters : resident / p.clusterBlocks;
  }
  p.grid = p.gridFor(resident, rows);
  return p;
}

int64_t LaunchPlan::gridFor(int64_t residentBlocks, int64_t rows) const {
  if (chunkElements > 0)
    return chunksPerRow > residentBlocks
               ? 0
               : std::min(std::max<int64_t>(rows, 1) * chunksPerRow,
                          residentBlocks);
  if (gridPerRowGroup)
    return clusterBlocks *
           std::max<int64_t>(1, (rows + rowsPerBlock - 1) / rowsPerBlock);
  if (clusterBlocks > 1)
    return clusterBlocks *
           std::max<int64_t>(1, std::min(rows, residentClusters));
  int64_t groups = (rows + rowsPerBlock - 1) / rowsPerBlock;
  return std::max<int64_t>(1, std::min(groups, residentBlocks));
}

std::string LaunchPlan::explain(const DeviceInfo &device,
                                const KernelResources &res,
                                int64_t rows) const {
  std::ostringstream os;
  int warps = (threads + 31) / 32;
  os << "device: " << device.name << ", " << device.sms << " SMs, "
     << device.registersPerSM << " registers/SM, " << device.sharedPerSM
     << " B shared/SM, " << device.maxThreadsPerSM << " threads/SM, "
     << device.maxBlocksPerSM << " blocks/SM\n";
  os << "kernel: " << threads << " threads (" << warps << " warps), "
     << res.registers << " registers/thread, " << res.sharedBytes
     << " B shared/block, " << res.localBytes << " B local, " << res.spillBytes
     << " B spilled (from " << res.source << ")\n";
  os << "blocks per SM allowed by registers: " << device.registersPerSM
     << " / (" << warps << " warps x " << res.registers
     << " registers x 32, rounded up to " << device.registerGranularity
     << " per warp) = " << byRegisters << "\n";
  os << "blocks per SM allowed by shared memory: " << device.sharedPerSM
     << " / (" << res.sharedBytes;
  if (dynamicSharedBytes > 0)
    os << " + " << dynamicSharedBytes << " dynamic";
  os << " + " << device.sharedReservedPerBlock << " reserved) = " << byShared
     << "\n";
  os << "blocks per SM allowed by threads: " << device.maxThreadsPerSM << " / "
     << threads << " = " << byThreads << "\n";
  os << "blocks per SM allowed by the block limit: " << byBlocks << "\n";
  os << "resident blocks per SM: " << blocksPerSM << "\n";
  if (clusterBlocks > 1) {
    os << "clusters of " << clusterBlocks
       << " blocks (each row split over one cluster); resident clusters: "
       << residentClusters
       << (clustersFromDriver
               ? " (from the driver)"
               : " (estimated as " + std::to_string(blocksPerSM) + " x " +
                     std::to_string(device.sms) + " / " +
                     std::to_string(clusterBlocks) +
                     "; the GPC layout can lower it)")
       << "\n";
    if (gridPerRowGroup) {
      os << "clusters launched: one per row (grid \"rows\" in the "
            "metadata) = "
         << grid / clusterBlocks << ", grid " << grid
         << " blocks; the scheduler starts a cluster as one ends\n";
      return os.str();
    }
    os << "clusters launched: min(" << rows << " rows, " << residentClusters
       << ") = " << grid / clusterBlocks << ", grid " << grid
       << " blocks (cluster c handles rows c, c + " << grid / clusterBlocks
       << ", ...)\n";
    return os.str();
  }
  if (chunkElements > 0) {
    // No more chunks than blocks: block i takes chunk i (ChunksEmitter).
    bool oneEach = grid != 0 && rows * chunksPerRow <= grid;
    os << "chunks of " << chunkElements << " elements, " << chunksPerRow
       << " per row, "
       << (oneEach ? "one per block (block i takes chunk i)"
                   : "each block taking the next by ticket")
       << "; resident blocks: " << blocksPerSM << " x " << device.sms << " = "
       << int64_t(blocksPerSM) * device.sms << "\n";
    if (grid == 0) {
      os << "blocks launched: none: a row's " << chunksPerRow
         << " chunks must all be resident at once\n";
      return os.str();
    }
    os << "blocks launched: min(" << rows << " rows x " << chunksPerRow
       << " chunks, " << blocksPerSM << " x " << device.sms << ") = " << grid
       << ", launched cooperatively (the blocks of a row wait for each "
          "other's partial results)\n";
    return os.str();
  }
  if (rowsPerBlock > 1)
    os << "rows per block: " << rowsPerBlock << " (" << threads / rowsPerBlock
       << " threads per row, no block barrier)\n";
  if (gridPerRowGroup) {
    os << "programs launched: one per "
       << (rowsPerBlock > 1
               ? "group of " + std::to_string(rowsPerBlock) + " rows"
               : std::string("row"))
       << " (grid \"rows\" in the metadata) = " << grid
       << "; the scheduler starts a block as one ends, " << blocksPerSM << " x "
       << device.sms << " SMs at once\n";
    return os.str();
  }
  if (rowsPerBlock > 1) {
    int64_t groups = (rows + rowsPerBlock - 1) / rowsPerBlock;
    os << "programs launched: min(" << groups << " groups of " << rowsPerBlock
       << " rows, " << blocksPerSM << " x " << device.sms << " SMs) = " << grid
       << " (each handles row groups b, b + " << grid << ", ...)\n";
    return os.str();
  }
  os << "programs launched: min(" << rows << " rows, " << blocksPerSM << " x "
     << device.sms << " SMs) = " << grid << " (each handles rows b, b + "
     << grid << ", ...)\n";
  return os.str();
}
