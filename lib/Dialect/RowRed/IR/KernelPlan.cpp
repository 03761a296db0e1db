//===- KernelPlan.cpp - The shape of one kernel ---------------------------===//
//
// Part of the softmax kernel compiler.
//
//===----------------------------------------------------------------------===//

#include "rowred/Dialect/RowRed/IR/KernelPlan.h"

#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir;
using namespace mlir::rowred;

namespace {
/// A chip the kernels are compiled for: its name, compute capability and the
/// PTX ISA it needs (the cluster exchanges' st.async needs 8.1; sm_100 8.6,
/// sm_120 8.7, as LLVM 22 requires).
struct ChipInfo {
  StringLiteral name;
  int64_t version;
  StringLiteral ptxFeature;
};
} // namespace

static constexpr ChipInfo kChips[] = {
    {"sm_80", 80, "+ptx81"},    {"sm_86", 86, "+ptx81"},
    {"sm_87", 87, "+ptx81"},    {"sm_89", 89, "+ptx81"},
    {"sm_90", 90, "+ptx81"},    {"sm_90a", 90, "+ptx81"},
    {"sm_100", 100, "+ptx86"},  {"sm_100a", 100, "+ptx86"},
    {"sm_120", 120, "+ptx87"},  {"sm_120a", 120, "+ptx87"}};

static const ChipInfo *findChip(StringRef chip) {
  for (const ChipInfo &info : kChips)
    if (info.name == chip)
      return &info;
  return nullptr;
}

int64_t mlir::rowred::chipVersion(StringRef chip) {
  const ChipInfo *info = findChip(chip);
  return info ? info->version : 0;
}

StringRef mlir::rowred::chipPtxFeature(StringRef chip) {
  const ChipInfo *info = findChip(chip);
  return info ? StringRef(info->ptxFeature) : StringRef();
}

std::string mlir::rowred::supportedChips() {
  std::string list;
  for (const ChipInfo &info : kChips)
    list += (list.empty() ? "" : ", ") + info.name.str();
  return list;
}

bool mlir::rowred::isBlockShape(int64_t n) {
  return n > 0 &&
         (llvm::isPowerOf2_64(n) || (n % 3 == 0 && llvm::isPowerOf2_64(n / 3)));
}

bool mlir::rowred::isWarpCount(int64_t n) { return n <= 32 && isBlockShape(n); }

int64_t mlir::rowred::sharedBytesPerSM(int64_t sm) {
  if (sm == 90 || sm == 100)
    return 228 * 1024;
  return sm == 80 ? 164 * 1024 : 100 * 1024;
}

int64_t mlir::rowred::maxDynamicSharedBytes(int64_t sm) {
  return sharedBytesPerSM(sm) - 4 * 1024;
}

KernelPlan KernelPlan::get(PlanAttr attr, Type inType, Type outType) {
  KernelPlan plan;
  plan.strategy = attr.getStrategy();
  plan.chip = attr.getChip().str();
  plan.blockElements = attr.getBlock();
  plan.numWarps = attr.getWarps();
  plan.rowsPerBlock = attr.getRowsPerBlock();
  plan.clusterSize = attr.getCluster();
  plan.vectorWidth = attr.getVector();
  plan.reverseSecondPass = attr.getReverseSecondPass();
  plan.fastExp = attr.getFastExp();
  plan.rereadFallback = attr.getReread();
  plan.prefetch = attr.getPrefetch() == Prefetch::stage;
  plan.prefetchRegisters = attr.getPrefetch() == Prefetch::registers;
  plan.pairReduce = attr.getPairReduce();
  plan.inType = inType;
  plan.outType = outType;
  plan.maxCols = attr.getMaxCols();
  plan.stageElements = attr.getStageElements();
  plan.keptElements = attr.getKeptElements();
  plan.keepAhead = attr.getKeepAhead() != KeepAhead::none;
  plan.bulkKeep = attr.getKeepAhead() == KeepAhead::bulk;
  plan.cacheHints = attr.getCacheHints();
  plan.chunkStaged = attr.getChunkStage();
  plan.gridPerRowGroup = attr.getGrid() == Grid::rows;
  plan.minBlocksPerSM = attr.getMinBlocksPerSm();
  plan.maxRows = attr.getMaxRows();
  plan.hoistMapLoads = attr.getHoistMapLoads();
  plan.sumsInRegisters = attr.getSumsInRegisters();
  return plan;
}

PlanAttr KernelPlan::getAttr(MLIRContext *context) const {
  return getCheckedAttr(nullptr, context);
}

PlanAttr
KernelPlan::getCheckedAttr(function_ref<InFlightDiagnostic()> emitError,
                           MLIRContext *context) const {
  assert(!(prefetch && prefetchRegisters) && "one prefetch kind at most");
  Prefetch prefetchKind = prefetch            ? Prefetch::stage
                          : prefetchRegisters ? Prefetch::registers
                                              : Prefetch::none;
  KeepAhead keep = bulkKeep    ? KeepAhead::bulk
                   : keepAhead ? KeepAhead::tiles
                               : KeepAhead::none;
  // The fields in the attribute's order, to PlanAttr::get or getChecked.
  auto build = [&](auto make) {
    return make(strategy, StringRef(chip), blockElements, numWarps,
                rowsPerBlock, clusterSize, vectorWidth, reverseSecondPass,
                fastExp, rereadFallback, prefetchKind, pairReduce, maxCols,
                stageElements, keptElements, keep, cacheHints, chunkStaged,
                gridPerRowGroup ? Grid::rows : Grid::persistent, minBlocksPerSM,
                maxRows, hoistMapLoads, sumsInRegisters);
  };
  if (!emitError)
    return build(
        [&](auto... fields) { return PlanAttr::get(context, fields...); });
  return build([&](auto... fields) {
    return PlanAttr::getChecked(emitError, context, fields...);
  });
}
