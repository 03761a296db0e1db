//===- softmax-opt.cpp - Driver for the softmax kernel compiler -----------===//
//
// Part of the softmax kernel compiler.
//
// An mlir-opt style driver: parses a .mlir file, runs the passes named on the
// command line (or a --pass-pipeline) and prints the result.
//
//===----------------------------------------------------------------------===//

#include "rowred/Conversion/Passes.h"
#include "rowred/Dialect/RowRed/Transforms/Passes.h"
#include "rowred/Pipelines/Pipelines.h"
#include "rowred/Target/Passes.h"

#include "mlir/Conversion/ConvertToLLVM/ToLLVMPass.h"
#include "mlir/Conversion/GPUToNVVM/GPUToNVVMPass.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"

namespace mlir::rowred::test {
void registerTestPasses();
} // namespace mlir::rowred::test

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  mlir::rowred::registerRowRedDialects(registry);

  mlir::registerTransformsPasses();
  // The upstream passes the rowred-to-ptx pipeline is made of, so that each
  // step can also be run and tested on its own. The conversions are
  // registered one by one: mlir/Conversion/Passes.h, which registers them
  // all, takes most of this file's compile time.
  mlir::registerGPUPasses();
  mlir::registerPass([] { return mlir::createConvertGpuOpsToNVVMOps(); });
  mlir::registerPass([] { return mlir::createSCFToControlFlowPass(); });
  mlir::registerPass([] { return mlir::createConvertToLLVMPass(); });
  mlir::registerPass([] { return mlir::createReconcileUnrealizedCastsPass(); });

  mlir::rowred::registerRowRedPasses();
  mlir::rowred::registerRowRedConversionPasses();
  mlir::rowred::registerRowRedTargetPasses();
  mlir::rowred::registerRowRedPipelines();
  mlir::rowred::test::registerTestPasses();

  return mlir::asMainReturnCode(mlir::MlirOptMain(
      argc, argv, "Softmax kernel compiler driver\n", registry));
}
