//===- RowRedToGPU.h - Lower rowred groups to GPU kernels -------*- C++ -*-===//
//
// Part of the softmax kernel compiler.
//
//===----------------------------------------------------------------------===//

#ifndef ROWRED_CONVERSION_ROWREDTOGPU_ROWREDTOGPU_H
#define ROWRED_CONVERSION_ROWREDTOGPU_ROWREDTOGPU_H

#include "rowred/Dialect/RowRed/IR/RowRedAttrs.h"

#include "mlir/Pass/Pass.h"

#include <memory>
#include <optional>

namespace mlir {
class ModuleOp;
namespace rowred {
class MapOp;
struct PlanTable;

#define GEN_PASS_DECL_CONVERTROWREDTOGPU
#define GEN_PASS_DECL_ROWREDPLAN
#include "rowred/Conversion/Passes.h.inc"

/// Name of the module attribute holding one dictionary of launch metadata per
/// generated kernel, keyed by the kernel's name.
inline constexpr llvm::StringLiteral kKernelsAttrName = "rowred.kernels";

/// Reports the first high-level op (rowred.softmax, rowred.rms_norm, ...)
/// left in `module`, which `stage` (a pass) cannot take before
/// rowred-decompose.
LogicalResult verifyDecomposed(ModuleOp module, StringRef stage);

/// The table of the passes' `plan-table` option: the plan table in the file
/// at `path` (the format of the one compiled in,
/// lib/Conversion/RowRedToGPU/PlanTable.json), or null for an empty path
/// (the one compiled in); a diagnostic at `loc` where the file cannot be
/// read or is not such a table.
FailureOr<std::shared_ptr<const PlanTable>> loadPlanTable(StringRef path,
                                                          Location loc);

/// Plans the group `map` ends, as rowred-plan does for each map: a plan
/// already on the map is kept; otherwise the plan auto chooses for `strategy`,
/// `cols` and `chip` around the map's #rowred.plan_request, and (only where
/// the whole plan is auto's) the plans of its kernels for launches of a few
/// rows (fewRowsPlans), by the rules of `table` (null: the table compiled
/// in). Fails with a diagnostic on the map.
LogicalResult planMap(MapOp map, StringRef strategy, int64_t cols,
                      StringRef chip, const PlanTable *table = nullptr);

/// The most kernels for a few rows one map may have (the runtime's bound on
/// a kernel's `variants`, docs/abi.md).
inline constexpr unsigned kMaxFewRowsKernels = 8;

/// The #rowred.plan of each of `map`'s kernels for a few rows, by their
/// max_rows: its rowred.few_rows_plan, one plan or an array of plans of
/// increasing max_rows (none without the attribute); a diagnostic on the map
/// where the attribute is neither.
FailureOr<SmallVector<PlanAttr>> fewRowsPlans(MapOp map);

/// Sets `map`'s rowred.few_rows_plan to `plans` (fewRowsPlans' form: one
/// plan alone, several in an array), or removes it where there are none.
void setFewRowsPlans(MapOp map, ArrayRef<PlanAttr> plans);

/// Where a kernel of convert-rowred-to-gpu comes from: the index of its
/// rowred.map among the module's maps in walk order, and for one of the
/// group's kernels for launches of a few rows, the most rows it takes.
struct KernelOrigin {
  unsigned mapIndex;
  std::optional<int64_t> fewRowsMax;
};

/// The origin of the kernel convert-rowred-to-gpu named `kernel`
/// (`<function>_kernel<N>`, `<function>_kernel<N>_rows<max_rows>`), or
/// nullopt for another name.
std::optional<KernelOrigin> kernelOrigin(StringRef kernel);

} // namespace rowred
} // namespace mlir

#endif // ROWRED_CONVERSION_ROWREDTOGPU_ROWREDTOGPU_H
