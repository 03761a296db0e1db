//===- Kernel.h - A compiled kernel, loaded and launched --------*- C++ -*-===//
//
// Part of the softmax kernel compiler.
//
// The one implementation of the launch rules (docs/abi.md): a kernel's PTX
// is loaded into a CUDA context, its grid derived from the driver's
// occupancy query, and it is launched on a caller's stream, cooperatively
// where its blocks wait for each other. Errors are values, never exits or
// prints. softmax-run and the C API (rowred_runtime.h) are built on it.
//
//===----------------------------------------------------------------------===//

#ifndef ROWRED_RUNTIME_KERNEL_H
#define ROWRED_RUNTIME_KERNEL_H

#include "rowred/Runtime/CudaDriver.h"
#include "rowred/Runtime/KernelSpec.h"
#include "rowred/Runtime/LaunchPlan.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace rowred::runtime {

/// The CUDA driver, loaded and initialized once per process; null (with
/// `error`) when there is none.
const CudaDriver *getDriver(std::string &error);

/// Reads what occupancy depends on from device `device`.
std::optional<DeviceInfo> queryDevice(const CudaDriver &cu, CUdevice device,
                                      std::string &error);

/// How the kernel maps rows to blocks, from its metadata.
KernelShape shapeOf(const KernelSpec &spec);

/// The largest grid of a kernel with column sums for `rows` rows when
/// `resident` blocks fit on the device at once (its persistent grid): the
/// partial rows its workspace holds, one per block (or cluster: its
/// clusters are at most as many).
inline int64_t columnSumsGrid(int64_t resident, int64_t rows) {
  return std::max<int64_t>(1, std::min(resident, rows));
}

/// The grid to launch for `rows` rows when `resident` blocks fit on the
/// device at once: `requested` (when non-zero) if the kernel can run on it,
/// else the plan's; 0 (with `error`) when the kernel cannot run either way.
int64_t chooseGrid(const KernelSpec &spec, const LaunchPlan &plan,
                   int64_t resident, int64_t rows, int64_t requested,
                   std::string &error);

/// The arguments of one launch (docs/abi.md): the operands' device
/// addresses, the shape, the row strides in elements and, for chunks
/// kernels and those with column sums, a workspace of Kernel::workspaceBytes
/// that is zero (and that each launch leaves zero where a launch needs it:
/// column sums' partial rows are written before they are read).
struct LaunchArgs {
  /// One per operand, in the kernel's order (KernelSpec::operands).
  std::vector<CUdeviceptr> operands;
  /// One per input and output, in the same order.
  std::vector<int64_t> rowStrides;
  int64_t rows = 0, cols = 0;
  CUdeviceptr workspace = 0;
  /// Blocks to launch instead of the derived grid (0: derived); checked
  /// against what the kernel can run on.
  int64_t grid = 0;

  /// The arguments of a kernel of one input `x` and one output `y`.
  static LaunchArgs pair(CUdeviceptr x, CUdeviceptr y, int64_t rows,
                         int64_t cols, int64_t xRowStride, int64_t yRowStride,
                         CUdeviceptr workspace = 0, int64_t grid = 0) {
    return {{x, y}, {xRowStride, yRowStride}, rows, cols, workspace, grid};
  }
};

/// Why `a` does not fit `spec`'s operands (their number, null addresses of
/// a launch of rows, row strides shorter than a row), or empty.
std::string checkOperands(const KernelSpec &spec, const LaunchArgs &a);

/// A kernel loaded into the CUDA context that was current when it was
/// loaded, with its resources and occupancy there.
class Kernel {
public:
  /// Loads `jsonPath` (the kernel's launch metadata) and the PTX it names
  /// into the primary context of device `device` (which PyTorch and the
  /// CUDA runtime use), or with `device` -1 into the calling thread's
  /// current context; null (with `error`) when there is no such context,
  /// the files are not a kernel, the driver cannot JIT the PTX or the
  /// device cannot run the kernel.
  static std::unique_ptr<Kernel> load(const std::string &jsonPath, int device,
                                      std::string &error);
  /// The same for metadata already read.
  static std::unique_ptr<Kernel> load(KernelSpec spec, int device,
                                      std::string &error);
  ~Kernel();
  Kernel(const Kernel &) = delete;
  Kernel &operator=(const Kernel &) = delete;

  const KernelSpec &spec() const { return kernelSpec; }
  const DeviceInfo &device() const { return info; }
  const KernelResources &resources() const { return res; }
  CUfunction function() const { return func; }
  CUcontext context() const { return ctx; }
  /// Resident blocks per SM from the driver's occupancy query.
  int blocksPerSM() const { return perSM; }
  /// Resident clusters from the driver (cluster kernels), else 0.
  int residentClusters() const { return clusters; }
  /// Blocks resident at once on the whole device.
  int64_t residentBlocks() const { return int64_t(perSM) * info.sms; }

  /// Why rows of `cols` elements cannot run on this kernel, or empty.
  std::string checkCols(int64_t cols) const;
  /// The kernel a launch over `rows` x `cols` takes: the first of the
  /// variants (KernelSpec::variants) for at least `rows` rows that takes
  /// rows of `cols` and can launch them (its chunks of a row all resident
  /// at once), else this one.
  const Kernel &forShape(int64_t rows, int64_t cols) const;
  /// The loaded variants, by their rows.
  const std::vector<std::unique_ptr<Kernel>> &variants() const {
    return variantKernels;
  }
  /// Bytes of zeroed workspace a launch over `rows` x `cols` needs (0 for
  /// kernels without one): that of the kernel it takes (forShape).
  int64_t workspaceBytes(int64_t rows, int64_t cols) const;
  /// The launch over `rows` x `cols` of the kernel it takes (forShape), with
  /// its grid (`requested` blocks when non-zero); nullopt (with `error`)
  /// when the kernel cannot run it.
  std::optional<LaunchPlan> plan(int64_t rows, int64_t cols, int64_t requested,
                                 std::string &error) const;
  /// Launches the kernel the shape takes (forShape) on `stream`
  /// (asynchronously), in the kernel's context (made
  /// current on this thread if it is not); false (with `error`) when the
  /// arguments are invalid or the driver refuses. An empty problem (no rows)
  /// launches nothing.
  bool launch(CUstream stream, const LaunchArgs &args,
              std::string &error) const;

private:
  Kernel() = default;
  /// Loads the variants `k`'s metadata lists, from next to its PTX.
  static bool loadVariants(Kernel &k, int device, std::string &error);
  /// This kernel's launch over `rows` x `cols` on the grid derived from
  /// the device (grid 0: it cannot launch them).
  LaunchPlan derivedPlan(int64_t rows, int64_t cols) const;
  /// plan() of this kernel itself, which forShape took.
  std::optional<LaunchPlan> planTaken(int64_t rows, int64_t cols,
                                      int64_t requested,
                                      std::string &error) const;

  const CudaDriver *cu = nullptr;
  KernelSpec kernelSpec;
  DeviceInfo info;
  KernelResources res;
  CUcontext ctx = nullptr;
  /// The device whose primary context was retained (-1: none).
  CUdevice retained = -1;
  CUmodule module = nullptr;
  CUfunction func = nullptr;
  int perSM = 0, clusters = 0;
  std::vector<std::unique_ptr<Kernel>> variantKernels;
};

} // namespace rowred::runtime

#endif // ROWRED_RUNTIME_KERNEL_H
