//===- RowRedToGPU.cpp - Lower rowred groups to GPU kernels ---------------===//
//
// Part of the softmax kernel compiler.
//
// Fuses a rowred.map and the rowred.reduce ops that feed it into one gpu.func
// kernel (fused or online strategy) and replaces them on the host by a
// gpu.launch_func. docs/kernels.md describes the generated kernels.
//
//===----------------------------------------------------------------------===//

#include "rowred/Conversion/RowRedToGPU/RowRedToGPU.h"
#include "rowred/Dialect/RowRed/IR/RowRedOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/MathExtras.h"

#include <cmath>

namespace mlir {
namespace rowred {
#define GEN_PASS_DEF_CONVERTROWREDTOGPU
#include "rowred/Conversion/Passes.h.inc"
} // namespace rowred
} // namespace mlir

using namespace mlir;
using namespace mlir::rowred;

namespace {

/// How a kernel covers a row.
enum class Strategy {
  /// The row in one block's registers, one read.
  Fused,
  /// The row split over the blocks of a thread-block cluster, each holding
  /// its slice in registers; partial results meet in distributed shared
  /// memory. One read.
  Cluster,
  /// Tiles with a running (max, sum), then a second read to write.
  Online,
  /// The row cut into chunks of a block each, taken by atomic ticket; a
  /// chunk stays on chip (registers and a bulk-copied stage) while its
  /// block's (max, sum) meets the row's other chunks' in a global-memory
  /// workspace. One read.
  Chunks
};

static StringRef stringify(Strategy s) {
  switch (s) {
  case Strategy::Fused:
    return "fused";
  case Strategy::Cluster:
    return "cluster";
  case Strategy::Online:
    return "online";
  case Strategy::Chunks:
    return "chunks";
  }
  llvm_unreachable("unknown strategy");
}

/// A rowred.map with the rowred.reduce ops that produce its row scalars, all
/// reading the same input. Lowered to one kernel.
struct Group {
  /// The reduces, in program order.
  SmallVector<ReduceOp> reduces;
  MapOp map;
  /// The memref.alloc ops of the row-scalar buffers and their deallocs.
  SmallVector<Operation *> allocs;
  SmallVector<Operation *> deallocs;
};

/// Everything the kernel emitter needs to know, resolved from the pass
/// options and the group's types.
struct KernelPlan {
  Strategy strategy;
  /// Elements covered by one block: the whole row (fused), the block's slice
  /// of the row (cluster) or one tile (online). A power of two, at least one
  /// per thread of a row.
  int64_t blockElements;
  int64_t numWarps;
  /// Rows a block works on at once (fused); each row gets numThreads() /
  /// rowsPerBlock threads, at most a warp when there is more than one row.
  int64_t rowsPerBlock = 1;
  /// Blocks of a cluster sharing a row (cluster strategy), else 1.
  int64_t clusterSize = 1;
  /// Online, row-split: blocks sharing a row that combine their (max, sum)
  /// pairs through the global-memory workspace, else 1.
  int64_t splitSize = 1;
  /// Online, row-split: rows whose pass 1 a split group runs ahead of its
  /// pass 2 (split-ahead), so that a block publishes row r + A's pair before
  /// it waits for row r's; 0 waits for each row right after its pass 1.
  int64_t splitAhead = 0;
  /// Widest vector access (elements); the kernel falls back to 1 at run time
  /// when lengths, strides or pointers do not allow it.
  int64_t vectorWidth;
  bool reverseSecondPass;
  bool fastExp;
  /// Fused: the scalar fallback re-reads the row once per reduction and for
  /// the map instead of holding it in registers.
  bool rereadFallback;
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
  int64_t maxCols;
  /// Elements the prefetch stage can hold: one block (fused, cluster), or
  /// the block's whole share of a row of the known length (online; 0 when
  /// the length is unknown).
  int64_t stageElements = 0;
  /// Online: elements of each block's share (its first whole tiles) kept in
  /// the stage for pass 2 (online-keep); 0 for none.
  int64_t keptElements = 0;
  /// Online, with kept tiles: they are copied in with cp.async during the
  /// previous row's pass 2 (keep-ahead), never the share's last tile, instead
  /// of stored by pass 1.
  bool keepAhead = false;
  /// Online, with keep-ahead: thread 0 copies the next row's kept tiles with
  /// one bulk copy (cp.async.bulk, completing on an mbarrier) into the
  /// second of two stage buffers, right after this row's block reduction,
  /// instead of each thread refilling its chunks in pass 2 (keep-ahead=bulk).
  bool bulkKeep = false;
  /// Online: L2 eviction hints on the 16-byte global accesses (cache-hints).
  bool cacheHints = false;
  /// Chunks: elements of each chunk after its blockElements in registers,
  /// bulk-copied into the stage (chunk-stage); 0 for none.
  int64_t chunkStaged = 0;
  /// The launcher starts one program (block, cluster) per row group instead
  /// of the persistent grid of the programs resident at once (grid=rows); the
  /// kernel still loops over rows, so any grid computes the same result.
  bool gridPerRowGroup = false;

  int64_t numThreads() const { return numWarps * 32; }
  /// Blocks that share one row: a cluster's or a split group's.
  int64_t shareBlocks() const { return clusterSize * splitSize; }
  /// Exchange buffers of a split group: rows take them in turn, each with
  /// its own arrival counter. A block publishes row k + A while the slowest
  /// block of its group may still read row k - A - 1's entries, so 2A + 2
  /// rows must use distinct buffers (a power of two, for masking).
  int64_t splitBuffers() const {
    return llvm::PowerOf2Ceil(2 * splitAhead + 2);
  }
  /// Byte offsets in a split group's workspace (row-split, docs/abi.md): an
  /// exit counter and one arrival counter per buffer (u32 each), then, from
  /// a 16-byte boundary, splitBuffers() buffers of splitSize (max, sum) f32
  /// pairs.
  static constexpr int64_t kExitsOffset = 0, kArrivalsOffset = 4;
  int64_t entriesOffset() const {
    return llvm::alignTo(kArrivalsOffset + 4 * splitBuffers(), 16);
  }
  /// Bytes of the workspace of each split group, rounded up to 128 bytes so
  /// that groups share no cache line.
  int64_t workspaceBytesPerGroup() const {
    return splitSize > 1
               ? llvm::alignTo(entriesOffset() + splitBuffers() * splitSize * 8,
                               128)
               : 0;
  }
  int64_t threadsPerRow() const { return numThreads() / rowsPerBlock; }
  /// Chunks: the elements of one chunk, one block's.
  int64_t chunkElements() const { return blockElements + chunkStaged; }
  /// Chunks: the shared f32 slots of the block's ticket and of the row's
  /// (max, sum) pair, after the two of the block exchange.
  static constexpr int64_t kTicketSlot = 2, kRowPairSlot = 3;
  /// Whether the kernel has the peeled vector path, for rows that are not
  /// aligned for vectors but are misaligned alike in the input and the
  /// output (odd row lengths of contiguous tensors). Not for cluster slices
  /// with both the pair reduction and the stage, which spill (f32 65536: 4
  /// bytes).
  bool peelable() const {
    return vectorWidth > 1 && strategy != Strategy::Chunks &&
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
  /// Whether the exchanges carry (max, sum) pairs.
  bool exchangesPairs() const {
    return strategy == Strategy::Online || strategy == Strategy::Chunks ||
           pairReduce;
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
    return strategy == Strategy::Online && clusterSize > 1 && splitSize == 1 &&
           threadsPerRow() > 32;
  }
  /// f32 slots per warp in shared memory: one per exchanged value (twice
  /// that with alternatesSlots).
  int64_t sharedSlots(size_t numReduces) const {
    if (strategy == Strategy::Chunks)
      return kRowPairSlot + 2;
    return exchangesPerRow(numReduces) * (exchangesPairs() ? 2 : 1) *
               (alternatesSlots() ? 2 : 1) +
           (pipelinesSplit() ? 2 : 0);
  }
  /// Whether the vector path of a split-ahead kernel has the pipelined row
  /// loop (emitSplitPipelinedLoop), for rows whose share fits one tile: it
  /// hands the group's pair from warp 0 to the block in two more f32 slots.
  /// It holds two rows' tiles in registers: at most 16 elements per thread
  /// (bf16 tiles of 32 spill 8 bytes at 64 registers).
  bool pipelinesSplit() const {
    return splitAhead > 0 && vectorWidth > 1 && numWarps > 1 &&
           elementsPerThread() <= 16;
  }
  /// Bytes of dynamic shared memory the launcher must provide: the prefetch
  /// stage of stageElements input elements, or the online kernel's kept
  /// tiles (keptElements), twice with bulkKeep (two buffers).
  int64_t dynamicSharedBytes() const {
    if (strategy == Strategy::Chunks)
      return hasStage() ? chunkStaged * inType.getIntOrFloatBitWidth() / 8 : 0;
    return (prefetch ? stageElements : keptElements * (bulkKeep ? 2 : 1)) *
           inType.getIntOrFloatBitWidth() / 8;
  }
  /// Whether the kernel has a stage in dynamic shared memory (for chunks,
  /// only the vector path reads it).
  bool hasStage() const {
    if (strategy == Strategy::Chunks)
      return chunkStaged > 0 && vectorWidth > 1;
    return prefetch || keptElements > 0;
  }
};

static int64_t byteWidth(Type type) { return type.getIntOrFloatBitWidth() / 8; }

static std::string typeName(Type type) {
  std::string s;
  llvm::raw_string_ostream os(s);
  type.print(os);
  return s;
}

//===----------------------------------------------------------------------===//
// Group collection
//===----------------------------------------------------------------------===//

/// Checks that the body of a reduce or map only holds side-effect-free ops
/// and captures nothing but constants from above.
static LogicalResult verifyLowerableBody(Operation *op, Region &body) {
  WalkResult result =
      body.walk([&](Operation *inner) {
        if (isa<YieldOp>(inner))
          return WalkResult::advance();
        if (!isPure(inner) || inner->getNumRegions() != 0) {
          inner->emitOpError()
              << "cannot be lowered to a GPU kernel: rowred bodies may only "
                 "hold side-effect-free ops without regions";
          return WalkResult::interrupt();
        }
        for (Value operand : inner->getOperands()) {
          if (body.isAncestor(operand.getParentRegion()))
            continue;
          Operation *def = operand.getDefiningOp();
          if (!def || !def->hasTrait<OpTrait::ConstantLike>()) {
            inner->emitOpError()
                << "uses a value defined outside the rowred body; "
                   "only constants can be captured";
            return WalkResult::interrupt();
          }
        }
        return WalkResult::advance();
      });
  return failure(result.wasInterrupted());
}

/// Collects the group that ends in `map`, or reports why it cannot be lowered.
static FailureOr<Group> collectGroup(MapOp map) {
  Group group;
  group.map = map;
  Value input = map.getInput();
  SetVector<Value> buffers;
  SmallVector<Value> worklist(map.getRows().begin(), map.getRows().end());
  while (!worklist.empty()) {
    Value buffer = worklist.pop_back_val();
    if (!buffers.insert(buffer))
      continue;
    auto alloc = buffer.getDefiningOp<memref::AllocOp>();
    if (!alloc || alloc->getBlock() != map->getBlock())
      return map.emitOpError()
             << "row scalars must come from a memref.alloc in the same block "
                "to be fused into a GPU kernel";
    group.allocs.push_back(alloc);
    ReduceOp writer;
    for (Operation *user : buffer.getUsers()) {
      if (auto reduce = dyn_cast<ReduceOp>(user);
          reduce && reduce.getInit() == buffer) {
        if (writer)
          return reduce.emitOpError()
                 << "writes a row-scalar buffer that another reduce also "
                    "writes";
        writer = reduce;
      }
    }
    if (!writer || writer->getBlock() != map->getBlock() ||
        !writer->isBeforeInBlock(map))
      return map.emitOpError() << "row scalar has no rowred.reduce writing it "
                                  "before the map";
    if (writer.getInput() != input)
      return writer.emitOpError()
             << "reduces a different input than the rowred.map it feeds; "
                "only reductions of the mapped input can be fused";
    if (!llvm::is_contained(group.reduces, writer))
      group.reduces.push_back(writer);
    worklist.append(writer.getRows().begin(), writer.getRows().end());
  }
  llvm::sort(group.reduces,
             [](ReduceOp a, ReduceOp b) { return a->isBeforeInBlock(b); });

  // Every use of a buffer must be inside the group (or its dealloc): the
  // buffers disappear, their values live in registers.
  for (Value buffer : buffers) {
    for (Operation *user : buffer.getUsers()) {
      if (isa<memref::DeallocOp>(user)) {
        group.deallocs.push_back(user);
        continue;
      }
      auto reduce = dyn_cast<ReduceOp>(user);
      if (user == map.getOperation() ||
          (reduce && llvm::is_contained(group.reduces, reduce))) {
        continue;
      }
      return user->emitOpError()
             << "uses a row-scalar buffer of a fused group; the buffer "
                "is not materialized by the GPU kernel";
    }
  }
  // Each reduce must read only row scalars produced before it.
  for (ReduceOp reduce : group.reduces)
    for (Value row : reduce.getRows()) {
      Operation *writer = nullptr;
      for (ReduceOp other : group.reduces)
        if (other.getInit() == row)
          writer = other;
      if (!writer || !writer->isBeforeInBlock(reduce))
        return reduce.emitOpError()
               << "reads a row scalar that is not computed before it";
    }

  if (failed(verifyLowerableBody(map, map.getBody())))
    return failure();
  for (ReduceOp reduce : group.reduces)
    if (failed(verifyLowerableBody(reduce, reduce.getBody())))
      return failure();
  return group;
}

/// Returns true when the group is `m = max(x); s = sum(exp(x - m))`, the pair
/// the online combiner merges into one pass.
static bool isOnlineSoftmaxPair(const Group &group) {
  if (group.reduces.size() != 2)
    return false;
  ReduceOp maxOp = group.reduces[0], sumOp = group.reduces[1];
  if (maxOp.getCombiner() != Combiner::max ||
      sumOp.getCombiner() != Combiner::sum || !maxOp.getRows().empty() ||
      sumOp.getRows().size() != 1 || sumOp.getRows()[0] != maxOp.getInit())
    return false;
  // max body: yield %x.
  Block &maxBody = maxOp.getBody().front();
  if (maxBody.getOperations().size() != 1 ||
      cast<YieldOp>(maxBody.back()).getValue() != maxBody.getArgument(0))
    return false;
  // sum body: %d = subf %x, %m; %e = exp %d; yield %e.
  Block &sumBody = sumOp.getBody().front();
  auto exp =
      cast<YieldOp>(sumBody.back()).getValue().getDefiningOp<math::ExpOp>();
  if (!exp || sumBody.getOperations().size() != 3)
    return false;
  auto sub = exp.getOperand().getDefiningOp<arith::SubFOp>();
  return sub && sub.getLhs() == sumBody.getArgument(0) &&
         sub.getRhs() == sumBody.getArgument(1);
}

/// Returns true when the group's map is `exp(x - m) / s` over the online
/// pair's max and sum, as rowred-decompose writes softmax.
static bool isSoftmaxMap(const Group &group) {
  if (!isOnlineSoftmaxPair(group))
    return false;
  MapOp map = group.map;
  ReduceOp maxOp = group.reduces[0], sumOp = group.reduces[1];
  if (map.getRows().size() != 2 || map.getRows()[0] != maxOp.getInit() ||
      map.getRows()[1] != sumOp.getInit())
    return false;
  Block &body = map.getBody().front();
  if (body.getOperations().size() != 4)
    return false;
  auto div =
      cast<YieldOp>(body.back()).getValue().getDefiningOp<arith::DivFOp>();
  if (!div || div.getRhs() != body.getArgument(2))
    return false;
  auto exp = div.getLhs().getDefiningOp<math::ExpOp>();
  auto sub = exp ? exp.getOperand().getDefiningOp<arith::SubFOp>() : nullptr;
  return sub && sub.getLhs() == body.getArgument(0) &&
         sub.getRhs() == body.getArgument(1);
}

//===----------------------------------------------------------------------===//
// Planning
//===----------------------------------------------------------------------===//

/// Pass options, gathered so the planner does not depend on the pass class.
struct PlanOptions {
  std::string strategy;
  int64_t cols, blockSize, numWarps, rowsPerBlock, clusterSize, vectorWidth,
      maxElementsPerThread;
  bool reverseSecondPass, fastExp;
  std::string scalarFallback, chip, prefetch, pairReduce;
  int64_t onlineKeep;
  std::string keepAhead, cacheHints;
  int64_t rowSplit, splitAhead;
  std::string grid;
  int64_t chunkStage;
};

/// Whether an on/off option value `v` means on (`on`, `1`, `true`).
static bool isOn(StringRef v) { return v == "on" || v == "1" || v == "true"; }
/// Whether an on/off option value `v` means off (`off`, `0`, `false`).
static bool isOff(StringRef v) {
  return v == "off" || v == "0" || v == "false";
}

/// Rows auto stages (autoStagedRow): longer than kStagedRowMin elements, up
/// to kStagedRowMax, the longest 16-bit row (in whole tiles of 8192) whose
/// stages, 112 KiB each, still fit two blocks on an SM.
static constexpr int64_t kStagedRowMin = 8192, kStagedRowMax = 57344;

/// Smallest power-of-two block whose three-quarter size auto uses.
static constexpr int64_t kMinThreeQuarterBlock = 8192;

/// The block auto gives a row of `cols` elements: the next power of two P,
/// or 3P/4 when the row fits it and P >= 8192. A row of 12288 then fills
/// 384 threads x 32 elements instead of leaving two of the eight chunks of
/// 512 x 32 masked: the same registers per thread, a quarter fewer threads
/// per row, so more rows resident per SM.
static int64_t autoRowBlock(int64_t cols) {
  int64_t pow2 = llvm::PowerOf2Ceil(cols);
  if (pow2 >= kMinThreeQuarterBlock && cols <= pow2 / 4 * 3)
    return pow2 / 4 * 3;
  return pow2;
}

/// A block length or warp count the kernels accept: a power of two, or
/// three times one.
static bool isBlockShape(int64_t n) {
  return n > 0 &&
         (llvm::isPowerOf2_64(n) || (n % 3 == 0 && llvm::isPowerOf2_64(n / 3)));
}

/// Default warps for a fused block (or cluster slice) of `blockElements`
/// elements, from sweeps of warps per row length on an H200
/// (docs/performance.md): about 16 elements per thread up to 1024 columns
/// and at 8192, 32 at 2048-4096 and from 16384 on. 1024-thread blocks leave
/// one block per SM and lose up to 40% at N = 4096..16384.
/// A block of three times a power of two (see autoRowBlock) gets three
/// quarters of the warps of the next power of two: the same elements per
/// thread.
static int64_t defaultFusedWarps(int64_t blockElements) {
  int64_t pow2 = llvm::PowerOf2Ceil(blockElements);
  if (pow2 != blockElements && pow2 >= kMinThreeQuarterBlock)
    return defaultFusedWarps(pow2) / 4 * 3;
  int64_t perThread = 16;
  if ((blockElements > 1024 && blockElements <= 4096) || blockElements >= 16384)
    perThread = 32;
  return std::clamp<int64_t>(blockElements / perThread, 32, 1024) / 32;
}

/// The f32 fused block that auto runs on 128 threads x 64 elements.
static constexpr int64_t kWideBlockElements = 8192;

/// Whether auto gives a fused f32 block of 8192 128 threads x 64 elements
/// instead of defaultFusedWarps' 512 x 16: five blocks (rows) resident per
/// SM instead of two, +2.2% and +3.0% in two H200 sweeps of three runs
/// (3676-3749 against 3596-3657 GB/s, docs/performance.md). The only size
/// where 64 elements per thread won: f32 12288 and 16384 lost 1-3%, 16-bit
/// blocks of 2048-16384 gained nothing. Not with the next row loaded ahead
/// into registers or the pair reduction, which need registers of their
/// own. The one auto shape past max-elements-per-thread's default of 32.
static bool widensFusedBlock(const KernelPlan &plan, int64_t slice,
                             const PlanOptions &opts) {
  return plan.strategy == Strategy::Fused && plan.rowsPerBlock == 1 &&
         byteWidth(plan.inType) == 4 && slice == kWideBlockElements &&
         opts.prefetch != "registers" && !isOn(opts.pairReduce);
}

/// Largest fused block `auto` picks: 32768 elements, 1024 threads x 32, one
/// block per SM. With the next row staged in shared memory (sm_80+) such a
/// block beats a cluster of two 512-thread blocks on an H200 (N = 32768:
/// f32 3874 against 3781 GB/s, bf16 3639 against 3435); without the stage
/// only f32 rows stay fused that long (3567 against the online kernel).
static int64_t maxAutoFusedBlock(int64_t elementBytes, bool stage) {
  return elementBytes == 4 || stage ? 32768 : 16384;
}

/// Largest cluster `auto` and the derived cluster size use: 16, beyond the
/// portable maximum of 8, which launchers opt out of (docs/abi.md). On an
/// H200 (docs/performance.md) clusters of 16 slices of 12288-16384 beat 8
/// slices of 24576-32768 (alone on their SM) and the online kernel: f32
/// 151936 3740 GB/s against 3055 and 3279, f32 262144 3909 against 3657
/// (online), bf16 262144 3791 against 3332 (online).
static constexpr int64_t kMaxClusterSize = 16;
/// Largest cluster `cluster-size` accepts: Hopper runs clusters of 16 when
/// the launcher sets CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED
/// (docs/abi.md).
static constexpr int64_t kMaxNonPortableClusterSize = 16;
/// Largest row-split: the blocks of a split group must all be resident at
/// once (the launcher checks that against the device).
static constexpr int64_t kMaxRowSplit = 1024;
/// Largest split-ahead: sixteen exchange buffers per split group.
static constexpr int64_t kMaxSplitAhead = 7;
/// Default slice of a row per cluster block: 512 threads x 32 elements, two
/// blocks per SM.
static constexpr int64_t kClusterSlice = 16384;

/// Whether `auto` gives the cluster blocks of a row of `cols` elements
/// (known) in a row block of `rowBlock` (autoRowBlock) slices of twice
/// kClusterSlice, on 1024 threads (768 for 3/4 blocks): for 16-bit rows that
/// fill at least 7/8 of their block and take the vector path with the pair
/// (a multiple of the vector width). On an H200 (docs/performance.md) such
/// rows of 45000-131072 run 0.2-2.5% faster over half as many blocks, rows
/// of 240000-262144 3.1-3.7% faster over 8 slices of 32768 than over 16 of
/// 16384 (15 clusters of 8 are resident at once, 120 SMs, against 7 of 16,
/// 112 SMs), and rows of 393216-524288 over 16 slices of 24576-32768 beat
/// the online kernel by 3-7% (bf16) and 17% (f16). Rows that fill 3/4 of
/// their block gain nothing over clusters of 16 and lose 3-7% against the
/// online kernel; rows of odd length, on the peeled path, lose 14-43%. f32
/// slices stay at 16384: on 1024 threads, alone on their SM, the online
/// kernel with its tiles loaded ahead beats them (f32 262144 3609 against
/// 3482 GB/s; they had beaten it without the loads ahead, 3112 against
/// 2700).
static bool autoWideClusterSlice(int64_t rowBlock, int64_t elementBytes,
                                 int64_t cols) {
  return elementBytes < 4 && cols != 0 && cols % (16 / elementBytes) == 0 &&
         cols * 8 >= rowBlock * 7;
}

/// The slice (elements) `auto` gives each cluster block (see
/// autoWideClusterSlice).
static int64_t autoClusterSlice(int64_t rowBlock, int64_t elementBytes,
                                int64_t cols) {
  return autoWideClusterSlice(rowBlock, elementBytes, cols) ? 2 * kClusterSlice
                                                            : kClusterSlice;
}

/// Whether `auto` splits a row block of `rowBlock` elements over a cluster:
/// when it is at most 16 of its slices (autoClusterSlice); longer rows take
/// the online kernel.
static bool fitsAutoCluster(int64_t rowBlock, int64_t elementBytes,
                            int64_t cols) {
  return rowBlock <=
         kMaxClusterSize * autoClusterSlice(rowBlock, elementBytes, cols);
}

/// Default rows per block of a fused kernel: rows of up to 1024 elements get
/// a warp each, four per block, with no block barrier. H200 sweeps
/// (docs/performance.md): 1237 against 1070 GB/s for f32 N = 256, 785
/// against 607 for bf16; for blocks of 1024 at 64 registers (see
/// minBlocksPerSM) against a two-warp block per row, four runs each at M =
/// 4096 and three at 32768: N = 781 +5% / +1% (f32), +3% / +4% (bf16), N =
/// 1024 even / +0.5% (f32), +5% / -1% (bf16). Longer rows keep a block each.
static int64_t defaultRowsPerBlock(int64_t blockElements) {
  return blockElements <= 1024 ? 4 : 1;
}

/// Default warps for the online kernel of `type` over clusters of
/// `clusterSize`: 1024 threads for f32 (with 512, ptxas caps registers at 40
/// to fit three blocks and spills) and for bf16 rows over clusters of 16
/// (rows from 2 MiB), 512 for other 16-bit rows. H200, alternating runs
/// (docs/performance.md): bf16 1048576 with its tiles loaded ahead on 1024
/// threads (32 elements per thread and tile, two tiles per share) 3370 GB/s
/// against 3309 on 512 and 3182 keeping 64 KiB of each share in shared
/// memory (online-keep); 2097152 +7%, 4194304 +3.5% over keeping. f16 rows
/// lost the same way (1048576: 2719-2734 against 3070-3078 keeping, also
/// with tiles of 32 elements per thread) and keep tiles (keep-ahead, see
/// autoKeepAheadElements).
static int64_t defaultOnlineWarps(Type type, int64_t clusterSize) {
  return byteWidth(type) == 4 || (type.isBF16() && clusterSize == 16) ? 32 : 16;
}

/// Shared memory one block may use on sm_90 (227 KB, with the opt-in
/// attribute) minus the static reduction slots' margin.
static constexpr int64_t kMaxDynamicSharedBytes = 224 * 1024;

/// 32-bit registers of one SM (sm_75 to sm_90).
static constexpr int64_t kRegisterFile = 65536;
/// Shared memory of one SM on sm_90 (228 KiB).
static constexpr int64_t kSharedPerSM = 228 * 1024;

/// Shared memory the driver reserves for each block (sm_90).
static constexpr int64_t kSharedReservedPerBlock = 1024;

/// Registers per thread a chunks kernel is compiled for (minctasm), beyond
/// one per element it holds: the f32 default (128 x 64) then fits five
/// blocks on an SM at up to 102 registers (ptxas takes 96; left alone, 107
/// and four blocks: 1.045x the online kernel on f32 1024 x 1048576 against
/// 1.079x), the 16-bit default (128 x 32) nine at 56 (left alone, 64 and
/// eight: 1.030x on bf16 1024 x 1048576 against 1.048x; at 76 and six,
/// 0.93x). H200, docs/performance.md version 71.
static constexpr int64_t kChunkSpareRegisters = 24;

/// Resident blocks and threads an SM takes at most (sm_80, sm_90).
static constexpr int64_t kMaxBlocksPerSM = 32, kMaxThreadsPerSM = 2048;

/// Blocks of `plan` that fit one SM's registers at 64 per thread, at least
/// one.
static int64_t blocksAt64Registers(const KernelPlan &plan) {
  return std::max<int64_t>(1, kRegisterFile / (64 * plan.numThreads()));
}

/// Whether auto gives a kernel the pair reduction: 16-bit cluster slices,
/// together with their next row loaded ahead into registers (see
/// autoPrefetchRegisters) unless prefetch says otherwise. On an H200
/// (docs/performance.md, alternating runs): bf16 65536 3611 -> 3803 GB/s,
/// 131072 3531 -> 3837, 262144 over 16 blocks 3271 -> 3791; the pair
/// reduction alone lost 14%. Not for a known row length that is not a
/// multiple of the vector width (`cols`): contiguous rows of that length
/// take the peeled path, which reduces one value at a time and loads
/// nothing ahead, and ran 2.6-4.0% slower in such kernels (bf16 50257 and
/// 100003) than without the pair.
static bool autoPairReduce(const KernelPlan &plan, const PlanOptions &opts,
                           int64_t cols) {
  return plan.strategy == Strategy::Cluster && byteWidth(plan.inType) == 2 &&
         (opts.prefetch == "auto" || opts.prefetch == "registers") &&
         cols % plan.vectorWidth == 0;
}

/// Whether auto stages the next row in shared memory for a kernel that can:
/// for fused blocks of 16384 elements and more (docs/performance.md; f32
/// 16384: +0.7 to +2.6% in four runs; 768 or 1024 threads x 32 beyond,
/// alone on their SM with nothing else to overlap their reductions with:
/// f32 32768 +9%, bf16 32768 +20%). Elsewhere f32 gains nothing or loses
/// (-12% at 2048, -1% at 12288), and since the cluster exchanges no longer
/// wait for the copies in flight, clusters lose with it (bf16 -8%, f32 -2 to
/// -13%).
static bool autoPrefetch(const KernelPlan &plan) {
  if (plan.clusterSize != 1 || plan.strategy == Strategy::Online)
    return false;
  return plan.blockElements >= 16384;
}

/// Whether auto loads the next row ahead into registers instead (H200,
/// alternating runs, docs/performance.md): for the online kernel's tiles
/// (the next tile, within the row: f32 1048576 +8.7%, 262144 +4.2%, bf16
/// +2.2-2.4%), for 16-bit cluster slices with the pair reduction (see
/// autoPairReduce), and for fused 16-bit rows:
/// * blocks of 2048 and 4096: +4 to +7% over no prefetch and over the stage;
/// * blocks of 6144 to 12288: 6144 +13 to +16% over no prefetch, 8192
///   -1.2 to +1.6% and 12288 +0.3 to +2.7% over the stage (bf16 and f16,
///   two A/Bs); the stage stays ahead from 16384 (bf16 -0.4 to -1.5%);
/// * a warp per row of 256 or 512: +4 to +7% at M = 32768 (a few rows per
///   warp), within the noise at M = 4096. Not at 1024, where the second set
///   of registers costs the 64-register cap (bf16: -1 to -5%).
/// f32 gains nothing measurable (8192, 12288, 256, 512: within 0.5%), and
/// at 2048-4096 the second set of registers takes away resident blocks.
static bool autoPrefetchRegisters(const KernelPlan &plan) {
  if (plan.strategy == Strategy::Online)
    return plan.keptElements == 0;
  if (plan.clusterSize > 1 && plan.pairReduce)
    return true;
  if (plan.clusterSize != 1 || byteWidth(plan.inType) != 2)
    return false;
  if (plan.rowsPerBlock > 1)
    return plan.blockElements >= 256 && plan.blockElements <= 512;
  return plan.blockElements >= 2048 && plan.blockElements < 16384;
}

/// Whether an online kernel may keep tiles of its share at all under auto's
/// rules (autoKeepAheadElements, autoBulkKeptElements): over clusters of 16,
/// on the vector path, with a known row length (a stage to size) and the
/// reversed second pass that hands tiles on across the passes.
static bool autoKeepsTiles(const KernelPlan &plan) {
  return plan.strategy == Strategy::Online && plan.clusterSize == 16 &&
         plan.vectorWidth != 1 && plan.stageElements != 0 &&
         plan.reverseSecondPass;
}

/// Elements of each block's share that auto keeps in shared memory, copied
/// in ahead (keep-ahead), or 0: for f16 rows of a known length over clusters
/// of 16 (rows from 2 MiB) and f32 rows there whose share spans 8 tiles or
/// more (rows from 8 MiB), 3/8 of the share in whole tiles, at most what the
/// blocks resident on an SM can hold (f32: 192 KiB for one 1024-thread
/// block; f16: 112 KiB for each of two 512-thread blocks). H200, alternating
/// runs (docs/performance.md), against the tiles loaded ahead without a
/// stage (f32) and 64 KiB stored by pass 1 (f16): f32 2097152 +9% and
/// 4194304 +4% keeping 192 KiB; f16 1048576 +8 to +9% keeping 48 KiB,
/// 2097152 +13% keeping 96. f32 1048576 (four tiles per share) lost 1.5% at
/// M = 1024 keeping 64 KiB (+1.5% at M = 256) and more keeping 128 or 192;
/// bf16 rows, on 1024 threads, spill 24 bytes with it and lost 12-20%; f32
/// rows over clusters of 8 lost 7-10%.
static int64_t autoKeepAheadElements(const KernelPlan &plan) {
  if (!autoKeepsTiles(plan) || plan.inType.isBF16())
    return 0;
  int64_t shareTiles = plan.stageElements / plan.blockElements;
  if (byteWidth(plan.inType) == 4 && shareTiles < 8)
    return 0;
  int64_t tileBytes = plan.blockElements * byteWidth(plan.inType);
  int64_t blocks = blocksAt64Registers(plan);
  // 2 KiB of each block's share of the SM for its static shared memory.
  int64_t fit =
      std::min(kMaxDynamicSharedBytes, kSharedPerSM / blocks - 2 * 1024) /
      tileBytes;
  int64_t tiles = std::min(shareTiles * 3 / 8, fit);
  return tiles * plan.blockElements;
}

/// Largest share (elements) of a bf16 row over a cluster of 16 whose tiles
/// auto keeps in bulk (autoBulkKeptElements, autoBulkTiles): rows of 2 MiB.
static constexpr int64_t kBulkBF16Share = 65536;

/// Elements of each block's share that auto keeps in two stage buffers with
/// keep-ahead=bulk, or 0: over clusters of 16, one tile of f32 shares of 2
/// to 7 tiles (rows of 2 MiB to under 8 MiB; from 8 tiles,
/// autoKeepAheadElements keeps 3/8), and every tile but the last of bf16
/// shares of at most 65536 elements (rows of 2 MiB, in tiles of 16384: see
/// autoBulkTiles), at most 112 KiB per buffer. H200, alternating runs
/// against the tiles loaded ahead without a stage (docs/performance.md,
/// version 59): f32 524288 +2.7%, 1048576 +2.2 to +5.2%, bf16 1048576 +1.0
/// to +2.5%; f32 2097152 lost 2.1% against auto's 3/8, bf16 2097152 (three
/// of eight tiles kept) 0.4%, and f32 shares kept in more, smaller tiles 4-7%.
static int64_t autoBulkKeptElements(const KernelPlan &plan) {
  if (!autoKeepsTiles(plan))
    return 0;
  int64_t shareTiles = plan.stageElements / plan.blockElements;
  int64_t tileBytes = plan.blockElements * byteWidth(plan.inType);
  if (byteWidth(plan.inType) == 4 && shareTiles >= 2 && shareTiles < 8)
    return plan.blockElements;
  if (plan.inType.isBF16() && plan.stageElements <= kBulkBF16Share &&
      shareTiles >= 2)
    return std::min(shareTiles - 1, kMaxDynamicSharedBytes / 2 / tileBytes) *
           plan.blockElements;
  return 0;
}

/// Whether auto gives the online kernel tiles of two vectors per thread
/// instead of four, so that autoBulkKeptElements keeps three of the four
/// tiles of each share, 96 KiB twice: bf16 rows of a known length up to 2
/// MiB over clusters of 16 on auto's 1024 threads with keep-ahead=bulk
/// (auto or asked for) and auto's kept tiles. H200: bf16 1048576 keeping
/// three of four tiles of 16384 +1.0 to +2.5%, two of four 0.93-0.96, one
/// of two tiles of 32768 (4 bytes of spills) 0.97.
static bool autoBulkTiles(const PlanOptions &opts, Type type,
                          int64_t clusterSize, int64_t cols) {
  return type.isBF16() && clusterSize == 16 && cols != 0 &&
         cols <= clusterSize * kBulkBF16Share && opts.blockSize == 0 &&
         opts.numWarps == 0 && opts.onlineKeep == -1 &&
         opts.prefetch == "auto" &&
         (opts.keepAhead == "auto" || opts.keepAhead == "bulk") &&
         opts.reverseSecondPass;
}

/// Whether auto gives the online kernel L2 eviction hints (cache-hints): when
/// its second pass reads the row from global memory (no stage, no kept
/// tiles, or kept tiles with keep-ahead, which streams the rest), except f32
/// rows over clusters of 8. H200, alternating runs
/// (docs/performance.md): f32 1048576 over 16 blocks +4.0%, f32 65536 on one
/// block per row +7.9%, bf16 131072 on one block +4.9%, bf16 524288 over 8
/// +10.1%; f32 over 8 blocks -1.6% (262147) and +1.5% (400000); bf16
/// 1048576 with its kept tiles unchanged.
static bool autoCacheHints(const KernelPlan &plan) {
  return plan.strategy == Strategy::Online && !plan.prefetch &&
         (plan.keptElements == 0 || plan.keepAhead) &&
         !(byteWidth(plan.inType) == 4 && plan.clusterSize == 8);
}

/// Whether auto launches one program per row group (grid=rows) instead of the
/// persistent grid: fused kernels with a block per row, for f32 and for
/// 16-bit blocks of 4096, 8192 (on 256 threads, kRowGrid16BitWarps) and
/// from 16384 elements on at most 512 threads. On an H200
/// (docs/performance.md, alternating rounds), the scheduler then hands each
/// SM a new row as a block ends: f32 rows of 4096-32768 +1.4 to +6.7% at M
/// = 4096, 32768 x 4096 +5.7 / +6.2%; bf16 4096 +2.4% (M = 4096) and +6.8%
/// (M = 32768), 8192 +3.6 / +5.5%, 16384 +2.9 / +3.1%; f16 8192 and 16384
/// +1.5 to +6.8%, 4096 -3.4% at M = 4096 and +6.3% at M = 32768. Kernels that
/// hide a row's loads behind the previous row (bf16 2048 and 12288 with the
/// next row in registers: -1 to -6.5%) or that run one block per SM (bf16
/// 32768, 1024 threads: -13 / -14%) lose, and keep the persistent grid.
/// Measured on sm_90 only; auto keeps the persistent grid on earlier chips.
static bool autoGridPerRowGroup(const KernelPlan &plan) {
  if (plan.strategy != Strategy::Fused || plan.rowsPerBlock != 1)
    return false;
  if (byteWidth(plan.inType) == 4)
    return true;
  return plan.blockElements == 4096 || plan.blockElements == 8192 ||
         (plan.blockElements >= 16384 && plan.numThreads() <= 512);
}

/// Whether the options let the kernel run one program per row group: asked
/// for (grid=rows), or left to auto on sm_90 and newer with no next row
/// asked for (autoGridPerRowGroup decides).
static bool mayGridPerRowGroup(const PlanOptions &opts, int64_t sm) {
  return opts.grid == "rows" ||
         (opts.grid == "auto" &&
          (opts.prefetch == "auto" || opts.prefetch == "off") && sm >= 90);
}

/// Whether auto runs a 16-bit row of `cols` elements as a staged row: the
/// online kernel on one block per row (grid=rows) with the whole row copied
/// into shared memory by cp.async before its first pass (prefetch=on), so
/// that both passes read shared memory and every byte of the row is in
/// flight at once, while the registers hold one tile of 16 elements per
/// thread. For rows of a known length of 8193 to 57344 elements, a multiple
/// of the vector width (others take the peeled path, which reads global
/// memory in both passes), 16-bit in and out, on sm_90 and newer, with the
/// options that shape the kernel left to auto and max-elements-per-thread
/// allowing the tile of two vectors per thread. On an H200
/// (docs/performance.md, version 65; alternating rounds against auto's fused
/// blocks, which hold the row in registers): bf16 12288 +3.4 to +5.8% (128
/// threads, whose next row the fused block loads ahead into registers),
/// 16384 +0.7 to +1.7% (against 256 threads x 64 with one block per row),
/// 24576 +5.9 to +6.6% and 32768 +6.6 to +7.3% (against 768 and 1024
/// threads, alone on their SM with the next row staged); f16 alike. Against
/// auto's clusters (version 67): bf16 and f16 40960 +4.4 to +6.7%, 49152
/// +3.8 to +4.5%, 57344 +4.6 to +5.4%; 65536, whose stage of 128 KiB leaves
/// one block per SM, 0.99-1.03, keeps its cluster of 2. Not for f32 rows of
/// 8192-16384 (0.98-1.00) nor 16-bit rows of 4096-8192 (0.99-1.04).
static bool autoStagedRow(const PlanOptions &opts, const KernelPlan &plan,
                          int64_t cols, int64_t sm) {
  // 8: the default vector width, 16 bytes of 16-bit elements; 16: the tile's
  // two vectors per thread.
  return byteWidth(plan.inType) == 2 && byteWidth(plan.outType) == 2 &&
         cols > kStagedRowMin && cols <= kStagedRowMax && cols % 8 == 0 &&
         opts.prefetch == "auto" && mayGridPerRowGroup(opts, sm) &&
         opts.blockSize == 0 && opts.numWarps == 0 && opts.vectorWidth == 0 &&
         opts.clusterSize == 0 && opts.rowSplit <= 1 && opts.onlineKeep == -1 &&
         !isOn(opts.keepAhead) && opts.keepAhead != "bulk" &&
         !isOn(opts.pairReduce) && opts.maxElementsPerThread >= 16;
}

/// Warps auto gives a staged row (autoStagedRow) of `cols` elements: 4 (128
/// threads) for rows that a fused kernel would hold in a block of 12288,
/// 16 (512 threads) beyond. H200 (version 65): 12288 on 128 threads +3.4 to
/// +5.6% over the fused block, on 256 +1.5 to +3.9%, on 512 -4% to even;
/// 24576 on 512 +5.9 to +6.6%, on 256 +3.7 to +4.4%, on 128 +0.8 to +4.2%.
static int64_t stagedRowWarps(int64_t cols) {
  return autoRowBlock(cols) <= 12288 ? 4 : 16;
}

/// Warps of a fused 16-bit block of 8192 or 16384 elements with one block
/// per row: 256 threads, 32 or 64 elements each, instead of
/// defaultFusedWarps' 512 x 16 or 512 x 32, twice the bytes in flight per
/// thread when no next row is loaded ahead. On an H200
/// (docs/performance.md): bf16 8192 3501-3525 GB/s against the persistent
/// 512 x 16 with its next row in registers at 3377-3380 (2608-2636 for 512
/// x 16 with one block per row); bf16 16384 +1.6 to +1.8% over 512 x 32,
/// both with one block per row. The block of 16384 is the one 16-bit block
/// past max-elements-per-thread's default of 32 (102 registers, no spills).
static constexpr int64_t kRowGrid16BitWarps = 8;

/// Whether auto gives a fused 16-bit block of `slice` elements
/// kRowGrid16BitWarps warps for one block per row (8192 and 16384).
static bool narrowsRowGridBlock(const KernelPlan &plan, int64_t slice,
                                const PlanOptions &opts, int64_t sm) {
  return plan.strategy == Strategy::Fused && plan.rowsPerBlock == 1 &&
         byteWidth(plan.inType) == 2 && (slice == 8192 || slice == 16384) &&
         mayGridPerRowGroup(opts, sm);
}

/// Why the kernel of `plan` cannot fetch its next row ahead, into the stage
/// (`stage`) or into registers, on compute capability `sm`; empty when it
/// can.
static StringRef prefetchObstacle(const KernelPlan &plan, bool stage,
                                  int64_t sm) {
  if (plan.gridPerRowGroup && plan.strategy != Strategy::Online)
    return "grid=rows gives every block one row group, so there is no next "
           "row to fetch";
  if (stage && plan.strategy == Strategy::Online && plan.stageElements == 0)
    return "the online kernel stages its share of a row only for a known "
           "row length (cols=N)";
  if (stage && plan.rowsPerBlock > 1)
    return "blocks with several rows hold no stage";
  if (stage && plan.splitAhead > 0)
    return "the stage holds one row's share and split-ahead keeps several "
           "rows between their passes";
  if (plan.vectorWidth == 1)
    return stage ? "cp.async copies vectors and this kernel has none"
                 : "only the vector path loads ahead and this kernel has none";
  if (stage && sm < 80)
    return "cp.async needs sm_80 or newer";
  if (stage &&
      plan.stageElements * byteWidth(plan.inType) > kMaxDynamicSharedBytes)
    return "the stage would exceed the shared memory of a block";
  return "";
}

/// The blocks per SM that ptxas is asked to fit (`.minnctapersm`), which
/// caps the kernel at 64 registers per thread, or 0 for no request.
///
/// * Cluster slices are sized for 64 registers (32 elements and the rest):
///   two 512-thread blocks share an SM, instead of the exchange's few extra
///   live values halving the occupancy. The same for the blocks of a split
///   group (row-split).
/// * A warp per row holding 32 elements per thread (blocks of 1024): ptxas
///   takes 96 registers unasked (five 128-thread blocks per SM); at 64,
///   eight fit without spills, and the bench's 4096 rows then all fit on
///   the GPU at once (H200 sweep: f32 4096 x 1024 2539 -> 2703 GB/s). Not
///   with the next row loaded ahead or with the pair reduction, which need
///   the registers (200 and 8 bytes of spills for f32), nor with fewer
///   threads per row, which take more edge elements on the peeled path
///   (116 bytes of spills for one thread per row).
static int64_t minBlocksPerSM(const KernelPlan &plan) {
  if (plan.strategy == Strategy::Chunks) {
    int64_t blocks =
        kRegisterFile /
        ((plan.elementsPerThread() + kChunkSpareRegisters) * plan.numThreads());
    if (plan.hasStage())
      blocks = std::min(blocks, kSharedPerSM / (plan.dynamicSharedBytes() +
                                                kSharedReservedPerBlock));
    blocks = std::min(
        {blocks, kMaxBlocksPerSM, kMaxThreadsPerSM / plan.numThreads()});
    return std::max<int64_t>(1, blocks);
  }
  bool capped = plan.shareBlocks() > 1 ||
                (plan.rowsPerBlock > 1 && plan.threadsPerRow() == 32 &&
                 plan.elementsPerThread() >= 32 && !plan.prefetchRegisters &&
                 !plan.pairReduce);
  if (!capped)
    return 0;
  int64_t blocks = blocksAt64Registers(plan);
  // Kept online tiles take shared memory: no more blocks than fit in it.
  if (plan.keptElements > 0)
    blocks = std::min(blocks, kSharedPerSM / plan.dynamicSharedBytes());
  return std::max<int64_t>(1, blocks);
}

/// Blocks of the cluster auto gives an online kernel for rows of `cols`
/// elements of `elementBytes` (H200 sweeps, docs/performance.md): 8 for rows
/// under 2 MiB (262144 f32 and bf16: +24% and +18% over one block; f32
/// 262147 with its tiles loaded ahead: 3106 GB/s against 2368 with 16), 16
/// from 2 MiB (1048576: +7% f32, +9% bf16 over one block, and over 8 with
/// the tiles loaded ahead: 3180 against 2881 f32, 3047 against 2797 bf16),
/// so that each block's share is still in L2 for the second pass.
static int64_t autoOnlineClusterSize(int64_t cols, int64_t elementBytes) {
  return cols * elementBytes < (int64_t(2) << 20) ? 8 : 16;
}

/// The compute capability in `chip` (`sm_90a` -> 90), or 0.
static int64_t smVersion(StringRef chip) {
  int64_t version = 0;
  if (chip.consume_front("sm_"))
    chip.take_while(llvm::isDigit).getAsInteger(10, version);
  return version;
}

/// Most elements per thread a chunk holds in registers.
static constexpr int64_t kMaxChunkRegisterElements = 128;

/// The chunks strategy's part of planKernel: `plan` has its types, and
/// `vector` and `sm` are resolved. Default layout (H200, version 69 of
/// docs/performance.md): 128 threads, each with 64 f32 elements in registers
/// and 64 staged (3947-3954 GB/s on f32 1024 x 1048576, 1.075x the online
/// kernel's), or 32 16-bit elements in registers and 96 staged.
static FailureOr<KernelPlan> planChunks(MapOp map, const PlanOptions &opts,
                                        KernelPlan plan, int64_t vector,
                                        int64_t sm) {
  auto unsupported = [&](StringRef option) {
    return map.emitOpError()
           << option << " does not apply to the chunks strategy, whose "
           << "blocks each take one chunk of one row";
  };
  if (opts.rowsPerBlock > 1)
    return unsupported("rows-per-block");
  if (opts.clusterSize > 1)
    return unsupported("cluster-size");
  if (opts.rowSplit > 1)
    return unsupported("row-split");
  if (opts.onlineKeep > 0)
    return unsupported("online-keep");
  if (opts.prefetch != "auto" && !isOff(opts.prefetch))
    return unsupported("prefetch");
  if (opts.keepAhead != "auto" && !isOff(opts.keepAhead))
    return unsupported("keep-ahead");
  if (isOn(opts.cacheHints))
    return unsupported("cache-hints");
  if (opts.grid != "auto")
    return map.emitOpError() << "a chunks kernel is launched on one block "
                                "per chunk of every row; grid must be auto";
  plan.strategy = Strategy::Chunks;
  plan.numWarps = opts.numWarps ? opts.numWarps : 4;
  bool wide = byteWidth(plan.inType) == 4;
  plan.blockElements =
      opts.blockSize ? opts.blockSize : plan.numThreads() * (wide ? 64 : 32);
  if (plan.blockElements % plan.numThreads() != 0)
    return map.emitOpError()
           << "block-size " << plan.blockElements
           << " must be a multiple of the block's " << plan.numThreads()
           << " threads: each holds the same number of a chunk's elements";
  int64_t perThread = plan.elementsPerThread();
  if (perThread > kMaxChunkRegisterElements)
    return map.emitOpError()
           << "a chunk of block-size " << plan.blockElements << " keeps "
           << perThread << " elements per thread in registers (limit "
           << kMaxChunkRegisterElements << ")";
  plan.vectorWidth = std::min(vector, perThread & -perThread);
  if (opts.chunkStage < -1)
    return map.emitOpError()
           << "chunk-stage must be 0 (none), -1 (auto) or a number of "
              "elements, got "
           << opts.chunkStage;
  plan.chunkStaged = opts.chunkStage >= 0
                         ? opts.chunkStage
                         : plan.numThreads() * (wide ? 64 : 96);
  int64_t stagedUnit = plan.numThreads() * plan.vectorWidth;
  if (plan.chunkStaged % stagedUnit != 0)
    return map.emitOpError()
           << "chunk-stage " << plan.chunkStaged << " must be a multiple of "
           << stagedUnit << " (" << plan.numThreads() << " threads x "
           << plan.vectorWidth << "-element vectors)";
  if (plan.dynamicSharedBytes() > kMaxDynamicSharedBytes)
    return map.emitOpError() << "chunk-stage " << plan.chunkStaged << " takes "
                             << plan.dynamicSharedBytes()
                             << " bytes of shared memory; a block has at most "
                             << kMaxDynamicSharedBytes;
  if (plan.hasStage() && sm < 90)
    return map.emitOpError()
           << "chunk-stage fills the stage with cp.async.bulk, which needs "
              "sm_90 or newer, not "
           << opts.chip << " (chunk-stage=0 holds a chunk in registers only)";
  if (plan.chunkElements() > (int64_t(1) << 30))
    return map.emitOpError() << "a chunk of " << plan.chunkElements()
                             << " elements is too large (at most 2^30)";
  plan.maxCols = 0;
  plan.rereadFallback = false;
  return plan;
}

/// Rows auto cuts into chunks (autoChunks): from kChunkRowMin to
/// kChunkRowMax elements (the longest measured: a row's 64 chunks of the
/// defaults need 64 resident blocks).
static constexpr int64_t kChunkRowMin = 65536, kChunkRowMax = 1048576;

/// Whether auto cuts rows of `cols` into chunks (Strategy::Chunks): f32 and
/// bf16 rows (in and out) of a known length in the range above, a multiple
/// of the vector width, on sm_90+, with the options that shape the kernel
/// left to auto. On an H200 (docs/performance.md, version 71; alternating
/// rounds against auto's cluster and online kernels): f32 4096 x 65536 +3.3
/// to +4.3%, 2048 x 131072 +2.2 to +2.4%, 1024 x 262144 +2.6 to +3.5%, 1024
/// x 1048576 +6.6 to +7.9%; bf16 4096 x 65536 +1.5 to +1.9%, 2048 x 131072
/// +1.7 to +2.3%, 1024 x 262144 0.99-1.00, 1024 x 524288 +6.7%, 1024 x
/// 200000 +14%, 98304 0.98-1.00, 1024 x 1048576 +4.8%; f32 and bf16 32768
/// lost (0.97, 0.91); f16 was not measured.
static bool autoChunks(const PlanOptions &opts, const KernelPlan &plan,
                       int64_t cols, int64_t vector, int64_t sm) {
  bool wide = plan.inType.isF32() && plan.outType.isF32();
  bool bf16 = plan.inType.isBF16() && plan.outType.isBF16();
  return (wide || bf16) && cols >= kChunkRowMin && cols <= kChunkRowMax &&
         cols % vector == 0 && sm >= 90 && opts.blockSize == 0 &&
         opts.numWarps == 0 && opts.vectorWidth == 0 &&
         opts.rowsPerBlock == 0 && opts.clusterSize == 0 &&
         opts.rowSplit <= 1 && opts.onlineKeep == -1 &&
         opts.keepAhead == "auto" && opts.cacheHints == "auto" &&
         opts.prefetch == "auto" && opts.grid == "auto" &&
         opts.scalarFallback == "auto" && opts.pairReduce == "auto" &&
         opts.chunkStage == -1;
}

/// Resolves the options against the group, with a diagnostic on the map for
/// anything invalid.
static FailureOr<KernelPlan> planKernel(const Group &group,
                                        const PlanOptions &opts) {
  MapOp map = group.map;
  auto inType = cast<MemRefType>(map.getInput().getType());
  auto outType = cast<MemRefType>(map.getOutput().getType());
  KernelPlan plan;
  plan.inType = inType.getElementType();
  plan.outType = outType.getElementType();
  plan.reverseSecondPass = opts.reverseSecondPass;
  plan.fastExp = opts.fastExp;
  if (opts.scalarFallback != "registers" && opts.scalarFallback != "reread" &&
      opts.scalarFallback != "auto")
    return map.emitOpError()
           << "unknown scalar-fallback '" << opts.scalarFallback
           << "'; expected registers, reread or auto";
  int64_t sm = smVersion(opts.chip);
  bool clustersAvailable = sm >= 90;

  int64_t elementBytes =
      std::max(byteWidth(plan.inType), byteWidth(plan.outType));
  int64_t cols = opts.cols;
  if (cols < 0)
    return map.emitOpError() << "cols must be positive, got " << cols;
  if (!inType.isDynamicDim(1)) {
    if (cols != 0 && cols != inType.getDimSize(1))
      return map.emitOpError()
             << "cols=" << cols << " contradicts the input type, which has "
             << inType.getDimSize(1) << " columns";
    cols = inType.getDimSize(1);
  }

  // Vector width: 16 bytes of input by default.
  int64_t vector = opts.vectorWidth;
  if (vector == 0)
    vector = 16 / byteWidth(plan.inType);
  if (vector < 0 || !llvm::isPowerOf2_64(vector) ||
      vector * byteWidth(plan.inType) > 16 ||
      vector * byteWidth(plan.outType) > 16)
    return map.emitOpError()
           << "vector-width must be a power of two with accesses of at most "
              "16 bytes (at most "
           << 16 / std::max(byteWidth(plan.inType), byteWidth(plan.outType))
           << " elements here), got " << vector;

  if (opts.numWarps != 0 &&
      (opts.numWarps > 32 || !isBlockShape(opts.numWarps)))
    return map.emitOpError() << "num-warps must be from 1 to 32, a power of "
                                "two or three times one, got "
                             << opts.numWarps;
  if (opts.blockSize != 0 && !isBlockShape(opts.blockSize))
    return map.emitOpError() << "block-size must be a power of two or three "
                                "times one, got "
                             << opts.blockSize;
  if (opts.rowsPerBlock != 0 &&
      (opts.rowsPerBlock < 0 || !llvm::isPowerOf2_64(opts.rowsPerBlock)))
    return map.emitOpError() << "rows-per-block must be a power of two, got "
                             << opts.rowsPerBlock;
  if (opts.clusterSize != 0 &&
      (opts.clusterSize < 1 || opts.clusterSize > kMaxNonPortableClusterSize ||
       !llvm::isPowerOf2_64(opts.clusterSize)))
    return map.emitOpError()
           << "cluster-size must be 1 (no cluster), 2, 4, 8 or 16 (16 needs a "
              "launcher that allows non-portable cluster sizes), got "
           << opts.clusterSize;
  if (opts.rowSplit < 1 || opts.rowSplit > kMaxRowSplit)
    return map.emitOpError()
           << "row-split must be from 1 (none) to " << kMaxRowSplit
           << " blocks per row, got " << opts.rowSplit;
  if (opts.splitAhead < 0 || opts.splitAhead > kMaxSplitAhead)
    return map.emitOpError()
           << "split-ahead must be from 0 (none) to " << kMaxSplitAhead
           << " rows, got " << opts.splitAhead;
  if (opts.splitAhead > 0 && opts.rowSplit <= 1)
    return map.emitOpError()
           << "split-ahead runs a split group's pass 1 ahead; it needs "
              "row-split 2 or more";
  if (opts.rowSplit > 1 && opts.clusterSize > 1)
    return map.emitOpError()
           << "row-split and cluster-size both split a row over blocks; "
              "choose one";

  // The block a whole row needs (0: row length unknown).
  int64_t rowBlock = opts.blockSize;
  if (rowBlock == 0 && cols != 0)
    rowBlock = autoRowBlock(cols);
  bool canOnline = isOnlineSoftmaxPair(group);
  // A 16-bit row that auto stages whole in shared memory on a block of its
  // own (autoStagedRow): the online kernel's shape, decided here once.
  bool stagedRow = opts.strategy == "auto" && canOnline &&
                   autoStagedRow(opts, plan, cols, sm);
  if (opts.strategy == "fused") {
    plan.strategy = Strategy::Fused;
  } else if (opts.strategy == "cluster") {
    if (!clustersAvailable)
      return map.emitOpError() << "the cluster strategy needs thread-block "
                                  "clusters (sm_90 or newer), not "
                               << opts.chip;
    if (opts.clusterSize == 1)
      return map.emitOpError() << "the cluster strategy needs cluster-size 2 "
                                  "or more; one block per row is "
                                  "strategy=fused";
    plan.strategy = Strategy::Cluster;
  } else if (opts.strategy == "online") {
    if (!canOnline)
      return map.emitOpError()
             << "the online strategy needs a max reduce followed by a sum of "
                "exp(x - max), as produced by rowred-decompose";
    plan.strategy = Strategy::Online;
  } else if (opts.strategy == "chunks") {
    if (!canOnline)
      return map.emitOpError()
             << "the chunks strategy needs a max reduce followed by a sum of "
                "exp(x - max), as produced by rowred-decompose";
    return planChunks(map, opts, plan, vector, sm);
  } else if (opts.strategy == "auto" && canOnline &&
             autoChunks(opts, plan, cols, vector, sm)) {
    return planChunks(map, opts, plan, vector, sm);
  } else if (opts.strategy == "auto") {
    // Fused when the row is known and fits one block's registers, cluster
    // when it fits a cluster's, else online.
    plan.strategy = canOnline ? Strategy::Online : Strategy::Fused;
    // A row split through global memory is an online kernel's.
    if (rowBlock != 0 && opts.rowSplit <= 1 && !stagedRow) {
      int64_t warps =
          opts.numWarps ? opts.numWarps : defaultFusedWarps(rowBlock);
      bool fitsBlock = std::max<int64_t>(rowBlock / (warps * 32), 1) <=
                           opts.maxElementsPerThread &&
                       (opts.blockSize != 0 ||
                        rowBlock <= maxAutoFusedBlock(elementBytes, sm >= 80));
      bool fitsCluster = clustersAvailable && opts.blockSize == 0 &&
                         opts.numWarps == 0 && opts.clusterSize != 1 &&
                         fitsAutoCluster(rowBlock, elementBytes, cols);
      if (fitsBlock || !canOnline)
        plan.strategy = Strategy::Fused;
      else if (fitsCluster)
        plan.strategy = Strategy::Cluster;
    }
  } else {
    return map.emitOpError() << "unknown strategy '" << opts.strategy
                             << "'; expected fused, cluster, online, chunks or "
                                "auto";
  }

  if (opts.rowSplit > 1 && plan.strategy != Strategy::Online)
    return map.emitOpError() << "row-split applies to the online strategy "
                                "only, not "
                             << stringify(plan.strategy);

  if (plan.strategy != Strategy::Online) {
    if (rowBlock == 0)
      return map.emitOpError()
             << "the " << stringify(plan.strategy)
             << " strategy holds the whole row in registers and needs its "
                "length: set cols=N or block-size=B (or use strategy=online)";
    if (cols > rowBlock)
      return map.emitOpError()
             << "block-size " << rowBlock << " is smaller than the " << cols
             << " columns; the " << stringify(plan.strategy)
             << " kernel holds the whole row";
    int64_t slice = rowBlock;
    if (plan.strategy == Strategy::Cluster) {
      if (opts.clusterSize != 0)
        plan.clusterSize = opts.clusterSize;
      else {
        // From the power-of-two block; a 3 * 2^k row block then gets
        // 3 * 2^j slices.
        int64_t pow2 = llvm::PowerOf2Ceil(rowBlock);
        plan.clusterSize = std::clamp<int64_t>(
            pow2 / std::max(autoClusterSlice(rowBlock, elementBytes, cols),
                            pow2 / kMaxClusterSize),
            2, kMaxClusterSize);
      }
      if (rowBlock < plan.clusterSize || rowBlock % plan.clusterSize != 0)
        return map.emitOpError() << "a row block of " << rowBlock
                                 << " elements cannot be split over "
                                 << plan.clusterSize << " blocks";
      slice = rowBlock / plan.clusterSize;
    }
    plan.rowsPerBlock = opts.rowsPerBlock ? opts.rowsPerBlock : 1;
    // A block per row where the stage is asked for: only such blocks hold
    // one.
    if (!opts.rowsPerBlock && !opts.numWarps &&
        plan.strategy == Strategy::Fused && opts.prefetch != "on")
      plan.rowsPerBlock = defaultRowsPerBlock(rowBlock);
    if (plan.rowsPerBlock > 1 && plan.strategy != Strategy::Fused)
      return map.emitOpError() << "rows-per-block applies to the fused "
                                  "strategy only";
    if (opts.numWarps) {
      plan.numWarps = opts.numWarps;
    } else if (plan.rowsPerBlock > 1) {
      // A warp per row, or fewer threads with about 8 elements each for
      // rows shorter than 256.
      int64_t perRow = std::clamp<int64_t>(slice / 8, 1, 32);
      plan.numWarps = std::max<int64_t>(perRow * plan.rowsPerBlock / 32, 1);
    } else {
      plan.numWarps = defaultFusedWarps(slice);
    }
    bool wide = !opts.numWarps && widensFusedBlock(plan, slice, opts);
    bool rowGridBlock =
        !opts.numWarps && !wide && narrowsRowGridBlock(plan, slice, opts, sm);
    if (wide)
      plan.numWarps = kWideBlockElements / 64 / 32;
    else if (rowGridBlock)
      plan.numWarps = kRowGrid16BitWarps;
    if (plan.rowsPerBlock > 1 &&
        (plan.rowsPerBlock > plan.numThreads() || plan.threadsPerRow() > 32 ||
         !llvm::isPowerOf2_64(plan.threadsPerRow())))
      return map.emitOpError()
             << "rows-per-block=" << plan.rowsPerBlock << " over "
             << plan.numThreads()
             << " threads must leave a power of two from 1 to 32 threads per "
                "row";
    // At least one element per thread, the same number for every thread.
    plan.blockElements = std::max(slice, plan.threadsPerRow());
    if (plan.blockElements % plan.threadsPerRow() != 0)
      return map.emitOpError() << "a block of " << plan.blockElements
                               << " elements does not divide evenly over "
                               << plan.threadsPerRow() << " threads per row";
    plan.maxCols = plan.blockElements * plan.clusterSize;
    plan.stageElements = plan.blockElements;
    if (plan.elementsPerThread() > opts.maxElementsPerThread && !wide &&
        !rowGridBlock)
      return map.emitOpError()
             << "a " << stringify(plan.strategy) << " block of "
             << plan.blockElements << " elements over " << plan.threadsPerRow()
             << " threads keeps " << plan.elementsPerThread()
             << " elements per thread in registers (limit "
             << opts.maxElementsPerThread
             << "); use more warps or strategy=online for rows this long";
  } else {
    if (opts.rowsPerBlock > 1)
      return map.emitOpError()
             << "rows-per-block does not apply to the online strategy";
    if (opts.clusterSize > 1) {
      if (!clustersAvailable)
        return map.emitOpError() << "an online kernel over clusters needs "
                                    "thread-block clusters (sm_90 or newer), "
                                    "not "
                                 << opts.chip;
      plan.clusterSize = opts.clusterSize;
    } else if (opts.rowSplit > 1) {
      plan.splitSize = opts.rowSplit;
      plan.splitAhead = opts.splitAhead;
    } else if (opts.clusterSize == 0 && opts.strategy == "auto" &&
               clustersAvailable && cols != 0 && !stagedRow) {
      plan.clusterSize = autoOnlineClusterSize(cols, elementBytes);
    }
    if (opts.blockSize != 0 && !llvm::isPowerOf2_64(opts.blockSize))
      return map.emitOpError() << "an online tile (block-size) must be a "
                                  "power of two, got "
                               << opts.blockSize;
    plan.numWarps = opts.numWarps ? opts.numWarps
                    : stagedRow
                        ? stagedRowWarps(cols)
                        : defaultOnlineWarps(plan.inType, plan.clusterSize);
    // Tiles of 4 vectors per thread; 2 for f16, whose conversions make
    // ptxas spill with the reversed second pass at 4, for the bf16 shares
    // kept in bulk (autoBulkTiles) and for staged rows.
    bool twoVectors = plan.inType.isF16() || stagedRow ||
                      autoBulkTiles(opts, plan.inType, plan.clusterSize, cols);
    plan.blockElements =
        opts.blockSize ? opts.blockSize
                       : plan.numThreads() * vector * (twoVectors ? 2 : 4);
    plan.maxCols = 0;
    // A block's share of a known row: whole tiles, ceil(ceil(N / C) / tile)
    // of them (emitOnlineRow).
    if (cols != 0)
      plan.stageElements =
          llvm::divideCeil(llvm::divideCeil(cols, plan.shareBlocks()),
                           plan.blockElements) *
          plan.blockElements;
    if (plan.blockElements < plan.numThreads())
      return map.emitOpError()
             << "the online tile (block-size " << plan.blockElements
             << ") must hold at least one element per thread ("
             << plan.numThreads() << ")";
    if (plan.elementsPerThread() > opts.maxElementsPerThread)
      return map.emitOpError()
             << "an online tile of " << plan.blockElements << " elements keeps "
             << plan.elementsPerThread() << " elements per thread in "
             << "registers (limit " << opts.maxElementsPerThread << ")";
  }
  plan.rereadFallback =
      plan.strategy != Strategy::Online &&
      (opts.scalarFallback == "reread" ||
       (opts.scalarFallback == "auto" && plan.blockElements >= 8192));
  // The widest power of two dividing the elements per thread: chunks of
  // vectorWidth elements tile them exactly.
  int64_t perThread = plan.elementsPerThread();
  plan.vectorWidth = std::min(vector, perThread & -perThread);

  if (!isOn(opts.pairReduce) && !isOff(opts.pairReduce) &&
      opts.pairReduce != "auto")
    return map.emitOpError() << "unknown pair-reduce '" << opts.pairReduce
                             << "'; expected on, off, 1, 0 or auto";
  plan.pairReduce =
      plan.strategy != Strategy::Online && canOnline &&
      (isOn(opts.pairReduce) ||
       (opts.pairReduce == "auto" && autoPairReduce(plan, opts, cols)));

  if (opts.grid != "auto" && opts.grid != "persistent" && opts.grid != "rows")
    return map.emitOpError() << "unknown grid '" << opts.grid
                             << "'; expected persistent, rows or auto";
  if (opts.grid == "rows" && plan.splitSize > 1)
    return map.emitOpError()
           << "grid=rows launches a split group per row, but a row-split "
              "kernel's groups must all be resident at once (cooperative "
              "launch)";
  plan.gridPerRowGroup =
      mayGridPerRowGroup(opts, sm) &&
      (opts.grid == "rows" || stagedRow || autoGridPerRowGroup(plan));

  if (opts.onlineKeep == -1 && opts.prefetch == "auto" &&
      !isOff(opts.keepAhead)) {
    // Bulk copies where they measured faster (auto) or were asked for;
    // per-thread copies where asked for or as auto's other rule.
    int64_t bulkKept = isOn(opts.keepAhead) ? 0 : autoBulkKeptElements(plan);
    plan.bulkKeep = bulkKept > 0;
    plan.keptElements = bulkKept > 0 ? bulkKept
                        : opts.keepAhead == "bulk"
                            ? 0
                            : autoKeepAheadElements(plan);
    plan.keepAhead = plan.keptElements > 0;
  }
  if (opts.prefetch != "on" && opts.prefetch != "off" &&
      opts.prefetch != "auto" && opts.prefetch != "registers")
    return map.emitOpError() << "unknown prefetch '" << opts.prefetch
                             << "'; expected on, registers, off or auto";
  if (opts.prefetch == "on" || opts.prefetch == "registers") {
    bool stage = opts.prefetch == "on";
    StringRef reason = prefetchObstacle(plan, stage, sm);
    if (!reason.empty())
      return map.emitOpError() << "prefetch=" << opts.prefetch
                               << " is not possible here: " << reason;
    (stage ? plan.prefetch : plan.prefetchRegisters) = true;
  } else if (opts.prefetch == "auto") {
    plan.prefetch = prefetchObstacle(plan, true, sm).empty() &&
                    (stagedRow || autoPrefetch(plan));
    plan.prefetchRegisters = !plan.prefetch &&
                             prefetchObstacle(plan, false, sm).empty() &&
                             autoPrefetchRegisters(plan);
  }
  // The online kernel stages its share of rows of at most the known length.
  if (plan.prefetch && plan.strategy == Strategy::Online)
    plan.maxCols = plan.stageElements * plan.shareBlocks();

  if (opts.onlineKeep < -1)
    return map.emitOpError() << "online-keep must be a number of KiB, 0 "
                                "(none) or -1 (auto), got "
                             << opts.onlineKeep;
  if (opts.onlineKeep > 0) {
    if (plan.strategy != Strategy::Online)
      return map.emitOpError()
             << "online-keep applies to the online strategy only";
    if (plan.prefetch)
      return map.emitOpError() << "online-keep and prefetch=on both use the "
                                  "stage in shared memory; choose one";
    if (plan.splitAhead > 0)
      return map.emitOpError()
             << "online-keep keeps one row's tiles and split-ahead keeps "
                "several rows between their passes; choose one";
    if (plan.vectorWidth == 1)
      return map.emitOpError() << "online-keep keeps the vector path's tiles "
                                  "and this kernel has none";
    int64_t tileBytes = plan.blockElements * byteWidth(plan.inType);
    int64_t tiles = opts.onlineKeep * 1024 / tileBytes;
    if (tiles == 0)
      return map.emitOpError()
             << "online-keep=" << opts.onlineKeep
             << " KiB holds no whole tile of " << tileBytes / 1024 << " KiB";
    if (tiles * tileBytes > kMaxDynamicSharedBytes)
      return map.emitOpError() << "online-keep=" << opts.onlineKeep
                               << " KiB exceeds the shared memory of a block ("
                               << kMaxDynamicSharedBytes / 1024 << " KiB)";
    plan.keptElements = tiles * plan.blockElements;
  }

  bool bulk = opts.keepAhead == "bulk";
  if (!isOn(opts.keepAhead) && !isOff(opts.keepAhead) && !bulk &&
      opts.keepAhead != "auto")
    return map.emitOpError() << "unknown keep-ahead '" << opts.keepAhead
                             << "'; expected on, bulk, off or auto";
  if (isOn(opts.keepAhead) || bulk || plan.keepAhead) {
    if (plan.keptElements == 0)
      return map.emitOpError()
             << "keep-ahead=" << opts.keepAhead
             << " fills the tiles that online-keep keeps, and "
             << (opts.onlineKeep == 0
                     ? "online-keep=0 keeps none"
                     : "auto keeps none for this kernel with it (see "
                       "online-keep's description)")
             << "; set online-keep=K";
    if (plan.stageElements == 0)
      return map.emitOpError() << "keep-ahead copies the first tiles of each "
                                  "block's share ahead and needs the row "
                                  "length (cols=N)";
    if (plan.keptElements >= plan.stageElements)
      return map.emitOpError()
             << "online-keep=" << opts.onlineKeep
             << " KiB keeps the whole share of a row, and keep-ahead streams "
                "at least its last tile; keep less, or use prefetch=on to "
                "stage the whole share";
    if (sm < 80)
      return map.emitOpError() << "keep-ahead copies with cp.async, which "
                                  "needs sm_80 or newer";
    if (bulk && sm < 90)
      return map.emitOpError() << "keep-ahead=bulk copies with cp.async.bulk "
                                  "and an mbarrier, which need sm_90 or newer";
    if (bulk &&
        2 * plan.keptElements * byteWidth(plan.inType) > kMaxDynamicSharedBytes)
      return map.emitOpError()
             << "keep-ahead=bulk keeps two buffers of online-keep="
             << opts.onlineKeep << " KiB, more than the shared memory of a "
             << "block (" << kMaxDynamicSharedBytes / 1024 << " KiB)";
    if (!plan.reverseSecondPass || plan.splitSize > 1 || opts.prefetch == "off")
      return map.emitOpError()
             << "keep-ahead hands tiles on across the passes: it needs the "
                "tiles loaded ahead (prefetch=registers or auto), the "
                "reversed second pass and no row-split";
    plan.keepAhead = true;
    plan.bulkKeep = bulk || plan.bulkKeep;
    plan.prefetchRegisters = true;
    // The stage holds the last tiles of a share of at most stageElements.
    plan.maxCols = plan.stageElements * plan.shareBlocks();
  }

  if (!isOn(opts.cacheHints) && !isOff(opts.cacheHints) &&
      opts.cacheHints != "auto")
    return map.emitOpError() << "unknown cache-hints '" << opts.cacheHints
                             << "'; expected on, off or auto";
  if (isOn(opts.cacheHints) && plan.strategy != Strategy::Online)
    return map.emitOpError()
           << "cache-hints applies to the online strategy only";
  plan.cacheHints = plan.strategy == Strategy::Online &&
                    (isOn(opts.cacheHints) ||
                     (opts.cacheHints == "auto" && autoCacheHints(plan)));
  return plan;
}

//===----------------------------------------------------------------------===//
// Kernel emission
//===----------------------------------------------------------------------===//

/// The values one thread holds for a vector (or scalar) access of a row.
struct Chunk {
  /// Column of the first element (i32).
  Value col;
  /// Whether the access is inside the row (i1); all-or-nothing per chunk.
  Value valid;
  /// The elements, extended to f32.
  SmallVector<Value> values;
};

/// Name of the shared-memory array, one f32 per reduce, through which the
/// blocks of a cluster exchange their partial results.
static constexpr StringLiteral kClusterSlotsName = "rowred_cluster_slots";

/// Name of the shared-memory array of mbarriers (i64), one per cluster
/// exchange and buffer, on which the blocks of a cluster count each other's
/// values in.
static constexpr StringLiteral kClusterBarriersName = "rowred_cluster_barriers";

/// Name of the prefetch stage: dynamic shared memory, sized by the launcher
/// (`dynamic_shared_bytes` in the metadata).
static constexpr StringLiteral kStageName = "rowred_stage";

/// Nanoseconds a chunks kernel's warp 0 sleeps between two polls of its
/// row's counter (version 69: the interval made no difference).
static constexpr int64_t kChunkPollNanoseconds = 64;

/// Nanoseconds (of %globaltimer) after which a chunks kernel's warp 0 stops
/// waiting for its row's other chunks and traps: they cannot all be
/// resident when a row has more chunks than the device holds blocks, and a
/// launch that breaks that rule (docs/abi.md) then fails instead of hanging.
/// A row's chunks wait for each other for microseconds in a correct launch.
static constexpr int64_t kChunkWaitLimitNanoseconds = 4'000'000'000;

/// Name of the shared-memory array of the mbarriers (i64) on which the bulk
/// copies complete: two for keep-ahead=bulk, one per stage buffer; one for
/// a chunks kernel's stage.
static constexpr StringLiteral kStageBarriersName = "rowred_stage_barriers";

/// Per-row clones of the parts of a body that do not depend on the element.
struct RowContext {
  Region *body;
  /// Block arguments for row scalars and element-independent results.
  IRMapping uniform;
  /// Reciprocals of row-uniform divisors, for `a / s` -> `a * (1 / s)`.
  DenseMap<Value, Value> reciprocals;
  /// Ops that depend on the element, in order.
  SmallVector<Operation *> varying;
};

/// Emits the body of one kernel. The kernel handles every row
/// `blockIdx.x + k * gridDim.x` with `numThreads` threads (with several rows
/// per block, rows `blockIdx.x * R + g + k * gridDim.x * R` for its groups
/// `g`; with clusters, every row `clusterId + k * numClusters`, each block of
/// the cluster on its slice); each thread holds `elementsPerThread` elements
/// of the block, as chunks of `vectorWidth` elements interleaved across the
/// threads of a row so that a warp's accesses coalesce.
class KernelEmitter {
public:
  KernelEmitter(ImplicitLocOpBuilder &b, Group group, const KernelPlan &plan,
                gpu::GPUFuncOp func)
      : b(b), group(group), plan(plan) {
    Block &entry = func.getBody().front();
    x = entry.getArgument(0);
    y = entry.getArgument(1);
    rows = entry.getArgument(2);
    cols = arith::TruncIOp::create(b, b.getI32Type(), entry.getArgument(3));
    xStride = entry.getArgument(4);
    yStride = entry.getArgument(5);
    if (!func.getWorkgroupAttributions().empty())
      shared = func.getWorkgroupAttributions().front();
    sharedPtr = LLVM::LLVMPointerType::get(b.getContext(), 3);
    if (plan.hasStage())
      stage = stageBase = LLVM::AddressOfOp::create(b, sharedPtr, kStageName);
    f32 = b.getF32Type();
    i32 = b.getI32Type();
    i64 = b.getI64Type();
    Value tidIndex = gpu::ThreadIdOp::create(b, gpu::Dimension::x);
    tid = arith::IndexCastOp::create(b, i32, tidIndex);
    lane = arith::RemUIOp::create(b, tid, constI32(32));
    warp = arith::IndexCastOp::create(
        b, b.getIndexType(), arith::DivUIOp::create(b, tid, constI32(32)));
    int64_t perRow = plan.threadsPerRow();
    rowTid = tid;
    if (plan.rowsPerBlock > 1) {
      rowTid = arith::RemUIOp::create(b, tid, constI32(perRow));
      rowInBlock = arith::DivUIOp::create(b, tid, constI32(perRow));
    }
    if (plan.clusterSize > 1) {
      clusterRank = arith::IndexCastOp::create(
          b, i32, gpu::ClusterBlockIdOp::create(b, gpu::Dimension::x));
      sliceStart =
          arith::MulIOp::create(b, clusterRank, constI32(plan.blockElements));
      shareRank = clusterRank;
    }
    if (plan.strategy == Strategy::Chunks)
      workspace = entry.getArgument(6);
    if (plan.splitSize > 1) {
      workspace = entry.getArgument(6);
      Value block = arith::IndexCastOp::create(
          b, i32, gpu::BlockIdOp::create(b, gpu::Dimension::x));
      Value grid = arith::IndexCastOp::create(
          b, i32, gpu::GridDimOp::create(b, gpu::Dimension::x));
      Value size = constI32(plan.splitSize);
      shareRank = arith::RemUIOp::create(b, block, size);
      splitGroup = arith::DivUIOp::create(b, block, size);
      splitGroups = arith::DivUIOp::create(b, grid, size);
    }
  }

  /// Emits the whole kernel: the L2 policies and the cluster's mbarriers when
  /// used, the row paths (emitPaths), and the exit of the cluster or of the
  /// split group.
  void emit() {
    if (plan.strategy == Strategy::Chunks)
      return emitChunks();
    if (plan.cacheHints) {
      auto policy = [&](StringRef priority) {
        return NVVM::InlinePtxOp::create(
                   b, TypeRange{i64}, ValueRange(), ValueRange(),
                   ("createpolicy.fractional.L2::" + priority + ".b64 $0, 1.0;")
                       .str(),
                   /*predicate=*/Value())
            .getResult(0);
      };
      evictLast = policy("evict_last");
      evictFirst = policy("evict_first");
    }
    // Distributed shared memory of another block may only be accessed once
    // that block has started and initialized its mbarriers: one cluster
    // barrier before the first exchange (compute-sanitizer's racecheck
    // reports the writes otherwise).
    if (plan.bulkKeep)
      initStageBarriers();
    if (plan.clusterSize > 1) {
      initClusterBarriers();
      emitClusterBarrier();
    } else if (plan.bulkKeep) {
      gpu::BarrierOp::create(b);
    }
    // Blocks past the last whole split group have no group to wait with.
    OpBuilder::InsertionGuard guard(b);
    if (plan.splitSize > 1)
      b.setInsertionPointToStart(
          &scf::IfOp::create(b,
                             arith::CmpIOp::create(b, arith::CmpIPredicate::ult,
                                                   splitGroup, splitGroups),
                             /*withElseRegion=*/false)
               .getThenRegion()
               .front());
    emitPaths();
    // No block may exit while the others of its cluster can still read its
    // shared memory.
    if (plan.clusterSize > 1)
      emitClusterBarrier();
    if (plan.splitSize > 1)
      leaveSplitGroup();
  }

private:
  /// The run-time choice between the vector path (and the peeled path) and
  /// the scalar path, each a grid-stride loop over rows.
  void emitPaths() {
    int64_t vec = plan.vectorWidth;
    if (vec == 1) {
      emitRowLoop(1);
    } else {
      auto ifOp = scf::IfOp::create(b, vectorPathAllowed(vec),
                                    /*withElseRegion=*/true);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(&ifOp.getThenRegion().front());
      emitRowLoop(vec);
      b.setInsertionPointToStart(&ifOp.getElseRegion().front());
      if (plan.peelable()) {
        auto peelIf = scf::IfOp::create(b, misalignedAlike(vec),
                                        /*withElseRegion=*/true);
        b.setInsertionPointToStart(&peelIf.getThenRegion().front());
        emitRowLoop(vec, /*peeled=*/true);
        b.setInsertionPointToStart(&peelIf.getElseRegion().front());
      }
      emitRowLoop(1);
    }
  }

  /// True (i1) when both matrices' pointers and strides and the row length
  /// allow `vec`-element accesses.
  Value vectorPathAllowed(int64_t vec) {
    Value ok = isAligned(x, xStride, plan.inType, vec);
    ok = arith::AndIOp::create(b, ok, isAligned(y, yStride, plan.outType, vec));
    Value colsOk = arith::CmpIOp::create(
        b, arith::CmpIPredicate::eq,
        arith::RemUIOp::create(b, cols, constI32(vec)), constI32(0));
    return arith::AndIOp::create(b, ok, colsOk);
  }

  Value constI32(int64_t v) { return arith::ConstantIntOp::create(b, v, 32); }
  Value constI64(int64_t v) { return arith::ConstantIntOp::create(b, v, 64); }
  Value constF32(double v) {
    return arith::ConstantFloatOp::create(b, f32, APFloat((float)v));
  }
  Value negInf() {
    return arith::ConstantFloatOp::create(
        b, f32, APFloat::getInf(APFloat::IEEEsingle(), /*Negative=*/true));
  }

  /// The start of row `row` (i64) of the matrix at `base` with `stride`
  /// elements of type `elem` between rows.
  Value rowPointer(Value base, Type elem, Value row, Value stride) {
    return LLVM::GEPOp::create(
        b, base.getType(), elem, base,
        ValueRange{arith::MulIOp::create(b, row, stride)});
  }

  /// True (i1) when `ptr` and every row start `ptr + k * stride` are aligned
  /// for `vec`-element accesses.
  Value isAligned(Value ptr, Value stride, Type elem, int64_t vec) {
    Value addr = LLVM::PtrToIntOp::create(b, i64, ptr);
    Value addrOk = arith::CmpIOp::create(
        b, arith::CmpIPredicate::eq,
        arith::RemUIOp::create(b, addr, constI64(vec * byteWidth(elem))),
        constI64(0));
    Value strideOk = arith::CmpIOp::create(
        b, arith::CmpIPredicate::eq,
        arith::RemUIOp::create(b, stride, constI64(vec)), constI64(0));
    return arith::AndIOp::create(b, addrOk, strideOk);
  }

  /// True (i1) when every row of the input and the same row of the output
  /// start equally far, in elements, from a `vec`-element boundary: their
  /// element offsets agree modulo `vec` at the base and between rows. Such
  /// rows take the peeled vector path (loadPeeledRow) whatever their
  /// alignment.
  Value misalignedAlike(int64_t vec) {
    auto sameModVec = [&](Value lhs, Value rhs) {
      Value diff = arith::SubIOp::create(b, lhs, rhs);
      return arith::CmpIOp::create(
          b, arith::CmpIPredicate::eq,
          arith::AndIOp::create(b, diff, constI64(vec - 1)), constI64(0));
    };
    auto elementIndex = [&](Value ptr, Type elem) {
      return arith::DivUIOp::create(b, LLVM::PtrToIntOp::create(b, i64, ptr),
                                    constI64(byteWidth(elem)));
    };
    // One statement each, so that the ops come in this order.
    Value stridesAlike = sameModVec(xStride, yStride);
    Value yIndex = elementIndex(y, plan.outType);
    Value xIndex = elementIndex(x, plan.inType);
    Value basesAlike = sameModVec(xIndex, yIndex);
    return arith::AndIOp::create(b, basesAlike, stridesAlike);
  }

  /// `exp(v)`, as `exp2(v * log2(e))` on `ex2.approx.ftz.f32` with
  /// fast-exp. The flush-to-zero form is one MUFU.EX2; the plain
  /// `ex2.approx.f32` that `math.exp2 {afn}` becomes also produces subnormal
  /// results, which takes a compare and two predicated multiplies around it.
  /// Only results below 2^-126 differ (they become 0), and no subnormal input
  /// reaches it with a different result (2^x = 1 for |x| < 2^-126).
  Value emitExp(Value v) {
    if (!plan.fastExp)
      return math::ExpOp::create(b, v);
    Value scaled = arith::MulFOp::create(b, v, constF32(M_LOG2E));
    return LLVM::CallIntrinsicOp::create(
               b, f32, b.getStringAttr("llvm.nvvm.ex2.approx.ftz.f32"),
               ValueRange{scaled})
        .getResult(0);
  }

  /// `log(v)`, as `log2(v) * ln(2)` on lg2.approx with fast-exp.
  Value emitLog(Value v) {
    if (!plan.fastExp)
      return math::LogOp::create(b, v);
    Value l2 = math::Log2Op::create(b, v, arith::FastMathFlags::afn);
    return arith::MulFOp::create(b, l2, constF32(M_LN2));
  }

  Value combine(Combiner c, Value lhs, Value rhs) {
    if (c == Combiner::max)
      return arith::MaximumFOp::create(b, lhs, rhs);
    return arith::AddFOp::create(b, lhs, rhs);
  }

  /// Pairwise tree over `values`, for instruction-level parallelism.
  template <typename T>
  static T treeReduce(ArrayRef<T> input, function_ref<T(T, T)> fn) {
    assert(!input.empty() && "nothing to reduce");
    std::vector<T> values(input.begin(), input.end());
    for (size_t width = values.size(); width > 1; width = (width + 1) / 2) {
      for (size_t i = 0; i < width / 2; ++i)
        values[i] = fn(values[2 * i], values[2 * i + 1]);
      if (width % 2)
        values[width / 2] = values[width - 1];
    }
    return values[0];
  }

  /// Loads the `vec`-wide chunk at column `col` of the row at `rowPtr` (at
  /// `addrCol` of `rowPtr` when given: the stage holds a block's slice from
  /// its column 0) when `valid`; masked-off chunks load nothing and read as
  /// zeros.
  Chunk loadChunk(Value rowPtr, Value col, Value valid, int64_t vec,
                  Value addrCol = {}) {
    valid = inOwnRow(valid);
    return unpackChunk(col, valid, loadRaw(rowPtr, col, valid, vec, addrCol));
  }

  /// `valid` and, with several rows per block, whether this thread's row
  /// exists.
  Value inOwnRow(Value valid) {
    return rowValid ? arith::AndIOp::create(b, valid, rowValid) : valid;
  }

  /// This thread's row (i64) of the group of rows starting at `groupRow`:
  /// the same row with one row per block.
  Value ownRow(Value groupRow) {
    if (plan.rowsPerBlock == 1)
      return groupRow;
    return arith::AddIOp::create(b, groupRow,
                                 arith::ExtUIOp::create(b, i64, rowInBlock));
  }

  /// The type of one `vec`-wide access of the input.
  Type rawType(int64_t vec) {
    return vec == 1 ? plan.inType : VectorType::get({vec}, plan.inType);
  }

  /// The `vec`-wide load of loadChunk, as loaded (zeros when not `valid`).
  Value loadRaw(Value rowPtr, Value col, Value valid, int64_t vec,
                Value addrCol = {}) {
    Type loadType = rawType(vec);
    auto ifOp = scf::IfOp::create(b, loadType, valid,
                                  /*withElseRegion=*/true);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(&ifOp.getThenRegion().front());
      Value ptr = LLVM::GEPOp::create(b, rowPtr.getType(), plan.inType, rowPtr,
                                      ValueRange{addrCol ? addrCol : col},
                                      LLVM::GEPNoWrapFlags::inbounds);
      Value loaded;
      if (loadPolicy && rowPtr != stage && vec * byteWidth(plan.inType) == 16)
        loaded = loadWithPolicy(loadType, ptr, loadPolicy);
      else
        loaded = LLVM::LoadOp::create(b, loadType, ptr,
                                      vec * byteWidth(plan.inType));
      scf::YieldOp::create(b, loaded);
      b.setInsertionPointToStart(&ifOp.getElseRegion().front());
      Value zero = arith::ConstantOp::create(b, b.getZeroAttr(loadType));
      scf::YieldOp::create(b, zero);
    }
    return ifOp.getResult(0);
  }

  /// A 16-byte global load of `type` from `ptr` with the L2 eviction policy
  /// `policy` (`ld.global.L2::cache_hint`; no NVVM op spells it in MLIR 22).
  Value loadWithPolicy(Type type, Value ptr, Value policy) {
    auto ld = NVVM::InlinePtxOp::create(
        b, TypeRange{i32, i32, i32, i32}, ValueRange{ptr, policy}, ValueRange(),
        "ld.global.L2::cache_hint.v4.b32 {$0, $1, $2, $3}, [$4], $5;",
        /*predicate=*/Value());
    Value words = LLVM::PoisonOp::create(b, VectorType::get({4}, i32));
    for (int32_t i = 0; i < 4; ++i)
      words =
          LLVM::InsertElementOp::create(b, words, ld.getResult(i), constI32(i));
    return LLVM::BitcastOp::create(b, type, words);
  }

  /// The chunk at `col` from the value `loaded` of loadRaw, its elements
  /// extended to f32.
  Chunk unpackChunk(Value col, Value valid, Value loaded) {
    Chunk chunk;
    chunk.col = col;
    chunk.valid = valid;
    auto vecType = dyn_cast<VectorType>(loaded.getType());
    int64_t vec = vecType ? vecType.getNumElements() : 1;
    for (int64_t i = 0; i < vec; ++i) {
      Value v = loaded;
      if (vec > 1)
        v = LLVM::ExtractElementOp::create(b, loaded, constI32(i));
      if (plan.inType != f32)
        v = arith::ExtFOp::create(b, f32, v);
      chunk.values.push_back(v);
    }
    return chunk;
  }

  /// Rounds `values` to the output type and stores them at column `col` of
  /// the row at `rowPtr` when `valid`.
  void storeChunk(Value rowPtr, Value col, Value valid,
                  ArrayRef<Value> values) {
    int64_t vec = values.size();
    auto ifOp = scf::IfOp::create(b, valid, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&ifOp.getThenRegion().front());
    SmallVector<Value> rounded;
    for (Value v : values)
      rounded.push_back(plan.outType == f32
                            ? v
                            : arith::TruncFOp::create(b, plan.outType, v));
    Value toStore = rounded.front();
    if (vec > 1) {
      toStore = LLVM::PoisonOp::create(b, VectorType::get({vec}, plan.outType));
      for (int64_t i = 0; i < vec; ++i)
        toStore =
            LLVM::InsertElementOp::create(b, toStore, rounded[i], constI32(i));
    }
    Value ptr =
        LLVM::GEPOp::create(b, rowPtr.getType(), plan.outType, rowPtr,
                            ValueRange{col}, LLVM::GEPNoWrapFlags::inbounds);
    if (storePolicy && vec * byteWidth(plan.outType) == 16) {
      // `st.global.L2::cache_hint` with the policy.
      Value words =
          LLVM::BitcastOp::create(b, VectorType::get({4}, i32), toStore);
      SmallVector<Value> operands{ptr};
      for (int32_t i = 0; i < 4; ++i)
        operands.push_back(
            LLVM::ExtractElementOp::create(b, words, constI32(i)));
      operands.push_back(storePolicy);
      NVVM::InlinePtxOp::create(
          b, TypeRange(), operands, ValueRange(),
          "st.global.L2::cache_hint.v4.b32 [$0], {$1, $2, $3, $4}, $5;",
          /*predicate=*/Value());
      return;
    }
    LLVM::StoreOp::create(b, toStore, ptr, vec * byteWidth(plan.outType));
  }

  /// Where one of a thread's chunks lies.
  struct ChunkPlace {
    /// Column in the row (i32).
    Value col;
    /// Column within the block's slice: the chunk's place in the stage.
    Value local;
    /// Whether the chunk is inside the row (i1).
    Value valid;
  };

  /// The chunks a thread holds of a block starting at column `start`: all of
  /// its elements, or `numChunks` chunks when given. A chunk is valid when it
  /// starts before column `end` (the row's end when not given; the peeled
  /// path passes the end of its vectors).
  SmallVector<ChunkPlace> chunkPlaces(Value start, int64_t vec,
                                      int64_t numChunks = 0, Value end = {}) {
    SmallVector<ChunkPlace> places;
    if (numChunks == 0)
      numChunks = plan.elementsPerThread() / vec;
    Value firstLocal = arith::MulIOp::create(b, rowTid, constI32(vec));
    Value first = firstLocal;
    if (start)
      first = arith::AddIOp::create(b, first, start);
    // Chunk k is inside the row when k * stride < end - first: one live
    // value for every mask instead of one column per chunk.
    Value remaining = arith::SubIOp::create(b, end ? end : cols, first);
    for (int64_t k = 0; k < numChunks; ++k) {
      Value offset = constI32(k * plan.threadsPerRow() * vec);
      places.push_back(
          {arith::AddIOp::create(b, first, offset),
           arith::AddIOp::create(b, firstLocal, offset),
           wholeChunk ? arith::ConstantIntOp::create(b, 1, 1).getResult()
                      : arith::CmpIOp::create(b, arith::CmpIPredicate::slt,
                                              offset, remaining)
                            .getResult()});
    }
    return places;
  }

  /// Loads the chunks a thread holds of a block starting at column `start`
  /// (see chunkPlaces) from the row at `rowPtr`, or from the stage.
  SmallVector<Chunk> loadBlock(Value rowPtr, Value start, int64_t vec,
                               int64_t numChunks = 0, bool fromStage = false) {
    SmallVector<Chunk> chunks;
    for (const ChunkPlace &place : chunkPlaces(start, vec, numChunks))
      chunks.push_back(
          fromStage ? loadChunk(stage, place.col, place.valid, vec, place.local)
                    : loadChunk(rowPtr, place.col, place.valid, vec));
    return chunks;
  }

  /// Where the vectors of a row that is not aligned for them lie.
  struct PeeledRow {
    /// Elements before the first aligned column, h < vec (i32).
    Value head;
    /// The end of the last whole vector from column h (i32).
    Value vectorEnd;
  };

  /// The head and vector end of the row at `rowPtr` (whose output row
  /// starts equally far from alignment; see misalignedAlike).
  PeeledRow peelRow(Value rowPtr, int64_t vec) {
    int64_t bytes = byteWidth(plan.inType);
    // h = (-(address / bytes)) mod vec, at most the row's length.
    Value index = arith::DivUIOp::create(
        b, LLVM::PtrToIntOp::create(b, i64, rowPtr), constI64(bytes));
    Value head = arith::TruncIOp::create(
        b, i32,
        arith::AndIOp::create(b, arith::SubIOp::create(b, constI64(0), index),
                              constI64(vec - 1)));
    head = arith::MinUIOp::create(b, head, cols);
    Value vectorEnd = arith::AddIOp::create(
        b, head,
        arith::AndIOp::create(b, arith::SubIOp::create(b, cols, head),
                              constI32(-vec)));
    return {head, vectorEnd};
  }

  /// Loads this thread's part of a row whose start at `rowPtr` need not be
  /// aligned for `vec`-element accesses (see peelRow): the vectors of the
  /// block's layout from column h (shifted by h for a cluster's slices),
  /// then its part of the edges (loadEdges).
  SmallVector<Chunk> loadPeeledRow(Value rowPtr, int64_t vec) {
    PeeledRow row = peelRow(rowPtr, vec);
    Value start = row.head;
    if (plan.clusterSize > 1)
      start = arith::AddIOp::create(b, row.head, sliceStart);
    SmallVector<Chunk> chunks;
    for (const ChunkPlace &place : chunkPlaces(start, vec, 0, row.vectorEnd))
      chunks.push_back(loadChunk(rowPtr, place.col, place.valid, vec));
    // One list for a cluster: one scalar per thread instead of two keeps
    // the 64-register slices without spills; on one block, two keep ptxas
    // from spilling the log-softmax warp per row of 1024.
    llvm::append_range(chunks, loadEdges(rowPtr, row, vec,
                                         /*oneList=*/plan.clusterSize > 1));
    return chunks;
  }

  /// The scalar chunks of the edges of a peeled row: the head, columns
  /// [0, h), and the tail, [vectorEnd, cols), fewer than vec elements each,
  /// spread over the row's threads; only the first block of a cluster takes
  /// them. Either head and tail side by side, ceil((vec - 1) / T) of each
  /// per thread, or `oneList`: edge e < h + (cols - vectorEnd) is column e
  /// of the head or column vectorEnd + e - h of the tail,
  /// ceil((2 * vec - 2) / T) per thread.
  SmallVector<Chunk> loadEdges(Value rowPtr, PeeledRow row, int64_t vec,
                               bool oneList) {
    auto ult = [&](Value lhs, Value rhs) {
      return arith::CmpIOp::create(b, arith::CmpIPredicate::ult, lhs, rhs);
    };
    Value firstBlock;
    if (plan.shareBlocks() > 1)
      firstBlock = arith::CmpIOp::create(b, arith::CmpIPredicate::eq, shareRank,
                                         constI32(0));
    auto taken = [&](Value valid) {
      return firstBlock ? arith::AndIOp::create(b, valid, firstBlock) : valid;
    };
    SmallVector<Chunk> chunks;
    int64_t perRow = plan.threadsPerRow();
    if (!oneList) {
      for (int64_t i = 0; i * perRow < vec - 1; ++i) {
        Value col = arith::AddIOp::create(b, rowTid, constI32(i * perRow));
        chunks.push_back(loadChunk(rowPtr, col, taken(ult(col, row.head)), 1));
        Value tailCol = arith::AddIOp::create(b, row.vectorEnd, col);
        chunks.push_back(
            loadChunk(rowPtr, tailCol, taken(ult(tailCol, cols)), 1));
      }
      return chunks;
    }
    Value edges = arith::AddIOp::create(
        b, row.head, arith::SubIOp::create(b, cols, row.vectorEnd));
    Value tailShift = arith::SubIOp::create(b, row.vectorEnd, row.head);
    for (int64_t i = 0; i * perRow < 2 * vec - 2; ++i) {
      Value edge = arith::AddIOp::create(b, rowTid, constI32(i * perRow));
      Value inHead = ult(edge, row.head);
      Value tailCol = arith::AddIOp::create(b, edge, tailShift);
      Value col = arith::SelectOp::create(b, inHead, edge, tailCol);
      Value valid = taken(ult(edge, edges));
      chunks.push_back(loadChunk(rowPtr, col, valid, 1));
    }
    return chunks;
  }

  /// Loads this thread's chunks of row `row` (i64; the group's first row
  /// with several rows per block) of the input into registers, as loaded
  /// (zeros past the last row or the row's end): the row after the current
  /// one with prefetch=registers.
  SmallVector<Value> loadRowAhead(Value row, int64_t vec) {
    row = ownRow(row);
    Value exists =
        arith::CmpIOp::create(b, arith::CmpIPredicate::slt, row, rows);
    Value xRow = rowPointer(x, plan.inType, row, xStride);
    SmallVector<Value> loaded;
    for (const ChunkPlace &place : chunkPlaces(sliceStart, vec))
      loaded.push_back(loadRaw(
          xRow, place.col, arith::AndIOp::create(b, place.valid, exists), vec));
    return loaded;
  }

  /// Starts copying this thread's chunks of row `row` (i64) of the input
  /// into the stage when the row exists, as one cp.async group (one per tile
  /// of the online kernel, which copies its whole share of the row). Each
  /// thread copies exactly the chunks it later reads back, so a
  /// cp.async.wait_group of its own is all the synchronization the stage
  /// needs.
  void prefetchRow(Value row) {
    if (plan.strategy != Strategy::Online)
      return copyToStage(row, sliceStart, Value());
    auto [lo, hi] = onlineShare();
    auto loop = scf::ForOp::create(b, lo, hi, constI32(plan.blockElements));
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(loop.getBody()->getTerminator());
    copyToStage(row, loop.getInductionVar(), lo);
  }

  /// Starts copying this thread's chunks of the block at column `start` of
  /// row `row` (i64) into the stage when the row exists, as one cp.async
  /// group: at the chunks' places in the block, or at their columns from
  /// `stageStart` when given (the online kernel's share), masked at `end`
  /// when given (else at the row's end).
  void copyToStage(Value row, Value start, Value stageStart, Value end = {}) {
    int64_t vec = plan.vectorWidth;
    int64_t bytes = vec * byteWidth(plan.inType);
    auto ifOp = scf::IfOp::create(
        b, arith::CmpIOp::create(b, arith::CmpIPredicate::slt, row, rows),
        /*withElseRegion=*/false);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(&ifOp.getThenRegion().front());
      Value xRow = rowPointer(x, plan.inType, row, xStride);
      for (const ChunkPlace &place : chunkPlaces(start, vec, 0, end)) {
        auto copy = scf::IfOp::create(b, place.valid, /*withElseRegion=*/false);
        OpBuilder::InsertionGuard inner(b);
        b.setInsertionPointToStart(&copy.getThenRegion().front());
        Value src = LLVM::GEPOp::create(b, x.getType(), plan.inType, xRow,
                                        ValueRange{place.col},
                                        LLVM::GEPNoWrapFlags::inbounds);
        Value local = stageStart
                          ? arith::SubIOp::create(b, place.col, stageStart)
                          : place.local;
        Value dst = stageAddress(local);
        // 16-byte copies bypass L1 (.cg); narrower ones must go through it.
        NVVM::CpAsyncOp::create(b, dst, src, bytes,
                                bytes == 16 ? NVVM::LoadCacheModifierKind::CG
                                            : NVVM::LoadCacheModifierKind::CA,
                                /*cpSize=*/Value());
      }
    }
    NVVM::CpAsyncCommitGroupOp::create(b);
  }

  /// The address of input element `local` (i32) of the stage.
  Value stageAddress(Value local) {
    return LLVM::GEPOp::create(b, stage.getType(), plan.inType, stage,
                               ValueRange{local},
                               LLVM::GEPNoWrapFlags::inbounds);
  }

  //===--------------------------------------------------------------------===//
  // Bodies
  //===--------------------------------------------------------------------===//

  /// Clones the element-independent part of `body` for the current row, with
  /// the row-scalar arguments bound to `scalars`.
  RowContext prepareBody(Region &body, ValueRange scalars) {
    RowContext ctx;
    ctx.body = &body;
    Block &block = body.front();
    for (auto [arg, value] :
         llvm::zip(block.getArguments().drop_front(), scalars))
      ctx.uniform.map(arg, value);
    DenseSet<Value> dependsOnElement = {block.getArgument(0)};
    for (Operation &op : block.without_terminator()) {
      bool varying = llvm::any_of(op.getOperands(), [&](Value v) {
        return dependsOnElement.contains(v);
      });
      if (!varying) {
        emitOp(op, ctx.uniform, ctx);
        continue;
      }
      ctx.varying.push_back(&op);
      for (Value r : op.getResults())
        dependsOnElement.insert(r);
      // a / s with s uniform: one reciprocal per row.
      if (auto div = dyn_cast<arith::DivFOp>(op);
          div && plan.fastExp && !dependsOnElement.contains(div.getRhs()) &&
          !ctx.reciprocals.count(div.getRhs())) {
        Value rhs = lookupOrClone(div.getRhs(), ctx.uniform);
        ctx.reciprocals[div.getRhs()] =
            arith::DivFOp::create(b, constF32(1.0), rhs);
      }
    }
    return ctx;
  }

  /// Evaluates `ctx`'s body on one element.
  Value emitElement(RowContext &ctx, Value element) {
    IRMapping mapping = ctx.uniform;
    Block &block = ctx.body->front();
    mapping.map(block.getArgument(0), element);
    for (Operation *op : ctx.varying)
      emitOp(*op, mapping, ctx);
    return lookupOrClone(cast<YieldOp>(block.back()).getValue(), mapping);
  }

  /// Maps `v` through `mapping`, cloning constants captured from above.
  Value lookupOrClone(Value v, IRMapping &mapping) {
    if (Value mapped = mapping.lookupOrNull(v))
      return mapped;
    Operation *def = v.getDefiningOp();
    assert(def && def->hasTrait<OpTrait::ConstantLike>() &&
           "body captures a non-constant");
    Value cloned = b.clone(*def)->getResult(0);
    mapping.map(v, cloned);
    return cloned;
  }

  /// Clones one body op, rewriting exp, log and divisions by row scalars into
  /// their fast forms.
  void emitOp(Operation &op, IRMapping &mapping, RowContext &ctx) {
    for (Value operand : op.getOperands())
      lookupOrClone(operand, mapping);
    Value result;
    if (auto exp = dyn_cast<math::ExpOp>(op); exp && plan.fastExp)
      result = emitExp(mapping.lookup(exp.getOperand()));
    else if (auto log = dyn_cast<math::LogOp>(op); log && plan.fastExp)
      result = emitLog(mapping.lookup(log.getOperand()));
    else if (auto div = dyn_cast<arith::DivFOp>(op);
             div && ctx.reciprocals.count(div.getRhs()))
      result = arith::MulFOp::create(b, mapping.lookup(div.getLhs()),
                                     ctx.reciprocals[div.getRhs()]);
    if (result) {
      mapping.map(op.getResult(0), result);
      return;
    }
    b.clone(op, mapping);
  }

  //===--------------------------------------------------------------------===//
  // Cross-thread reductions
  //===--------------------------------------------------------------------===//

  /// Butterfly over the warp, or over the lanes of one row when a row has
  /// fewer threads than a warp: every lane ends with the result.
  Value warpReduce(Value v, function_ref<Value(Value, Value)> fn) {
    return butterfly(v, std::min<int64_t>(plan.threadsPerRow(), 32), fn);
  }

  /// `gpu.shuffle xor` butterfly over aligned groups of `lanes` lanes (a
  /// power of two up to 32): every lane ends with its group's result.
  Value butterfly(Value v, int32_t lanes,
                  function_ref<Value(Value, Value)> fn) {
    for (int32_t offset = lanes / 2; offset >= 1; offset /= 2) {
      Value other =
          gpu::ShuffleOp::create(b, v, offset, 32, gpu::ShuffleMode::XOR)
              .getShuffleResult();
      v = fn(v, other);
    }
    return v;
  }

  /// Lane 0 of each warp stores the warp's `values` in shared memory slots
  /// `firstSlot...` (column: the warp), then one barrier unless `barrier` is
  /// false.
  void publishPerWarp(ArrayRef<Value> values, int64_t firstSlot,
                      bool barrier = true) {
    publishPerWarp(values, arith::ConstantIndexOp::create(b, firstSlot),
                   barrier);
  }
  /// Shared slot `base + i` (index): `base` itself for i = 0, a constant
  /// for a constant `base`.
  Value slotAt(Value base, int64_t i) {
    if (i == 0)
      return base;
    if (std::optional<int64_t> c = getConstantIntValue(base))
      return arith::ConstantIndexOp::create(b, *c + i);
    return arith::AddIOp::create(b, base, arith::ConstantIndexOp::create(b, i));
  }

  /// The same from slot `firstSlot` (index).
  void publishPerWarp(ArrayRef<Value> values, Value firstSlot,
                      bool barrier = true) {
    Value isLane0 =
        arith::CmpIOp::create(b, arith::CmpIPredicate::eq, lane, constI32(0));
    auto ifOp = scf::IfOp::create(b, isLane0, /*withElseRegion=*/false);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(&ifOp.getThenRegion().front());
      for (auto [i, v] : llvm::enumerate(values))
        memref::StoreOp::create(b, v, shared,
                                ValueRange{slotAt(firstSlot, i), warp});
    }
    if (barrier)
      gpu::BarrierOp::create(b);
  }

  /// Publishes each warp's `values` (lane 0) in shared memory slots
  /// `firstSlot...`, waits at one barrier, and returns, per value, the
  /// per-warp partials every thread reads back.
  SmallVector<SmallVector<Value>> exchangeAcrossWarps(ArrayRef<Value> values,
                                                      int64_t firstSlot) {
    publishPerWarp(values, firstSlot);
    SmallVector<SmallVector<Value>> partials(values.size());
    for (size_t i = 0; i < values.size(); ++i) {
      Value slot = arith::ConstantIndexOp::create(b, firstSlot + i);
      for (int64_t w = 0; w < plan.numWarps; ++w)
        partials[i].push_back(memref::LoadOp::create(
            b, shared, ValueRange{slot, arith::ConstantIndexOp::create(b, w)}));
    }
    return partials;
  }

  /// Reduces `v` over the row's threads with `c`: warp shuffles, then one
  /// shared-memory step in slot `slot` when the row spans several warps,
  /// then one exchange across the cluster. Every thread gets the result.
  Value blockReduce(Value v, Combiner c, int64_t slot) {
    auto fn = [&](Value l, Value r) { return combine(c, l, r); };
    v = warpReduce(v, fn);
    if (plan.threadsPerRow() > 32 && plan.numWarps == 32) {
      // Thirty-two partials read at once would take as many registers next
      // to the row's: lane l reads warp l's, and a butterfly combines them.
      publishPerWarp({v}, slot);
      v = butterfly(memref::LoadOp::create(
                        b, shared,
                        ValueRange{arith::ConstantIndexOp::create(b, slot),
                                   arith::IndexCastOp::create(
                                       b, b.getIndexType(), lane)}),
                    32, fn);
    } else if (plan.threadsPerRow() > 32) {
      v = treeReduce<Value>(exchangeAcrossWarps({v}, slot)[0], fn);
    }
    if (plan.clusterSize > 1)
      v = clusterReduce(v, fn, slot);
    return v;
  }

  /// Emits `scf.if cond` without an else region and returns its body.
  Block *emitIfThen(Value cond) {
    return &scf::IfOp::create(b, cond, /*withElseRegion=*/false)
                .getThenRegion()
                .front();
  }

  /// Emits `scf.if tid == 0` and returns its body.
  Block *emitIfFirstThread() {
    return emitIfThen(
        arith::CmpIOp::create(b, arith::CmpIPredicate::eq, tid, constI32(0)));
  }

  /// Thread 0 initializes the block's mbarriers for cluster exchanges (one
  /// arrival each: its own, which arms the expected bytes) and makes them
  /// visible to the cluster.
  void initClusterBarriers() {
    initBarriers(kClusterBarriersName,
                 plan.clusterBarriers(group.reduces.size()));
  }

  /// Thread 0 initializes the two mbarriers of keep-ahead=bulk's stage
  /// buffers (one arrival each: its own, which arms the copy's bytes). A
  /// block (or cluster) barrier before the row loop makes them visible.
  void initStageBarriers() { initBarriers(kStageBarriersName, 2); }

  /// Thread 0 initializes the `count` mbarriers of the shared array `name`
  /// for one arrival each, then fences their initialization.
  void initBarriers(StringRef name, int64_t count) {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(emitIfFirstThread());
    for (int64_t i = 0; i < count; ++i)
      NVVM::MBarrierInitOp::create(b, barrierAt(name, constI32(i)), constI32(1),
                                   /*predicate=*/Value());
    NVVM::FenceMbarrierInitOp::create(b);
  }

  /// The mbarrier number `index` (i32) of the shared array `name`
  /// (`!llvm.ptr<3>`).
  Value barrierAt(StringRef name, Value index) {
    return LLVM::GEPOp::create(b, sharedPtr, i64,
                               LLVM::AddressOfOp::create(b, sharedPtr, name),
                               ValueRange{index});
  }

  /// The mbarrier (`!llvm.ptr<3>`) of keep-ahead=bulk's stage buffer
  /// `buffer` (i32, 0 or 1).
  Value stageBarrier(Value buffer) {
    return barrierAt(kStageBarriersName, buffer);
  }

  /// keep-ahead=bulk's stage buffer `buffer` (i32, 0 or 1): the stage's
  /// first or second half.
  Value stageBuffer(Value buffer) {
    Value offset = arith::MulIOp::create(
        b, buffer, constI32(plan.keptElements * byteWidth(plan.inType)));
    return LLVM::GEPOp::create(b, sharedPtr, b.getI8Type(), stageBase,
                               ValueRange{offset},
                               LLVM::GEPNoWrapFlags::inbounds);
  }

  /// keep-ahead=bulk: thread 0 starts copying the kept tiles of row `row`
  /// (i64) of the input, columns [lo, keptEnd), into stage buffer `buffer`
  /// with one cp.async.bulk (evict-first with cache-hints: nothing reads
  /// them from L2 again), which completes the buffer's mbarrier phase, armed
  /// here for its bytes. Nothing when the row does not exist, and then
  /// nobody waits for the phase.
  void bulkCopyKeptTiles(Value row, Value buffer, Value lo, Value hi) {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(emitIfFirstThread());
    b.setInsertionPointToStart(emitIfThen(
        arith::CmpIOp::create(b, arith::CmpIPredicate::slt, row, rows)));
    Value bytes =
        arith::MulIOp::create(b, arith::SubIOp::create(b, keptEnd(lo, hi), lo),
                              constI32(byteWidth(plan.inType)));
    bulkCopyToShared(
        stageBarrier(buffer), bytes,
        [&] {
          return LLVM::GEPOp::create(b, x.getType(), plan.inType,
                                     rowPointer(x, plan.inType, row, xStride),
                                     ValueRange{lo},
                                     LLVM::GEPNoWrapFlags::inbounds);
        },
        [&] { return stageBuffer(buffer); }, evictFirst);
  }

  /// From thread 0: arms `barrier` for `bytes` (i32, at least 0) and, when
  /// there are any, copies them from global memory at `src()` to shared
  /// memory at `dst()` with one cp.async.bulk that completes the barrier's
  /// phase (with the L2 policy `l2Hint` when given); with none, the arrival
  /// alone completes it. The addresses are built where they are used.
  void bulkCopyToShared(Value barrier, Value bytes, function_ref<Value()> src,
                        function_ref<Value()> dst, Value l2Hint) {
    OpBuilder::InsertionGuard guard(b);
    NVVM::MBarrierArriveExpectTxOp::create(b, Type(), barrier, bytes,
                                           NVVM::MemScopeKind::CTA,
                                           /*relaxed=*/false,
                                           /*predicate=*/Value());
    b.setInsertionPointToStart(emitIfThen(arith::CmpIOp::create(
        b, arith::CmpIPredicate::ugt, bytes, constI32(0))));
    Value from = src();
    // The shared::cluster form (PTX 8.0; the shared::cta one needs 8.6): a
    // block's own shared addresses are valid shared::cluster addresses.
    Value to = LLVM::AddrSpaceCastOp::create(
        b, LLVM::LLVMPointerType::get(b.getContext(), 7), dst());
    NVVM::CpAsyncBulkGlobalToSharedClusterOp::create(
        b, to, from, barrier, bytes, /*multicastMask=*/Value(), l2Hint);
  }

  /// `barrier.cluster.arrive` (release) and `barrier.cluster.wait`
  /// (acquire), executed by every thread of every block of the cluster.
  void emitClusterBarrier() {
    NVVM::ClusterArriveOp::create(b, b.getUnitAttr());
    NVVM::ClusterWaitOp::create(b, b.getUnitAttr());
  }

  /// Publishes this block's `values` to every block of the cluster and
  /// returns, per value, the entry of block `lane % clusterSize` read back.
  ///
  /// Each block owns, per exchange (and buffer), an mbarrier and a
  /// `values x clusterSize` f32 array in shared memory. Thread `r` (r <
  /// clusterSize) of block `q` writes value i into entry `[i][q]` of block
  /// `r`'s array with `st.async`, which counts its 4 bytes on block `r`'s
  /// mbarrier (complete_tx); thread 0 of every block arms its own mbarrier
  /// for all of them, and every thread waits for the phase before it reads
  /// entry `lane % clusterSize`. Unlike a cluster barrier, whose release
  /// semantics would make every thread wait for its earlier global stores
  /// and copies still in flight, only the exchanged values are ordered.
  SmallVector<Value> exchangeAcrossCluster(ArrayRef<Value> values,
                                           int64_t exchange) {
    int64_t numValues = values.size();
    assert(numValues == rowExchanges.values &&
           exchange < rowExchanges.exchanges && "unplanned cluster exchange");
    Value index = clusterExchangeIndex(exchange);
    Value barrier = clusterBarrier(index);
    Value entries = LLVM::GEPOp::create(
        b, sharedPtr, f32,
        LLVM::AddressOfOp::create(b, sharedPtr, kClusterSlotsName),
        ValueRange{arith::MulIOp::create(
            b, index, constI32(numValues * plan.clusterSize))});
    auto entry = [&](int64_t i, Value block) {
      Value row = LLVM::GEPOp::create(
          b, sharedPtr, f32, entries,
          ArrayRef<LLVM::GEPArg>{(int32_t)(i * plan.clusterSize)});
      return LLVM::GEPOp::create(b, sharedPtr, f32, row, ValueRange{block});
    };
    {
      Value isPusher = arith::CmpIOp::create(b, arith::CmpIPredicate::ult, tid,
                                             constI32(plan.clusterSize));
      auto ifOp = scf::IfOp::create(b, isPusher, /*withElseRegion=*/false);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(&ifOp.getThenRegion().front());
      // No NVVM op spells st.async (PTX ISA 8.1, sm_90) in MLIR 22. The
      // addresses stay 32-bit shared-window addresses, mapped to block
      // `tid` with mapa inside the same asm so that they are not hoisted
      // out of the row loop as 64-bit registers.
      auto address = [&](Value ptr) {
        return LLVM::PtrToIntOp::create(b, i32, ptr);
      };
      for (auto [i, v] : llvm::enumerate(values))
        NVVM::InlinePtxOp::create(
            b, TypeRange(),
            ValueRange{address(entry(i, clusterRank)), address(barrier), v,
                       tid},
            ValueRange(),
            "{\n\t.reg .b32 entry, bar;\n\t"
            "mapa.shared::cluster.u32 entry, $0, $3;\n\t"
            "mapa.shared::cluster.u32 bar, $1, $3;\n\t"
            "st.async.shared::cluster.mbarrier::complete_tx::bytes.f32 "
            "[entry], $2, [bar];\n\t}",
            /*predicate=*/Value());
    }
    waitForPhase(barrier, clusterParity);
    // With a single warp nothing else keeps thread 0 from arming this
    // mbarrier's next phase while other lanes still wait on this one.
    if (plan.numWarps == 1)
      gpu::BarrierOp::create(b);
    Value block = arith::RemUIOp::create(b, lane, constI32(plan.clusterSize));
    SmallVector<Value> read;
    for (int64_t i = 0; i < numValues; ++i)
      read.push_back(LLVM::LoadOp::create(b, f32, entry(i, block)));
    return read;
  }

  /// Index (i32) of the mbarrier and entry array of exchange `exchange` in
  /// the current row.
  Value clusterExchangeIndex(int64_t exchange) {
    int64_t buffers = rowExchanges.buffers();
    Value index = constI32(exchange * buffers);
    if (buffers > 1)
      index = arith::AddIOp::create(b, index, clusterBuffer);
    return index;
  }

  /// The block's own mbarrier number `index` (`!llvm.ptr<3>`).
  Value clusterBarrier(Value index) {
    return barrierAt(kClusterBarriersName, index);
  }

  /// Thread 0 arms the mbarriers of the current row's cluster exchanges for
  /// the bytes the blocks of the cluster will send (one f32 per value and
  /// block). Done at the top of the row, where few registers are live: every
  /// thread has finished waiting on their previous phases, since a block
  /// barrier separates those waits from this row's first exchange.
  void armClusterBarriers() {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(emitIfFirstThread());
    int64_t bytes = rowExchanges.values * plan.clusterSize * 4;
    for (int64_t e = 0; e < rowExchanges.exchanges; ++e)
      NVVM::MBarrierArriveExpectTxOp::create(
          b, Type(), clusterBarrier(clusterExchangeIndex(e)), constI32(bytes),
          NVVM::MemScopeKind::CTA, /*relaxed=*/false, /*predicate=*/Value());
  }

  /// Waits until the phase of parity `parity` of the mbarrier at `barrier`
  /// has completed: a loop around `mbarrier.try_wait.parity`, which may
  /// return early.
  void waitForPhase(Value barrier, Value parity) {
    auto loop = scf::WhileOp::create(b, TypeRange(), ValueRange());
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(b.createBlock(&loop.getBefore()));
    Value done = NVVM::MBarrierTryWaitOp::create(
        b, b.getI1Type(), barrier, parity, /*ticks=*/Value(),
        NVVM::MemScopeKind::CTA, /*relaxed=*/false);
    scf::ConditionOp::create(
        b,
        arith::XOrIOp::create(b, done, arith::ConstantIntOp::create(b, 1, 1)),
        ValueRange());
    b.setInsertionPointToStart(b.createBlock(&loop.getAfter()));
    scf::YieldOp::create(b);
  }

  /// Combines the block results `v` of every block of the cluster: one
  /// exchange in slot `slot`, then a butterfly over the cluster's entries.
  Value clusterReduce(Value v, function_ref<Value(Value, Value)> fn,
                      int64_t slot) {
    return butterfly(exchangeAcrossCluster({v}, slot)[0], plan.clusterSize, fn);
  }

  /// `d * e^(m - mAll)`: a partial sum rescaled to the combined max `mAll`;
  /// 0 when `m` is -inf (its sum is 0 and the exponent may be NaN).
  Value rescale(Value m, Value d, Value mAll) {
    Value isNegInf =
        arith::CmpFOp::create(b, arith::CmpFPredicate::OEQ, m, negInf());
    Value scaled =
        arith::MulFOp::create(b, d, emitExp(arith::SubFOp::create(b, m, mAll)));
    return arith::SelectOp::create(b, isNegInf, constF32(0.0), scaled);
  }

  /// Combines the (max, sum) pairs of aligned groups of `lanes` lanes with
  /// the online combiner, (m_a, d_a) + (m_b, d_b) = (m, d_a e^(m_a - m) +
  /// d_b e^(m_b - m)), in the order max butterfly, one rescale per lane, sum
  /// butterfly: one exp per lane instead of two per step.
  std::pair<Value, Value> butterflyPair(Value m, Value d, int32_t lanes) {
    auto max = [&](Value l, Value r) { return combine(Combiner::max, l, r); };
    auto sum = [&](Value l, Value r) { return combine(Combiner::sum, l, r); };
    Value mAll = butterfly(m, lanes, max);
    return {mAll, butterfly(rescale(m, d, mAll), lanes, sum)};
  }

  /// Combines the block pairs (m, d) of every block of the cluster (the max
  /// in slot 0, the sum in slot 1).
  std::pair<Value, Value> clusterReducePair(Value m, Value d) {
    SmallVector<Value> entries = exchangeAcrossCluster({m, d}, 0);
    return butterflyPair(entries[0], entries[1], plan.clusterSize);
  }

  //===--------------------------------------------------------------------===//
  // Split groups (row-split)
  //===--------------------------------------------------------------------===//

  /// Byte `offset` of this block's split group's workspace (`!llvm.ptr<1>`).
  Value workspaceAt(Value offset) {
    Value groupOffset =
        arith::MulIOp::create(b, arith::ExtUIOp::create(b, i64, splitGroup),
                              constI64(plan.workspaceBytesPerGroup()));
    return LLVM::GEPOp::create(
        b, workspace.getType(), b.getI8Type(), workspace,
        ValueRange{arith::AddIOp::create(
            b, groupOffset, arith::ExtUIOp::create(b, i64, offset))});
  }

  /// Combines the block pairs (m, d) of every block of the split group
  /// through the workspace, for the group's row number `step` (i32, counted
  /// from 0): publishSplitPair, then gatherSplitPair.
  /// Every block of the group must be resident: the launcher launches the
  /// kernel cooperatively (docs/abi.md).
  std::pair<Value, Value> splitReducePair(Value m, Value d, Value step) {
    publishSplitPair(m, d, step);
    return gatherSplitPair(step);
  }

  /// The workspace address of entry `index` (i32) of the buffer of the
  /// group's row number `step`: rows take the buffers in turn.
  Value splitEntry(Value step, Value index) {
    Value entry = arith::AddIOp::create(
        b,
        arith::MulIOp::create(b, splitBuffer(step), constI32(plan.splitSize)),
        index);
    return workspaceAt(
        arith::AddIOp::create(b, constI32(plan.entriesOffset()),
                              arith::MulIOp::create(b, entry, constI32(8))));
  }

  /// The arrival counter of the buffer of the group's row number `step`.
  Value splitCounter(Value step) {
    return workspaceAt(arith::AddIOp::create(
        b, constI32(KernelPlan::kArrivalsOffset),
        arith::MulIOp::create(b, splitBuffer(step), constI32(4))));
  }

  /// The buffer (i32) of the group's row number `step`: rows take the
  /// splitBuffers() buffers in turn.
  Value splitBuffer(Value step) {
    return arith::AndIOp::create(b, step, constI32(plan.splitBuffers() - 1));
  }

  /// Thread 0 stores the block's pair (m, d), uniform over the block, into
  /// its entry of the buffer of row number `step`, then adds one to that
  /// buffer's arrival counter with release semantics.
  void publishSplitPair(Value m, Value d, Value step) {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(emitIfFirstThread());
    publishPair(
        m, d, [&] { return splitEntry(step, shareRank); },
        [&] { return splitCounter(step); });
  }

  /// Stores the pair (m, d) as one 8-byte word at `entry()` and adds one to
  /// the u32 at `counter()` with release semantics, from the calling thread
  /// (the addresses are built where they are used).
  void publishPair(Value m, Value d, function_ref<Value()> entry,
                   function_ref<Value()> counter) {
    auto pairType = VectorType::get({2}, f32);
    Value pair = LLVM::PoisonOp::create(b, pairType);
    pair = LLVM::InsertElementOp::create(b, pair, m, constI32(0));
    pair = LLVM::InsertElementOp::create(b, pair, d, constI32(1));
    LLVM::StoreOp::create(b, LLVM::BitcastOp::create(b, i64, pair), entry(),
                          /*alignment=*/8);
    // A release fence, then a relaxed add: the NVPTX backend of LLVM 22
    // drops the ordering of an atomicrmw (plain atom.global.add).
    LLVM::FenceOp::create(b, LLVM::AtomicOrdering::release, "device");
    LLVM::AtomicRMWOp::create(b, LLVM::AtomicBinOp::add, counter(), constI32(1),
                              LLVM::AtomicOrdering::monotonic, "device");
  }

  /// The group's pair of row number `step`, in every thread:
  ///
  /// * thread 0 spins with acquire loads until the buffer's counter reaches
  ///   splitSize x (the buffer's uses so far + 1): every block's pair of
  ///   this row is then visible;
  /// * after a block barrier, warp 0 folds the entries (foldSplitEntries)
  ///   and hands the pair to the other warps through shared memory, at a
  ///   second barrier.
  ///
  /// The counters only grow (modulo 2^32), so that a fast block's arrival
  /// for a later row never hides this one; leaveSplitGroup resets them at
  /// the kernel's end. A block publishes row k + A (splitAhead) before it
  /// waits for row k, and it has waited for row k - 1, which every block
  /// publishes after it has read row k - A - 2's entries: with
  /// splitBuffers() >= 2A + 2, a buffer is never overwritten while read.
  std::pair<Value, Value> gatherSplitPair(Value step) {
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(emitIfFirstThread());
      waitForSplitRow(step);
    }
    gpu::BarrierOp::create(b);
    // One warp reads the entries: with every warp of every block reading
    // them, groups as wide as the chip (132 blocks of 32 warps) sent
    // megabytes per row to the few L2 lines of a buffer.
    if (plan.numWarps == 1)
      return foldSplitEntries(step);
    OpBuilder::InsertionGuard guard(b);
    {
      OpBuilder::InsertionGuard inner(b);
      b.setInsertionPointToStart(emitIfThen(isWarp0()));
      auto [m, d] = foldSplitEntries(step);
      publishPerWarp({m, d}, 0, /*barrier=*/false);
    }
    gpu::BarrierOp::create(b);
    Value first = arith::ConstantIndexOp::create(b, 0);
    return {memref::LoadOp::create(b, shared, ValueRange{first, first}),
            memref::LoadOp::create(
                b, shared,
                ValueRange{arith::ConstantIndexOp::create(b, 1), first})};
  }

  /// Spins with acquire loads (the calling thread) until the counter of
  /// the buffer of the group's row number `step` reaches splitSize x (the
  /// buffer's uses so far + 1): every block's pair of the row is then
  /// visible to this thread.
  void waitForSplitRow(Value step) {
    OpBuilder::InsertionGuard guard(b);
    Value counter = splitCounter(step);
    int64_t buffers = plan.splitBuffers();
    Value target = arith::MulIOp::create(
        b,
        arith::AddIOp::create(
            b,
            arith::ShRUIOp::create(b, step, constI32(llvm::Log2_64(buffers))),
            constI32(1)),
        constI32(plan.splitSize));
    auto loop = scf::WhileOp::create(b, TypeRange(), ValueRange());
    b.setInsertionPointToStart(b.createBlock(&loop.getBefore()));
    Value arrived = atomicLoad(i32, counter, 4, LLVM::AtomicOrdering::acquire);
    // arrived - target < 0 as a signed difference: the counter wraps
    // around after 2^32 / splitSize uses, and never strays more than
    // splitSize x (splitAhead + 1) from the target.
    scf::ConditionOp::create(
        b,
        arith::CmpIOp::create(b, arith::CmpIPredicate::slt,
                              arith::SubIOp::create(b, arrived, target),
                              constI32(0)),
        ValueRange());
    b.setInsertionPointToStart(b.createBlock(&loop.getAfter()));
    scf::YieldOp::create(b);
  }

  /// The group's pair of row number `step`, in every lane of the calling
  /// warp: lane l reads entries l, l + 32, ... of the row's buffer (relaxed
  /// loads at gpu scope, which no stale L1 line can answer), folds them,
  /// and the lanes combine by butterfly.
  std::pair<Value, Value> foldSplitEntries(Value step) {
    int64_t size = plan.splitSize;
    auto pairType = VectorType::get({2}, f32);
    Value m, d;
    for (int64_t first = 0; first < size; first += 32) {
      Value index = arith::AddIOp::create(b, lane, constI32(first));
      Value inRange = arith::CmpIOp::create(b, arith::CmpIPredicate::ult, index,
                                            constI32(size));
      Value loaded =
          atomicLoad(i64,
                     splitEntry(step, arith::SelectOp::create(b, inRange, index,
                                                              constI32(0))),
                     8, LLVM::AtomicOrdering::monotonic);
      Value pair = LLVM::BitcastOp::create(b, pairType, loaded);
      Value em = arith::SelectOp::create(
          b, inRange, LLVM::ExtractElementOp::create(b, pair, constI32(0)),
          negInf());
      Value ed = arith::SelectOp::create(
          b, inRange, LLVM::ExtractElementOp::create(b, pair, constI32(1)),
          constF32(0.0));
      if (first == 0) {
        std::tie(m, d) = std::make_pair(em, ed);
        continue;
      }
      Value mAll = combine(Combiner::max, m, em);
      d = arith::AddFOp::create(b, rescale(m, d, mAll), rescale(em, ed, mAll));
      m = mAll;
    }
    return butterflyPair(m, d, 32);
  }

  /// An atomic load (`ordering`, gpu scope) of `type` from `ptr`.
  Value atomicLoad(Type type, Value ptr, unsigned alignment,
                   LLVM::AtomicOrdering ordering) {
    return LLVM::LoadOp::create(b, type, ptr, alignment, /*isVolatile=*/false,
                                /*isNonTemporal=*/false, /*isInvariant=*/false,
                                /*isInvariantGroup=*/false, ordering, "device");
  }

  /// Thread 0 of each block counts the block out of its split group once it
  /// has passed its last exchange; the last one out resets every counter,
  /// so that each launch leaves the workspace as it found it: zero.
  void leaveSplitGroup() {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(emitIfFirstThread());
    Value exits = workspaceAt(constI32(KernelPlan::kExitsOffset));
    // Fences around a relaxed add, as in splitReducePair.
    LLVM::FenceOp::create(b, LLVM::AtomicOrdering::acq_rel, "device");
    Value before =
        LLVM::AtomicRMWOp::create(b, LLVM::AtomicBinOp::add, exits, constI32(1),
                                  LLVM::AtomicOrdering::monotonic, "device");
    LLVM::FenceOp::create(b, LLVM::AtomicOrdering::acq_rel, "device");
    Value last = arith::CmpIOp::create(b, arith::CmpIPredicate::eq, before,
                                       constI32(plan.splitSize - 1));
    b.setInsertionPointToStart(emitIfThen(last));
    LLVM::StoreOp::create(b, constI32(0), exits, /*alignment=*/4);
    for (int64_t buffer = 0; buffer < plan.splitBuffers(); ++buffer)
      LLVM::StoreOp::create(b, constI32(0), splitCounter(constI32(buffer)),
                            /*alignment=*/4);
  }

  /// Reduces a (max, sum) pair over the row's threads with the online
  /// combiner, then over the cluster or the split group (blockReducePair's
  /// two halves, reducePairInBlock and reducePairAcrossBlocks).
  std::pair<Value, Value> blockReducePair(Value m, Value d,
                                          bool acrossSplit = true) {
    assert(!bulkBuffer && "the online row copies its next kept tiles between "
                          "the two halves");
    std::tie(m, d) = reducePairInBlock(m, d);
    return reducePairAcrossBlocks(m, d, acrossSplit);
  }

  /// Reduces a (max, sum) pair over the row's threads of this block with the
  /// online combiner: lanes, then one shared-memory step across warps whose
  /// pairs lane w of every warp reads back and combines by butterfly.
  std::pair<Value, Value> reducePairInBlock(Value m, Value d) {
    std::tie(m, d) =
        butterflyPair(m, d, std::min<int64_t>(plan.threadsPerRow(), 32));
    if (plan.threadsPerRow() > 32) {
      // The row's first slot: 0, or 0 and 2 by turns (alternatesSlots).
      Value base = pairSlot ? pairSlot : arith::ConstantIndexOp::create(b, 0);
      publishPerWarp({m, d}, base);
      // Lane l of every aligned group of P lanes (P: the warps rounded up to
      // a power of two) reads warp l's pair, so that every lane ends with the
      // result; lanes past the last warp hold the identity (-inf, 0).
      int64_t groupLanes = llvm::PowerOf2Ceil(plan.numWarps);
      Value slotWarp = arith::RemUIOp::create(b, lane, constI32(groupLanes));
      Value inRange = arith::CmpIOp::create(b, arith::CmpIPredicate::ult,
                                            slotWarp, constI32(plan.numWarps));
      Value index = arith::IndexCastOp::create(
          b, b.getIndexType(),
          arith::SelectOp::create(b, inRange, slotWarp, constI32(0)));
      Value wm =
          memref::LoadOp::create(b, shared, ValueRange{slotAt(base, 0), index});
      Value wd =
          memref::LoadOp::create(b, shared, ValueRange{slotAt(base, 1), index});
      std::tie(m, d) = butterflyPair(
          arith::SelectOp::create(b, inRange, wm, negInf()),
          arith::SelectOp::create(b, inRange, wd, constF32(0.0)), groupLanes);
    }
    return {m, d};
  }

  /// keep-ahead=bulk, right after the row's block reduction: every thread of
  /// the block has passed the reduction's barrier (or, with a single warp per
  /// row, one emitted here), so it is done with the previous row and its
  /// stage buffer, into which the next row's kept tiles go now, in flight
  /// through the cluster's exchange and pass 2.
  void copyNextRowKeptTiles() {
    if (plan.threadsPerRow() <= 32)
      gpu::BarrierOp::create(b);
    auto [lo, hi] = onlineShare();
    bulkCopyKeptTiles(keepAheadNextRow,
                      arith::XOrIOp::create(b, bulkBuffer, constI32(1)), lo,
                      hi);
  }

  /// Combines the block's (max, sum) pair with the other blocks of the row's
  /// cluster, and of its split group unless `acrossSplit` is false.
  std::pair<Value, Value> reducePairAcrossBlocks(Value m, Value d,
                                                 bool acrossSplit) {
    if (plan.clusterSize > 1)
      std::tie(m, d) = clusterReducePair(m, d);
    if (plan.splitSize > 1 && acrossSplit)
      std::tie(m, d) = splitReducePair(m, d, splitRowIndex);
    return {m, d};
  }

  //===--------------------------------------------------------------------===//
  // Rows
  //===--------------------------------------------------------------------===//

  /// The persistent loop: rows blockIdx.x, blockIdx.x + gridDim.x, ... (per
  /// group of R rows, or per cluster). Every thread of a block (of a cluster)
  /// runs the same iterations, so that barriers and shuffles stay uniform;
  /// a group past the last row masks its accesses. `peeled` rows (vector
  /// path only) start anywhere: see peelRow.
  void emitRowLoop(int64_t vec, bool peeled = false) {
    Value first, step;
    if (plan.clusterSize > 1) {
      first = arith::IndexCastOp::create(
          b, i64, gpu::ClusterIdOp::create(b, gpu::Dimension::x));
      step = arith::IndexCastOp::create(
          b, i64, gpu::ClusterDimOp::create(b, gpu::Dimension::x));
    } else if (plan.splitSize > 1) {
      first = arith::ExtUIOp::create(b, i64, splitGroup);
      step = arith::ExtUIOp::create(b, i64, splitGroups);
    } else {
      first = arith::IndexCastOp::create(
          b, i64, gpu::BlockIdOp::create(b, gpu::Dimension::x));
      step = arith::IndexCastOp::create(
          b, i64, gpu::GridDimOp::create(b, gpu::Dimension::x));
      if (plan.rowsPerBlock > 1) {
        first = arith::MulIOp::create(b, first, constI64(plan.rowsPerBlock));
        step = arith::MulIOp::create(b, step, constI64(plan.rowsPerBlock));
      }
    }
    bool staged = plan.prefetch && vec > 1 && !peeled;
    if (staged)
      prefetchRow(first);
    keepAheadRow = plan.keepAhead && vec > 1 && !peeled;
    if (keepAheadRow) {
      auto [lo, hi] = onlineShare();
      if (plan.bulkKeep)
        bulkCopyKeptTiles(first, constI32(0), lo, hi);
      else
        copyKeptTiles(first, lo, hi);
    }
    // With clusters the loop also counts its iterations (i32): each cluster
    // exchange's mbarrier completes one phase per row, or every other row
    // with two buffers. A split group's exchange counts its arrivals by
    // row, in buffers that rows take in turn.
    bool rereads = plan.strategy != Strategy::Online && vec == 1 &&
                   plan.vectorWidth > 1 && plan.rereadFallback;
    pairRow = plan.pairReduce && !(peeled && plan.peeledWithoutPair());
    rowExchanges = plan.clusterExchanges(
        group.reduces.size(), rereads || (plan.pairReduce && !pairRow));
    if (plan.splitAhead > 0)
      return emitSplitAheadLoop(first, step, vec, peeled);
    // keep-ahead=bulk's rows take the stage buffers by turns.
    bool bulkRow = keepAheadRow && plan.bulkKeep;
    bool countRows = plan.shareBlocks() > 1 || bulkRow;
    // With prefetch=registers the loop also carries the next row's loads.
    bool ahead = plan.prefetchRegisters && vec > 1 && !peeled &&
                 plan.strategy != Strategy::Online;
    // The online kernel's chained tiles carry the next row's first tile
    // (emitOnlineRow), loaded evict-last as pass 1 loads it.
    // Not with keep-ahead, whose pass 2 ends on a kept tile.
    bool tileAhead = plan.strategy == Strategy::Online && !peeled &&
                     onlineChainsTiles(staged, vec) &&
                     !onlineKeeps(staged, vec) && !keepAheadRow;
    SmallVector<Value> inits;
    if (countRows)
      inits.push_back(constI32(0));
    if (ahead)
      llvm::append_range(inits, loadRowAhead(first, vec));
    if (tileAhead) {
      auto [lo, hi] = onlineShare();
      llvm::append_range(inits, loadFirstTile(first, lo, hi, vec));
    }
    auto loop = scf::ForOp::create(b, first, rows, step, inits);
    OpBuilder::InsertionGuard guard(b);
    if (!inits.empty()) {
      b.setInsertionPointToEnd(loop.getBody());
      scf::YieldOp::create(b, loop.getRegionIterArgs());
    }
    b.setInsertionPoint(loop.getBody()->getTerminator());
    Value row = loop.getInductionVar();
    SmallVector<Value> loaded;
    if (ahead || tileAhead)
      llvm::append_range(loaded,
                         loop.getRegionIterArgs().drop_front(countRows));
    if (ahead) {
      // The next row's loads go first: nothing of this row waits for them.
      SmallVector<Value> next =
          loadRowAhead(arith::AddIOp::create(b, row, step), vec);
      loop.getBody()->getTerminator()->setOperands(countRows ? 1 : 0,
                                                   next.size(), next);
    }
    if (plan.rowsPerBlock > 1) {
      row = ownRow(row);
      rowValid = arith::CmpIOp::create(b, arith::CmpIPredicate::slt, row, rows);
    }
    if (plan.splitSize > 1) {
      splitRowIndex = loop.getRegionIterArgs().front();
      loop.getBody()->getTerminator()->setOperand(
          0, arith::AddIOp::create(b, splitRowIndex, constI32(1)));
    } else if (countRows) {
      Value k = loop.getRegionIterArgs().front();
      loop.getBody()->getTerminator()->setOperand(
          0, arith::AddIOp::create(b, k, constI32(1)));
      // What alternates by row takes buffer k & 1, and its mbarrier's phase
      // parity flips every other row: (k >> 1) & 1. Each is built once.
      Value turn, turnParity;
      auto rowTurn = [&] {
        if (!turn)
          turn = arith::AndIOp::create(b, k, constI32(1));
        return turn;
      };
      auto rowTurnParity = [&] {
        if (!turnParity)
          turnParity = arith::AndIOp::create(
              b, arith::ShRUIOp::create(b, k, constI32(1)), constI32(1));
        return turnParity;
      };
      if (bulkRow) {
        bulkBuffer = rowTurn();
        bulkParity = rowTurnParity();
        stage = stageBuffer(bulkBuffer);
      }
      if (plan.clusterSize > 1) {
        // Each of two buffers completes a phase every other row; a single
        // buffer completes one every row, so its parity is the turn.
        if (rowExchanges.buffers() > 1) {
          clusterBuffer = rowTurn();
          clusterParity = rowTurnParity();
        } else {
          clusterParity = rowTurn();
        }
        armClusterBarriers();
        if (plan.alternatesSlots())
          pairSlot = arith::IndexCastOp::create(
              b, b.getIndexType(),
              arith::ShLIOp::create(b, rowTurn(), constI32(1)));
      }
    }
    Value xRow = rowPointer(x, plan.inType, row, xStride);
    Value yRow = rowPointer(y, plan.outType, row, yStride);
    if (keepAheadRow)
      keepAheadNextRow = arith::AddIOp::create(b, row, step);
    if (tileAhead) {
      NextTile next{row, step};
      SmallVector<Value> nextLoads =
          emitOnlineRow(xRow, yRow, vec, Value(), peeled, loaded, &next);
      loop.getBody()->getTerminator()->setOperands(countRows ? 1 : 0,
                                                   nextLoads.size(), nextLoads);
    } else if (plan.strategy == Strategy::Online)
      emitOnlineRow(xRow, yRow, vec,
                    staged ? arith::AddIOp::create(b, row, step) : Value(),
                    peeled);
    else if (peeled)
      emitFusedChunks(yRow, loadPeeledRow(xRow, vec), Value());
    else if (rereads)
      emitFusedRowReread(xRow, yRow);
    else
      emitFusedRow(xRow, yRow, vec,
                   staged ? arith::AddIOp::create(b, row, step) : Value(),
                   loaded);
    // With a single exchange per row, the next row's write of the same shared
    // slots must wait until every thread has read this row's. (With two or
    // more, the barrier of the next exchange orders them. Cluster exchanges
    // alternate between two buffers instead, and so do the online kernel's
    // shared slots over clusters: alternatesSlots.)
    if (plan.exchangesPerRow(group.reduces.size(),
                             plan.pairReduce && !pairRow) == 1 &&
        !plan.alternatesSlots())
      gpu::BarrierOp::create(b);
    rowValid = Value();
    pairSlot = Value();
    stage = stageBase;
    bulkBuffer = bulkParity = Value();
    keepAheadRow = false;
    keepAheadNextRow = Value();
  }

  /// The row loop of a split group whose pass 1 runs splitAhead (A) rows
  /// ahead of its pass 2 (split-ahead), over the group's rows `first`,
  /// `first + step`, ... (i64): iteration j runs pass 1 of the group's row
  /// number j and publishes its block pair, then waits for the group's
  /// pairs of row number j - A and runs its pass 2. A slow block thus has
  /// A rows to catch up before the others wait for it, and A + 1 rows of
  /// the group lie between their passes (in L2 with cache-hints). Every
  /// block of the group runs the same iterations, so barriers stay uniform.
  void emitSplitAheadLoop(Value first, Value step, int64_t vec, bool peeled) {
    // The group's rows: ceil((rows - first) / step), none past the last.
    Value left =
        arith::SubIOp::create(b, rows, arith::MinSIOp::create(b, rows, first));
    Value count = arith::CeilDivUIOp::create(b, left, step);
    OpBuilder::InsertionGuard guard(b);
    if (plan.pipelinesSplit() && vec > 1 && !peeled) {
      // Shares of one tile at most: ceil(N / S) <= tile (onlineShare).
      Value fits =
          arith::CmpIOp::create(b, arith::CmpIPredicate::ule, cols,
                                constI32(plan.splitSize * plan.blockElements));
      auto ifOp = scf::IfOp::create(b, fits, /*withElseRegion=*/true);
      b.setInsertionPointToStart(&ifOp.getThenRegion().front());
      emitSplitPipelinedLoop(first, step, count, vec);
      b.setInsertionPointToStart(&ifOp.getElseRegion().front());
    }
    Value ahead = constI64(plan.splitAhead);
    Value j = emitSplitStepLoop(count, ahead);
    {
      OpBuilder::InsertionGuard inner(b);
      b.setInsertionPointToStart(emitIfThen(
          arith::CmpIOp::create(b, arith::CmpIPredicate::ult, j, count)));
      Value xRow =
          rowPointer(x, plan.inType, splitRow(first, step, j), xStride);
      OnlineShare share = onlineRowShare(xRow, vec, peeled);
      auto [m, d] = onlinePassOne(xRow, vec, share, /*staged=*/false);
      std::tie(m, d) = blockReducePair(m, d, /*acrossSplit=*/false);
      publishSplitPair(m, d, arith::TruncIOp::create(b, i32, j));
    }
    {
      OpBuilder::InsertionGuard inner(b);
      b.setInsertionPointToStart(emitIfThen(
          arith::CmpIOp::create(b, arith::CmpIPredicate::uge, j, ahead)));
      Value k = arith::SubIOp::create(b, j, ahead);
      Value row = splitRow(first, step, k);
      auto [m, d] = gatherSplitPair(arith::TruncIOp::create(b, i32, k));
      Value xRow = rowPointer(x, plan.inType, row, xStride);
      Value yRow = rowPointer(y, plan.outType, row, yStride);
      OnlineShare share = onlineRowShare(xRow, vec, peeled);
      onlinePassTwo(xRow, yRow, vec, share, m, d, /*nextRow=*/Value());
    }
    // The next iteration's block exchange writes the shared slots that this
    // one's read.
    if (plan.exchangesPerRow(group.reduces.size()) == 1)
      gpu::BarrierOp::create(b);
  }

  /// The split-ahead row loop of the vector path when every block's share
  /// of a row fits one tile (the whole share in registers), pipelined so
  /// that one block's latencies overlap: iteration j first issues the loads
  /// of row number j (pass 1, evict-last) and of row number k = j - A (pass
  /// 2, from L2, evict-first) together; while they are in flight, warp 0
  /// waits for row k's pairs and folds them (gatherSplitPair's protocol),
  /// and hands the result to the block through shared memory at the block
  /// reduction's barrier. Then the block publishes row j's pair and writes
  /// row k's map from the registers. Needs A >= 1 (row k's wait comes before
  /// row j's publication) and more than one warp.
  void emitSplitPipelinedLoop(Value first, Value step, Value count,
                              int64_t vec) {
    OpBuilder::InsertionGuard guard(b);
    Value ahead = constI64(plan.splitAhead);
    Value j = emitSplitStepLoop(count, ahead);
    Value passOne =
        arith::CmpIOp::create(b, arith::CmpIPredicate::ult, j, count);
    Value passTwo =
        arith::CmpIOp::create(b, arith::CmpIPredicate::uge, j, ahead);
    // Row number k = j - A, clamped to 0 while it does not exist yet.
    Value k = arith::SelectOp::create(
        b, passTwo, arith::SubIOp::create(b, j, ahead), constI64(0));
    Value xRow = rowPointer(x, plan.inType, splitRow(first, step, j), xStride);
    Value xDone = rowPointer(x, plan.inType, splitRow(first, step, k), xStride);
    Value yDone =
        rowPointer(y, plan.outType, splitRow(first, step, k), yStride);
    Value j32 = arith::TruncIOp::create(b, i32, j);
    Value k32 = arith::TruncIOp::create(b, i32, k);
    auto [lo, hi] = onlineShare();
    loadPolicy = evictLast;
    SmallVector<Value> raw = loadOnlineTileAhead(xRow, lo, hi, vec, passOne);
    loadPolicy = evictFirst;
    SmallVector<Value> rawDone =
        loadOnlineTileAhead(xDone, lo, hi, vec, passTwo);
    loadPolicy = Value();
    // The group's pair of row k, in the last two shared slots of warp 0.
    int64_t slots = plan.sharedSlots(group.reduces.size());
    Value maxSlot = constIndex(slots - 2), sumSlot = constIndex(slots - 1);
    {
      OpBuilder::InsertionGuard inner(b);
      b.setInsertionPointToStart(
          emitIfThen(arith::AndIOp::create(b, passTwo, isWarp0())));
      {
        OpBuilder::InsertionGuard spin(b);
        b.setInsertionPointToStart(emitIfFirstThread());
        waitForSplitRow(k32);
      }
      // Orders lane 0's acquire before the other lanes' reads.
      NVVM::SyncWarpOp::create(b, constI32(-1));
      auto [m, d] = foldSplitEntries(k32);
      b.setInsertionPointToStart(emitIfThen(arith::CmpIOp::create(
          b, arith::CmpIPredicate::eq, lane, constI32(0))));
      memref::StoreOp::create(b, m, shared, ValueRange{maxSlot, constIndex(0)});
      memref::StoreOp::create(b, d, shared, ValueRange{sumSlot, constIndex(0)});
    }
    auto [m, d] =
        onlineFold(negInf(), constF32(0.0), unpackOnlineTile(lo, hi, vec, raw));
    // Its barrier also orders warp 0's stores before the reads below.
    std::tie(m, d) = blockReducePair(m, d, /*acrossSplit=*/false);
    Value rowMax =
        memref::LoadOp::create(b, shared, ValueRange{maxSlot, constIndex(0)});
    Value rowSum =
        memref::LoadOp::create(b, shared, ValueRange{sumSlot, constIndex(0)});
    {
      OpBuilder::InsertionGuard inner(b);
      b.setInsertionPointToStart(emitIfThen(passOne));
      publishSplitPair(m, d, j32);
    }
    {
      OpBuilder::InsertionGuard inner(b);
      b.setInsertionPointToStart(emitIfThen(passTwo));
      DenseMap<Value, Value> scalars = onlineScalars(rowMax, rowSum);
      RowContext ctx = prepareMap(scalars);
      storePolicy = evictFirst;
      emitMap(yDone, unpackOnlineTile(lo, hi, vec, rawDone), ctx);
      storePolicy = Value();
    }
    // The next iteration's warp 0 and block exchange write the shared slots
    // that this one read.
    gpu::BarrierOp::create(b);
  }

  Value constIndex(int64_t v) { return arith::ConstantIndexOp::create(b, v); }

  /// The loop over a split group's steps j in [0, count + ahead) (i64), with
  /// the insertion point left before its terminator; returns j.
  Value emitSplitStepLoop(Value count, Value ahead) {
    auto loop = scf::ForOp::create(
        b, constI64(0), arith::AddIOp::create(b, count, ahead), constI64(1));
    b.setInsertionPoint(loop.getBody()->getTerminator());
    return loop.getInductionVar();
  }

  /// The group's row number `n` (i64): row first + n x step.
  Value splitRow(Value first, Value step, Value n) {
    return arith::AddIOp::create(b, first, arith::MulIOp::create(b, n, step));
  }

  /// Whether this thread is in warp 0 (i1).
  Value isWarp0() {
    return arith::CmpIOp::create(b, arith::CmpIPredicate::ult, tid,
                                 constI32(32));
  }

  /// The scalars of the online map: the reduce inits bound to the row's
  /// (max, sum).
  DenseMap<Value, Value> onlineScalars(Value rowMax, Value rowSum) {
    DenseMap<Value, Value> scalars;
    scalars[group.reduces[0].getInit()] = rowMax;
    scalars[group.reduces[1].getInit()] = rowSum;
    return scalars;
  }

  /// Clones the row-uniform part of the map for the current row.
  RowContext prepareMap(DenseMap<Value, Value> &scalars) {
    SmallVector<Value> mapScalars;
    for (Value row : group.map.getRows())
      mapScalars.push_back(scalars.lookup(row));
    return prepareBody(group.map.getBody(), mapScalars);
  }

  /// Clones the row-uniform part of `reduce` for the current row.
  RowContext prepareReduce(ReduceOp reduce, DenseMap<Value, Value> &scalars) {
    SmallVector<Value> rowScalars;
    for (Value row : reduce.getRows())
      rowScalars.push_back(scalars.lookup(row));
    return prepareBody(reduce.getBody(), rowScalars);
  }

  /// Applies the map to `chunks` and stores the results.
  void emitMap(Value yRow, ArrayRef<Chunk> chunks, RowContext &ctx) {
    for (const Chunk &chunk : chunks) {
      SmallVector<Value> outs;
      for (Value v : chunk.values)
        outs.push_back(emitElement(ctx, v));
      storeChunk(yRow, chunk.col, chunk.valid, outs);
    }
  }

  /// Fused: the row is loaded once into registers; every reduce runs over
  /// the registers, then the map writes the row.
  ///
  /// With prefetch (vector path), the row is read from the stage, and the
  /// copy of `nextRow` into it starts as soon as the first reduction has
  /// consumed every value read from it. With prefetch=registers, `loaded`
  /// holds the row's chunks as loadRowAhead loaded them.
  void emitFusedRow(Value xRow, Value yRow, int64_t vec, Value nextRow = {},
                    ValueRange loaded = {}) {
    SmallVector<Chunk> chunks;
    if (!loaded.empty()) {
      for (auto [place, raw] :
           llvm::zip_equal(chunkPlaces(sliceStart, vec), loaded))
        chunks.push_back(unpackChunk(place.col, inOwnRow(place.valid), raw));
    } else if (nextRow) {
      NVVM::CpAsyncWaitGroupOp::create(b, 0);
      chunks = loadBlock(stage, sliceStart, vec, 0, /*fromStage=*/true);
    } else {
      chunks = loadBlock(xRow, sliceStart, vec);
    }
    emitFusedChunks(yRow, chunks, nextRow);
  }

  /// The rest of a fused row once its `chunks` are in registers: every
  /// reduce, then the map, which writes the row at `yRow`. The stage's copy
  /// of `nextRow` starts once the first reduction has read every chunk.
  void emitFusedChunks(Value yRow, ArrayRef<Chunk> chunks, Value nextRow) {
    if (pairRow)
      return emitPairRow(yRow, chunks, nextRow);
    DenseMap<Value, Value> scalars;
    for (auto [slot, reduce] : llvm::enumerate(group.reduces)) {
      RowContext ctx = prepareReduce(reduce, scalars);
      Value identity =
          arith::ConstantFloatOp::create(b, f32, reduce.getIdentity());
      SmallVector<Value> values;
      for (const Chunk &chunk : chunks)
        for (Value v : chunk.values)
          values.push_back(arith::SelectOp::create(
              b, chunk.valid, emitElement(ctx, v), identity));
      Combiner c = reduce.getCombiner();
      Value partial = treeReduce<Value>(
          values, [&](Value l, Value r) { return combine(c, l, r); });
      if (nextRow && slot == 0)
        prefetchRow(nextRow);
      scalars[reduce.getInit()] = blockReduce(partial, c, slot);
    }
    RowContext ctx = prepareMap(scalars);
    emitMap(yRow, chunks, ctx);
  }

  /// The largest valid value of `chunks` (-inf when none is valid).
  Value maxOfChunks(ArrayRef<Chunk> chunks) {
    SmallVector<Value> masked;
    for (const Chunk &chunk : chunks)
      for (Value v : chunk.values)
        masked.push_back(arith::SelectOp::create(b, chunk.valid, v, negInf()));
    return treeReduce<Value>(
        masked, [&](Value l, Value r) { return combine(Combiner::max, l, r); });
  }

  /// The rest of a fused row over the online pair (see KernelPlan::
  /// pairReduce): the thread's max m_t, e_i = exp(x_i - m_t) and their sum
  /// d_t, then one block-wide (and cluster-wide) combination of the pairs
  /// into the row's (m, s). A softmax map then writes e_i * (exp(m_t - m) /
  /// s), one exp per element in all; any other map is applied to the row's
  /// (m, s) as usual.
  void emitPairRow(Value yRow, ArrayRef<Chunk> chunks, Value nextRow) {
    Value mt = maxOfChunks(chunks);
    if (nextRow)
      prefetchRow(nextRow);
    // A thread whose elements are all -inf (or masked) contributes (-inf, 0);
    // its exponents would be NaN.
    Value finite =
        arith::CmpFOp::create(b, arith::CmpFPredicate::ONE, mt, negInf());
    Value zero = constF32(0.0);
    SmallVector<SmallVector<Value>> exps;
    SmallVector<Value> terms;
    for (const Chunk &chunk : chunks) {
      Value use = arith::AndIOp::create(b, chunk.valid, finite);
      exps.emplace_back();
      for (Value v : chunk.values) {
        exps.back().push_back(arith::SelectOp::create(
            b, use, emitExp(arith::SubFOp::create(b, v, mt)), zero));
        terms.push_back(exps.back().back());
      }
    }
    Value dt = treeReduce<Value>(
        terms, [&](Value l, Value r) { return combine(Combiner::sum, l, r); });
    auto [m, s] = blockReducePair(mt, dt);
    if (!isSoftmaxMap(group)) {
      DenseMap<Value, Value> scalars;
      scalars[group.reduces[0].getInit()] = m;
      scalars[group.reduces[1].getInit()] = s;
      RowContext ctx = prepareMap(scalars);
      emitMap(yRow, chunks, ctx);
      return;
    }
    // exp(x_i - m) / s = e_i * exp(m_t - m) / s. When every element of the
    // row is -inf, m_t = m = -inf and s = 0: the scale is NaN, as torch's
    // result.
    Value scale =
        arith::DivFOp::create(b, emitExp(arith::SubFOp::create(b, mt, m)), s);
    for (auto [chunk, values] : llvm::zip(chunks, exps)) {
      SmallVector<Value> outs;
      for (Value e : values)
        outs.push_back(arith::MulFOp::create(b, e, scale));
      storeChunk(yRow, chunk.col, chunk.valid, outs);
    }
  }

  /// Elements per thread and tile of the re-reading fallback.
  int64_t rereadChunks() const {
    return std::min<int64_t>(4, plan.elementsPerThread());
  }

  /// Emits `scf.for start = 0 to cols step tile` (over the block's slice
  /// with clusters) and calls `body(start, iterArgs)`, which returns the
  /// values to yield.
  scf::ForOp
  emitTileLoop(ValueRange inits,
               function_ref<SmallVector<Value>(Value, ValueRange)> body) {
    Value tile = constI32(rereadChunks() * plan.threadsPerRow());
    Value lower = constI32(0), upper = cols;
    if (sliceStart) {
      lower = sliceStart;
      upper = arith::MinUIOp::create(
          b, cols,
          arith::AddIOp::create(b, sliceStart, constI32(plan.blockElements)));
    }
    auto loop = scf::ForOp::create(b, lower, upper, tile, inits);
    OpBuilder::InsertionGuard guard(b);
    if (!inits.empty()) {
      b.setInsertionPointToStart(loop.getBody());
      scf::YieldOp::create(
          b, body(loop.getInductionVar(), loop.getRegionIterArgs()));
    } else {
      b.setInsertionPoint(loop.getBody()->getTerminator());
      body(loop.getInductionVar(), {});
    }
    return loop;
  }

  /// Fused, scalar fallback without the row in registers: each reduce and the
  /// map walk the row in tiles of `rereadChunks()` elements per thread, reading
  /// it again (mostly from L2) each time. Used for rows whose pointers or
  /// strides do not allow vector accesses, so that the vector path keeps the
  /// register budget.
  void emitFusedRowReread(Value xRow, Value yRow) {
    DenseMap<Value, Value> scalars;
    for (auto [slot, reduce] : llvm::enumerate(group.reduces)) {
      RowContext ctx = prepareReduce(reduce, scalars);
      Combiner c = reduce.getCombiner();
      Value identity =
          arith::ConstantFloatOp::create(b, f32, reduce.getIdentity());
      auto loop = emitTileLoop({identity}, [&](Value start, ValueRange acc) {
        SmallVector<Value> values = {acc[0]};
        for (const Chunk &chunk : loadBlock(xRow, start, 1, rereadChunks()))
          values.push_back(arith::SelectOp::create(
              b, chunk.valid, emitElement(ctx, chunk.values[0]), identity));
        return SmallVector<Value>{treeReduce<Value>(
            values, [&](Value l, Value r) { return combine(c, l, r); })};
      });
      scalars[reduce.getInit()] = blockReduce(loop.getResult(0), c, slot);
    }
    RowContext ctx = prepareMap(scalars);
    emitTileLoop({}, [&](Value start, ValueRange) {
      emitMap(yRow, loadBlock(xRow, start, 1, rereadChunks()), ctx);
      return SmallVector<Value>{};
    });
  }

  /// The columns [lo, hi) of this block's share of a row in the online
  /// kernel: the whole row, or with clusters the rank's share,
  /// ceil(ceil(N / C) / g) * g columns each, in units g of whole vectors, or
  /// of whole tiles with the stage, whose tiles it copies (computed in i64:
  /// N may be close to 2^31). Units of vectors keep the ranks' shares even:
  /// in whole tiles, N = 131075 over eight ranks of 16384-element tiles
  /// gave four ranks two tiles each and three none.
  std::pair<Value, Value> onlineShare() {
    Value lo = constI32(0), hi = cols;
    if (plan.shareBlocks() > 1) {
      Value cols64 = arith::ExtUIOp::create(b, i64, cols);
      Value tile64 =
          constI64(plan.prefetch ? plan.blockElements : plan.vectorWidth);
      Value span = arith::MulIOp::create(
          b,
          arith::CeilDivUIOp::create(
              b,
              arith::CeilDivUIOp::create(b, cols64,
                                         constI64(plan.shareBlocks())),
              tile64),
          tile64);
      Value lo64 = arith::MinUIOp::create(
          b,
          arith::MulIOp::create(b, arith::ExtUIOp::create(b, i64, shareRank),
                                span),
          cols64);
      Value hi64 = arith::MinUIOp::create(
          b, arith::AddIOp::create(b, lo64, span), cols64);
      lo = arith::TruncIOp::create(b, i32, lo64);
      hi = arith::TruncIOp::create(b, i32, hi64);
    }
    return {lo, hi};
  }

  /// This thread's loads (loadRaw) of the online tile at column `start` of
  /// the row at `xRow`, masked at column `end` and, when given, by `exists`:
  /// the tile the pipelined passes of emitOnlineRow load ahead.
  SmallVector<Value> loadOnlineTileAhead(Value xRow, Value start, Value end,
                                         int64_t vec, Value exists = {}) {
    SmallVector<Value> raw;
    for (const ChunkPlace &place : chunkPlaces(start, vec, 0, end))
      raw.push_back(loadRaw(
          xRow, place.col,
          exists ? arith::AndIOp::create(b, place.valid, exists) : place.valid,
          vec));
    return raw;
  }

  /// This thread's loads of the first tile, at column `lo` (masked at `hi`:
  /// none for an empty share), of the block's share of row `row` (i64), or
  /// none when the row does not exist; evict-last with cache-hints, as pass
  /// 1 loads its tiles. The tile a chained pass 1 starts from
  /// (onlineChainsTiles).
  SmallVector<Value> loadFirstTile(Value row, Value lo, Value hi, int64_t vec) {
    Value savedPolicy = loadPolicy;
    loadPolicy = evictLast;
    Value exists =
        arith::CmpIOp::create(b, arith::CmpIPredicate::slt, row, rows);
    SmallVector<Value> raw = loadOnlineTileAhead(
        rowPointer(x, plan.inType, row, xStride), lo, hi, vec, exists);
    loadPolicy = savedPolicy;
    return raw;
  }

  /// The number of tiles (i32) of the share [lo, hi).
  Value shareTiles(Value lo, Value hi) {
    return arith::CeilDivUIOp::create(b, arith::SubIOp::create(b, hi, lo),
                                      constI32(plan.blockElements));
  }

  /// `n - min(n, 1)` (i32): the tiles before the last of `n`, 0 for none.
  Value tilesBeforeLast(Value n) {
    return arith::SubIOp::create(b, n,
                                 arith::MinUIOp::create(b, n, constI32(1)));
  }

  /// The chunks of the online tile at column `start` from `raw`, its loads
  /// issued ahead by loadOnlineTileAhead (masked at column `end`).
  SmallVector<Chunk> unpackOnlineTile(Value start, Value end, int64_t vec,
                                      ValueRange raw) {
    SmallVector<Chunk> chunks;
    for (auto [place, loaded] :
         llvm::zip_equal(chunkPlaces(start, vec, 0, end), raw))
      chunks.push_back(unpackChunk(place.col, place.valid, loaded));
    return chunks;
  }

  /// This thread's loads of the online tile at column `start` (masked at
  /// `end` and, when given, by `exists`) of the block's share from column
  /// `lo`: from the stage when the tile is one of those kept there
  /// (online-keep), else from the row at `xRow`.
  SmallVector<Value> loadShareTile(Value xRow, Value start, Value lo, Value end,
                                   int64_t vec, Value exists) {
    if (!readsKeptTiles())
      return loadOnlineTileAhead(xRow, start, end, vec, exists);
    Value kept = isKeptTile(start, lo, end);
    SmallVector<Type> types(plan.elementsPerThread() / vec, rawType(vec));
    auto ifOp = scf::IfOp::create(b, types, kept, /*withElseRegion=*/true);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&ifOp.getThenRegion().front());
    SmallVector<Value> fromStage;
    for (const ChunkPlace &place : chunkPlaces(start, vec, 0, end))
      fromStage.push_back(loadRaw(
          stage, place.col, arith::AndIOp::create(b, place.valid, exists), vec,
          arith::SubIOp::create(b, place.col, lo)));
    scf::YieldOp::create(b, fromStage);
    b.setInsertionPointToStart(&ifOp.getElseRegion().front());
    scf::YieldOp::create(b, loadOnlineTileAhead(xRow, start, end, vec, exists));
    return SmallVector<Value>(ifOp.getResults());
  }

  /// Pass 1's copy of the tile at column `start` (`raw`, as loaded) into the
  /// stage when it is one of the tiles kept for pass 2 (online-keep).
  void keepTile(Value start, Value lo, Value end, int64_t vec, ValueRange raw) {
    auto ifOp = scf::IfOp::create(b, isKeptTile(start, lo, end),
                                  /*withElseRegion=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&ifOp.getThenRegion().front());
    for (auto [place, loaded] :
         llvm::zip_equal(chunkPlaces(start, vec, 0, end), raw)) {
      auto store = scf::IfOp::create(b, place.valid, /*withElseRegion=*/false);
      OpBuilder::InsertionGuard inner(b);
      b.setInsertionPointToStart(&store.getThenRegion().front());
      LLVM::StoreOp::create(
          b, loaded, stageAddress(arith::SubIOp::create(b, place.col, lo)),
          vec * byteWidth(plan.inType));
    }
  }

  /// Whether the online tile at column `start` of the share [lo, hi) is one
  /// of those kept in the stage (online-keep): before keptEnd.
  Value isKeptTile(Value start, Value lo, Value hi) {
    if (keepAheadRow)
      return arith::CmpIOp::create(b, arith::CmpIPredicate::slt, start,
                                   keptEnd(lo, hi));
    return arith::CmpIOp::create(b, arith::CmpIPredicate::slt,
                                 arith::SubIOp::create(b, start, lo),
                                 constI32(plan.keptElements));
  }

  /// With keep-ahead, the end of the kept tiles of the share [lo, hi): its
  /// first tiles, at most keptElements of them and never its last, which
  /// pass 1 loads into registers and pass 2 starts on.
  Value keptEnd(Value lo, Value hi) {
    Value beforeLast = arith::MulIOp::create(
        b, tilesBeforeLast(shareTiles(lo, hi)), constI32(plan.blockElements));
    return arith::AddIOp::create(
        b, lo,
        arith::MinUIOp::create(b, beforeLast, constI32(plan.keptElements)));
  }

  /// With keep-ahead, starts copying this thread's chunks of the kept tiles
  /// of row `row` (i64) into the stage, a cp.async group per tile: the
  /// first row's, before the row loop.
  void copyKeptTiles(Value row, Value lo, Value hi) {
    auto loop = scf::ForOp::create(b, lo, keptEnd(lo, hi),
                                   constI32(plan.blockElements));
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(loop.getBody()->getTerminator());
    copyToStage(row, loop.getInductionVar(), lo, hi);
  }

  /// The online kernel's tile at column `start` of the row at `xRow`, or
  /// of the stage, which holds the block's share from its column `lo`;
  /// chunks from column `end` on are masked.
  SmallVector<Chunk> loadOnlineTile(Value xRow, Value start, Value lo,
                                    int64_t vec, bool fromStage, Value end) {
    SmallVector<Chunk> chunks;
    for (const ChunkPlace &place : chunkPlaces(start, vec, 0, end))
      chunks.push_back(fromStage
                           ? loadChunk(stage, place.col, place.valid, vec,
                                       arith::SubIOp::create(b, place.col, lo))
                           : loadChunk(xRow, place.col, place.valid, vec));
    return chunks;
  }

  /// The next row's first tile, which a chained pass 2 loads in its last
  /// iteration: row `row + step` (i64), loaded when it exists. Its address
  /// is computed where the loads are issued, so that nothing of it stays
  /// live through the row.
  struct NextTile {
    Value row, step;
  };

  /// Online: pass 1 walks the block's share of the row tile by tile keeping
  /// a running (max, sum) per thread (onlineFold); pass 2 reads the share
  /// again and writes the map.
  ///
  /// With the stage (prefetch=on, a known row length), the share was copied
  /// into shared memory ahead (prefetchRow) and both passes read it there:
  /// one DRAM read per element. The second pass starts copying `nextRow`'s
  /// share into each tile of the stage as soon as it has written that tile.
  ///
  /// With the tiles loaded ahead (onlineTilesAhead), the passes hand loads
  /// on across their boundaries (onlineChainsTiles): a reversed pass 2
  /// starts on pass 1's last tile, still in registers, and, given `next`,
  /// its last iteration loads the next row's first tile, which this returns
  /// for the next call's `firstTile`.
  SmallVector<Value> emitOnlineRow(Value xRow, Value yRow, int64_t vec,
                                   Value nextRow = {}, bool peeled = false,
                                   ValueRange firstTile = {},
                                   const NextTile *next = nullptr) {
    bool staged = static_cast<bool>(nextRow);
    OnlineShare share = onlineRowShare(xRow, vec, peeled);
    if (staged)
      NVVM::CpAsyncWaitGroupOp::create(b, 0);
    SmallVector<Value> lastTile;
    bool chain = onlineChainsTiles(staged, vec);
    auto [m, d] = onlinePassOne(xRow, vec, share, staged, firstTile,
                                chain ? &lastTile : nullptr);
    std::tie(m, d) = reducePairInBlock(m, d);
    if (bulkBuffer)
      copyNextRowKeptTiles();
    auto [rowMax, rowSum] = reducePairAcrossBlocks(m, d, /*acrossSplit=*/true);
    return onlinePassTwo(xRow, yRow, vec, share, rowMax, rowSum, nextRow,
                         lastTile, next);
  }

  /// The block's share of one row of the online kernel.
  struct OnlineShare {
    /// Columns [lo, hi) of the vector tiles (i32); chunks are masked at hi,
    /// the end of the share, which need not end on a tile (onlineShare).
    Value lo, hi;
    /// A peeled row's edges (loadEdges), which the first block of the row
    /// folds before its first tile and writes after pass 2; else empty.
    SmallVector<Chunk> edges;
  };

  /// The share of the row at `xRow`. A `peeled` row (see peelRow) shifts
  /// every share by its head h and clips it at the end of the vectors; its
  /// edges are loaded here.
  OnlineShare onlineRowShare(Value xRow, int64_t vec, bool peeled) {
    OnlineShare share;
    std::tie(share.lo, share.hi) = onlineShare();
    if (peeled) {
      PeeledRow row = peelRow(xRow, vec);
      share.lo = arith::AddIOp::create(b, share.lo, row.head);
      share.hi = arith::MinUIOp::create(
          b, arith::AddIOp::create(b, share.hi, row.head), row.vectorEnd);
      share.lo = arith::MinUIOp::create(b, share.lo, share.hi);
      share.edges = loadEdges(xRow, row, vec, /*oneList=*/true);
    }
    return share;
  }

  /// Whether the online passes load each tile one ahead into registers
  /// (prefetch=registers): its loads are carried by the loop, so that a
  /// thread's next loads are in flight while it folds or writes the current
  /// tile. The load ahead of the last tile reads nothing: it starts at or
  /// past hi.
  bool onlineTilesAhead(bool staged, int64_t vec) const {
    return plan.prefetchRegisters && !staged && vec > 1;
  }

  /// Whether the tiles loaded ahead also cross the passes' boundaries: pass
  /// 1's last tile is folded after its loop, and a reversed pass 2, which
  /// starts on that tile, takes its loads from registers instead of reading
  /// it again. Each thread uses only what it loaded itself. Not in a split
  /// group (row-split), whose blocks wait for each other between the passes
  /// anyway.
  bool onlineChainsTiles(bool staged, int64_t vec) const {
    return onlineTilesAhead(staged, vec) && plan.reverseSecondPass &&
           plan.splitSize == 1;
  }

  /// Whether pass 1 also stores the share's first tiles, as loaded, into
  /// the stage for pass 2 (online-keep). A thread reads back only what it
  /// stored itself: no barrier.
  bool onlineKeeps(bool staged, int64_t vec) const {
    return plan.keptElements > 0 && !staged && vec > 1 && !plan.keepAhead;
  }

  /// Whether this row path reads kept tiles from the stage: pass 1 stores
  /// them there (onlineKeeps), or keep-ahead copies them in (keepAheadRow).
  /// A keep-ahead kernel's other paths keep nothing.
  bool readsKeptTiles() const {
    return plan.keptElements > 0 && (!plan.keepAhead || keepAheadRow);
  }

  /// Pass 1 of the online kernel over `share`: this thread's running (max,
  /// sum) pair, the edges of a peeled row included. With cache-hints it
  /// reads its tiles evict-last, so that they stay in L2 for pass 2.
  ///
  /// With the tiles loaded ahead, `firstTile` holds the first tile's loads
  /// when the previous row issued them, and with `lastTile` the last tile is
  /// folded after the loop and its loads returned there, for pass 2.
  ///
  /// With keep-ahead, pass 1 first issues the loads of the first tile after
  /// the kept ones, then waits for this thread's copies into the stage and
  /// folds the kept tiles from there while those loads are in flight; the
  /// loop walks the rest of the share.
  std::pair<Value, Value>
  onlinePassOne(Value xRow, int64_t vec, const OnlineShare &share, bool staged,
                ValueRange firstTile = {},
                SmallVector<Value> *lastTile = nullptr) {
    Value tile = constI32(plan.blockElements);
    Value lo = share.lo, hi = share.hi;
    Value m0 = negInf(), d0 = constF32(0.0);
    if (!share.edges.empty())
      std::tie(m0, d0) = onlineFold(m0, d0, share.edges);
    bool ahead = onlineTilesAhead(staged, vec);
    bool keep = onlineKeeps(staged, vec);
    loadPolicy = evictLast;
    // Folds the tile at column `start`, loaded as `raw`, into (m, d).
    auto foldTile = [&](Value start, Value m, Value d, ValueRange raw) {
      if (keep)
        keepTile(start, lo, hi, vec, raw);
      return onlineFold(m, d, unpackOnlineTile(start, hi, vec, raw));
    };
    // The first column of the loop.
    Value from = lo;
    SmallVector<Value> firstLoads(firstTile);
    if (keepAheadRow) {
      assert(ahead && lastTile && firstTile.empty() &&
             "keep-ahead chains its streamed tiles");
      from = keptEnd(lo, hi);
      firstLoads = loadOnlineTileAhead(xRow, from, hi, vec);
      if (bulkBuffer)
        waitForPhase(stageBarrier(bulkBuffer), bulkParity);
      else
        NVVM::CpAsyncWaitGroupOp::create(b, 0);
      auto kept = scf::ForOp::create(b, lo, from, tile, ValueRange{m0, d0});
      {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(kept.getBody());
        auto [m, d] =
            onlineFold(kept.getRegionIterArg(0), kept.getRegionIterArg(1),
                       loadOnlineTile(xRow, kept.getInductionVar(), lo, vec,
                                      /*fromStage=*/true, hi));
        scf::YieldOp::create(b, ValueRange{m, d});
      }
      m0 = kept.getResult(0);
      d0 = kept.getResult(1);
    }
    SmallVector<Value> inits{m0, d0};
    if (ahead)
      llvm::append_range(inits, firstLoads.empty()
                                    ? loadOnlineTileAhead(xRow, from, hi, vec)
                                    : firstLoads);
    // The loop's end: hi, or the start of the last tile when that tile is
    // folded after the loop (`from` for an empty share, whose loads are
    // masked).
    Value end = hi;
    if (lastTile)
      end = arith::AddIOp::create(
          b, from,
          arith::MulIOp::create(b, tilesBeforeLast(shareTiles(from, hi)),
                                tile));
    auto pass1 = scf::ForOp::create(b, from, end, tile, inits);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(pass1.getBody());
      Value m = pass1.getRegionIterArg(0), d = pass1.getRegionIterArg(1);
      Value start = pass1.getInductionVar();
      SmallVector<Value> yields;
      std::pair<Value, Value> folded;
      if (ahead) {
        yields = loadOnlineTileAhead(
            xRow, arith::AddIOp::create(b, start, tile), hi, vec);
        folded = foldTile(start, m, d, pass1.getRegionIterArgs().drop_front(2));
      } else if (keep) {
        folded =
            foldTile(start, m, d, loadOnlineTileAhead(xRow, start, hi, vec));
      } else {
        folded =
            onlineFold(m, d, loadOnlineTile(xRow, start, lo, vec, staged, hi));
      }
      yields.insert(yields.begin(), {folded.first, folded.second});
      scf::YieldOp::create(b, yields);
    }
    loadPolicy = Value();
    if (!lastTile)
      return {pass1.getResult(0), pass1.getResult(1)};
    *lastTile = llvm::to_vector_of<Value>(pass1.getResults().drop_front(2));
    return foldTile(end, pass1.getResult(0), pass1.getResult(1), *lastTile);
  }

  /// Pass 2 of the online kernel over `share`, forwards or from the last
  /// tile back to the first: reads the share again (from the stage when
  /// `nextRow` is given, whose share it then copies in tile by tile) and
  /// writes the map of the row's (rowMax, rowSum). With cache-hints its
  /// loads and stores are evict-first.
  ///
  /// With the tiles loaded ahead, `lastTile` holds the loads of pass 1's
  /// last tile (onlineChainsTiles), where a reversed pass 2 starts. With
  /// `next` (reversed as well), the last iteration, on the share's first
  /// tile, runs after the loop and first loads the next row's first tile
  /// (evict-last with cache-hints, as pass 1 loads it); those loads are
  /// returned.
  SmallVector<Value> onlinePassTwo(Value xRow, Value yRow, int64_t vec,
                                   const OnlineShare &share, Value rowMax,
                                   Value rowSum, Value nextRow,
                                   ValueRange lastTile = {},
                                   const NextTile *nextTile = nullptr) {
    Value tile = constI32(plan.blockElements);
    Value lo = share.lo, hi = share.hi;
    bool staged = static_cast<bool>(nextRow);
    bool ahead = onlineTilesAhead(staged, vec);
    bool keep = onlineKeeps(staged, vec);
    assert((lastTile.empty() || (ahead && plan.reverseSecondPass)) &&
           "pass 1's last tile is pass 2's first only in reverse");
    assert((!nextTile || (ahead && !keep && plan.reverseSecondPass)) &&
           "the next row's first tile follows a reversed pass 2");
    DenseMap<Value, Value> scalars = onlineScalars(rowMax, rowSum);
    Value numTiles = shareTiles(lo, hi);
    loadPolicy = storePolicy = evictFirst;
    // The first column of the tile of pass 2's iteration `i`.
    auto tileStart = [&](Value i) {
      if (plan.reverseSecondPass)
        i = arith::SubIOp::create(
            b, arith::SubIOp::create(b, numTiles, constI32(1)), i);
      return arith::AddIOp::create(b, lo, arith::MulIOp::create(b, i, tile));
    };
    // Writes the map of the tile at column `start` from its `chunks`.
    auto writeTile = [&](Value start, ArrayRef<Chunk> chunks) {
      // Prepared inside the tile loop; LLVM hoists the row-uniform part (one
      // reciprocal per row in the PTX).
      RowContext ctx = prepareMap(scalars);
      emitMap(yRow, chunks, ctx);
      // Each thread refills exactly the stage entries it has just read and
      // used, so nothing waits for the other threads.
      if (staged)
        copyToStage(nextRow, start, lo);
      // With keep-ahead, the same for the kept tiles: the next row's copies
      // are in flight through the rest of this row.
      if (keepAheadRow && !bulkBuffer) {
        auto ifOp = scf::IfOp::create(b, isKeptTile(start, lo, hi),
                                      /*withElseRegion=*/false);
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(&ifOp.getThenRegion().front());
        copyToStage(keepAheadNextRow, start, lo, hi);
      }
    };
    SmallVector<Value> inits2(lastTile.begin(), lastTile.end());
    if (ahead && lastTile.empty())
      inits2 = loadShareTile(xRow, tileStart(constI32(0)), lo, hi, vec,
                             arith::CmpIOp::create(b, arith::CmpIPredicate::sgt,
                                                   numTiles, constI32(0)));
    // With `nextTile`, the loop leaves out the last iteration (none for an
    // empty share).
    Value loopTiles = nextTile ? tilesBeforeLast(numTiles) : numTiles;
    auto pass2 =
        scf::ForOp::create(b, constI32(0), loopTiles, constI32(1), inits2);
    {
      OpBuilder::InsertionGuard guard(b);
      if (ahead) {
        b.setInsertionPointToStart(pass2.getBody());
        scf::YieldOp::create(b, pass2.getRegionIterArgs());
      }
      b.setInsertionPoint(pass2.getBody()->getTerminator());
      Value start = tileStart(pass2.getInductionVar());
      SmallVector<Chunk> chunks;
      if (ahead) {
        Value next =
            arith::AddIOp::create(b, pass2.getInductionVar(), constI32(1));
        SmallVector<Value> raw =
            loadShareTile(xRow, tileStart(next), lo, hi, vec,
                          arith::CmpIOp::create(b, arith::CmpIPredicate::slt,
                                                next, numTiles));
        pass2.getBody()->getTerminator()->setOperands(raw);
        chunks = unpackOnlineTile(start, hi, vec, pass2.getRegionIterArgs());
      } else if (keep) {
        chunks = unpackOnlineTile(
            start, hi, vec,
            loadShareTile(xRow, start, lo, hi, vec,
                          arith::ConstantIntOp::create(b, 1, 1)));
      } else {
        chunks = loadOnlineTile(xRow, start, lo, vec, staged, hi);
      }
      writeTile(start, chunks);
    }
    SmallVector<Value> nextLoads;
    if (nextTile) {
      nextLoads = loadFirstTile(
          arith::AddIOp::create(b, nextTile->row, nextTile->step), lo, hi, vec);
      writeTile(lo, unpackOnlineTile(lo, hi, vec, pass2.getResults()));
    }
    if (!share.edges.empty()) {
      RowContext ctx = prepareMap(scalars);
      emitMap(yRow, share.edges, ctx);
    }
    loadPolicy = storePolicy = Value();
    return nextLoads;
  }

  /// One step of the online pass: the running pair (m, d) of this thread
  /// with the valid values of `chunks` folded in, d = sum exp(x - m).
  std::pair<Value, Value> onlineFold(Value m, Value d, ArrayRef<Chunk> chunks) {
    Value mNew = arith::MaximumFOp::create(b, m, maxOfChunks(chunks));
    // While the running max is -inf every contribution so far is 0.
    Value finite =
        arith::CmpFOp::create(b, arith::CmpFPredicate::ONE, mNew, negInf());
    Value zero = constF32(0.0);
    Value scale = arith::SelectOp::create(
        b, finite, emitExp(arith::SubFOp::create(b, m, mNew)), zero);
    SmallVector<Value> terms;
    for (const Chunk &chunk : chunks) {
      Value use = arith::AndIOp::create(b, chunk.valid, finite);
      for (Value v : chunk.values)
        terms.push_back(arith::SelectOp::create(
            b, use, emitExp(arith::SubFOp::create(b, v, mNew)), zero));
    }
    Value tileSum = treeReduce<Value>(
        terms, [&](Value l, Value r) { return combine(Combiner::sum, l, r); });
    Value dNew =
        arith::AddFOp::create(b, arith::MulFOp::create(b, d, scale), tileSum);
    return {mNew, dNew};
  }

  //===--------------------------------------------------------------------===//
  // Chunks
  //===--------------------------------------------------------------------===//

  /// The chunks kernel (Strategy::Chunks): each block handles one chunk of
  /// one row, taken by ticket, on the vector path or the scalar path.
  ///
  /// Thread 0 takes ticket t with an `atom.inc` on the workspace's first
  /// word, which wraps to 0 after the launch's last ticket (rows x K of
  /// them, K = ceil(cols / chunk)); block t handles chunk t mod K of row
  /// t / K. Tickets, unlike block indices, follow the order in which blocks
  /// start, so a running block only ever waits for chunks whose blocks have
  /// started or will start in a free slot: the kernel cannot hang while the
  /// device holds K of its blocks at once (docs/abi.md). Blocks past the
  /// last ticket take none.
  void emitChunks() {
    if (plan.hasStage())
      initBarriers(kStageBarriersName, 1);
    Value count =
        arith::CeilDivUIOp::create(b, cols, constI32(plan.chunkElements()));
    Value total =
        arith::MulIOp::create(b, arith::TruncIOp::create(b, i32, rows), count);
    Value block = arith::IndexCastOp::create(
        b, i32, gpu::BlockIdOp::create(b, gpu::Dimension::x));
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(emitIfThen(
        arith::CmpIOp::create(b, arith::CmpIPredicate::ult, block, total)));
    Value ticketSlot = constIndex(KernelPlan::kTicketSlot);
    Value first = constIndex(0);
    {
      OpBuilder::InsertionGuard inner(b);
      b.setInsertionPointToStart(emitIfFirstThread());
      Value ticket = LLVM::AtomicRMWOp::create(
          b, LLVM::AtomicBinOp::uinc_wrap, workspace,
          arith::SubIOp::create(b, total, constI32(1)),
          LLVM::AtomicOrdering::monotonic, "device");
      memref::StoreOp::create(b, arith::BitcastOp::create(b, f32, ticket),
                              shared, ValueRange{ticketSlot, first});
    }
    gpu::BarrierOp::create(b);
    Value ticket = arith::BitcastOp::create(
        b, i32,
        memref::LoadOp::create(b, shared, ValueRange{ticketSlot, first}));
    Value row = arith::ExtUIOp::create(
        b, i64, arith::DivUIOp::create(b, ticket, count));
    Value chunk = arith::RemUIOp::create(b, ticket, count);
    sliceStart =
        arith::MulIOp::create(b, chunk, constI32(plan.chunkElements()));
    int64_t vec = plan.vectorWidth;
    if (vec == 1)
      return emitChunk(row, chunk, count, 1);
    auto ifOp = scf::IfOp::create(b, vectorPathAllowed(vec),
                                  /*withElseRegion=*/true);
    b.setInsertionPointToStart(&ifOp.getThenRegion().front());
    // A chunk inside the row (all but a row's partial last one) takes the
    // vector path without masks: no compare or select per chunk, and fewer
    // registers.
    auto whole = scf::IfOp::create(
        b,
        arith::CmpIOp::create(
            b, arith::CmpIPredicate::sle,
            arith::AddIOp::create(b, sliceStart,
                                  constI32(plan.chunkElements())),
            cols),
        /*withElseRegion=*/true);
    {
      OpBuilder::InsertionGuard inner(b);
      b.setInsertionPointToStart(&whole.getThenRegion().front());
      wholeChunk = true;
      emitChunk(row, chunk, count, vec);
      wholeChunk = false;
      b.setInsertionPointToStart(&whole.getElseRegion().front());
      emitChunk(row, chunk, count, vec);
    }
    b.setInsertionPointToStart(&ifOp.getElseRegion().front());
    emitChunk(row, chunk, count, 1);
  }

  /// Chunk `chunk` (i32) of the `count` of row `row` (i64), from column
  /// sliceStart. On the vector path, blockElements elements in registers,
  /// then chunkStaged more in the stage (one cp.async.bulk by thread 0,
  /// issued before the registers' loads); on the scalar path, the whole
  /// chunk streamed from global memory by each of the three passes (mostly
  /// from L2 after the first), so that it keeps few registers next to the
  /// vector path's. Each thread reduces its elements to a (max, sum) pair;
  /// the block's pair meets the row's other chunks' (exchangeChunkPair),
  /// and the map writes the chunk: a softmax as e_i * exp(m_t - m) / s from
  /// the exponentials e_i = exp(x_i - m_t) kept in registers, the streamed
  /// part and any other map from the inputs.
  void emitChunk(Value row, Value chunk, Value count, int64_t vec) {
    Value xRow = rowPointer(x, plan.inType, row, xStride);
    Value yRow = rowPointer(y, plan.outType, row, yStride);
    bool staged = vec > 1 && plan.hasStage();
    Value stageStart = sliceStart;
    int64_t streamed = plan.chunkElements();
    SmallVector<Chunk> held;
    if (vec > 1) {
      stageStart =
          arith::AddIOp::create(b, sliceStart, constI32(plan.blockElements));
      streamed = plan.chunkStaged;
      if (staged)
        bulkCopyChunkStage(xRow, stageStart);
      held = loadBlock(xRow, sliceStart, vec);
    }
    auto forEachStaged = [&](ValueRange inits, StreamBody body) {
      return forEachStreamed(xRow, stageStart, streamed, vec, staged, inits,
                             body);
    };
    // Masks apply per chunk, not per element: the valid elements' max and
    // sum of exponentials of each chunk, or the identity. Two selects per
    // element cost bf16 rows of 1048576 2.5% and f32 ones 1.2% (H200; the
    // bf16 kernel is near issue-bound, with up to 1.75 ex2 per element).
    auto max = [&](Value l, Value r) { return combine(Combiner::max, l, r); };
    auto sum = [&](Value l, Value r) { return combine(Combiner::sum, l, r); };
    auto chunkMax = [&](const Chunk &c) -> Value {
      return arith::SelectOp::create(
          b, c.valid, treeReduce<Value>(c.values, max), negInf());
    };
    Value mt = negInf();
    for (const Chunk &c : held)
      mt = max(mt, chunkMax(c));
    if (staged)
      waitForPhase(barrierAt(kStageBarriersName, constI32(0)), constI32(0));
    mt = forEachStaged({mt}, [&](const Chunk &c, ValueRange acc) {
           return SmallVector<Value>{max(acc[0], chunkMax(c))};
         }).front();
    // Exponents against the thread's max, or 0 when it is -inf (every
    // element -inf or masked) or NaN: -inf elements then give 0, not NaN,
    // and a NaN row stays NaN.
    Value zero = constF32(0.0);
    Value finite =
        arith::CmpFOp::create(b, arith::CmpFPredicate::ONE, mt, negInf());
    Value shift = arith::SelectOp::create(b, finite, mt, zero);
    auto chunkExps = [&](const Chunk &c) {
      SmallVector<Value> exps;
      for (Value v : c.values)
        exps.push_back(emitExp(arith::SubFOp::create(b, v, shift)));
      return exps;
    };
    auto chunkSum = [&](const Chunk &c, ArrayRef<Value> exps) -> Value {
      return arith::SelectOp::create(b, c.valid, treeReduce<Value>(exps, sum),
                                     zero);
    };
    SmallVector<SmallVector<Value>> exps;
    Value dt = zero;
    for (const Chunk &c : held) {
      exps.push_back(chunkExps(c));
      dt = sum(dt, chunkSum(c, exps.back()));
    }
    dt = forEachStaged({dt}, [&](const Chunk &c, ValueRange acc) {
           return SmallVector<Value>{sum(acc[0], chunkSum(c, chunkExps(c)))};
         }).front();
    auto [m, d] = reducePairInBlock(mt, dt);
    auto [rowMax, rowSum] = exchangeChunkPair(row, chunk, count, m, d);
    DenseMap<Value, Value> scalars = onlineScalars(rowMax, rowSum);
    RowContext ctx = prepareMap(scalars);
    if (isSoftmaxMap(group)) {
      // exp(x_i - m) / s = e_i * exp(m_t - m) / s: 0 when the thread's
      // elements are all -inf (e_i = 0 against the shift of 0, which the
      // scale must not blow up), NaN when the whole row is -inf (m = -inf,
      // s = 0), as torch's result.
      Value scale = arith::DivFOp::create(
          b, emitExp(arith::SubFOp::create(b, mt, rowMax)), rowSum);
      for (auto [c, values] : llvm::zip(held, exps)) {
        SmallVector<Value> outs;
        for (Value e : values)
          outs.push_back(arith::MulFOp::create(b, e, scale));
        storeChunk(yRow, c.col, c.valid, outs);
      }
    } else {
      emitMap(yRow, held, ctx);
    }
    forEachStaged({}, [&](const Chunk &c, ValueRange) {
      emitMap(yRow, c, ctx);
      return SmallVector<Value>();
    });
  }

  /// What forEachStreamed calls on each chunk: the values to carry on.
  using StreamBody =
      function_ref<SmallVector<Value>(const Chunk &, ValueRange)>;

  /// Calls `body` on each of this thread's chunks of the `elements` columns
  /// from `start` of the block's chunk: `vec` elements each, interleaved
  /// over the block's threads as loadBlock's, read from the stage when
  /// `staged` (which holds them from its start), else from the row at
  /// `xRow`; chunks past the row's end are masked. An scf.for over them, two
  /// per iteration (more would hold them all in registers), carries `inits`
  /// through `body`'s results; returns the last ones.
  SmallVector<Value> forEachStreamed(Value xRow, Value start, int64_t elements,
                                     int64_t vec, bool staged, ValueRange inits,
                                     StreamBody body) {
    int64_t stride = plan.numThreads() * vec;
    int64_t count = elements / stride;
    if (count == 0)
      return SmallVector<Value>(inits);
    int64_t unroll = count % 2 == 0 ? 2 : 1;
    Value firstLocal = arith::MulIOp::create(b, tid, constI32(vec));
    auto loop = scf::ForOp::create(b, constI32(0), constI32(count * stride),
                                   constI32(unroll * stride), inits);
    // LLVM would unroll the loop fully; kept a loop, the chunks pass through
    // two sets of registers.
    loop->setAttr(
        "loop_annotation",
        LLVM::LoopAnnotationAttr::get(
            b.getContext(), {}, {}, {},
            LLVM::LoopUnrollAttr::get(b.getContext(), b.getBoolAttr(true), {},
                                      {}, {}, {}, {}, {}),
            {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}));
    OpBuilder::InsertionGuard guard(b);
    if (inits.empty())
      b.setInsertionPoint(loop.getBody()->getTerminator());
    else
      b.setInsertionPointToStart(loop.getBody());
    SmallVector<Value> acc(loop.getRegionIterArgs());
    for (int64_t u = 0; u < unroll; ++u) {
      Value local = arith::AddIOp::create(
          b, arith::AddIOp::create(b, firstLocal, loop.getInductionVar()),
          constI32(u * stride));
      Value col = arith::AddIOp::create(b, start, local);
      Value valid =
          wholeChunk
              ? arith::ConstantIntOp::create(b, 1, 1).getResult()
              : arith::CmpIOp::create(b, arith::CmpIPredicate::slt, col, cols)
                    .getResult();
      Chunk c = staged ? loadChunk(stage, col, valid, vec, local)
                       : loadChunk(xRow, col, valid, vec);
      acc = body(c, acc);
    }
    if (!inits.empty())
      scf::YieldOp::create(b, acc);
    return SmallVector<Value>(loop.getResults());
  }

  /// Thread 0 arms the stage's mbarrier for the part of the staged columns
  /// [stageStart, stageStart + chunkStaged) inside the row and copies it
  /// into the stage with one cp.async.bulk; none when that part is empty,
  /// and the arrival alone completes the phase. Vector path only: the part
  /// is whole 16-byte vectors from a 16-byte aligned address.
  void bulkCopyChunkStage(Value xRow, Value stageStart) {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(emitIfFirstThread());
    Value end = arith::MinSIOp::create(
        b, cols,
        arith::AddIOp::create(b, stageStart, constI32(plan.chunkStaged)));
    Value elements = arith::MaxSIOp::create(
        b, arith::SubIOp::create(b, end, stageStart), constI32(0));
    Value bytes =
        arith::MulIOp::create(b, elements, constI32(byteWidth(plan.inType)));
    bulkCopyToShared(
        barrierAt(kStageBarriersName, constI32(0)), bytes,
        [&] {
          return LLVM::GEPOp::create(b, x.getType(), plan.inType, xRow,
                                     ValueRange{stageStart},
                                     LLVM::GEPNoWrapFlags::inbounds);
        },
        [&] { return stage; }, /*l2Hint=*/Value());
  }

  /// The row's (max, sum) pair, in every thread, from the block's pair (m,
  /// d) of chunk `chunk` (i32) of the row's `count`, through row `row`'s
  /// record in the workspace (docs/abi.md: a counter, then `count` pairs
  /// from byte 128):
  ///
  /// * thread 0 stores (m, d) into the chunk's entry and adds one to the
  ///   counter (release: a fence and a relaxed add, as publishSplitPair);
  /// * every lane of warp 0 polls the counter with acquire loads (each
  ///   lane's reads of the entries then follow its own acquire) until all
  ///   the row's chunks have arrived (or traps after
  ///   kChunkWaitLimitNanoseconds: a launch whose rows have more chunks
  ///   than resident blocks would otherwise hang), the lanes fold the
  ///   entries and lane 0 hands the pair to the block through shared
  ///   memory;
  /// * lane 0 then counts the block out on the same counter: the last of
  ///   the row's `count` arrivals and `count` departures clears the row's
  ///   record, so that each launch leaves the workspace as it found it.
  std::pair<Value, Value> exchangeChunkPair(Value row, Value chunk, Value count,
                                            Value m, Value d) {
    // Row r's record starts 128 + r x (128 + alignTo(8 x count, 128)) bytes
    // into the workspace: no two rows share a 128-byte line.
    Value entryBytes = arith::AndIOp::create(
        b,
        arith::AddIOp::create(b, arith::MulIOp::create(b, count, constI32(8)),
                              constI32(127)),
        constI32(-128));
    Value recordBytes = arith::AddIOp::create(
        b, arith::ExtUIOp::create(b, i64, entryBytes), constI64(128));
    Value counter = LLVM::GEPOp::create(
        b, workspace.getType(), b.getI8Type(), workspace,
        ValueRange{arith::AddIOp::create(
            b, constI64(128), arith::MulIOp::create(b, row, recordBytes))});
    Value entries = LLVM::GEPOp::create(b, workspace.getType(), b.getI8Type(),
                                        counter, ValueRange{constI64(128)});
    auto entry = [&](Value index) {
      return LLVM::GEPOp::create(b, workspace.getType(), i64, entries,
                                 ValueRange{index});
    };
    auto pairType = VectorType::get({2}, f32);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(emitIfFirstThread());
      publishPair(
          m, d, [&] { return entry(chunk); }, [&] { return counter; });
    }
    Value pairSlotIndex = constIndex(KernelPlan::kRowPairSlot);
    Value sumSlotIndex = constIndex(KernelPlan::kRowPairSlot + 1);
    Value first = constIndex(0);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(emitIfThen(isWarp0()));
      {
        OpBuilder::InsertionGuard inner(b);
        Value waitStart = NVVM::GlobalTimerOp::create(b, i64);
        auto poll = scf::WhileOp::create(b, TypeRange(), ValueRange());
        b.setInsertionPointToStart(b.createBlock(&poll.getBefore()));
        Value arrived =
            atomicLoad(i32, counter, 4, LLVM::AtomicOrdering::acquire);
        scf::ConditionOp::create(
            b,
            arith::CmpIOp::create(b, arith::CmpIPredicate::ult, arrived, count),
            ValueRange());
        b.setInsertionPointToStart(b.createBlock(&poll.getAfter()));
        NVVM::NanosleepOp::create(b, constI32(kChunkPollNanoseconds));
        Value waited = arith::SubIOp::create(
            b, NVVM::GlobalTimerOp::create(b, i64), waitStart);
        {
          OpBuilder::InsertionGuard trap(b);
          b.setInsertionPointToStart(emitIfThen(
              arith::CmpIOp::create(b, arith::CmpIPredicate::ugt, waited,
                                    constI64(kChunkWaitLimitNanoseconds))));
          LLVM::Trap::create(b);
        }
        scf::YieldOp::create(b);
      }
      auto fold = scf::ForOp::create(b, lane, count, constI32(32),
                                     ValueRange{negInf(), constF32(0.0)});
      {
        OpBuilder::InsertionGuard inner(b);
        b.setInsertionPointToStart(fold.getBody());
        Value pair = LLVM::BitcastOp::create(
            b, pairType,
            atomicLoad(i64, entry(fold.getInductionVar()), 8,
                       LLVM::AtomicOrdering::monotonic));
        Value em = LLVM::ExtractElementOp::create(b, pair, constI32(0));
        Value ed = LLVM::ExtractElementOp::create(b, pair, constI32(1));
        Value fm = fold.getRegionIterArgs()[0];
        Value fd = fold.getRegionIterArgs()[1];
        Value mAll = combine(Combiner::max, fm, em);
        scf::YieldOp::create(
            b, ValueRange{mAll, arith::AddFOp::create(b, rescale(fm, fd, mAll),
                                                      rescale(em, ed, mAll))});
      }
      auto [rowMax, rowSum] =
          butterflyPair(fold.getResult(0), fold.getResult(1), 32);
      Value isLane0 =
          arith::CmpIOp::create(b, arith::CmpIPredicate::eq, lane, constI32(0));
      auto leave = scf::IfOp::create(b, i32, isLane0, /*withElseRegion=*/true);
      {
        OpBuilder::InsertionGuard inner(b);
        b.setInsertionPointToStart(&leave.getThenRegion().front());
        memref::StoreOp::create(b, rowMax, shared,
                                ValueRange{pairSlotIndex, first});
        memref::StoreOp::create(b, rowSum, shared,
                                ValueRange{sumSlotIndex, first});
        // A relaxed add with no fence ahead of it: the lanes' loads of the
        // entries have returned (the butterfly above consumed them) before
        // it issues, and a fence here would hold the whole block for the
        // device's outstanding traffic (it cost 5-11% on rows of 1048576).
        scf::YieldOp::create(b, LLVM::AtomicRMWOp::create(
                                    b, LLVM::AtomicBinOp::add, counter,
                                    constI32(1),
                                    LLVM::AtomicOrdering::monotonic, "device")
                                    .getResult());
        b.setInsertionPointToStart(&leave.getElseRegion().front());
        scf::YieldOp::create(b, constI32(0));
      }
      Value before = gpu::ShuffleOp::create(b, leave.getResult(0), 0, 32,
                                            gpu::ShuffleMode::IDX)
                         .getShuffleResult();
      Value last = arith::CmpIOp::create(
          b, arith::CmpIPredicate::eq, before,
          arith::SubIOp::create(b, arith::MulIOp::create(b, count, constI32(2)),
                                constI32(1)));
      // The row's last block out zeroes its entries and its counter, so
      // that the whole workspace is zero again for the next launch, whatever
      // its shape (a row's record moves with the chunks per row).
      b.setInsertionPointToStart(emitIfThen(last));
      LLVM::FenceOp::create(b, LLVM::AtomicOrdering::acq_rel, "device");
      auto clear = scf::ForOp::create(b, lane, count, constI32(32));
      {
        OpBuilder::InsertionGuard inner(b);
        b.setInsertionPoint(clear.getBody()->getTerminator());
        LLVM::StoreOp::create(b, constI64(0), entry(clear.getInductionVar()),
                              /*alignment=*/8);
      }
      b.setInsertionPointToStart(emitIfThen(isLane0));
      LLVM::StoreOp::create(b, constI32(0), counter, /*alignment=*/4);
    }
    gpu::BarrierOp::create(b);
    return {memref::LoadOp::create(b, shared, ValueRange{pairSlotIndex, first}),
            memref::LoadOp::create(b, shared, ValueRange{sumSlotIndex, first})};
  }

  ImplicitLocOpBuilder &b;
  Group group;
  const KernelPlan &plan;
  Value x, y, rows, cols, xStride, yStride, shared;
  /// The prefetch stage (`!llvm.ptr<3>`), with prefetch or kept tiles; in
  /// the row loop with keep-ahead=bulk, the row's buffer of it.
  Value stage;
  /// The start of the stage, with a stage.
  Value stageBase;
  /// In the row loop with keep-ahead=bulk: the row's stage buffer (0 or 1,
  /// i32) and the parity of the phase of its mbarrier that the row's copy
  /// completes.
  Value bulkBuffer, bulkParity;
  Value tid, lane, warp;
  /// Thread index among the threads of its row (tid with one row per block).
  Value rowTid;
  /// Row group of this thread within the block (several rows per block).
  Value rowInBlock;
  /// Rank of this block in its cluster, and the first column of its slice.
  Value clusterRank, sliceStart;
  /// Rank of this block among the blocks sharing its row (its cluster's or
  /// its split group's).
  Value shareRank;
  /// Row-split: the workspace (`!llvm.ptr<1>`), this block's split group
  /// and the number of whole groups in the grid (i32), and in the row loop
  /// the group's row count so far (i32).
  Value workspace, splitGroup, splitGroups, splitRowIndex;
  /// In the row loop with clusters: the buffer (0 or 1, i32) of this row's
  /// cluster exchanges when a row has only one, and the parity of the
  /// mbarrier phase they complete.
  Value clusterBuffer, clusterParity;
  /// In the row loop with KernelPlan::alternatesSlots: the first shared slot
  /// (index) of this row's block exchange of the pair; null otherwise.
  Value pairSlot;
  /// The cluster exchanges of a row on the path being emitted.
  KernelPlan::ClusterExchanges rowExchanges;
  /// L2 eviction policies (cache-hints): evict-last and evict-first, from
  /// createpolicy at the top of the kernel; null without the hints.
  Value evictLast, evictFirst;
  /// The policy that global 16-byte loads and stores take while a pass of
  /// the online kernel is emitted; null for plain accesses.
  Value loadPolicy, storePolicy;
  /// Whether the row path being emitted reduces the (max, sum) pair
  /// (KernelPlan::pairReduce, except on the peeled path of
  /// peeledWithoutPair).
  bool pairRow = false;
  /// Whether the row path being emitted copies the kept tiles in ahead
  /// (KernelPlan::keepAhead, on the aligned vector path only).
  bool keepAheadRow = false;
  /// With keepAheadRow, the next row of the block (i64), whose kept tiles
  /// pass 2 copies into the stage.
  Value keepAheadNextRow;
  /// Whether this thread's row exists, in the row loop with several rows per
  /// block; null otherwise.
  Value rowValid;
  /// Chunks: whether the chunk being emitted lies inside the row, so that
  /// its accesses need no masks.
  bool wholeChunk = false;
  FloatType f32;
  Type i32, i64;
  /// `!llvm.ptr<3>`: shared memory.
  LLVM::LLVMPointerType sharedPtr;
};

//===----------------------------------------------------------------------===//
// Host side
//===----------------------------------------------------------------------===//

/// Returns a `!llvm.ptr<1>` to the first element of `memref`.
static Value hostPointer(ImplicitLocOpBuilder &b, Value memref) {
  auto type = cast<MemRefType>(memref.getType());
  auto md = memref::ExtractStridedMetadataOp::create(b, memref);
  Value base =
      memref::ExtractAlignedPointerAsIndexOp::create(b, md.getBaseBuffer());
  Value offsetBytes = arith::MulIOp::create(
      b, md.getOffset(),
      arith::ConstantIndexOp::create(b, byteWidth(type.getElementType())));
  Value addr = arith::IndexCastOp::create(
      b, b.getI64Type(), arith::AddIOp::create(b, base, offsetBytes));
  return LLVM::IntToPtrOp::create(
      b, LLVM::LLVMPointerType::get(b.getContext(), 1), addr);
}

/// Returns the stride of dimension 0 of `memref`, as i64.
static Value rowStride(ImplicitLocOpBuilder &b, Value memref) {
  auto md = memref::ExtractStridedMetadataOp::create(b, memref);
  return arith::IndexCastOp::create(b, b.getI64Type(), md.getStrides()[0]);
}

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
  if (plan.strategy == Strategy::Chunks)
    return "chunks";
  return plan.gridPerRowGroup ? "rows" : "persistent";
}

/// The launch metadata recorded for a kernel (docs/abi.md).
static DictionaryAttr kernelMetadata(Builder &b, Group &group,
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
  SmallVector<NamedAttribute> attrs = {
      b.getNamedAttr("op", b.getStringAttr(origin)),
      b.getNamedAttr("strategy", b.getStringAttr(stringify(plan.strategy))),
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
                     b.getI64IntegerAttr(plan.dynamicSharedBytes())),
      b.getNamedAttr("min_cols", b.getI64IntegerAttr(1)),
      b.getNamedAttr("max_cols", b.getI64IntegerAttr(plan.maxCols)),
      b.getNamedAttr("reverse_second_pass",
                     b.getBoolAttr(plan.strategy == Strategy::Online &&
                                   plan.reverseSecondPass)),
      b.getNamedAttr("fast_exp", b.getBoolAttr(plan.fastExp)),
      b.getNamedAttr("prefetch", b.getStringAttr(prefetchKind(plan))),
      b.getNamedAttr("peeled_path", b.getBoolAttr(plan.peelable())),
      b.getNamedAttr("pair_reduce", b.getBoolAttr(plan.pairReduce)),
      b.getNamedAttr("l2_hints", b.getBoolAttr(plan.cacheHints)),
      b.getNamedAttr("keep_ahead", b.getBoolAttr(plan.keepAhead)),
      b.getNamedAttr("keep_ahead_bulk", b.getBoolAttr(plan.bulkKeep)),
      b.getNamedAttr("grid", b.getStringAttr(gridKind(plan))),
      b.getNamedAttr("chunk_elements",
                     b.getI64IntegerAttr(plan.strategy == Strategy::Chunks
                                             ? plan.chunkElements()
                                             : 0)),
      b.getNamedAttr("row_split", b.getI64IntegerAttr(plan.splitSize)),
      b.getNamedAttr("split_ahead", b.getI64IntegerAttr(plan.splitAhead)),
      b.getNamedAttr("workspace_bytes_per_group",
                     b.getI64IntegerAttr(plan.workspaceBytesPerGroup())),
  };
  return b.getDictionaryAttr(attrs);
}

//===----------------------------------------------------------------------===//
// Pass
//===----------------------------------------------------------------------===//

struct ConvertRowRedToGPUPass
    : rowred::impl::ConvertRowRedToGPUBase<ConvertRowRedToGPUPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    // The high-level ops must be decomposed first.
    WalkResult undecomposed = module.walk([](Operation *op) {
      if (isa<SoftmaxOp, LogSoftmaxOp>(op)) {
        op->emitOpError() << "must be decomposed before the GPU lowering "
                             "(run --rowred-decompose first)";
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    if (undecomposed.wasInterrupted())
      return signalPassFailure();

    PlanOptions opts{
        strategy,          cols,        blockSize,      numWarps,
        rowsPerBlock,      clusterSize, vectorWidth,    maxElementsPerThread,
        reverseSecondPass, fastExp,     scalarFallback, chip,
        prefetch,          pairReduce,  onlineKeep,     keepAhead,
        cacheHints,        rowSplit,    splitAhead,     grid,
        chunkStage};
    SmallVector<MapOp> maps;
    module.walk([&](MapOp map) { maps.push_back(map); });

    SmallVector<NamedAttribute> kernels;
    if (auto existing = module->getAttrOfType<DictionaryAttr>(kKernelsAttrName))
      llvm::append_range(kernels, existing.getValue());
    SymbolTable symbols(module);
    for (MapOp map : maps) {
      FailureOr<Group> group = collectGroup(map);
      if (failed(group))
        return signalPassFailure();
      FailureOr<KernelPlan> plan = planKernel(*group, opts);
      if (failed(plan))
        return signalPassFailure();
      std::string name = kernelName(map);
      lowerGroup(*group, *plan, name, symbols);
      Builder builder(&getContext());
      kernels.push_back(
          builder.getNamedAttr(name, kernelMetadata(builder, *group, *plan)));
      eraseGroup(*group);
    }
    // Reduces whose results no map consumes have no kernel yet.
    WalkResult leftover = module.walk([](ReduceOp reduce) {
      reduce.emitOpError() << "is not consumed by a rowred.map; only "
                              "reduce chains that feed a map are lowered";
      return WalkResult::interrupt();
    });
    if (leftover.wasInterrupted())
      return signalPassFailure();
    if (!kernels.empty()) {
      module->setAttr(kKernelsAttrName,
                      DictionaryAttr::get(&getContext(), kernels));
      module->setAttr(gpu::GPUDialect::getContainerModuleAttrName(),
                      UnitAttr::get(&getContext()));
    }
  }

  /// `<function>_kernel<N>`, unique in the module.
  std::string kernelName(MapOp map) {
    std::string prefix = "kernel";
    if (auto func = map->getParentOfType<FunctionOpInterface>())
      prefix = (func.getName() + "_kernel").str();
    return prefix + std::to_string(counter++);
  }

  /// Builds the kernel for `group` and launches it in place of the group.
  void lowerGroup(Group &group, const KernelPlan &plan, StringRef name,
                  SymbolTable &symbols) {
    MLIRContext *ctx = &getContext();
    ModuleOp module = getOperation();
    Location loc = group.map.getLoc();
    ImplicitLocOpBuilder b(loc, ctx);

    // Kernel.
    b.setInsertionPointToEnd(module.getBody());
    auto gpuModule = gpu::GPUModuleOp::create(b, name);
    symbols.insert(gpuModule);
    b.setInsertionPointToStart(gpuModule.getBody());
    auto ptr = LLVM::LLVMPointerType::get(ctx, 1);
    Type i64 = b.getI64Type();
    SmallVector<Type> params = {ptr, ptr, i64, i64, i64, i64};
    // Row-split and chunks kernels also take their workspace.
    if (plan.splitSize > 1 || plan.strategy == Strategy::Chunks)
      params.push_back(ptr);
    auto funcType = FunctionType::get(ctx, params, {});
    SmallVector<Type> workgroup;
    if (plan.sharedSlots(group.reduces.size()) > 0)
      workgroup.push_back(MemRefType::get(
          {plan.sharedSlots(group.reduces.size()), plan.numWarps},
          b.getF32Type(), MemRefLayoutAttrInterface(),
          gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup)));
    if (plan.clusterSize > 1)
      LLVM::GlobalOp::create(
          b,
          LLVM::LLVMArrayType::get(b.getF32Type(),
                                   plan.clusterSlots(group.reduces.size())),
          /*isConstant=*/false, LLVM::Linkage::Internal, kClusterSlotsName,
          Attribute(), /*alignment=*/4, /*addrSpace=*/3);
    if (plan.clusterSize > 1)
      LLVM::GlobalOp::create(
          b,
          LLVM::LLVMArrayType::get(b.getI64Type(),
                                   plan.clusterBarriers(group.reduces.size())),
          /*isConstant=*/false, LLVM::Linkage::Internal, kClusterBarriersName,
          Attribute(), /*alignment=*/8, /*addrSpace=*/3);
    if (plan.bulkKeep || (plan.strategy == Strategy::Chunks && plan.hasStage()))
      LLVM::GlobalOp::create(
          b, LLVM::LLVMArrayType::get(b.getI64Type(), plan.bulkKeep ? 2 : 1),
          /*isConstant=*/false, LLVM::Linkage::Internal, kStageBarriersName,
          Attribute(), /*alignment=*/8,
          /*addrSpace=*/3);
    if (plan.hasStage())
      LLVM::GlobalOp::create(b, LLVM::LLVMArrayType::get(b.getI8Type(), 0),
                             /*isConstant=*/false, LLVM::Linkage::External,
                             kStageName, Attribute(), /*alignment=*/16,
                             /*addrSpace=*/3);
    auto func = gpu::GPUFuncOp::create(b, name, funcType, workgroup);
    func->setAttr(gpu::GPUDialect::getKernelFuncAttrName(), b.getUnitAttr());
    if (plan.clusterSize > 1)
      func->setAttr(NVVM::NVVMDialect::getClusterDimAttrName(),
                    b.getDenseI32ArrayAttr(
                        {static_cast<int32_t>(plan.clusterSize), 1, 1}));
    if (int64_t blocks = minBlocksPerSM(plan))
      func->setAttr(NVVM::NVVMDialect::getMinctasmAttrName(),
                    b.getI32IntegerAttr(blocks));
    func.setKnownBlockSizeAttr(b.getDenseI32ArrayAttr(
        {static_cast<int32_t>(plan.numThreads()), 1, 1}));
    b.setInsertionPointToStart(&func.getBody().front());
    KernelEmitter(b, group, plan, func).emit();
    gpu::ReturnOp::create(b);

    // Host launch, guarded against empty inputs (a zero-sized grid is a
    // launch error).
    b.setInsertionPoint(group.map);
    Value input = group.map.getInput(), output = group.map.getOutput();
    Value rowsIdx = memref::DimOp::create(b, input, 0);
    Value colsIdx = memref::DimOp::create(b, input, 1);
    Value zero = arith::ConstantIndexOp::create(b, 0);
    Value nonEmpty = arith::AndIOp::create(
        b, arith::CmpIOp::create(b, arith::CmpIPredicate::sgt, rowsIdx, zero),
        arith::CmpIOp::create(b, arith::CmpIPredicate::sgt, colsIdx, zero));
    auto ifOp = scf::IfOp::create(b, nonEmpty, /*withElseRegion=*/false);
    b.setInsertionPointToStart(&ifOp.getThenRegion().front());
    SmallVector<Value> args = {hostPointer(b, input),
                               hostPointer(b, output),
                               arith::IndexCastOp::create(b, i64, rowsIdx),
                               arith::IndexCastOp::create(b, i64, colsIdx),
                               rowStride(b, input),
                               rowStride(b, output)};
    // One block per group of rows, or one cluster per row.
    Value one = arith::ConstantIndexOp::create(b, 1);
    Value threads = arith::ConstantIndexOp::create(b, plan.numThreads());
    Value blocks = rowsIdx;
    std::optional<gpu::KernelDim3> cluster;
    if (plan.rowsPerBlock > 1)
      blocks = arith::CeilDivUIOp::create(
          b, rowsIdx, arith::ConstantIndexOp::create(b, plan.rowsPerBlock));
    if (plan.clusterSize > 1) {
      Value size = arith::ConstantIndexOp::create(b, plan.clusterSize);
      blocks = arith::MulIOp::create(b, rowsIdx, size);
      cluster = gpu::KernelDim3{size, one, one};
    }
    // A row-split kernel: one split group, which walks all the rows, with a
    // zeroed workspace of its own. Its blocks must all be resident; a
    // single group of at most one block per SM is, on an otherwise idle
    // device (launchers that know the device launch cooperatively, with as
    // many groups as fit: docs/abi.md).
    Value workspace;
    if (plan.splitSize > 1) {
      blocks = arith::ConstantIndexOp::create(b, plan.splitSize);
      workspace =
          gpu::AllocOp::create(
              b,
              MemRefType::get({plan.workspaceBytesPerGroup() / 4},
                              b.getI32Type()),
              /*asyncToken=*/Type(), ValueRange(), ValueRange(), ValueRange())
              .getMemref();
      gpu::MemsetOp::create(b, /*asyncToken=*/Type(), ValueRange(), workspace,
                            arith::ConstantIntOp::create(b, 0, 32));
      args.push_back(hostPointer(b, workspace));
    }
    // A chunks kernel: one block per chunk of every row, and a zeroed
    // workspace: the ticket's 128 bytes, then per row 128 bytes of counter
    // and its chunks' pairs, 128-byte aligned (docs/abi.md).
    if (plan.strategy == Strategy::Chunks) {
      Value chunks = arith::CeilDivUIOp::create(
          b, colsIdx, arith::ConstantIndexOp::create(b, plan.chunkElements()));
      blocks = arith::MulIOp::create(b, rowsIdx, chunks);
      Value entryWords = arith::MulIOp::create(
          b,
          arith::CeilDivUIOp::create(
              b,
              arith::MulIOp::create(b, chunks,
                                    arith::ConstantIndexOp::create(b, 8)),
              arith::ConstantIndexOp::create(b, 128)),
          arith::ConstantIndexOp::create(b, 32));
      Value recordWords = arith::AddIOp::create(
          b, entryWords, arith::ConstantIndexOp::create(b, 32));
      Value words =
          arith::AddIOp::create(b, arith::ConstantIndexOp::create(b, 32),
                                arith::MulIOp::create(b, rowsIdx, recordWords));
      workspace =
          gpu::AllocOp::create(
              b, MemRefType::get({ShapedType::kDynamic}, b.getI32Type()),
              /*asyncToken=*/Type(), ValueRange(), ValueRange{words},
              ValueRange())
              .getMemref();
      gpu::MemsetOp::create(b, /*asyncToken=*/Type(), ValueRange(), workspace,
                            arith::ConstantIntOp::create(b, 0, 32));
      args.push_back(hostPointer(b, workspace));
    }
    gpu::LaunchFuncOp::create(
        b, func, gpu::KernelDim3{blocks, one, one},
        gpu::KernelDim3{threads, one, one},
        /*dynamicSharedMemorySize=*/
        plan.hasStage()
            ? arith::ConstantIntOp::create(b, plan.dynamicSharedBytes(), 32)
            : Value(),
        args,
        /*asyncTokenType=*/nullptr,
        /*asyncDependencies=*/{}, cluster);
    if (workspace)
      gpu::DeallocOp::create(b, /*asyncToken=*/Type(), ValueRange(), workspace);
  }

  /// Erases the group's ops and its row-scalar buffers.
  void eraseGroup(Group &group) {
    group.map->erase();
    for (ReduceOp reduce : llvm::reverse(group.reduces))
      reduce->erase();
    for (Operation *op : group.deallocs)
      op->erase();
    for (Operation *op : group.allocs)
      op->erase();
  }

  unsigned counter = 0;
};

} // namespace
