//===- Lowering.cpp - From planned rowred IR to PTX -----------------------===//
//
// Part of the softmax kernel compiler.
//
//===----------------------------------------------------------------------===//

#include "rowred/Target/Lowering.h"
#include "rowred/Conversion/Passes.h"
#include "rowred/Dialect/RowRed/IR/KernelPlan.h"
#include "rowred/Target/Passes.h"

#include "mlir/Conversion/ConvertToLLVM/ToLLVMPass.h"
#include "mlir/Conversion/GPUToNVVM/GPUToNVVMPass.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;
using namespace mlir::rowred;

void mlir::rowred::buildRowRedLoweringPipeline(OpPassManager &pm,
                                               StringRef chip,
                                               StringRef cudaPath) {
  pm.addPass(createConvertRowRedToGPU());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());

  GpuNVVMAttachTargetOptions target;
  target.chip = chip.str();
  target.optLevel = 3;
  // The chip's PTX ISA (chipPtxFeature); the plans' verifier has refused
  // chips it does not know.
  target.features = chipPtxFeature(chip).str();
  pm.addPass(createGpuNVVMAttachTarget(target));

  OpPassManager &kernels = pm.nest<gpu::GPUModuleOp>();
  kernels.addPass(createConvertGpuOpsToNVVMOps());
  kernels.addPass(createSCFToControlFlowPass());
  kernels.addPass(createConvertToLLVMPass());
  kernels.addPass(createReconcileUnrealizedCastsPass());
  kernels.addPass(createCanonicalizerPass());
  kernels.addPass(createRowRedContractFloatOps());

  GpuModuleToBinaryPassOptions binary;
  binary.compilationTarget = "isa";
  binary.toolkitPath = cudaPath.str();
  pm.addPass(createGpuModuleToBinaryPass(binary));
}
