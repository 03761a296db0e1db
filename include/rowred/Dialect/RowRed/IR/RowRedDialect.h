//===- RowRedDialect.h - Row-wise reduction dialect -------------*- C++ -*-===//
//
// Part of the softmax kernel compiler.
//
//===----------------------------------------------------------------------===//

#ifndef ROWRED_DIALECT_ROWRED_IR_ROWREDDIALECT_H
#define ROWRED_DIALECT_ROWRED_IR_ROWREDDIALECT_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Dialect.h"

#include "rowred/Dialect/RowRed/IR/RowRedOpsDialect.h.inc"

#endif // ROWRED_DIALECT_ROWRED_IR_ROWREDDIALECT_H
