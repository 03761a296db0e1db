//===- LaunchMetadata.cpp - Launch metadata of a kernel -------------------===//
//
// Part of the softmax kernel compiler.
//
//===----------------------------------------------------------------------===//

#include "LaunchMetadata.h"

#include "mlir/IR/TypeUtilities.h"

using namespace mlir;
using namespace mlir::rowred;

/// How the kernel fetches a block's next row: "shared" (the stage),
/// "registers" or "none".
static StringRef prefetchKind(const KernelPlan &plan) {
  if (plan.prefetch)
    return "shared";
  return plan.prefetchRegisters ? "registers" : "none";
}

/// The grid the launcher starts (docs/abi.md): "chunks" (one block per
/// chunk of every row), "rows" (one program per row group) or "persistent".
static StringRef gridKind(const KernelPlan &plan) {
  if (plan.strategy == Strategy::chunks)
    return "chunks";
  return plan.gridPerRowGroup ? "rows" : "persistent";
}

/// The kernel's operands in parameter order (docs/abi.md): the inputs (x,
/// x1, ...), the outputs (y, y1, ...), the per-column operands (w, w1, ...),
/// the per-row inputs (r, r1, ...), the per-row outputs (z, z1, ...), the
/// column sums (s, s1, ...) and the totals (t, t1, ...), each with its role
/// and element type.
static ArrayAttr operandList(Builder &b, Group &group) {
  SmallVector<Attribute> operands;
  auto add = [&](ValueRange values, StringRef prefix, StringRef role) {
    for (auto [index, value] : llvm::enumerate(values)) {
      std::string name = prefix.str();
      if (index > 0)
        name += std::to_string(index);
      NamedAttribute fields[] = {
          b.getNamedAttr("name", b.getStringAttr(name)),
          b.getNamedAttr("role", b.getStringAttr(role)),
          b.getNamedAttr(
              "type", b.getStringAttr(typeName(getElementTypeOrSelf(value))))};
      operands.push_back(b.getDictionaryAttr(fields));
    }
  };
  add(group.inputs, "x", "input");
  add(group.outputs, "y", "output");
  add(group.columns, "w", "column");
  add(group.rowInputs, "r", "row");
  add(group.rowOutputs, "z", "row_output");
  add(group.columnSums, "s", "column_sum");
  add(group.totals, "t", "total");
  return b.getArrayAttr(operands);
}

DictionaryAttr mlir::rowred::kernelMetadata(Builder &b, Group &group,
                                            const KernelPlan &plan) {
  StringRef origin = "custom";
  if (auto attr = group.map->getAttrOfType<StringAttr>(kOriginAttrName))
    origin = attr.getValue();
  int64_t sharedBytes =
      llvm::alignTo((plan.sharedSlots(group.reduces.size()) * plan.numWarps +
                     plan.clusterSlots(group.reduces.size())) *
                        4,
                    8) +
      plan.clusterBarriers(group.reduces.size()) * 8;
  std::string planText;
  llvm::raw_string_ostream(planText) << plan.getAttr(b.getContext());
  SmallVector<NamedAttribute> attrs = {
      b.getNamedAttr("op", b.getStringAttr(origin)),
      b.getNamedAttr("strategy",
                     b.getStringAttr(stringifyStrategy(plan.strategy))),
      b.getNamedAttr("operands", operandList(b, group)),
      b.getNamedAttr("input_type", b.getStringAttr(typeName(plan.inType))),
      b.getNamedAttr("output_type", b.getStringAttr(typeName(plan.outType))),
      b.getNamedAttr("block_threads", b.getI64IntegerAttr(plan.numThreads())),
      b.getNamedAttr("block_elements", b.getI64IntegerAttr(plan.blockElements)),
      b.getNamedAttr("rows_per_block", b.getI64IntegerAttr(plan.rowsPerBlock)),
      b.getNamedAttr("cluster_blocks", b.getI64IntegerAttr(plan.clusterSize)),
      b.getNamedAttr("elements_per_thread",
                     b.getI64IntegerAttr(plan.elementsPerThread())),
      b.getNamedAttr("vector_width", b.getI64IntegerAttr(plan.vectorWidth)),
      b.getNamedAttr("shared_bytes", b.getI64IntegerAttr(sharedBytes)),
      b.getNamedAttr("dynamic_shared_bytes",
                     b.getI64IntegerAttr(kernelDynamicSharedBytes(group, plan))),
      b.getNamedAttr("min_cols", b.getI64IntegerAttr(1)),
      b.getNamedAttr("max_cols", b.getI64IntegerAttr(plan.maxCols)),
      b.getNamedAttr("reverse_second_pass",
                     b.getBoolAttr(plan.strategy == Strategy::online &&
                                   !plan.streamsLevels() &&
                                   plan.reverseSecondPass)),
      b.getNamedAttr("fast_exp", b.getBoolAttr(plan.fastExp)),
      b.getNamedAttr("prefetch", b.getStringAttr(prefetchKind(plan))),
      b.getNamedAttr("peeled_path", b.getBoolAttr(hasPeeledPath(group, plan))),
      b.getNamedAttr("pair_reduce", b.getBoolAttr(plan.pairReduce)),
      b.getNamedAttr("plan", b.getStringAttr(planText)),
      b.getNamedAttr("l2_hints", b.getBoolAttr(plan.cacheHints)),
      b.getNamedAttr("keep_ahead", b.getBoolAttr(plan.keepAhead)),
      b.getNamedAttr("keep_ahead_bulk", b.getBoolAttr(plan.bulkKeep)),
      b.getNamedAttr("grid", b.getStringAttr(gridKind(plan))),
      b.getNamedAttr("chunk_elements",
                     b.getI64IntegerAttr(plan.strategy == Strategy::chunks
                                             ? plan.chunkElements()
                                             : 0)),
  };
  if (plan.strategy == Strategy::chunks)
    attrs.push_back(b.getNamedAttr("chunk_entries",
                                   b.getI64IntegerAttr(chunkEntries(group))));
  // The op's parameters, for a launcher's reference.
  for (auto [recorded, name] :
       {std::pair{kEpsilonAttrName, StringRef("epsilon")},
        {kIgnoreIndexAttrName, "ignore_index"},
        {kLabelSmoothingAttrName, "label_smoothing"}})
    if (Attribute value = group.map->getAttr(recorded))
      attrs.push_back(b.getNamedAttr(name, value));
  if (group.map->hasAttr(kSafeAttrName))
    attrs.push_back(b.getNamedAttr("safe", b.getBoolAttr(true)));
  if (plan.maxRows > 0)
    attrs.push_back(
        b.getNamedAttr("max_rows", b.getI64IntegerAttr(plan.maxRows)));
  return b.getDictionaryAttr(attrs);
}

DictionaryAttr mlir::rowred::withVariants(Builder &b, DictionaryAttr metadata,
                                          ArrayRef<KernelVariant> variants) {
  SmallVector<Attribute> list;
  for (const KernelVariant &variant : variants) {
    NamedAttribute fields[] = {
        b.getNamedAttr("kernel", b.getStringAttr(variant.name)),
        b.getNamedAttr("max_rows", b.getI64IntegerAttr(variant.maxRows))};
    list.push_back(b.getDictionaryAttr(fields));
  }
  SmallVector<NamedAttribute> attrs(metadata.getValue());
  attrs.push_back(b.getNamedAttr("variants", b.getArrayAttr(list)));
  return b.getDictionaryAttr(attrs);
}
