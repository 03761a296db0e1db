//===- Compile.h - In-process compilation of .mlir kernels ------*- C++ -*-===//
//
// Part of the softmax kernel compiler.
//
//===----------------------------------------------------------------------===//

#ifndef SOFTMAX_RUN_COMPILE_H
#define SOFTMAX_RUN_COMPILE_H

#include <cstdint>
#include <string>

namespace softmax_run {

/// What to compile: one rowred softmax in a .mlir file, for `cols` columns.
struct CompileRequest {
  std::string mlirPath;
  int64_t cols;
  std::string strategy; ///< fused | online | auto
  std::string chip;
  std::string cacheDir; ///< Empty: $XDG_CACHE_HOME/softmax-run.
};

/// Compiles the request through the rowred-to-ptx pipeline (block size from
/// `cols`, as the Triton tutorial picks it), or reuses the cached variant with
/// the same source and options. Sets `jsonPath` to the kernel's metadata.
bool compileMlir(const CompileRequest &request, std::string &jsonPath,
                 std::string &error);

} // namespace softmax_run

#endif // SOFTMAX_RUN_COMPILE_H
