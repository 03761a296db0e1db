//===- PlanRules.h - auto's rules, as measured ----------------------------===//
//
// Part of the softmax kernel compiler.
//
// The rules by which rowred-plan's `auto` chooses a kernel's shape, each
// measured on an H200, and the limits the planner checks options against.
// The Planner's steps (Planner.h) apply them. The shapes of the blocks that
// hold a row or a slice come from the table of PlanTable.json (PlanTable.h);
// the other rules are code. Each declaration says what a rule decides; its
// definition in PlanRules.cpp (or its row in the table) says the rule and
// the runs behind it.
//
//===----------------------------------------------------------------------===//

#ifndef ROWRED_CONVERSION_ROWREDTOGPU_PLANRULES_H
#define ROWRED_CONVERSION_ROWREDTOGPU_PLANRULES_H

#include "Plan.h"
#include "PlanTable.h"

namespace mlir {
namespace rowred {
namespace rules {

/// Largest cluster `auto` and the derived cluster size use: 16, beyond the
/// portable maximum of 8, which launchers opt out of (docs/abi.md). On an
/// H200 (version log) clusters of 16 slices of 12288-16384 beat 8
/// slices of 24576-32768 (alone on their SM) and the online kernel: f32
/// 151936 3740 GB/s against 3055 and 3279, f32 262144 3909 against 3657
/// (online), bf16 262144 3791 against 3332 (online).
inline constexpr int64_t kMaxClusterSize = 16;

/// Largest cluster `cluster` accepts: Hopper runs clusters of 16 when
/// the launcher sets CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED
/// (docs/abi.md).
inline constexpr int64_t kMaxNonPortableClusterSize = 16;

/// The block auto gives a row of `cols` elements (`table`: the plan table
/// the rules read, here and below).
int64_t autoRowBlock(const PlanTable &table, int64_t cols);

/// Default warps for a fused block (or cluster slice) of `blockElements`
/// elements, from sweeps of warps per row length on an H200.
int64_t defaultFusedWarps(const PlanTable &table, int64_t blockElements);

/// The table's key for a block of `block` elements of `plan`.
TableKey tableKey(const KernelPlan &plan, int64_t block);

/// The warps of the table's measured shape (block_shapes) for the fused
/// block of one row of `slice` elements of `plan` under `opts` on compute
/// capability `sm`, or 0 where the table has none or warps are asked for.
int64_t measuredBlockWarps(const KernelPlan &plan, int64_t slice,
                           const PlanOptions &opts, int64_t sm);

/// What a kernel's map and row length hold in registers beyond softmax's
/// map over rows of a multiple of the vector width, for the register bounds
/// (minBlocksPerSM) and block sizes (autoMaxBlockThreads) of auto.
struct MapLoad {
  /// Another map than softmax's.
  bool otherMap = false;
  /// A map that compares per-row inputs with each element's column
  /// (cross-entropy's gradient and its labels).
  bool rowInputsPerElement = false;
  /// A known row length off the vector width: the peeled path.
  bool peeled = false;
  /// Several operands (inputs, per-column operands, outputs of rows) rather
  /// than one input and at most one output of rows.
  bool severalOperands = false;
  /// Inputs and per-column operands only the map reads (the norms' weight
  /// and bias: Group::isMapOnly).
  int64_t mapOnlyOperands = 0;
};

/// The most threads `auto` gives a fused block or a cluster slice of 32
/// elements per thread of a kernel whose map holds `map` on compute
/// capability `sm`: 1024 but for other maps than softmax's on the chips
/// other than sm_90, where the plans were measured.
int64_t autoMaxBlockThreads(int64_t sm, const MapLoad &map);

/// Largest fused block `auto` picks, on blocks of at most `maxThreads`
/// threads (autoMaxBlockThreads).
int64_t maxAutoFusedBlock(int64_t elementBytes, bool stage, int64_t maxThreads);

/// The slice (elements) `auto` gives each cluster block (see
/// autoWideClusterSlice), on blocks of at most `maxThreads` threads.
int64_t autoClusterSlice(int64_t rowBlock, int64_t elementBytes, int64_t cols,
                         int64_t maxThreads);

/// Whether `auto` splits a row block of `rowBlock` elements over a cluster.
bool fitsAutoCluster(int64_t rowBlock, int64_t elementBytes, int64_t cols,
                     int64_t maxThreads);

/// The online kernel's default shape (warps, and elements per thread of its
/// tile where the table names them) for `type` over clusters of
/// `clusterSize` on compute capability `sm`, writing rows or only per-row
/// results.
const WarpsRow &defaultOnlineShape(const PlanTable &table, Type type,
                                   int64_t clusterSize, int64_t sm,
                                   bool writesRows);

/// Whether auto gives a kernel the pair reduction.
bool autoPairReduce(const KernelPlan &plan, const PlanOptions &opts,
                    int64_t cols);

/// What auto fetches ahead for the kernel of `plan` where it can: the next
/// row staged in shared memory, the next row (or tile) in registers, or
/// nothing. `held`: the operands a kernel of several holds through its
/// reductions, 0 for one input and output; `columnTypes`: the element types
/// of its per-column operands (PlanTable::prefetchOf).
Prefetch autoFetchAhead(const PlanTable &table, const KernelPlan &plan,
                        int64_t held = 0, TypeRange columnTypes = {});

/// Elements of each block's share that auto keeps in shared memory, copied in
/// ahead (keep_ahead), or 0.
int64_t autoKeepAheadElements(const KernelPlan &plan);

/// Elements of each block's share that auto keeps in two stage buffers with
/// keep_ahead = bulk, or 0.
int64_t autoBulkKeptElements(const KernelPlan &plan);

/// Whether auto gives the online kernel tiles of two vectors per thread instead
/// of four, so that autoBulkKeptElements keeps three of the four tiles of each
/// share, 96 KiB twice.
bool autoBulkTiles(const PlanOptions &opts, Type type, int64_t clusterSize,
                   int64_t cols);

/// Whether auto gives the online or fused kernel of `plan`, which writes rows
/// or only per-row results, L2 eviction hints (cache_hints) on compute
/// capability `sm`.
bool autoCacheHints(const PlanTable &table, const KernelPlan &plan, int64_t sm,
                    bool writesRows);

/// Whether auto launches one program per row group (grid = rows) instead of the
/// persistent grid, for a kernel that writes rows or only per-row results.
bool autoGridPerRowGroup(const PlanTable &table, const KernelPlan &plan,
                         bool writesRows);

/// Whether the options let the kernel run one program per row group.
bool mayGridPerRowGroup(const PlanOptions &opts, int64_t sm);

/// The table's row_lengths row by which auto runs a row of the kernel of
/// `key` as a staged row, or null (`peelable`: a kernel of one input and
/// output of rows whose map reads no per-row input, which stages rows of any
/// length).
const RowLengthRow *autoStagedRow(const PlanOptions &opts,
                                  const KernelPlan &plan,
                                  const RowLengthKey &key, int64_t sm,
                                  bool peelable);

/// Warps auto gives a staged row (autoStagedRow) of `cols` elements.
int64_t stagedRowWarps(const PlanTable &table, int64_t cols);

/// Why the kernel of `plan` cannot fetch its next row ahead, into the stage
/// (`stage`) or into registers, on compute capability `sm`; empty when it can.
StringRef prefetchObstacle(const KernelPlan &plan, bool stage, int64_t sm);

/// The blocks per SM that ptxas is asked to fit (`.minnctapersm`), which caps
/// the kernel at 64 registers per thread (fewer blocks, more registers, for
/// the `map`'s values), or 0 for no request: none for the kernels that the
/// bounds were not measured on (several operands; per-row inputs per element
/// but on cluster slices and chunks) on sm_90.
int64_t minBlocksPerSM(const KernelPlan &plan, const MapLoad &map);

/// The registers a thread of `plan` may take without spilling when it holds
/// its elements of `operands` operands (inputs and per-column operands) at
/// once, against the registers it has; see the definition.
std::pair<int64_t, int64_t> operandRegisters(const KernelPlan &plan,
                                             int64_t operands);

/// The registers a thread of a fused block or cluster slice of one input
/// needs for the elements it holds, against the registers it has; see the
/// definition.
std::pair<int64_t, int64_t> rowRegisters(const KernelPlan &plan);

/// The blocks of `plan` whose registers, as operandRegisters counts them,
/// fit one SM's register file.
int64_t operandBlocksPerSM(const KernelPlan &plan, int64_t operands);

/// Whether one block of 32 to 1024 threads can hold a row (or slice) of
/// `elements` of each of `operands` operands in registers, as
/// operandRegisters counts them.
bool fitsOperandRegisters(int64_t elements, int64_t operands);

/// Blocks of the cluster auto gives an online kernel for rows of `cols`
/// elements of `elementBytes`.
int64_t autoOnlineClusterSize(const PlanTable &table, int64_t cols,
                              int64_t elementBytes);

/// Whether auto cuts the rows of the kernel of `key` into chunks
/// (Strategy::chunks); rows that are not a multiple of the vector width
/// only when `peelable` (one input and output of rows: the chunks' peeled
/// vector path).
bool autoChunks(const PlanOptions &opts, const KernelPlan &plan,
                const RowLengthKey &key, int64_t sm, bool peelable);

} // namespace rules
} // namespace rowred
} // namespace mlir

#endif // ROWRED_CONVERSION_ROWREDTOGPU_PLANRULES_H
