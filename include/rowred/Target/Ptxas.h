//===- Ptxas.h - Assemble PTX and read ptxas' report ------------*- C++ -*-===//
//
// Part of the softmax kernel compiler.
//
//===----------------------------------------------------------------------===//

#ifndef ROWRED_TARGET_PTXAS_H
#define ROWRED_TARGET_PTXAS_H

#include "mlir/Support/LLVM.h"
#include "llvm/ADT/StringRef.h"

#include <string>

namespace mlir {
namespace rowred {

/// What `ptxas -v` reports for a module of one entry function.
struct PtxasReport {
  int64_t registers = 0;
  int64_t spillStoreBytes = 0, spillLoadBytes = 0;
  bool spills() const { return spillStoreBytes > 0 || spillLoadBytes > 0; }
};

/// The ptxas to run: `explicitPath` when given, else `<cudaPath>/bin/ptxas`
/// when it exists, else the PATH's; empty when there is none.
std::string findPtxas(StringRef explicitPath, StringRef cudaPath);

/// Assembles `ptx` with `ptxas -arch=<chip> -v`; fails with `error` set when
/// ptxas cannot run, refuses the PTX, or reports no register count.
FailureOr<PtxasReport> assemblePtx(StringRef ptxas, StringRef chip,
                                   StringRef ptx, std::string &error);

} // namespace rowred
} // namespace mlir

#endif // ROWRED_TARGET_PTXAS_H
