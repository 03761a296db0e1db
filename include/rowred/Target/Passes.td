//===- Passes.td - RowRed target passes --------------------*- tablegen -*-===//
//
// Part of the softmax kernel compiler.
//
//===----------------------------------------------------------------------===//

#ifndef ROWRED_TARGET_PASSES
#define ROWRED_TARGET_PASSES

include "mlir/Pass/PassBase.td"

def RowRedExportKernels : Pass<"rowred-export-kernels", "::mlir::ModuleOp"> {
  let summary = "Write each kernel's PTX and launch metadata to files";
  let description = [{
    After `gpu-module-to-binary{format=isa}`, writes for every `gpu.binary`
    produced from a rowred kernel the PTX text to `<output-dir>/<kernel>.ptx`
    and its launch metadata to `<output-dir>/<kernel>.json` (the fields are
    documented in `docs/abi.md`). The metadata comes from the module's
    `rowred.kernels` attribute, recorded by `convert-rowred-to-gpu`.

    It fails with a diagnostic when a binary holds no PTX (a format other
    than `isa`) or a file cannot be written. The IR is left unchanged.
  }];
  let options = [
    Option<"outputDir", "output-dir", "std::string", /*default=*/"\".\"",
           "Directory the .ptx and .json files are written to (created if "
           "missing)">
  ];
}

#endif // ROWRED_TARGET_PASSES
