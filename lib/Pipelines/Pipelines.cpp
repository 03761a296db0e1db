//===- Pipelines.cpp - From the rowred dialect to PTX ---------------------===//
//
// Part of the softmax kernel compiler.
//
//===----------------------------------------------------------------------===//

#include "rowred/Pipelines/Pipelines.h"
#include "rowred/Conversion/Passes.h"
#include "rowred/Dialect/RowRed/IR/KernelPlan.h"
#include "rowred/Dialect/RowRed/Transforms/Passes.h"
#include "rowred/Target/Passes.h"

#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/ConvertToLLVM/ToLLVMPass.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVM.h"
#include "mlir/Conversion/GPUToNVVM/GPUToNVVMPass.h"
#include "mlir/Conversion/IndexToLLVM/IndexToLLVM.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Conversion/NVVMToLLVM/NVVMToLLVM.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Conversion/UBToLLVM/UBToLLVM.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVM/NVVM/Target.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/GPU/GPUToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/NVVM/NVVMToLLVMIRTranslation.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;
using namespace mlir::rowred;

void mlir::rowred::buildRowRedToPTXPipeline(OpPassManager &pm,
                                            const RowRedToPTXOptions &options) {
  pm.addPass(createRowRedDecompose());
  RowRedPlanOptions lowering;
  lowering.strategy = options.strategy;
  lowering.cols = options.cols;
  lowering.chip = options.chip;
  pm.addPass(createRowRedPlan(lowering));
  pm.addPass(createConvertRowRedToGPU());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());

  GpuNVVMAttachTargetOptions target;
  target.chip = options.chip;
  target.optLevel = 3;
  // PTX ISA 8.1 (CUDA 12.1 drivers and newer): the cluster exchanges use
  // st.async with mbarrier completion. Newer chips need newer ISAs: sm_100
  // 8.6, sm_120 8.7.
  int64_t sm = chipVersion(options.chip);
  target.features = sm >= 120 ? "+ptx87" : sm >= 100 ? "+ptx86" : "+ptx81";
  pm.addPass(createGpuNVVMAttachTarget(target));

  OpPassManager &kernels = pm.nest<gpu::GPUModuleOp>();
  kernels.addPass(createConvertGpuOpsToNVVMOps());
  kernels.addPass(createSCFToControlFlowPass());
  kernels.addPass(createConvertToLLVMPass());
  kernels.addPass(createReconcileUnrealizedCastsPass());
  kernels.addPass(createCanonicalizerPass());

  GpuModuleToBinaryPassOptions binary;
  binary.compilationTarget = "isa";
  binary.toolkitPath = options.cudaPath;
  pm.addPass(createGpuModuleToBinaryPass(binary));

  if (!options.outputDir.empty()) {
    RowRedExportKernelsOptions exportOptions;
    exportOptions.outputDir = options.outputDir;
    pm.addPass(createRowRedExportKernels(exportOptions));
  }
}

void mlir::rowred::registerRowRedPipelines() {
  PassPipelineRegistration<RowRedToPTXOptions>(
      "rowred-to-ptx",
      "From rowred ops to gpu.binary ops holding PTX: decompose, "
      "rowred-plan, convert-rowred-to-gpu, NVVM, PTX (and files with "
      "output-dir)",
      buildRowRedToPTXPipeline);
}

void mlir::rowred::registerRowRedPipelineExtensions(DialectRegistry &registry) {
  arith::registerConvertArithToLLVMInterface(registry);
  cf::registerConvertControlFlowToLLVMInterface(registry);
  registerConvertFuncToLLVMInterface(registry);
  index::registerConvertIndexToLLVMInterface(registry);
  registerConvertMathToLLVMInterface(registry);
  registerConvertMemRefToLLVMInterface(registry);
  registerConvertNVVMToLLVMInterface(registry);
  ub::registerConvertUBToLLVMInterface(registry);
  NVVM::registerNVVMTargetInterfaceExternalModels(registry);
  registerBuiltinDialectTranslation(registry);
  registerGPUDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  registerNVVMDialectTranslation(registry);
}
