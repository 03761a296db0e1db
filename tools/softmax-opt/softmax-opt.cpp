//===- softmax-opt.cpp - Driver for the softmax kernel compiler -----------===//
//
// Part of the softmax kernel compiler.
//
// An mlir-opt style driver: parses a .mlir file, runs the passes named on the
// command line (or a --pass-pipeline) and prints the result.
//
//===----------------------------------------------------------------------===//

#include "rowred/Dialect/RowRed/IR/RowRedOps.h"
#include "rowred/Dialect/RowRed/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  registry.insert<mlir::rowred::RowRedDialect, mlir::arith::ArithDialect,
                  mlir::func::FuncDialect, mlir::math::MathDialect,
                  mlir::memref::MemRefDialect, mlir::scf::SCFDialect,
                  mlir::vector::VectorDialect>();

  mlir::registerTransformsPasses();
  mlir::rowred::registerRowRedPasses();

  return mlir::asMainReturnCode(mlir::MlirOptMain(
      argc, argv, "Softmax kernel compiler driver\n", registry));
}
