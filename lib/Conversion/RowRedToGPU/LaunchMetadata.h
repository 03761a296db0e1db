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

/// A kernel a launch of at most `maxRows` rows takes instead of the main one.
struct KernelVariant {
  StringRef name;
  int64_t maxRows;
};

/// `metadata` with `variants` listing `variants` (docs/abi.md).
DictionaryAttr withVariants(Builder &b, DictionaryAttr metadata,
                            ArrayRef<KernelVariant> variants);

} // namespace rowred
} // namespace mlir

#endif // ROWRED_CONVERSION_ROWREDTOGPU_LAUNCHMETADATA_H
