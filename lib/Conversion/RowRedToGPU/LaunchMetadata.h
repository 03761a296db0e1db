//===- LaunchMetadata.h - Launch metadata of a kernel ---------------------===//
//
// Part of the softmax kernel compiler.
//
//===----------------------------------------------------------------------===//

#ifndef ROWRED_CONVERSION_ROWREDTOGPU_LAUNCHMETADATA_H
#define ROWRED_CONVERSION_ROWREDTOGPU_LAUNCHMETADATA_H

#include "KernelGroup.h"
#include "rowred/Dialect/RowRed/IR/KernelPlan.h"

#include "mlir/IR/Builders.h"

namespace mlir {
namespace rowred {

/// The launch metadata recorded for a kernel (docs/abi.md).
DictionaryAttr kernelMetadata(Builder &b, Group &group, const KernelPlan &plan);

/// `metadata` with `variants` listing the kernel `name`, which launches of
/// at most `maxRows` rows take instead (docs/abi.md).
DictionaryAttr withVariant(Builder &b, DictionaryAttr metadata, StringRef name,
                           int64_t maxRows);

} // namespace rowred
} // namespace mlir

#endif // ROWRED_CONVERSION_ROWREDTOGPU_LAUNCHMETADATA_H
