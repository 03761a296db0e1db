//===- RowRedAttrs.h - Row-wise reduction attributes ------------*- C++ -*-===//
//
// Part of the softmax kernel compiler.
//
//===----------------------------------------------------------------------===//

#ifndef ROWRED_DIALECT_ROWRED_IR_ROWREDATTRS_H
#define ROWRED_DIALECT_ROWRED_IR_ROWREDATTRS_H

#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectImplementation.h"

#include "rowred/Dialect/RowRed/IR/RowRedEnums.h.inc"

#include <optional>

namespace mlir {
namespace rowred {
/// Parses a boolean field of a #rowred.plan_request: `true` or `false`.
FailureOr<std::optional<bool>> parseRequestBool(AsmParser &parser);
} // namespace rowred
} // namespace mlir

#define GET_ATTRDEF_CLASSES
#include "rowred/Dialect/RowRed/IR/RowRedAttrs.h.inc"

#endif // ROWRED_DIALECT_ROWRED_IR_ROWREDATTRS_H
