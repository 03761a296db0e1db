//===- Pipelines.h - From the rowred dialect to PTX -------------*- C++ -*-===//
//
// Part of the softmax kernel compiler.
//
//===----------------------------------------------------------------------===//

#ifndef ROWRED_PIPELINES_PIPELINES_H
#define ROWRED_PIPELINES_PIPELINES_H

#include "mlir/Pass/PassOptions.h"

namespace mlir {
class DialectRegistry;
class OpPassManager;
namespace rowred {

/// Options of the `rowred-to-ptx` pipeline: those of convert-rowred-to-gpu,
/// the target chip, and where to write the PTX and metadata.
struct RowRedToPTXOptions : public PassPipelineOptions<RowRedToPTXOptions> {
  PassOptions::Option<std::string> strategy{
      *this, "strategy", llvm::cl::desc("fused | cluster | online | auto"),
      llvm::cl::init("auto")};
  PassOptions::Option<int64_t> cols{
      *this, "cols",
      llvm::cl::desc("Columns the kernel is compiled for (0: unknown)"),
      llvm::cl::init(0)};
  PassOptions::Option<int64_t> blockSize{
      *this, "block-size",
      llvm::cl::desc(
          "Elements per block, a power of two or three times one (0: "
          "derived)"),
      llvm::cl::init(0)};
  PassOptions::Option<int64_t> numWarps{
      *this, "num-warps", llvm::cl::desc("Warps per block (0: derived)"),
      llvm::cl::init(0)};
  PassOptions::Option<int64_t> vectorWidth{
      *this, "vector-width",
      llvm::cl::desc("Elements per vector access (0: 16 bytes)"),
      llvm::cl::init(0)};
  PassOptions::Option<int64_t> rowsPerBlock{
      *this, "rows-per-block",
      llvm::cl::desc("Fused: rows per block, each by <= 32 threads (0: "
                     "derived)"),
      llvm::cl::init(0)};
  PassOptions::Option<int64_t> clusterSize{
      *this, "cluster-size",
      llvm::cl::desc("Cluster and online: blocks sharing one row, 2 to 16; "
                     "1: no cluster (online); 0: derived"),
      llvm::cl::init(0)};
  PassOptions::Option<bool> reverseSecondPass{
      *this, "reverse-second-pass",
      llvm::cl::desc("Online: second pass from the last tile"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> fastExp{
      *this, "fast-exp", llvm::cl::desc("ex2.approx and per-row reciprocal"),
      llvm::cl::init(true)};
  PassOptions::Option<std::string> scalarFallback{
      *this, "scalar-fallback",
      llvm::cl::desc("Fused, unaligned rows: registers | reread | auto"),
      llvm::cl::init("auto")};
  PassOptions::Option<std::string> prefetch{
      *this, "prefetch",
      llvm::cl::desc("Fused, cluster: fetch the next row during the current "
                     "one, into shared memory (on) or registers; online "
                     "with a known row length: stage each block's share "
                     "(on): on | registers | off | auto"),
      llvm::cl::init("auto")};
  PassOptions::Option<std::string> pairReduce{
      *this, "pair-reduce",
      llvm::cl::desc("Fused, cluster: one (max, sum) exchange per row: on "
                     "(1) | off (0) | auto (16-bit cluster slices)"),
      llvm::cl::init("auto")};
  PassOptions::Option<int64_t> onlineKeep{
      *this, "online-keep",
      llvm::cl::desc("Online: KiB of each block's share kept in shared "
                     "memory for pass 2 (0: none, -1: auto: over clusters "
                     "of 16, 3/8 of the share with keep-ahead for f16 rows "
                     "and f32 rows from 8 MiB; with keep-ahead=bulk, one "
                     "tile for f32 rows of 2 to under 8 MiB and three of "
                     "four for bf16 rows of 2 MiB)"),
      llvm::cl::init(-1)};
  PassOptions::Option<std::string> keepAhead{
      *this, "keep-ahead",
      llvm::cl::desc("Online, with online-keep: copy the kept tiles in "
                     "ahead: on (cp.async by each thread during the "
                     "previous row's second pass) | bulk (sm_90+: one "
                     "cp.async.bulk per row into two buffers by turns) | "
                     "off | auto (with auto's kept tiles)"),
      llvm::cl::init("auto")};
  PassOptions::Option<std::string> cacheHints{
      *this, "cache-hints",
      llvm::cl::desc("Online: L2 eviction hints, evict-last for pass 1 and "
                     "evict-first for pass 2 and the stores: on | off | auto "
                     "(pass 2 from global memory, not f32 over clusters "
                     "of 8)"),
      llvm::cl::init("auto")};
  PassOptions::Option<std::string> grid{
      *this, "grid",
      llvm::cl::desc("Programs the launcher starts: persistent (those "
                     "resident at once, looping over rows), rows (one per "
                     "row group) or auto (rows for fused f32 blocks of a "
                     "row and 16-bit ones of 4096-16384, or larger on <= "
                     "512 threads, and 16-bit staged rows)"),
      llvm::cl::init("auto")};
  PassOptions::Option<int64_t> chunkStage{
      *this, "chunk-stage",
      llvm::cl::desc("Chunks: elements of each chunk bulk-copied into "
                     "shared memory after the block-size in registers (-1: "
                     "64 per thread for f32, 96 for 16-bit types)"),
      llvm::cl::init(-1)};
  PassOptions::Option<int64_t> maxElementsPerThread{
      *this, "max-elements-per-thread",
      llvm::cl::desc("Fused: largest row share one thread keeps in registers "
                     "(auto's f32 block of 8192 and its 16-bit block of "
                     "16384 with one block per row are exempt)"),
      llvm::cl::init(32)};
  PassOptions::Option<std::string> chip{
      *this, "chip", llvm::cl::desc("Target chip (sm_80, sm_90, ...)"),
      llvm::cl::init("sm_90")};
  PassOptions::Option<std::string> cudaPath{
      *this, "cuda-path",
      llvm::cl::desc("CUDA toolkit, for libdevice when fast-exp=0"),
      llvm::cl::init("/usr/local/cuda")};
  PassOptions::Option<std::string> outputDir{
      *this, "output-dir",
      llvm::cl::desc("Write <kernel>.ptx and <kernel>.json here (empty: "
                     "do not write files)"),
      llvm::cl::init("")};
};

/// Adds the passes from the rowred dialect to `gpu.binary` ops holding PTX
/// (and, with an output directory, to files).
void buildRowRedToPTXPipeline(OpPassManager &pm,
                              const RowRedToPTXOptions &options);

/// Registers `rowred-to-ptx` with the pass pipeline registry.
void registerRowRedPipelines();

/// Adds to `registry` what the pipeline needs beyond the dialects it names:
/// the LLVM IR translations and the lowering-to-LLVM interfaces.
void registerRowRedPipelineExtensions(DialectRegistry &registry);

} // namespace rowred
} // namespace mlir

#endif // ROWRED_PIPELINES_PIPELINES_H
