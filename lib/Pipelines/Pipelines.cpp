//===- Pipelines.cpp - From the rowred dialect to PTX ---------------------===//
//
// Part of the softmax kernel compiler.
//
//===----------------------------------------------------------------------===//

#include "rowred/Pipelines/Pipelines.h"
#include "rowred/Conversion/Passes.h"
#include "rowred/Dialect/RowRed/Transforms/Passes.h"
#include "rowred/Target/Lowering.h"
#include "rowred/Target/Passes.h"
#include "rowred/Target/Ptxas.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"

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
    fit.planTable = options.planTable;
    fit.cudaPath = options.cudaPath;
    fit.ptxas = ptxas;
    pm.addPass(createRowRedFitRegisters(fit));
  } else {
    RowRedPlanOptions plan;
    plan.strategy = options.strategy;
    plan.cols = options.cols;
    plan.chip = options.chip;
    plan.planTable = options.planTable;
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
