//===- Planner.h - The steps of planKernel ----------------------*- C++ -*-===//
//
// Part of the softmax kernel compiler.
//
// The Planner behind planKernel (Plan.h). Its steps are defined in
// Plan.cpp (the inputs and the strategy), PlanBlockShape.cpp (the block,
// cluster, online tile and chunk shapes) and PlanMemoryPaths.cpp (the
// pair reduction and the grid, prefetch, kept tiles, L2 hints and the
// shapes refused for their spills).
//
//===----------------------------------------------------------------------===//

#ifndef ROWRED_CONVERSION_ROWREDTOGPU_PLANNER_H
#define ROWRED_CONVERSION_ROWREDTOGPU_PLANNER_H

#include "Plan.h"
#include "PlanRules.h"

namespace mlir {
namespace rowred {

/// The steps of planKernel over one group, in order, sharing what they
/// derive: the inputs (types, row length, vector width), the strategy, the
/// block shape of the strategy, then the memory paths. Each step reports
/// an invalid option with a diagnostic on the map.
class Planner {
public:
  Planner(const Group &group, const PlanOptions &opts)
      : group(group), map(group.map), opts(opts) {}

  /// The plan, but for the fields that follow from the others.
  FailureOr<KernelPlan> run();

private:
  /// The chunks strategy's part of planKernel: `plan` has its types, and
  /// `vector` and `sm` are resolved. Default layout (H200, version 69 of
  /// version log): 128 threads, each with 64 f32 elements in registers
  /// and 64 staged (3947-3954 GB/s on f32 1024 x 1048576, 1.075x the online
  /// kernel's), or 32 16-bit elements in registers and 96 staged.
  ///
  /// Other groups (chunkExchanges) share those among the operands their
  /// reduces read, in registers and in the stage (each 2-D input's staged
  /// elements side by side).
  static FailureOr<KernelPlan> planChunks(const Group &group,
                                          const PlanOptions &opts,
                                          KernelPlan plan, int64_t vector,
                                          int64_t sm);

  /// The element types, the row length (`cols`, or the input type's) and
  /// the widest vector.
  LogicalResult resolveInputs();

  /// The numeric shape options, and the combinations that contradict.
  LogicalResult checkShapeOptions();

  /// What the table's row_lengths match the kernel by.
  RowLengthKey rowLengthKey() const;

  /// Sets plan.strategy; true when the kernel is a chunks kernel, which
  /// planChunks shapes.
  FailureOr<bool> chooseStrategy();

  /// The block of a fused kernel or of a cluster's slice: its threads and
  /// rows, the cluster size.
  LogicalResult shapeRowBlock();

  /// With several operands, fits a block's elements of every operand into
  /// its registers (operandRegisters): a cluster of derived size grows, each
  /// block taking a smaller slice of the row, and then derived warps halve,
  /// fewer threads getting more registers each, also until two blocks fit
  /// an SM (H100 sweep, bench/family.py --sweep, with layer_norm's weight and
  /// bias held through the reductions: bf16 8192 on 256 threads, one block
  /// per SM, 53-55% of the copy; on 128, two, 80-82%). A plan that still
  /// does not fit is refused by refuseSpills.
  void fitOperandRegisters();

  /// Whether a thread's elements of every operand fit its registers
  /// (operandRegisters); always for a kernel of one row operand.
  bool operandsFit() const;

  /// Whether auto may choose a kernel that streams the row (the online
  /// kernel, a staged row, chunks): not for sums down the columns, whose
  /// kernels hold the row (a block, or a cluster's slices: ColumnSums).
  /// Totals over the rows take what per-row results take (not chunks).
  bool autoMayStream() const {
    return opts.strategy == "auto" && group.columnSums.empty();
  }

  /// The operands of a block of `clusterSize`: inputs and per-column ones,
  /// and in a fused block each 2-D output beyond the first, whose values the
  /// map computes beside the first's (rms_norm's residual form, bf16 x 8192
  /// on H100: 4 warps without its second output 81% of the copy, 8 warps
  /// 98%; cluster slices are sized on the operands read, as measured for the
  /// norms). The table's operand_shapes rows and a streamed tile count these.
  int64_t numOperands(int64_t clusterSize = 1) const {
    int64_t extraOutputs =
        clusterSize == 1 ? std::max<int64_t>(0, group.outputs.size() - 1) : 0;
    return group.inputs.size() + group.columns.size() + extraOutputs;
  }

  /// The operands a thread holds in registers at once, for
  /// operandRegisters: numOperands less the 2-D inputs only the map reads
  /// (rms_norm's residual backward: h's own gradient), which the map loads
  /// a vector at a time, unless hoist_map_loads loads them with the row.
  /// rms_norm_residual_backward at 16384 then fits 256 threads of 64
  /// elements, as rms_norm_backward does (ptxas: no spills).
  int64_t registerOperands(int64_t clusterSize = 1) const {
    if (opts.hoistMapLoads.value_or(false))
      return numOperands(clusterSize);
    return numOperands(clusterSize) - group.numMapOnlyInputs();
  }

  /// The online kernel's tile, threads and the blocks sharing a row.
  LogicalResult shapeOnline();

  /// The pair reduction and the grid.
  LogicalResult planPairAndGrid();

  /// What is fetched ahead (the stage, registers), and auto's kept tiles.
  LogicalResult planPrefetch();

  /// The online kernel's tiles kept between its passes (kept_elements) and
  /// how they are filled (keep_ahead).
  LogicalResult planKeptTiles();

  /// Refuses the combinations that ptxas -v (sm_90) showed to spill, with
  /// the fields to change: cluster slices of 32 elements per thread with the
  /// pair reduction and, for 16-bit types, the scalar path's row in
  /// registers (4-8 bytes at 65536-131072 without the next row ahead, 12-32
  /// with it) or, for f32, the next row loaded ahead into registers (48-180
  /// bytes). Without those, the same slices and fused blocks of the same
  /// shape do not spill.
  LogicalResult refuseSpills();

  /// Whether the kernel streams its row per level of reduces on one block
  /// and writes rows: the table's streamed_tiles apply to it. Rows only
  /// reduced (the smoothed cross-entropy) and rows over clusters keep
  /// online_warps' shape, without hints.
  bool streamsRows() const {
    return plan.streamsLevels() && plan.clusterSize == 1 && group.writesRows();
  }

  /// Whether the online kernel's streamed passes (reread) stage their share
  /// of each 2-D input whole in shared memory before the first pass, so
  /// that every pass reads it there: asked for with prefetch = stage (for a
  /// row of a known length: prefetchObstacle), or auto's staged row.
  bool stagesStreamedRow() const {
    return opts.prefetch == Prefetch::stage || stagedRow;
  }

  /// The online kernel's L2 eviction hints: its running pair's
  /// (autoCacheHints), and those of the passes that stream the row per
  /// level (the table's streamed_tiles).
  LogicalResult planCacheHints();

  /// Whether the operands only the map reads load with the row
  /// (hoist_map_loads): where asked for, in the strategies that hold the
  /// row, for a group that has such operands.
  LogicalResult planMapLoads();

  /// Whether the sums down the columns stay in registers over the rows
  /// (sums_in_registers): as asked, else where the table's row_lengths row
  /// of the kernel's cluster says so; only for a group with column sums.
  LogicalResult planColumnSums();

  const Group &group;
  MapOp map;
  const PlanOptions &opts;
  KernelPlan plan;
  /// The compute capability, the widest element in bytes, the row length
  /// (0: unknown), the vector width asked for and the block a whole row
  /// needs (0: unknown).
  int64_t sm = 0, elementBytes = 0, cols = 0, vector = 0, rowBlock = 0;
  bool clustersAvailable = false;
  /// Whether the group is the softmax pair of reduces (chunks and the pair
  /// reduction need it), and whether it may also take the online kernel's
  /// running pair (which writes no per-row results; other groups' online
  /// kernels stream the row per level of reduces).
  bool canPair = false, canOnline = false;
  /// Whether the chunks strategy takes the group: the pair, or generic
  /// chunks (chunkExchanges).
  bool canChunk = false;
  /// The most threads auto gives a block of 32 elements per thread
  /// (autoMaxBlockThreads).
  int64_t maxBlockThreads = 1024;
  /// Whether auto stages a row whole on a block of its own (autoStagedRow).
  bool stagedRow = false;
  /// The warps that the table's row_lengths give that block (0: the table's
  /// staged_row_warps or streamed_tiles).
  int64_t lengthWarps = 0;
  /// Whether that row_lengths row keeps the column sums in registers.
  bool lengthSumsInRegisters = false;
  /// The cluster that the table's row_lengths give the row (0: none).
  int64_t lengthCluster = 0;
  /// The cluster the request or the table's row_lengths name (0: derived).
  int64_t givenCluster() const {
    return opts.clusterSize ? opts.clusterSize : lengthCluster;
  }
  /// Whether auto streams a row it only reduces once, a block per row
  /// (row_lengths' online rows that write no rows).
  bool reducedOnly = false;
};

} // namespace rowred
} // namespace mlir

#endif // ROWRED_CONVERSION_ROWREDTOGPU_PLANNER_H
