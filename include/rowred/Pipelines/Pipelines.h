//===- Pipelines.h - From the rowred dialect to PTX -------------*- C++ -*-===//
//
// Part of the softmax kernel compiler.
//
//===----------------------------------------------------------------------===//

#ifndef ROWRED_PIPELINES_PIPELINES_H
#define ROWRED_PIPELINES_PIPELINES_H

#include "mlir/Pass/PassOptions.h"

namespace mlir {
class DialectRegistry;
class OpPassManager;
namespace rowred {

/// Options of the `rowred-to-ptx` pipeline: those of rowred-plan (the
/// strategy, the row length, the target chip, the plan table), the ptxas
/// that checks the kernels' registers, and where to write the PTX and
/// metadata. A kernel is tuned by a #rowred.plan_request in the input.
struct RowRedToPTXOptions : public PassPipelineOptions<RowRedToPTXOptions> {
  PassOptions::Option<std::string> strategy{
      *this, "strategy",
      llvm::cl::desc("fused | cluster | online | chunks | auto"),
      llvm::cl::init("auto")};
  PassOptions::Option<int64_t> cols{
      *this, "cols",
      llvm::cl::desc("Columns the kernel is compiled for (0: unknown)"),
      llvm::cl::init(0)};
  PassOptions::Option<std::string> chip{
      *this, "chip", llvm::cl::desc("Target chip (sm_80, sm_90, ...)"),
      llvm::cl::init("sm_90")};
  PassOptions::Option<std::string> planTable{
      *this, "plan-table",
      llvm::cl::desc("A plan table (JSON, PlanTable.json's format) auto plans "
                     "by instead of the one compiled in (empty: that one)"),
      llvm::cl::init("")};
  PassOptions::Option<std::string> cudaPath{
      *this, "cuda-path",
      llvm::cl::desc("CUDA toolkit, for libdevice when fast_exp = false"),
      llvm::cl::init("/usr/local/cuda")};
  PassOptions::Option<std::string> ptxas{
      *this, "ptxas",
      llvm::cl::desc("ptxas that assembles each kernel, whose plan changes "
                     "where it spills (rowred-fit-registers; empty: "
                     "<cuda-path>/bin/ptxas or the PATH's, where there is "
                     "one; none: no check)"),
      llvm::cl::init("")};
  PassOptions::Option<std::string> outputDir{
      *this, "output-dir",
      llvm::cl::desc("Write <kernel>.ptx and <kernel>.json here (empty: "
                     "do not write files)"),
      llvm::cl::init("")};
};

/// Adds the passes from the rowred dialect to `gpu.binary` ops holding PTX
/// (and, with an output directory, to files).
void buildRowRedToPTXPipeline(OpPassManager &pm,
                              const RowRedToPTXOptions &options);

/// Registers `rowred-to-ptx` with the pass pipeline registry.
void registerRowRedPipelines();

/// Adds to `registry` the dialects the pipeline reads, lowers through and
/// writes (rowred, arith, cf, func, gpu, llvm, math, memref, nvvm, scf and
/// vector), their translations to LLVM IR and their lowering-to-LLVM
/// interfaces: what softmax-opt, softmax-run and the fuzzers register.
void registerRowRedDialects(DialectRegistry &registry);

} // namespace rowred
} // namespace mlir

#endif // ROWRED_PIPELINES_PIPELINES_H
