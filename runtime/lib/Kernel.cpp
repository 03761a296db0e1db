//===- Kernel.cpp - A compiled kernel, loaded and launched ----------------===//
//
// Part of the softmax kernel compiler.
//
//===----------------------------------------------------------------------===//

#include "rowred/Runtime/Kernel.h"

#include <algorithm>
#include <mutex>
#include <vector>

using namespace rowred::runtime;

const CudaDriver *rowred::runtime::getDriver(std::string &error) {
  static CudaDriver driver;
  static std::string loadError;
  static std::once_flag once;
  std::call_once(once, [] {
    if (!driver.load(loadError))
      return;
    CUresult r = driver.cuInit(0);
    if (r != CUDA_SUCCESS)
      loadError = "cannot initialize the CUDA driver: " + driver.describe(r);
  });
  if (!loadError.empty()) {
    error = loadError;
    return nullptr;
  }
  return &driver;
}

std::optional<DeviceInfo> rowred::runtime::queryDevice(const CudaDriver &cu,
                                                       CUdevice device,
                                                       std::string &error) {
  DeviceInfo info;
  char name[256] = {0};
  CUresult r = cu.cuDeviceGetName(name, sizeof(name), device);
  auto attr = [&](CUdevice_attribute a) {
    int v = 0;
    if (r == CUDA_SUCCESS)
      r = cu.cuDeviceGetAttribute(&v, a, device);
    return v;
  };
  info.name = name;
  info.computeMajor = attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
  info.computeMinor = attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
  info.sms = attr(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
  info.registersPerSM =
      attr(CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR);
  info.sharedPerSM =
      attr(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR);
  info.sharedReservedPerBlock =
      attr(CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK);
  info.maxThreadsPerSM =
      attr(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR);
  info.maxBlocksPerSM = attr(CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR);
  if (r != CUDA_SUCCESS) {
    error = "cannot query the CUDA device: " + cu.describe(r);
    return std::nullopt;
  }
  return info;
}

/// JIT-compiles `spec`'s PTX into `module` and finds its entry point; false
/// (with `error`, the JIT logs included) on failure.
static bool jitModule(const CudaDriver &cu, const KernelSpec &spec,
                      CUmodule &module, CUfunction &func, std::string &error) {
  std::vector<char> errorLog(16384, 0), infoLog(16384, 0);
  CUjit_option options[] = {
      CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
      CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES,
      CU_JIT_LOG_VERBOSE};
  void *values[] = {errorLog.data(), reinterpret_cast<void *>(errorLog.size()),
                    infoLog.data(), reinterpret_cast<void *>(infoLog.size()),
                    reinterpret_cast<void *>(1)};
  CUresult r =
      cu.cuModuleLoadDataEx(&module, spec.ptx.c_str(), 5, options, values);
  if (r != CUDA_SUCCESS) {
    error = "the CUDA driver cannot JIT-compile '" + spec.ptxPath +
            "': " + cu.describe(r) + "\nJIT error log:\n" + errorLog.data() +
            "\nJIT info log:\n" + infoLog.data();
    return false;
  }
  r = cu.cuModuleGetFunction(&func, module, spec.kernel.c_str());
  if (r != CUDA_SUCCESS) {
    error = "'" + spec.ptxPath + "' has no kernel named '" + spec.kernel +
            "': " + cu.describe(r);
    return false;
  }
  return true;
}

/// Opts the kernel into what its launches need beyond the defaults (more
/// than 48 KiB of shared memory, clusters beyond the portable 8 blocks),
/// before both the occupancy query and the launch; false (with `error`) when
/// the device refuses.
static bool optIn(const CudaDriver &cu, const KernelSpec &spec,
                  const DeviceInfo &info, CUfunction func, std::string &error) {
  if (spec.dynamicSharedBytes > 0) {
    CUresult r = cu.cuFuncSetAttribute(
        func, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
        static_cast<int>(spec.dynamicSharedBytes));
    if (r != CUDA_SUCCESS) {
      error = "kernel '" + spec.kernel + "' needs " +
              std::to_string(spec.dynamicSharedBytes) +
              " bytes of dynamic shared memory per block, more than " +
              info.name + " allows: " + cu.describe(r);
      return false;
    }
  }
  if (spec.clusterBlocks > 8) {
    CUresult r = cu.cuFuncSetAttribute(
        func, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1);
    if (r != CUDA_SUCCESS) {
      error = "kernel '" + spec.kernel + "' needs clusters of " +
              std::to_string(spec.clusterBlocks) +
              " blocks, but the driver refuses non-portable cluster sizes "
              "on this device: " +
              cu.describe(r);
      return false;
    }
  }
  return true;
}

/// Reads the kernel's resources and occupancy from the driver into `k`.
static bool queryOccupancy(const CudaDriver &cu, const KernelSpec &spec,
                           const DeviceInfo &info, CUfunction func,
                           KernelResources &res, int &perSM, int &clusters,
                           std::string &error) {
  CUresult r = CUDA_SUCCESS;
  auto get = [&](CUfunction_attribute a) {
    int v = 0;
    if (r == CUDA_SUCCESS)
      r = cu.cuFuncGetAttribute(&v, a, func);
    return v;
  };
  res.registers = get(CU_FUNC_ATTRIBUTE_NUM_REGS);
  res.sharedBytes = get(CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES);
  res.localBytes = get(CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES);
  res.source = "the CUDA driver after JIT";
  int maxThreads = get(CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
  if (r != CUDA_SUCCESS) {
    error = "cannot query kernel '" + spec.kernel + "': " + cu.describe(r);
    return false;
  }
  if (maxThreads < spec.blockThreads) {
    error = "kernel '" + spec.kernel + "' cannot launch " +
            std::to_string(spec.blockThreads) + " threads per block on " +
            info.name + " (at most " + std::to_string(maxThreads) +
            " with its " + std::to_string(res.registers) + " registers)";
    return false;
  }
  r = cu.cuOccupancyMaxActiveBlocksPerMultiprocessor(
      &perSM, func, spec.blockThreads,
      static_cast<size_t>(spec.dynamicSharedBytes));
  if (r == CUDA_SUCCESS && spec.clusterBlocks > 1) {
    CUlaunchConfig config = {};
    config.gridDimX = spec.clusterBlocks;
    config.gridDimY = config.gridDimZ = 1;
    config.blockDimX = spec.blockThreads;
    config.blockDimY = config.blockDimZ = 1;
    config.sharedMemBytes = static_cast<unsigned>(spec.dynamicSharedBytes);
    r = cu.cuOccupancyMaxActiveClusters(&clusters, func, &config);
    if (r == CUDA_SUCCESS && clusters < 1) {
      error = "kernel '" + spec.kernel + "' needs clusters of " +
              std::to_string(spec.clusterBlocks) + " blocks, which " +
              info.name + " cannot make resident";
      return false;
    }
  }
  if (r != CUDA_SUCCESS) {
    error = "cannot query the occupancy of kernel '" + spec.kernel +
            "': " + cu.describe(r);
    return false;
  }
  if (perSM < 1) {
    error = "kernel '" + spec.kernel + "' cannot be resident on " + info.name;
    return false;
  }
  return true;
}

std::unique_ptr<Kernel> Kernel::load(const std::string &jsonPath, int device,
                                     std::string &error) {
  std::optional<KernelSpec> spec = KernelSpec::load(jsonPath, error);
  if (!spec)
    return nullptr;
  return load(std::move(*spec), device, error);
}

/// Makes device `ordinal`'s primary context current on this thread, retained
/// once for `k`'s lifetime.
static CUresult usePrimaryContext(const CudaDriver &cu, int ordinal,
                                  CUdevice &retained, CUcontext &ctx) {
  CUdevice device = 0;
  CUresult r = cu.cuDeviceGet(&device, ordinal);
  if (r == CUDA_SUCCESS)
    r = cu.cuDevicePrimaryCtxRetain(&ctx, device);
  if (r != CUDA_SUCCESS)
    return r;
  retained = device;
  return cu.cuCtxSetCurrent(ctx);
}

std::unique_ptr<Kernel> Kernel::load(KernelSpec spec, int device,
                                     std::string &error) {
  std::unique_ptr<Kernel> k(new Kernel());
  k->cu = getDriver(error);
  if (!k->cu)
    return nullptr;
  k->kernelSpec = std::move(spec);
  const CudaDriver &cu = *k->cu;
  CUresult r = device >= 0 ? usePrimaryContext(cu, device, k->retained, k->ctx)
                           : cu.cuCtxGetCurrent(&k->ctx);
  if (r == CUDA_SUCCESS && !k->ctx) {
    error = "no CUDA context is current on this thread: make one current, "
            "or name the device";
    return nullptr;
  }
  CUdevice current = 0;
  if (r == CUDA_SUCCESS)
    r = cu.cuCtxGetDevice(&current);
  if (r != CUDA_SUCCESS) {
    error = "cannot use the CUDA context of device " + std::to_string(device) +
            ": " + cu.describe(r);
    return nullptr;
  }
  std::optional<DeviceInfo> info = queryDevice(cu, current, error);
  if (!info)
    return nullptr;
  k->info = std::move(*info);
  const KernelSpec &s = k->kernelSpec;
  if (!jitModule(cu, s, k->module, k->func, error) ||
      !optIn(cu, s, k->info, k->func, error) ||
      !queryOccupancy(cu, s, k->info, k->func, k->res, k->perSM, k->clusters,
                      error) ||
      !loadVariants(*k, device, error))
    return nullptr;
  return k;
}

/// Why `variant` cannot stand in for `main` (another op, types or
/// operands, or variants of its own), or empty.
static std::string variantProblem(const KernelSpec &main,
                                  const KernelSpec &variant) {
  bool sameOperands =
      main.operands.size() == variant.operands.size() &&
      std::equal(
          main.operands.begin(), main.operands.end(), variant.operands.begin(),
          [](const KernelOperand &a, const KernelOperand &b) {
            return a.name == b.name && a.role == b.role && a.type == b.type;
          });
  if (main.op != variant.op || main.inputType != variant.inputType ||
      main.outputType != variant.outputType || !sameOperands ||
      main.epsilon != variant.epsilon ||
      main.ignoreIndex != variant.ignoreIndex ||
      main.labelSmoothing != variant.labelSmoothing ||
      main.safe != variant.safe)
    return "computes another op, or takes other operands";
  if (!variant.variants.empty())
    return "has variants of its own";
  return "";
}

bool Kernel::loadVariants(Kernel &k, int device, std::string &error) {
  for (const KernelVariant &v : k.kernelSpec.variants) {
    std::string path = k.kernelSpec.variantPath(v);
    std::optional<KernelSpec> spec = KernelSpec::load(path, error);
    if (!spec) {
      error = "kernel '" + k.kernelSpec.kernel + "''s variant for " +
              std::to_string(v.maxRows) + " rows: " + error;
      return false;
    }
    if (std::string problem = variantProblem(k.kernelSpec, *spec);
        !problem.empty()) {
      error = "kernel '" + k.kernelSpec.kernel + "''s variant '" + path + "' " +
              problem;
      return false;
    }
    std::unique_ptr<Kernel> variant = load(std::move(*spec), device, error);
    if (!variant)
      return false;
    k.variantKernels.push_back(std::move(variant));
  }
  return true;
}

const Kernel &Kernel::forShape(int64_t rows, int64_t cols) const {
  for (size_t i = 0; i < variantKernels.size(); ++i) {
    const Kernel &variant = *variantKernels[i];
    // A variant stands in only where it can launch: one of smaller chunks
    // cuts long rows into more blocks than can wait for each other on the
    // device, where the main kernel's larger chunks may still fit.
    if (takesVariant(kernelSpec.variants[i], variant.spec(), rows, cols) &&
        variant.derivedPlan(rows, cols).grid != 0)
      return variant;
  }
  return *this;
}

Kernel::~Kernel() {
  if (module)
    cu->cuModuleUnload(module);
  if (retained >= 0)
    cu->cuDevicePrimaryCtxRelease_v2(retained);
}

int64_t Kernel::workspaceBytes(int64_t rows, int64_t cols) const {
  // The kernel the launch takes: a variant of smaller chunks needs more.
  const Kernel &kernel = forShape(rows, cols);
  const KernelSpec &taken = kernel.kernelSpec;
  if (taken.hasColumnSums())
    return taken.columnSumsWorkspaceBytes(
        columnSumsGrid(kernel.residentBlocks(), rows), cols);
  return taken.chunkElements > 0 ? taken.chunkWorkspaceBytes(rows, cols) : 0;
}

KernelShape rowred::runtime::shapeOf(const KernelSpec &spec) {
  return {static_cast<int>(spec.blockThreads),
          spec.rowsPerBlock,
          spec.clusterBlocks,
          spec.dynamicSharedBytes,
          spec.gridPerRowGroup,
          spec.chunkElements};
}

int64_t rowred::runtime::chooseGrid(const KernelSpec &spec,
                                    const LaunchPlan &plan, int64_t resident,
                                    int64_t rows, int64_t requested,
                                    std::string &error) {
  if (!requested) {
    int64_t grid = plan.gridFor(resident, rows);
    if (grid == 0)
      error = "kernel '" + spec.kernel + "' cuts rows into " +
              std::to_string(plan.chunksPerRow) +
              " chunks, whose blocks wait for each other, but only " +
              std::to_string(resident) +
              " fit on the device at once; compile it with a larger chunk "
              "(the plan request's block and chunk_stage)";
    return grid;
  }
  if (requested < 1 || requested % spec.clusterBlocks != 0)
    error = "the grid must be a positive multiple of the kernel's cluster "
            "size (" +
            std::to_string(spec.clusterBlocks) + ")";
  else if (spec.blocksWait() && requested > resident)
    error = "a grid of " + std::to_string(requested) +
            " exceeds the blocks that can be resident at once (" +
            std::to_string(resident) + "), which a " + spec.strategy +
            " kernel's launch needs";
  else if (spec.hasColumnSums() &&
           requested / spec.clusterBlocks > columnSumsGrid(resident, rows))
    error = "a grid of " + std::to_string(requested) +
            " is larger than the kernel's workspace holds partial sums for "
            "(" +
            std::to_string(columnSumsGrid(resident, rows)) +
            " blocks or clusters: the resident ones, at most one per row)";
  else if (spec.chunkElements > 0 && requested < plan.chunksPerRow)
    error = "a grid of " + std::to_string(requested) + " is less than the " +
            std::to_string(plan.chunksPerRow) +
            " chunks of a row, whose blocks wait for each other";
  return error.empty() ? requested : 0;
}

LaunchPlan Kernel::derivedPlan(int64_t rows, int64_t cols) const {
  LaunchPlan p =
      planLaunch(info, res, shapeOf(kernelSpec), rows, clusters, cols);
  // The plan's arithmetic with the driver's blocks per SM.
  p.grid = p.gridFor(residentBlocks(), rows);
  return p;
}

std::optional<LaunchPlan> Kernel::plan(int64_t rows, int64_t cols,
                                       int64_t requested,
                                       std::string &error) const {
  return forShape(rows, cols).planTaken(rows, cols, requested, error);
}

std::optional<LaunchPlan> Kernel::planTaken(int64_t rows, int64_t cols,
                                            int64_t requested,
                                            std::string &error) const {
  LaunchPlan p = derivedPlan(rows, cols);
  p.grid = chooseGrid(kernelSpec, p, residentBlocks(), rows, requested, error);
  if (p.grid == 0)
    return std::nullopt;
  return p;
}

std::string rowred::runtime::checkOperands(const KernelSpec &spec,
                                          const LaunchArgs &a) {
  int64_t matrices = spec.count(KernelOperand::Role::Input) +
                     spec.count(KernelOperand::Role::Output);
  if (a.operands.size() != spec.operands.size() ||
      int64_t(a.rowStrides.size()) != matrices)
    return "kernel '" + spec.kernel + "' takes " +
           std::to_string(spec.operands.size()) + " operands and " +
           std::to_string(matrices) + " row strides, not " +
           std::to_string(a.operands.size()) + " and " +
           std::to_string(a.rowStrides.size());
  // A launch of no rows touches no operand: an empty tensor's null address
  // is fine there.
  for (size_t i = 0; i < a.operands.size() && a.rows > 0; ++i)
    if (a.operands[i] == 0)
      return "operand '" + spec.operands[i].name + "' is a null address";
  for (size_t i = 0; i < a.rowStrides.size(); ++i)
    if (a.rowStrides[i] < a.cols)
      return "the row stride of '" + spec.operands[i].name + "' (" +
             std::to_string(a.rowStrides[i]) + ") is less than the " +
             std::to_string(a.cols) + " columns";
  return "";
}

bool Kernel::launch(CUstream stream, const LaunchArgs &a,
                    std::string &error) const {
  if (const Kernel &taken = forShape(a.rows, a.cols); &taken != this)
    return taken.launch(stream, a, error);
  error = kernelSpec.checkShape(a.rows, a.cols);
  if (error.empty())
    error = checkOperands(kernelSpec, a);
  if (error.empty() && kernelSpec.blocksWait() && !a.workspace && a.rows > 0)
    error = "kernel '" + kernelSpec.kernel + "' needs a zeroed workspace of " +
            std::to_string(workspaceBytes(a.rows, a.cols)) + " bytes";
  if (!error.empty())
    return false;
  if (a.rows == 0)
    return true;
  std::optional<LaunchPlan> p = planTaken(a.rows, a.cols, a.grid, error);
  if (!p)
    return false;
  CUcontext current = nullptr;
  CUresult r = cu->cuCtxGetCurrent(&current);
  if (r == CUDA_SUCCESS && current != ctx)
    r = cu->cuCtxSetCurrent(ctx);
  if (r != CUDA_SUCCESS) {
    error = "cannot make kernel '" + kernelSpec.kernel +
            "''s context current: " + cu->describe(r);
    return false;
  }
  // docs/abi.md: the operands' addresses, rows, cols, the row strides, the
  // workspace (which kernels without one ignore).
  std::vector<CUdeviceptr> pointers = a.operands;
  std::vector<int64_t> strides = a.rowStrides;
  int64_t rows = a.rows, cols = a.cols;
  CUdeviceptr workspace = a.workspace;
  std::vector<void *> params;
  for (CUdeviceptr &pointer : pointers)
    params.push_back(&pointer);
  params.push_back(&rows);
  params.push_back(&cols);
  for (int64_t &stride : strides)
    params.push_back(&stride);
  params.push_back(&workspace);
  unsigned grid = static_cast<unsigned>(p->grid);
  unsigned threads = static_cast<unsigned>(kernelSpec.blockThreads);
  unsigned shared = static_cast<unsigned>(kernelSpec.dynamicSharedBytes);
  // Blocks that wait for each other must be resident at once: a cooperative
  // launch guarantees it, or fails.
  r = kernelSpec.blocksWait()
          ? cu->cuLaunchCooperativeKernel(func, grid, 1, 1, threads, 1, 1,
                                          shared, stream, params.data())
          : cu->cuLaunchKernel(func, grid, 1, 1, threads, 1, 1, shared, stream,
                               params.data(), nullptr);
  if (r != CUDA_SUCCESS) {
    error =
        "cannot launch kernel '" + kernelSpec.kernel + "': " + cu->describe(r);
    return false;
  }
  return true;
}
