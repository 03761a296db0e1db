//===- rowred-pipeline-fuzzer.cpp - libFuzzer target of the compiler -----===//
//
// Part of the softmax kernel compiler.
//
//===----------------------------------------------------------------------===//
//
// Parses each input as MLIR and compiles it through the rowred-to-ptx
// pipeline (rowred-decompose, rowred-plan, convert-rowred-to-gpu, NVVM and
// the PTX, without files), as softmax-opt does: bad input must end in a
// diagnostic, never in a crash, an abort or a memory error.
//
//===----------------------------------------------------------------------===//

#include "rowred/Pipelines/Pipelines.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"

#include <cstddef>
#include <cstdint>

using namespace mlir;

/// The dialects softmax-opt registers, and the translations to LLVM IR.
static DialectRegistry makeRegistry() {
  DialectRegistry registry;
  rowred::registerRowRedDialects(registry);
  return registry;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const DialectRegistry registry = makeRegistry();
  MLIRContext context(registry, MLIRContext::Threading::DISABLED);
  // Diagnostics are expected; they are dropped, not printed.
  ScopedDiagnosticHandler quiet(&context,
                                [](Diagnostic &) { return success(); });
  // The lexer reads up to a terminating NUL, as a file's buffer has one
  // (the input has none): a copy adds it.
  llvm::SourceMgr sources;
  sources.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(
          llvm::StringRef(reinterpret_cast<const char *>(data), size),
          "input.mlir"),
      llvm::SMLoc());
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sources, &context);
  if (!module)
    return 0;
  PassManager pm(&context);
  rowred::RowRedToPTXOptions options;
  options.chip = "sm_90";
  // No ptxas subprocess per input: scripts/plan_fuzz.py fuzzes the pipeline
  // with it.
  options.ptxas = "none";
  rowred::buildRowRedToPTXPipeline(pm, options);
  (void)pm.run(*module);
  return 0;
}
