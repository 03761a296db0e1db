//===- CudaDriver.h - The CUDA driver API, loaded at run time ---*- C++ -*-===//
//
// Part of the softmax kernel compiler.
//
// The runtime does not link against libcuda: it loads libcuda.so.1 with
// dlopen, so that its users (softmax-run, the Python package) start, and
// explain what is missing, on machines without a GPU or driver. Only the
// handful of entry points it uses are resolved.
//
//===----------------------------------------------------------------------===//

#ifndef ROWRED_RUNTIME_CUDADRIVER_H
#define ROWRED_RUNTIME_CUDADRIVER_H

#include <cuda.h>

#include <string>

namespace rowred::runtime {

/// The driver entry points the runtime and softmax-run call, by their
/// exported names.
#define ROWRED_RUNTIME_CUDA_FUNCTIONS(X)                                       \
  X(cuInit)                                                                    \
  X(cuDriverGetVersion)                                                        \
  X(cuDeviceGetCount)                                                          \
  X(cuDeviceGet)                                                               \
  X(cuDeviceGetName)                                                           \
  X(cuDeviceGetAttribute)                                                      \
  X(cuDevicePrimaryCtxRetain)                                                  \
  X(cuDevicePrimaryCtxRelease_v2)                                              \
  X(cuCtxSetCurrent)                                                           \
  X(cuCtxGetCurrent)                                                           \
  X(cuCtxGetDevice)                                                            \
  X(cuCtxSynchronize)                                                          \
  X(cuModuleLoadDataEx)                                                        \
  X(cuModuleGetFunction)                                                       \
  X(cuModuleUnload)                                                            \
  X(cuFuncGetAttribute)                                                        \
  X(cuFuncSetAttribute)                                                        \
  X(cuOccupancyMaxActiveBlocksPerMultiprocessor)                               \
  X(cuOccupancyMaxActiveClusters)                                              \
  X(cuMemGetInfo_v2)                                                           \
  X(cuMemAlloc_v2)                                                             \
  X(cuMemFree_v2)                                                              \
  X(cuMemcpyHtoD_v2)                                                           \
  X(cuMemcpyDtoH_v2)                                                           \
  X(cuMemcpyDtoD_v2)                                                           \
  X(cuMemsetD32_v2)                                                            \
  X(cuStreamIsCapturing)                                                       \
  X(cuLaunchKernel)                                                            \
  X(cuLaunchCooperativeKernel)                                                 \
  X(cuEventCreate)                                                             \
  X(cuEventRecord)                                                             \
  X(cuEventSynchronize)                                                        \
  X(cuEventElapsedTime_v2)                                                     \
  X(cuEventDestroy_v2)                                                         \
  X(cuGetErrorName)                                                            \
  X(cuGetErrorString)

/// The loaded driver: one function pointer per entry point.
struct CudaDriver {
#define ROWRED_RUNTIME_DECLARE(name) decltype(&::name) name = nullptr;
  ROWRED_RUNTIME_CUDA_FUNCTIONS(ROWRED_RUNTIME_DECLARE)
#undef ROWRED_RUNTIME_DECLARE

  /// Loads libcuda.so.1 and resolves every entry point. On failure returns
  /// false and sets `error` to a message naming what is missing.
  bool load(std::string &error);

  /// "CUDA_ERROR_X: description" for `result`.
  std::string describe(CUresult result) const;

private:
  void *handle = nullptr;
};

} // namespace rowred::runtime

#endif // ROWRED_RUNTIME_CUDADRIVER_H
