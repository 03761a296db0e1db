//===- Pipelines.cpp - From the rowred dialect to PTX ---------------------===//
//
// Part of the softmax kernel compiler.
//
//===----------------------------------------------------------------------===//

#include "rowred/Pipelines/Pipelines.h"
#include "rowred/Conversion/Passes.h"
#include "rowred/Dialect/RowRed/IR/RowRedOps.h"
#include "rowred/Dialect/RowRed/Transforms/Passes.h"
#include "rowred/Target/Lowering.h"
#include "rowred/Target/Passes.h"
#include "rowred/Target/Ptxas.h"

#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVM.h"
#include "mlir/Conversion/IndexToLLVM/IndexToLLVM.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Conversion/NVVMToLLVM/NVVMToLLVM.h"
#include "mlir/Conversion/UBToLLVM/UBToLLVM.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVM/NVVM/Target.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/GPU/GPUToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/NVVM/NVVMToLLVMIRTranslation.h"

using namespace mlir;
using namespace mlir::rowred;

void mlir::rowred::buildRowRedToPTXPipeline(OpPassManager &pm,
                                            const RowRedToPTXOptions &options) {
  pm.addPass(createRowRedDecompose());
  std::string ptxas = options.ptxas == "none"
                          ? std::string()
                          : findPtxas(options.ptxas, options.cudaPath);
  if (!ptxas.empty()) {
    RowRedFitRegistersOptions fit;
    fit.strategy = options.strategy;
    fit.cols = options.cols;
    fit.chip = options.chip;
    fit.cudaPath = options.cudaPath;
    fit.ptxas = ptxas;
    pm.addPass(createRowRedFitRegisters(fit));
  } else {
    RowRedPlanOptions plan;
    plan.strategy = options.strategy;
    plan.cols = options.cols;
    plan.chip = options.chip;
    pm.addPass(createRowRedPlan(plan));
    buildRowRedLoweringPipeline(pm, options.chip, options.cudaPath);
  }

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
      "rowred-plan, convert-rowred-to-gpu, NVVM, PTX (with a ptxas: "
      "rowred-fit-registers in place of the last four; and files with "
      "output-dir)",
      buildRowRedToPTXPipeline);
}

void mlir::rowred::registerRowRedDialects(DialectRegistry &registry) {
  registry.insert<RowRedDialect, arith::ArithDialect, cf::ControlFlowDialect,
                  func::FuncDialect, gpu::GPUDialect, LLVM::LLVMDialect,
                  math::MathDialect, memref::MemRefDialect, NVVM::NVVMDialect,
                  scf::SCFDialect, vector::VectorDialect>();
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
