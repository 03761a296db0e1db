//===- KernelPlan.h - The shape of one kernel -------------------*- C++ -*-===//
//
// Part of the softmax kernel compiler.
//
// KernelPlan is the C++ view of a #rowred.plan attribute together with the
// element types it applies to: everything that shapes one generated kernel
// (its strategy, block shape, vector width and the memory paths its rows
// take) and the quantities derived from it (threads, shared memory,
// workspace). rowred-plan fills one in and stores it as the attribute;
// convert-rowred-to-gpu reads it back and follows it.
//
//===----------------------------------------------------------------------===//

#ifndef ROWRED_DIALECT_ROWRED_IR_KERNELPLAN_H
#define ROWRED_DIALECT_ROWRED_IR_KERNELPLAN_H

#include "rowred/Dialect/RowRed/IR/RowRedAttrs.h"

#include "mlir/IR/Types.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

namespace mlir {
namespace rowred {

/// The compute capability of `chip` (`sm_90a` -> 90), or 0 when `chip` is
/// not one the kernels are compiled for (supportedChips).
int64_t chipVersion(StringRef chip);

/// The PTX ISA feature (`+ptx81`, ...) that `chip` needs; empty for a chip
/// chipVersion does not know.
StringRef chipPtxFeature(StringRef chip);

/// The supported chips, comma-separated, for diagnostics.
std::string supportedChips();

/// Whether `n` is a block length or warp count the kernels accept: a power of
/// two, or three times one.
bool isBlockShape(int64_t n);

/// Whether `n` is a warp count a block may have: 1 to 32, a power of two or
/// three times one.
bool isWarpCount(int64_t n);

/// Most elements one thread may hold in registers: with the addresses and
/// masks beside them they already fill most of a thread's 255 registers.
inline constexpr int64_t kMaxElementsPerThread = 128;

/// Shared memory of one SM of compute capability `sm`, in bytes: 228 KiB on
/// sm_90 and sm_100, 164 KiB on sm_80, 100 KiB on sm_86, sm_89 and sm_120.
int64_t sharedBytesPerSM(int64_t sm);

/// Dynamic shared memory one block may take on `sm`, in bytes: what a block
/// can opt in to (227, 163 or 99 KiB) less 3 KiB for its static slots.
int64_t maxDynamicSharedBytes(int64_t sm);

/// Everything the kernel emitter needs to know: a #rowred.plan and the
/// group's element types.
struct KernelPlan {
  /// The plan in `attr` for a kernel from `inType` to `outType` elements.
  static KernelPlan get(PlanAttr attr, Type inType, Type outType);
  /// The plan as an attribute (without the element types).
  PlanAttr getAttr(MLIRContext *context) const;
  /// The plan as an attribute, or null after a diagnostic through
  /// `emitError` when the attribute's verifier refuses it.
  PlanAttr getCheckedAttr(function_ref<InFlightDiagnostic()> emitError,
                          MLIRContext *context) const;

  Strategy strategy = Strategy::fused;
  /// The target chip (`sm_XY`).
  std::string chip = "sm_90";
  /// Elements covered by one block: the whole row (fused), the block's slice
  /// of the row (cluster) or one tile (online). A power of two, at least one
  /// per thread of a row.
  int64_t blockElements = 0;
  int64_t numWarps = 1;
  /// Rows a block works on at once (fused); each row gets numThreads() /
  /// rowsPerBlock threads, at most a warp when there is more than one row.
  int64_t rowsPerBlock = 1;
  /// Blocks of a cluster sharing a row (cluster strategy), else 1.
  int64_t clusterSize = 1;
  /// Widest vector access (elements); the kernel falls back to 1 at run time
  /// when lengths, strides or pointers do not allow it.
  int64_t vectorWidth = 1;
  bool reverseSecondPass = true;
  bool fastExp = true;
  /// Fused and cluster: the scalar fallback re-reads the row once per
  /// reduction and for the map instead of holding it in registers. Online:
  /// every path streams the row once per level of reduces and once for the
  /// map, with no running (max, sum) pair (streamsLevels).
  bool rereadFallback = false;
  /// Fused and cluster, vector path: the block's next row is copied into a
  /// shared-memory stage (cp.async) while the current row is reduced.
  bool prefetch = false;
  /// Fused and cluster, vector path: the block's next row is loaded into a
  /// second set of registers at the top of the current row, so that its
  /// loads are in flight while the current row is reduced and written.
  bool prefetchRegisters = false;
  /// Fused and cluster over a (max, sum of exp(x - max)) pair: each thread
  /// reduces its elements to a (max, sum) pair in one go, and the pairs meet
  /// with the online combiner in one exchange per row instead of two.
  bool pairReduce = false;
  Type inType, outType;
  /// Largest row the kernel handles (0: no limit).
  int64_t maxCols = 0;
  /// Elements the prefetch stage can hold: one block (fused, cluster), or
  /// the block's whole share of a row of the known length (online; 0 when
  /// the length is unknown).
  int64_t stageElements = 0;
  /// Online: elements of each block's share (its first whole tiles) kept in
  /// the stage for pass 2 (kept_elements); 0 for none.
  int64_t keptElements = 0;
  /// Online, with kept tiles: they are copied in with cp.async during the
  /// previous row's pass 2 (keep_ahead), never the share's last tile, instead
  /// of stored by pass 1.
  bool keepAhead = false;
  /// Online, with keep_ahead: thread 0 copies the next row's kept tiles with
  /// one bulk copy (cp.async.bulk, completing on an mbarrier) into the
  /// second of two stage buffers, right after this row's block reduction,
  /// instead of each thread refilling its chunks in pass 2 (keep_ahead = bulk).
  bool bulkKeep = false;
  /// Online: L2 eviction hints on the 16-byte global accesses (cache_hints).
  bool cacheHints = false;
  /// Chunks: elements of each chunk after its blockElements in registers,
  /// bulk-copied into the stage (chunk_stage); 0 for none.
  int64_t chunkStaged = 0;
  /// The 2-D inputs whose staged elements the stage holds, side by side, in
  /// slots of chunkStaged (chunks) or stageElements (the online kernel's
  /// streamed passes) elements: stageSlots of the group, not in the
  /// attribute; 1 elsewhere.
  int64_t stageInputs = 1;
  /// The launcher starts one program (block, cluster) per row group instead
  /// of the persistent grid of the programs resident at once (grid = rows); the
  /// kernel still loops over rows, so any grid computes the same result.
  bool gridPerRowGroup = false;
  /// The `.minnctapersm` ptxas is asked for (0: none).
  int64_t minBlocksPerSM = 0;
  /// The most rows of a launch that takes this kernel (0: any): the second
  /// kernel of a group, for launches of a few rows.
  int64_t maxRows = 0;
  /// Fused and cluster: the operands only the map reads are loaded with the
  /// row, before its reductions, instead of by the map (hoist_map_loads).
  bool hoistMapLoads = false;
  /// Fused and cluster kernels with column sums: each thread's sums stay in
  /// registers over its rows (sums_in_registers).
  bool sumsInRegisters = false;

  int64_t numThreads() const { return numWarps * 32; }
  /// The compute capability of the chip.
  int64_t sm() const { return chipVersion(chip); }
  int64_t threadsPerRow() const { return numThreads() / rowsPerBlock; }
  /// Chunks: the elements of one chunk, one block's.
  int64_t chunkElements() const { return blockElements + chunkStaged; }
  /// Chunks: the shared f32 slots of the block's ticket and of the row's
  /// values (at most kChunkValues: the (max, sum) pair, a level's partial
  /// results, or shifted moments' four), after the four of the block
  /// exchanges (shifted moments: their sum and count, then their two
  /// shifted sums).
  static constexpr int64_t kTicketSlot = 4, kRowValuesSlot = 5,
                           kChunkValues = 4;
  /// Whether the kernel has the peeled vector path, for rows that are not
  /// aligned for vectors but are misaligned alike in the input and the
  /// output (odd row lengths of contiguous tensors). Not for cluster slices
  /// with both the pair reduction and the stage, which spill (f32 65536: 4
  /// bytes), nor for rows streamed per level (streamsLevels), whose scalar
  /// path streams them as well.
  bool peelable() const {
    return vectorWidth > 1 && !streamsLevels() &&
           !(clusterSize > 1 && pairReduce && prefetch);
  }
  /// Whether the peeled path of cluster slices reduces one value at a time
  /// even with the pair reduction: the pair keeps every chunk's exponentials
  /// until the row's end, and with the edge element on top the 64-register
  /// slices spill (4 bytes).
  bool peeledWithoutPair() const {
    return clusterSize > 1 && pairReduce && peelable();
  }
  int64_t elementsPerThread() const { return blockElements / threadsPerRow(); }
  /// Block-level exchanges through shared memory per row: one per reduce
  /// (fused, cluster), one for the (max, sum) pair (online, pair reduction,
  /// except on an `unpaired` path: see clusterExchanges); none when a row
  /// belongs to one warp or less.
  int64_t exchangesPerRow(size_t numReduces, bool unpaired = false) const {
    if (threadsPerRow() <= 32)
      return 0;
    return exchangesPairs() && !unpaired ? 1 : numReduces;
  }
  /// Whether the kernel is online without its running pair: each level of
  /// reduces streams the row, then the map does (any chain of reduces).
  bool streamsLevels() const {
    return strategy == Strategy::online && rereadFallback;
  }
  /// Whether the row loop's exchanges carry (max, sum) pairs (a chunks
  /// kernel has no row loop: its shared slots are sharedSlots' own).
  bool exchangesPairs() const {
    return (strategy == Strategy::online && !streamsLevels()) || pairReduce;
  }
  /// The cluster exchanges of one row on one of the kernel's paths.
  struct ClusterExchanges {
    /// Exchanges per row, and f32 values each block sends in each.
    int64_t exchanges = 0, values = 1;
    /// Buffers of each exchange: two when a row has a single one, so that
    /// the next row's values never land in entries still being read; one
    /// when the row's next exchange already orders them.
    int64_t buffers() const { return exchanges == 1 ? 2 : 1; }
    /// mbarriers of each block: one per exchange and buffer.
    int64_t barriers() const { return exchanges * buffers(); }
  };
  /// Cluster-level exchanges through distributed shared memory per row: one
  /// per reduce (cluster), one for the (max, sum) pair (online, pair
  /// reduction), except on a path that reduces one value at a time
  /// (`unpaired`: the re-reading scalar path, the peeled path of
  /// peeledWithoutPair).
  ClusterExchanges clusterExchanges(size_t numReduces,
                                    bool unpaired = false) const {
    if (clusterSize == 1)
      return {};
    if (exchangesPairs() && !unpaired)
      return {1, 2};
    return {static_cast<int64_t>(numReduces), 1};
  }
  /// The cluster exchanges of each of the kernel's row paths: the planned
  /// one, and the one of a path that reduces one value at a time when the
  /// kernel has one.
  SmallVector<ClusterExchanges, 2>
  clusterExchangePaths(size_t numReduces) const {
    SmallVector<ClusterExchanges, 2> paths = {clusterExchanges(numReduces)};
    if (rereadFallback || peeledWithoutPair())
      paths.push_back(clusterExchanges(numReduces, true));
    return paths;
  }
  /// mbarriers of each block, for whichever path needs more.
  int64_t clusterBarriers(size_t numReduces) const {
    int64_t n = 0;
    for (ClusterExchanges e : clusterExchangePaths(numReduces))
      n = std::max(n, e.barriers());
    return n;
  }
  /// f32 entries of each block's distributed shared memory array, for
  /// whichever path needs more.
  int64_t clusterSlots(size_t numReduces) const {
    int64_t n = 0;
    for (ClusterExchanges e : clusterExchangePaths(numReduces))
      n = std::max(n, e.barriers() * e.values * clusterSize);
    return n;
  }
  /// Whether the block exchange of the online kernel's (max, sum) pair over
  /// a cluster alternates between two pairs of shared slots by row, so that
  /// no barrier at the end of a row has to keep the next row's pair from
  /// landing in slots still being read: the next use of a row's slots
  /// comes after the next row's exchange barrier, which every warp reaches
  /// only once it has read them.
  bool alternatesSlots() const {
    return strategy == Strategy::online && !streamsLevels() &&
           clusterSize > 1 && threadsPerRow() > 32;
  }
  /// f32 slots per warp in shared memory: one per exchanged value (twice
  /// that with alternatesSlots).
  int64_t sharedSlots(size_t numReduces) const {
    if (strategy == Strategy::chunks)
      return kRowValuesSlot + kChunkValues;
    return exchangesPerRow(numReduces) * (exchangesPairs() ? 2 : 1) *
           (alternatesSlots() ? 2 : 1);
  }
  /// Bytes of dynamic shared memory the launcher must provide: the prefetch
  /// stage of stageElements input elements (a slot of them per staged input),
  /// or the online kernel's kept tiles (keptElements), twice with bulkKeep
  /// (two buffers).
  int64_t dynamicSharedBytes() const {
    if (strategy == Strategy::chunks)
      return hasStage() ? stageInputs * chunkStaged *
                              inType.getIntOrFloatBitWidth() / 8
                        : 0;
    return (prefetch ? stageInputs * stageElements
                     : keptElements * (bulkKeep ? 2 : 1)) *
           inType.getIntOrFloatBitWidth() / 8;
  }
  /// Whether the kernel has a stage in dynamic shared memory (for chunks,
  /// only the vector path reads it).
  bool hasStage() const {
    if (strategy == Strategy::chunks)
      return chunkStaged > 0 && vectorWidth > 1;
    return prefetch || keptElements > 0;
  }
};

inline int64_t byteWidth(Type type) { return type.getIntOrFloatBitWidth() / 8; }

inline std::string typeName(Type type) {
  std::string s;
  llvm::raw_string_ostream os(s);
  type.print(os);
  return s;
}

} // namespace rowred
} // namespace mlir

#endif // ROWRED_DIALECT_ROWRED_IR_KERNELPLAN_H
