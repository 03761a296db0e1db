//===- softmax-run.cpp - JIT, launch, check and time softmax kernels ------===//
//
// Part of the softmax kernel compiler.
//
// Runs a kernel produced by softmax-opt (PTX + launch metadata, docs/abi.md)
// through the CUDA driver: JIT-compiles the PTX, derives a persistent grid
// from occupancy, checks the output against a float64 reference and times it.
// Built with the compiler, it also takes a .mlir file and compiles it
// in-process. With --cases it runs many launches of one kernel on one
// context.
//
//===----------------------------------------------------------------------===//

#include "HostData.h"
#include "Operands.h"
#include "Options.h"
#include "rowred/Runtime/CudaDriver.h"
#include "rowred/Runtime/Kernel.h"
#include "rowred/Runtime/KernelSpec.h"
#include "rowred/Runtime/LaunchPlan.h"

#ifdef SOFTMAX_RUN_WITH_COMPILER
#include "Compile.h"
#endif

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <map>
#include <sstream>
#include <unistd.h>
#include <vector>

using namespace softmax_run;
using namespace rowred::runtime;

namespace {

/// Tiny JSON writer for --json output.
class JsonOut {
public:
  void field(const std::string &key, const std::string &value) {
    sep();
    os << '"' << key << "\": \"" << value << '"';
  }
  void field(const std::string &key, double value) {
    sep();
    if (std::isfinite(value))
      os << '"' << key << "\": " << value;
    else
      os << '"' << key << "\": null";
  }
  void field(const std::string &key, int64_t value) {
    sep();
    os << '"' << key << "\": " << value;
  }
  void field(const std::string &key, bool value) {
    sep();
    os << '"' << key << "\": " << (value ? "true" : "false");
  }
  void raw(const std::string &key, const std::string &json) {
    sep();
    os << '"' << key << "\": " << json;
  }
  std::string str() const { return "{" + os.str() + "}"; }

private:
  void sep() {
    if (!first)
      os << ", ";
    first = false;
  }
  std::ostringstream os;
  bool first = true;
};

std::string findPtxas(const std::string &explicitPath) {
  if (!explicitPath.empty())
    return explicitPath;
  if (const char *path = std::getenv("PATH")) {
    std::stringstream ss(path);
    std::string dir;
    while (std::getline(ss, dir, ':'))
      if (!dir.empty() && access((dir + "/ptxas").c_str(), X_OK) == 0)
        return dir + "/ptxas";
  }
  const char *cuda = std::getenv("CUDA_PATH");
  std::string fallback =
      std::string(cuda ? cuda : "/usr/local/cuda") + "/bin/ptxas";
  return access(fallback.c_str(), X_OK) == 0 ? fallback : "";
}

/// The GPU in use: the driver, device 0's primary context (current on this
/// thread) and the kernel loaded into it by the runtime.
class Gpu {
public:
  CudaDriver cu;
  CUdevice device = 0;
  CUcontext context = nullptr;
  DeviceInfo info;
  /// The kernel of the launch at hand, one of `loaded`.
  Kernel *kernel = nullptr;
  /// Every kernel loaded, by its PTX file: the cases of --cases share them.
  std::map<std::string, std::unique_ptr<Kernel>> loaded;

  /// Loads the driver and opens device 0; on failure returns false with a
  /// message in `error`.
  bool open(std::string &error) {
    const CudaDriver *driver = getDriver(error);
    if (!driver)
      return false;
    cu = *driver;
    int count = 0;
    CUresult r = cu.cuDeviceGetCount(&count);
    if (r != CUDA_SUCCESS || count == 0) {
      error = "no CUDA device found" +
              (r != CUDA_SUCCESS ? ": " + cu.describe(r) : std::string());
      return false;
    }
    checked(cu.cuDeviceGet(&device, 0), "cuDeviceGet");
    checked(cu.cuDevicePrimaryCtxRetain(&context, device),
            "cuDevicePrimaryCtxRetain");
    checked(cu.cuCtxSetCurrent(context), "cuCtxSetCurrent");
    std::optional<DeviceInfo> queried = queryDevice(cu, device, error);
    if (!queried)
      return false;
    info = *queried;
    return true;
  }

  void checked(CUresult r, const char *what) {
    if (r != CUDA_SUCCESS)
      fatal(std::string(what) + " failed: " + cu.describe(r));
  }

  /// Loads the kernel of `spec` through the runtime (JIT, opt-ins,
  /// occupancy), exiting with the runtime's message when it cannot.
  void load(const KernelSpec &spec) {
    std::unique_ptr<Kernel> &k = loaded[spec.ptxPath];
    if (!k) {
      std::string error;
      k = Kernel::load(spec, /*device=*/-1, error);
      if (!k)
        fatal(error);
    }
    kernel = k.get();
  }

  void close() {
    kernel = nullptr;
    loaded.clear();
    cu.cuDevicePrimaryCtxRelease_v2(device);
  }
};

/// Device memory freed on scope exit.
struct DeviceBuffer {
  CudaDriver *cu = nullptr;
  CUdeviceptr ptr = 0;
  size_t bytes = 0;
  DeviceBuffer(Gpu &gpu, size_t bytes) : cu(&gpu.cu), bytes(bytes) {
    CUresult r = cu->cuMemAlloc_v2(&ptr, std::max<size_t>(bytes, 16));
    if (r != CUDA_SUCCESS)
      fatal("cannot allocate " + std::to_string(bytes) +
            " bytes on the device: " + cu->describe(r));
  }
  ~DeviceBuffer() {
    if (ptr)
      cu->cuMemFree_v2(ptr);
  }
  DeviceBuffer(const DeviceBuffer &) = delete;
  DeviceBuffer &operator=(const DeviceBuffer &) = delete;
};

struct Timing {
  double medianMs = 0, minMs = 0, maxMs = 0;
};

Timing summarize(std::vector<float> ms) {
  std::sort(ms.begin(), ms.end());
  Timing t;
  t.minMs = ms.front();
  t.maxMs = ms.back();
  size_t n = ms.size();
  t.medianMs = n % 2 ? ms[n / 2] : 0.5 * (ms[n / 2 - 1] + ms[n / 2]);
  return t;
}

/// Bytes --bench overwrites before each timed run (more than any L2), and
/// bytes of the copy that gives the ceiling.
constexpr size_t kFlushBytes = size_t(256) << 20, kCopyBytes = size_t(512)
                                                               << 20;

/// The kernel to run: its .json description, or a .mlir compiled here for
/// --cols (with --strategy and --chip), whose compile then decides the
/// strategy.
KernelSpec loadKernel(Options &opts) {
  std::string error, jsonPath = opts.kernel;
  bool isMlir = opts.kernel.size() > 5 &&
                opts.kernel.compare(opts.kernel.size() - 5, 5, ".mlir") == 0;
  if (isMlir) {
#ifdef SOFTMAX_RUN_WITH_COMPILER
    if (opts.cols == 0)
      usageError("compiling a .mlir needs --cols (the block size follows it)");
    CompileRequest req{
        opts.kernel, opts.cols, opts.strategy.empty() ? "auto" : opts.strategy,
        opts.chip.empty() ? "sm_90" : opts.chip, opts.compileCache};
    if (!compileMlir(req, jsonPath, error))
      fatal(error);
    opts.strategy.clear(); // chosen by the compile
#else
    usageError("this softmax-run was built without the compiler "
               "(SOFTMAX_RUNNER_ONLY); give a .json kernel description "
               "written by softmax-opt");
#endif
  }
  std::optional<KernelSpec> spec = KernelSpec::load(jsonPath, error);
  if (!spec)
    fatal(error);
  return *spec;
}

/// The number of a chip name such as `sm_90` or `sm_90a` (90), or 0.
int chipNumber(const std::string &chip) {
  if (chip.compare(0, 3, "sm_") != 0)
    return 0;
  return std::atoi(chip.c_str() + 3);
}

/// Checks the request against the kernel before any GPU is touched, and
/// completes it: the data distribution, --rows and --cols (from --input when
/// given, else the defaults) and the row strides. Returns the matrix read
/// from --input, or an empty one.
Matrix resolveRequest(Options &opts, const KernelSpec &spec,
                      Distribution &dist) {
  if (opts.json && opts.explain)
    usageError("--json reports --check and --bench; --explain prints text, "
               "give one of them");
  // The kernel's PTX runs on its own chip and newer ones only.
  if (!opts.chip.empty() && !spec.chip.empty() &&
      chipNumber(opts.chip) < chipNumber(spec.chip))
    usageError("kernel '" + spec.kernel + "' is compiled for " + spec.chip +
               ", which " + opts.chip + " cannot run");
  // Found before the run, not after it.
  if (!opts.output.empty()) {
    std::filesystem::path dir =
        std::filesystem::path(opts.output).parent_path();
    std::error_code ec;
    if (!dir.empty() && !std::filesystem::is_directory(dir, ec))
      usageError("--output '" + opts.output + "': no directory '" +
                 dir.string() + "'");
  }
  if (std::string problem = referenceProblem(spec);
      opts.check && !problem.empty())
    fatal("cannot --check kernel '" + spec.kernel + "' (" + spec.op +
          "): " + problem + "; --bench and --explain run it");
  if (!opts.dtype.empty()) {
    std::optional<DType> t = parseDType(opts.dtype);
    if (!t || !isFloatType(*t))
      usageError("--dtype must be f32, f16 or bf16, got '" + opts.dtype + "'");
    if (*t != spec.inputType)
      fatal("--dtype " + opts.dtype +
            " does not match the kernel, which "
            "reads " +
            dtypeName(spec.inputType) + " (compile a kernel for that type)");
  }
  if (!opts.strategy.empty() && opts.strategy != "auto" &&
      opts.strategy != spec.strategy) {
    if (opts.strategy != "fused" && opts.strategy != "online")
      usageError("--strategy must be fused, online or auto");
    fatal("--strategy " + opts.strategy +
          " does not match the kernel, which "
          "is " +
          spec.strategy);
  }
  if (!parseDistribution(opts.dist, dist))
    usageError("--dist must be normal, uniform, large or special, got '" +
               opts.dist + "'");
  Matrix x;
  std::string error;
  if (!opts.input.empty()) {
    if (!readNpy(opts.input, spec.inputType, x, error))
      fatal(error);
    if ((opts.rows && opts.rows != x.rows) ||
        (opts.cols && opts.cols != x.cols))
      fatal("--rows/--cols contradict the shape of '" + opts.input + "' (" +
            std::to_string(x.rows) + " x " + std::to_string(x.cols) + ")");
    opts.rows = x.rows;
    opts.cols = x.cols;
  }
  if (!opts.rows)
    opts.rows = 4096;
  if (!opts.cols)
    opts.cols = spec.maxCols ? spec.maxCols : 4096;
  std::string problem = spec.checkShape(opts.rows, opts.cols);
  if (!problem.empty())
    fatal(problem);
  if (!opts.xStride)
    opts.xStride = opts.cols;
  if (!opts.yStride)
    opts.yStride = opts.cols;
  if (opts.xStride < opts.cols || opts.yStride < opts.cols)
    usageError("row strides must be at least --cols (" +
               std::to_string(opts.cols) + ")");
  return x;
}

/// The kernel a launch of `rows` x `cols` takes, as the runtime's
/// Kernel::forShape chooses it: the first of `spec`'s variants for at least
/// `rows` rows that takes rows of `cols`, else `spec`.
KernelSpec takenKernel(const KernelSpec &spec, int64_t rows, int64_t cols) {
  for (const KernelVariant &v : spec.variants) {
    if (rows > v.maxRows)
      continue;
    std::string error;
    std::optional<KernelSpec> variant =
        KernelSpec::load(spec.variantPath(v), error);
    if (!variant)
      fatal(error);
    if (takesVariant(v, *variant, rows, cols))
      return *variant;
  }
  return spec;
}

/// --explain without a GPU: the launch derived from the built-in description
/// of the chip and from ptxas' report of the kernel's resources.
int explainWithoutGpu(const Options &opts, const KernelSpec &spec,
                      const std::string &summary, const std::string &gpuError) {
  std::string chip = !opts.chip.empty()   ? opts.chip
                     : !spec.chip.empty() ? spec.chip
                                          : "sm_90";
  std::optional<DeviceInfo> device = builtinDevice(chip);
  if (!device)
    usageError("no built-in description of '" + chip +
               "' (known: sm_80, sm_90)");
  std::string ptxas = findPtxas(opts.ptxas);
  if (ptxas.empty())
    fatal("no GPU (" + gpuError +
          ") and no ptxas to read the kernel's "
          "resources from; install the CUDA toolkit or pass --ptxas");
  std::string ptxasError;
  std::optional<KernelResources> res =
      runPtxas(ptxas, spec.ptxPath, chip, ptxasError);
  if (!res)
    fatal(ptxasError);
  LaunchPlan plan =
      planLaunch(*device, *res, shapeOf(spec), opts.rows, 0, opts.cols);
  std::string gridError;
  if (!chooseGrid(spec, plan, int64_t(plan.blocksPerSM) * device->sms,
                  opts.rows, opts.grid, gridError) &&
      opts.grid)
    usageError("--grid: " + gridError);
  std::printf("no GPU here (%s); launch plan from the device description\n",
              gpuError.c_str());
  std::printf("%s", summary.c_str());
  std::printf("%s", plan.explain(*device, *res, opts.rows).c_str());
  return 0;
}

/// A launch on this GPU: the kernel's resources and occupancy from the
/// driver, the plan and the grid.
struct GpuLaunch {
  KernelResources res;
  int perSM = 0, clusters = 0;
  LaunchPlan plan;
  int64_t grid = 0;
};

/// Plans the kernel's launch on `gpu`, where it is loaded; exits with a
/// message when it cannot run there.
GpuLaunch planOnGpu(Gpu &gpu, const Options &opts) {
  GpuLaunch l;
  const Kernel &k = *gpu.kernel;
  l.res = k.resources();
  l.perSM = k.blocksPerSM();
  l.clusters = k.residentClusters();
  std::string error;
  std::optional<LaunchPlan> plan =
      k.plan(opts.rows, opts.cols, opts.grid, error);
  if (!plan) {
    if (opts.grid)
      usageError("--grid: " + error);
    fatal(error);
  }
  l.plan = *plan;
  l.grid = plan->grid;
  return l;
}

/// --explain on a GPU: the kernel, the derivation of the launch and the
/// driver's answer next to it.
void printExplain(const Gpu &gpu, const KernelSpec &spec, const Options &opts,
                  const std::string &summary, const GpuLaunch &l) {
  std::printf("%s", summary.c_str());
  std::printf("%s", l.plan.explain(gpu.info, l.res, opts.rows).c_str());
  std::printf("driver occupancy: %d blocks per SM", l.perSM);
  if (spec.clusterBlocks > 1)
    std::printf(", %d resident clusters of %ld", l.clusters,
                static_cast<long>(spec.clusterBlocks));
  std::printf(" -> grid %ld%s\n", static_cast<long>(l.grid),
              opts.grid ? " (overridden)" : "");
  if (l.plan.blocksPerSM != l.perSM)
    std::printf("note: the derivation and the driver disagree\n");
}

/// What a result summed in f32 (a column sum over every row, in the
/// kernel's order, or a norm's dx, whose row sums may cancel) may be off by
/// beyond its type's rounding: this fraction of the sum of its terms'
/// magnitudes. A column sum that left out or doubled one block's rows of
/// any grid up to 2^16 blocks, or a dx that dropped a term, is off by far
/// more.
constexpr double kSumSlack = 1.0 / 65536;

/// `magnitudes` times kSumSlack (empty stays empty).
std::vector<double> sumSlack(std::vector<double> magnitudes) {
  for (double &e : magnitudes)
    e *= kSumSlack;
  return magnitudes;
}

/// --check: compares the first output, and each column sum, with the
/// float64 reference computed from the operands, into `json` and, without
/// --json, as text. Returns whether they passed.
bool checkOutput(const Gpu &gpu, const KernelSpec &spec, const Options &opts,
                 const HostOperands &operands, int64_t grid, JsonOut &json) {
  CheckedReference ref = checkedReference(spec, operands);
  CheckResult c = check(operands.checked(), ref.values, spec.op, kPoison,
                        sumSlack(std::move(ref.magnitudes)));
  auto checkSums = [&](const std::vector<Matrix> &results,
                       const std::vector<ColumnSumReference> &sums,
                       const std::string &what) {
    for (size_t k = 0; k < sums.size(); ++k) {
      CheckResult s = check(results[k], sums[k].sums, "column_sum", kPoison,
                            sumSlack(sums[k].magnitudes));
      for (const std::string &p : s.problems)
        c.problems.push_back(what + " " + std::to_string(k) + ": " + p);
      c.passed &= s.passed;
    }
  };
  checkSums(operands.columnSums, columnSumReferences(spec, operands),
            "column sum");
  checkSums(operands.totals, totalReferences(spec, operands), "total");
  json.field("check_passed", c.passed);
  json.field("rel_l2", c.relL2);
  json.field("max_abs_err", c.maxAbsError);
  json.field("max_row_sum_err", c.maxRowSumError);
  std::string problems = "[";
  for (size_t i = 0; i < c.problems.size(); ++i)
    problems += (i ? ", \"" : "\"") + c.problems[i] + "\"";
  json.raw("problems", problems + "]");
  if (!opts.json) {
    std::printf("%s %s %ldx%ld %s on %s (grid %ld x %ld threads): %s\n",
                spec.kernel.c_str(), dtypeName(spec.inputType),
                static_cast<long>(opts.rows), static_cast<long>(opts.cols),
                spec.strategy.c_str(), gpu.info.name.c_str(),
                static_cast<long>(grid), static_cast<long>(spec.blockThreads),
                c.passed ? "PASS" : "FAIL");
    std::printf("  rel L2 %.3g, max abs err %.3g, max |row sum - 1| %.3g\n",
                c.relL2, c.maxAbsError, c.maxRowSumError);
    for (const std::string &p : c.problems)
      std::printf("  problem: %s\n", p.c_str());
  }
  return c.passed;
}

/// --bench: times `launch` (--warmup, then --iters runs, each after an L2
/// flush) and a device-to-device copy for the ceiling, into `json` and,
/// without --json, as text.
void benchmark(Gpu &gpu, const KernelSpec &spec, const Options &opts,
               const std::function<CUresult()> &launch, JsonOut &json) {
  CUevent start, stop;
  gpu.checked(gpu.cu.cuEventCreate(&start, CU_EVENT_DEFAULT), "cuEventCreate");
  gpu.checked(gpu.cu.cuEventCreate(&stop, CU_EVENT_DEFAULT), "cuEventCreate");
  size_t flushBytes = kFlushBytes, copyBytes = kCopyBytes;
  DeviceBuffer flush(gpu, flushBytes);
  auto timeOnce = [&](const std::function<CUresult()> &work) {
    // Overwrite a buffer larger than L2 so every timed run starts cold.
    gpu.checked(gpu.cu.cuMemsetD32_v2(flush.ptr, 0, flushBytes / 4),
                "cuMemsetD32");
    gpu.checked(gpu.cu.cuEventRecord(start, nullptr), "cuEventRecord");
    gpu.checked(work(), "timed launch");
    gpu.checked(gpu.cu.cuEventRecord(stop, nullptr), "cuEventRecord");
    gpu.checked(gpu.cu.cuEventSynchronize(stop), "cuEventSynchronize");
    float ms = 0;
    gpu.checked(gpu.cu.cuEventElapsedTime_v2(&ms, start, stop),
                "cuEventElapsedTime");
    return ms;
  };
  for (int i = 0; i < opts.warmup; ++i)
    gpu.checked(launch(), "cuLaunchKernel");
  std::vector<float> samples;
  for (int i = 0; i < opts.iters; ++i)
    samples.push_back(timeOnce(launch));
  Timing t = summarize(samples);
  // Every element of every input read once and of every output written
  // once, per-row operands once per row (per-column operands aside).
  double bytes = 0;
  for (const KernelOperand &operand : spec.operands) {
    bool perRow = operand.role == KernelOperand::Role::Row ||
                  operand.role == KernelOperand::Role::RowOutput;
    if (operand.role != KernelOperand::Role::Column &&
        operand.role != KernelOperand::Role::ColumnSum &&
        operand.role != KernelOperand::Role::Total)
      bytes += double(opts.rows) * (perRow ? 1 : opts.cols) *
               dtypeBytes(operand.type);
  }
  double gbps = bytes / (t.medianMs * 1e6);
  // The ceiling: a device-to-device copy, read + write.
  DeviceBuffer a(gpu, copyBytes), b(gpu, copyBytes);
  std::vector<float> copies;
  for (int i = 0; i < 20; ++i)
    copies.push_back(timeOnce(
        [&] { return gpu.cu.cuMemcpyDtoD_v2(b.ptr, a.ptr, copyBytes); }));
  double copyGbps = 2.0 * copyBytes / (summarize(copies).medianMs * 1e6);
  json.field("median_ms", t.medianMs);
  json.field("min_ms", t.minMs);
  json.field("max_ms", t.maxMs);
  json.field("gbps", gbps);
  json.field("copy_gbps", copyGbps);
  json.field("fraction_of_copy", gbps / copyGbps);
  if (!opts.json) {
    std::printf("%-12s %-8s %-16s %9s %9s %9s %8s %8s %7s\n", "kernel", "dtype",
                "M x N", "median ms", "min ms", "max ms", "GB/s", "copy",
                "%copy");
    std::string shape =
        std::to_string(opts.rows) + " x " + std::to_string(opts.cols);
    std::printf("%-12s %-8s %-16s %9.4f %9.4f %9.4f %8.0f %8.0f %6.1f%%\n",
                spec.strategy.c_str(), dtypeName(spec.inputType), shape.c_str(),
                t.medianMs, t.minMs, t.maxMs, gbps, copyGbps,
                100 * gbps / copyGbps);
  }
  gpu.cu.cuEventDestroy_v2(start);
  gpu.cu.cuEventDestroy_v2(stop);
}

/// One launch's request resolved against its kernel: the kernel it takes
/// (the variant for a few rows), the data distribution, x when read from
/// --input, and what --explain prints of the kernel.
struct Request {
  KernelSpec spec;
  Distribution dist = Distribution::Normal;
  Matrix x;
  std::string summary;
};

/// Completes `opts` (resolveRequest) for `kernel` and finds the kernel the
/// launch takes; exits on a request the kernel cannot serve.
Request prepare(Options &opts, const KernelSpec &kernel) {
  Request req{kernel, Distribution::Normal, {}, {}};
  req.x = resolveRequest(opts, req.spec, req.dist);
  // A launch of a few rows takes the kernel's variant for them.
  std::string variantNote;
  if (KernelSpec taken = takenKernel(req.spec, opts.rows, opts.cols);
      taken.kernel != req.spec.kernel) {
    variantNote = "kernel: " + taken.kernel + ", the variant of " +
                  req.spec.kernel + " for launches of at most " +
                  std::to_string(taken.maxRows) + " rows\n";
    req.spec = std::move(taken);
  }
  // For --explain: the kernel's shape and this launch's memory path.
  req.summary = variantNote + req.spec.describe() +
                req.spec.describeAccess(opts.cols, opts.xStride, opts.yStride,
                                        opts.offset);
  if (!req.spec.plan.empty())
    req.summary += "plan: " + req.spec.plan + "\n";
  return req;
}

/// Runs `req` on `gpu`: loads its kernel, plans the launch (printing it for
/// --explain), uploads every operand, launches, and checks and times it as
/// `opts` asks. Returns whether the check passed (or was not asked for).
bool runOnGpu(Gpu &gpu, const Options &opts, Request &req) {
  const KernelSpec &spec = req.spec;
  Matrix x = std::move(req.x); // the case's data lives as long as its run
  int64_t sx = opts.xStride, sy = opts.yStride;
  std::string error;
  gpu.load(spec);
  GpuLaunch l = planOnGpu(gpu, opts);
  if (opts.explain)
    printExplain(gpu, spec, opts, req.summary, l);
  if (!opts.check && !opts.bench)
    return true;

  // --- Buffers: every operand, each `offset` elements past its start. ---
  if (x.bytes.empty()) {
    x = Matrix(spec.inputType, opts.rows, opts.cols, sx);
    generate(x, req.dist, opts.seed);
  } else if (sx != x.cols) {
    int inSize = dtypeBytes(spec.inputType);
    Matrix strided(spec.inputType, x.rows, x.cols, sx);
    for (int64_t r = 0; r < x.rows; ++r)
      std::memcpy(strided.bytes.data() + r * sx * inSize,
                  x.bytes.data() + r * x.cols * inSize, x.cols * inSize);
    x = std::move(strided);
  }
  HostOperands host = makeOperands(spec, x, sy, req.dist, opts.seed, kPoison);
  // In the kernel's order (docs/abi.md); those it writes read back after
  // the launch.
  std::vector<Matrix *> matrices, written;
  for (std::vector<Matrix> *group :
       {&host.inputs, &host.outputs, &host.columns, &host.rows,
        &host.rowOutputs, &host.columnSums, &host.totals})
    for (Matrix &m : *group) {
      matrices.push_back(&m);
      if (group == &host.outputs || group == &host.rowOutputs ||
          group == &host.columnSums || group == &host.totals)
        written.push_back(&m);
    }
  size_t need = opts.bench ? kFlushBytes + 2 * kCopyBytes : 0;
  for (Matrix *m : matrices)
    need += m->bytes.size() + opts.offset * dtypeBytes(m->type);
  size_t freeMem = 0, totalMem = 0;
  gpu.checked(gpu.cu.cuMemGetInfo_v2(&freeMem, &totalMem), "cuMemGetInfo");
  if (need > freeMem)
    fatal("the problem needs " + std::to_string(need >> 20) +
          " MiB of device "
          "memory; " +
          std::to_string(freeMem >> 20) + " MiB are free on " + gpu.info.name);
  std::vector<std::unique_ptr<DeviceBuffer>> buffers;
  std::vector<CUdeviceptr> pointers;
  for (Matrix *m : matrices) {
    size_t skip = opts.offset * dtypeBytes(m->type);
    buffers.push_back(
        std::make_unique<DeviceBuffer>(gpu, m->bytes.size() + skip));
    pointers.push_back(buffers.back()->ptr + skip);
    gpu.checked(gpu.cu.cuMemcpyHtoD_v2(pointers.back(), m->bytes.data(),
                                       m->bytes.size()),
                "cuMemcpyHtoD");
  }

  // A chunks kernel's workspace: zeroed once, left zero by each launch
  // (whole words for the memset).
  size_t workspaceWords =
      (gpu.kernel->workspaceBytes(opts.rows, opts.cols) + 3) / 4;
  DeviceBuffer workspace(gpu, workspaceWords * 4);
  if (workspaceWords > 0)
    gpu.checked(gpu.cu.cuMemsetD32_v2(workspace.ptr, 0, workspaceWords),
                "cuMemsetD32");
  LaunchArgs args{pointers, {}, opts.rows, opts.cols, workspace.ptr, l.grid};
  for (size_t i = 0; i < host.inputs.size() + host.outputs.size(); ++i)
    args.rowStrides.push_back(matrices[i]->stride);
  // Through the runtime, as every launcher: a cooperative launch where the
  // kernel's blocks wait for each other.
  auto launch = [&]() {
    std::string launchError;
    if (!gpu.kernel->launch(nullptr, args, launchError))
      fatal(launchError);
    return CUDA_SUCCESS;
  };
  gpu.checked(launch(), "cuLaunchKernel");
  gpu.checked(gpu.cu.cuCtxSynchronize(), "the kernel");
  // The outputs back: 2-D, per row and column sums.
  for (size_t i = 0; i < matrices.size(); ++i)
    if (std::find(written.begin(), written.end(), matrices[i]) !=
        written.end())
      gpu.checked(gpu.cu.cuMemcpyDtoH_v2(matrices[i]->bytes.data(), pointers[i],
                                         matrices[i]->bytes.size()),
                  "cuMemcpyDtoH");

  JsonOut json;
  json.field("kernel", spec.kernel);
  json.field("device", gpu.info.name);
  json.field("op", spec.op);
  json.field("strategy", spec.strategy);
  json.field("dtype", std::string(dtypeName(spec.inputType)));
  json.field("rows", opts.rows);
  json.field("cols", opts.cols);
  json.field("x_row_stride", sx);
  json.field("y_row_stride", sy);
  json.field("block_threads", spec.blockThreads);
  json.field("registers", int64_t(l.res.registers));
  json.field("local_bytes", int64_t(l.res.localBytes));
  json.field("dynamic_shared_bytes", spec.dynamicSharedBytes);
  json.field("blocks_per_sm", int64_t(l.perSM));
  json.field("grid", l.grid);

  if (!opts.output.empty() && !writeNpy(opts.output, host.outputs[0], error))
    fatal(error);
  bool ok = !opts.check || checkOutput(gpu, spec, opts, host, l.grid, json);
  if (opts.bench)
    benchmark(gpu, spec, opts, launch, json);
  if (opts.json)
    std::printf("%s\n", json.str().c_str());
  std::fflush(stdout);
  return ok;
}

/// --cases: every case's request is resolved first, so that a bad line is
/// refused before any GPU work; then they run in order on one context,
/// sharing the kernels loaded. Returns the exit status: 0 when every check
/// passed.
int runCases(const Options &opts, const KernelSpec &kernel) {
  // Errors name the case's line, when resolved and when run.
  auto where = [&](int line) {
    return opts.cases + ":" + std::to_string(line) + ": ";
  };
  struct Case {
    int line;
    Options opts;
    Request req;
  };
  std::vector<Case> cases;
  for (auto &[line, text] : readCases(opts.cases)) {
    setErrorContext(where(line));
    Options caseOpts = parseCaseLine(opts, text);
    Request req = prepare(caseOpts, kernel);
    cases.push_back({line, std::move(caseOpts), std::move(req)});
  }
  setErrorContext("");
  Gpu gpu;
  std::string error;
  if (!gpu.open(error))
    fatal(error);
  bool ok = true;
  for (Case &c : cases) {
    setErrorContext(where(c.line));
    ok &= runOnGpu(gpu, c.opts, c.req);
  }
  gpu.close();
  return ok ? 0 : 1;
}

} // namespace

int main(int argc, char **argv) {
  Options opts = parseOptions(argc, argv);
  KernelSpec kernel = loadKernel(opts);
  if (!opts.cases.empty())
    return runCases(opts, kernel);
  Request req = prepare(opts, kernel);
  // --- A GPU, or an explanation from a device description. ---
  Gpu gpu;
  std::string error;
  if (!gpu.open(error)) {
    if (opts.check || opts.bench)
      fatal(error + "\n(--explain works without a GPU)");
    return explainWithoutGpu(opts, req.spec, req.summary, error);
  }
  bool ok = runOnGpu(gpu, opts, req);
  gpu.close();
  return ok ? 0 : 1;
}
