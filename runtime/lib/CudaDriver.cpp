//===- CudaDriver.cpp - The CUDA driver API, loaded at run time -----------===//
//
// Part of the softmax kernel compiler.
//
//===----------------------------------------------------------------------===//

#include "rowred/Runtime/CudaDriver.h"

#include <dlfcn.h>

using namespace rowred::runtime;

bool CudaDriver::load(std::string &error) {
  handle = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char *reason = dlerror();
    error = "cannot load the CUDA driver (libcuda.so.1): ";
    error += reason ? reason : "unknown reason";
    error += "; is an NVIDIA driver installed?";
    return false;
  }
  void *symbol = nullptr;
#define ROWRED_RUNTIME_RESOLVE(name)                                           \
  symbol = dlsym(handle, #name);                                               \
  if (!symbol && std::string(#name) == "cuEventElapsedTime_v2")                \
    symbol = dlsym(handle, "cuEventElapsedTime");                              \
  if (!symbol) {                                                               \
    error = "the CUDA driver (libcuda.so.1) has no " #name                     \
            "; the driver is too old for this runner";                         \
    return false;                                                              \
  }                                                                            \
  name = reinterpret_cast<decltype(name)>(symbol);
  ROWRED_RUNTIME_CUDA_FUNCTIONS(ROWRED_RUNTIME_RESOLVE)
#undef ROWRED_RUNTIME_RESOLVE
  return true;
}

std::string CudaDriver::describe(CUresult result) const {
  const char *name = nullptr, *text = nullptr;
  if (cuGetErrorName)
    cuGetErrorName(result, &name);
  if (cuGetErrorString)
    cuGetErrorString(result, &text);
  std::string s = name ? name : "CUDA error " + std::to_string(result);
  if (text)
    s += std::string(": ") + text;
  return s;
}
