//===- CApi.cpp - C API of the rowred kernel runtime ----------------------===//
//
// Part of the softmax kernel compiler.
//
//===----------------------------------------------------------------------===//

#include "rowred_runtime.h"

#include "rowred/Runtime/Kernel.h"

using namespace rowred::runtime;

/// The C handle: the kernel and the names the accessors return.
struct rowred_kernel {
  std::unique_ptr<Kernel> kernel;
  std::string inputType, outputType;
};

namespace {
thread_local std::string lastError;

/// Records `message` as the calling thread's last failure.
int fail(std::string message) {
  lastError = std::move(message);
  return 1;
}

/// Whether `kernel` is a handle; records the failure of `function` when it
/// is NULL.
bool valid(const rowred_kernel *kernel, const char *function) {
  if (kernel)
    return true;
  fail(std::string(function) + ": no kernel (NULL)");
  return false;
}

/// Launches `kernel` on `stream` with `args`: 0, or 1 with the failure
/// recorded.
int launch(const rowred_kernel *kernel, void *stream, const LaunchArgs &args) {
  if (!valid(kernel, "rowred_kernel_launch"))
    return 1;
  std::string error;
  if (!kernel->kernel->launch(static_cast<CUstream>(stream), args, error))
    return fail(error);
  return 0;
}
} // namespace

extern "C" {

int rowred_runtime_abi_version(void) { return ROWRED_RUNTIME_ABI_VERSION; }

const char *rowred_last_error(void) { return lastError.c_str(); }

rowred_kernel *rowred_kernel_load(const char *metadataPath, int device) {
  if (!metadataPath) {
    fail("rowred_kernel_load: no metadata path");
    return nullptr;
  }
  std::string error;
  std::unique_ptr<Kernel> kernel = Kernel::load(metadataPath, device, error);
  if (!kernel) {
    fail(error);
    return nullptr;
  }
  auto *handle = new rowred_kernel;
  handle->inputType = dtypeName(kernel->spec().inputType);
  handle->outputType = dtypeName(kernel->spec().outputType);
  handle->kernel = std::move(kernel);
  return handle;
}

void rowred_kernel_unload(rowred_kernel *kernel) { delete kernel; }

const char *rowred_kernel_name(const rowred_kernel *kernel) {
  if (!valid(kernel, "rowred_kernel_name"))
    return nullptr;
  return kernel->kernel->spec().kernel.c_str();
}

const char *rowred_kernel_op(const rowred_kernel *kernel) {
  if (!valid(kernel, "rowred_kernel_op"))
    return nullptr;
  return kernel->kernel->spec().op.c_str();
}

const char *rowred_kernel_input_type(const rowred_kernel *kernel) {
  if (!valid(kernel, "rowred_kernel_input_type"))
    return nullptr;
  return kernel->inputType.c_str();
}

const char *rowred_kernel_output_type(const rowred_kernel *kernel) {
  if (!valid(kernel, "rowred_kernel_output_type"))
    return nullptr;
  return kernel->outputType.c_str();
}

int64_t rowred_kernel_min_cols(const rowred_kernel *kernel) {
  if (!valid(kernel, "rowred_kernel_min_cols"))
    return -1;
  return kernel->kernel->spec().minCols;
}

int64_t rowred_kernel_max_cols(const rowred_kernel *kernel) {
  if (!valid(kernel, "rowred_kernel_max_cols"))
    return -1;
  return kernel->kernel->spec().maxCols;
}

int rowred_kernel_workspace_bytes(const rowred_kernel *kernel, int64_t rows,
                                  int64_t cols, uint64_t *bytes) {
  if (!valid(kernel, "rowred_kernel_workspace_bytes"))
    return 1;
  if (!bytes)
    return fail("rowred_kernel_workspace_bytes: no result address (NULL)");
  std::string problem = kernel->kernel->spec().checkShape(rows, cols);
  if (!problem.empty())
    return fail(problem);
  *bytes = static_cast<uint64_t>(kernel->kernel->workspaceBytes(rows, cols));
  return 0;
}

int rowred_kernel_grid(const rowred_kernel *kernel, int64_t rows, int64_t cols,
                       int64_t *blocks) {
  if (!valid(kernel, "rowred_kernel_grid"))
    return 1;
  if (!blocks)
    return fail("rowred_kernel_grid: no result address (NULL)");
  std::string error = kernel->kernel->spec().checkShape(rows, cols);
  if (!error.empty())
    return fail(error);
  std::optional<LaunchPlan> plan = kernel->kernel->plan(rows, cols, 0, error);
  if (!plan)
    return fail(error);
  *blocks = plan->grid;
  return 0;
}

int rowred_kernel_occupancy(const rowred_kernel *kernel, int *blocksPerSM,
                            int64_t *residentBlocks,
                            int64_t *residentClusters) {
  if (!valid(kernel, "rowred_kernel_occupancy"))
    return 1;
  if (!blocksPerSM || !residentBlocks || !residentClusters)
    return fail("rowred_kernel_occupancy: no result address (NULL)");
  *blocksPerSM = kernel->kernel->blocksPerSM();
  *residentBlocks = kernel->kernel->residentBlocks();
  *residentClusters = kernel->kernel->residentClusters();
  return 0;
}

int rowred_kernel_launch_grid(const rowred_kernel *kernel, void *stream,
                              uint64_t x, uint64_t y, int64_t rows,
                              int64_t cols, int64_t xRowStride,
                              int64_t yRowStride, uint64_t workspace,
                              int64_t grid) {
  if (grid < 1)
    return fail("rowred_kernel_launch_grid: the grid must be positive, not " +
                std::to_string(grid));
  return launch(kernel, stream,
                LaunchArgs::pair(x, y, rows, cols, xRowStride, yRowStride,
                                 workspace, grid));
}

int rowred_kernel_launch(const rowred_kernel *kernel, void *stream, uint64_t x,
                         uint64_t y, int64_t rows, int64_t cols,
                         int64_t xRowStride, int64_t yRowStride,
                         uint64_t workspace) {
  return launch(
      kernel, stream,
      LaunchArgs::pair(x, y, rows, cols, xRowStride, yRowStride, workspace));
}

int rowred_kernel_num_operands(const rowred_kernel *kernel) {
  if (!valid(kernel, "rowred_kernel_num_operands"))
    return -1;
  return static_cast<int>(kernel->kernel->spec().operands.size());
}

int rowred_kernel_operand(const rowred_kernel *kernel, int index,
                          const char **name, const char **role,
                          const char **type) {
  if (!valid(kernel, "rowred_kernel_operand"))
    return 1;
  if (!name || !role || !type)
    return fail("rowred_kernel_operand: no result address (NULL)");
  const std::vector<KernelOperand> &operands = kernel->kernel->spec().operands;
  if (index < 0 || index >= static_cast<int>(operands.size()))
    return fail("rowred_kernel_operand: kernel '" +
                kernel->kernel->spec().kernel + "' has " +
                std::to_string(operands.size()) + " operands, not " +
                std::to_string(index + 1));
  *name = operands[index].name.c_str();
  *role = roleName(operands[index].role);
  *type = dtypeName(operands[index].type);
  return 0;
}

int rowred_kernel_launch_operands(const rowred_kernel *kernel, void *stream,
                                  const uint64_t *operands, int numOperands,
                                  const int64_t *rowStrides, int numStrides,
                                  int64_t rows, int64_t cols,
                                  uint64_t workspace, int64_t grid) {
  if (numOperands < 0 || numStrides < 0 || (numOperands && !operands) ||
      (numStrides && !rowStrides) || grid < 0)
    return fail("rowred_kernel_launch_operands: invalid operand or stride "
                "arrays, or a negative grid");
  LaunchArgs args;
  args.operands.assign(operands, operands + numOperands);
  args.rowStrides.assign(rowStrides, rowStrides + numStrides);
  args.rows = rows;
  args.cols = cols;
  args.workspace = workspace;
  args.grid = grid;
  return launch(kernel, stream, args);
}

int rowred_stream_capturing(void *stream, int *capturing) {
  if (!capturing)
    return fail("rowred_stream_capturing: no result address (NULL)");
  std::string error;
  const CudaDriver *cu = getDriver(error);
  if (!cu)
    return fail(error);
  CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
  CUresult result =
      cu->cuStreamIsCapturing(static_cast<CUstream>(stream), &status);
  if (result != CUDA_SUCCESS)
    return fail("rowred_stream_capturing: " + cu->describe(result));
  *capturing = status != CU_STREAM_CAPTURE_STATUS_NONE;
  return 0;
}

} // extern "C"
