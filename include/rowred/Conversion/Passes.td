//===- Passes.td - RowRed conversion passes ----------------*- tablegen -*-===//
//
// Part of the softmax kernel compiler.
//
//===----------------------------------------------------------------------===//

#ifndef ROWRED_CONVERSION_PASSES
#define ROWRED_CONVERSION_PASSES

include "mlir/Pass/PassBase.td"

def RowRedPlan : Pass<"rowred-plan", "::mlir::ModuleOp"> {
  let summary = "Choose the kernel plan of every rowred.map group";
  let description = [{
    Attaches a `#rowred.plan` (as the `rowred.plan` attribute) to every
    `rowred.map` that has none: the strategy, block shape, vector width,
    memory paths and launch shape of the kernel `convert-rowred-to-gpu` will
    make of the map and the reduces that feed it. With `strategy=auto` the
    plan is chosen from the element types, the row length (`cols`, or the
    input type) and the `chip`, by the rules measured on an H200 that
    `docs/kernels.md` describes; the other options override single choices.
    A plan already on a map (written in the input) is kept, and verified
    like a chosen one.

    Example: `--rowred-plan=cols=4096` on the decomposed softmax of f32
    rows gives its map

    ```mlir
    {rowred.plan = #rowred.plan<strategy = fused, block = 4096, warps = 4,
                                vector = 4, max_cols = 4096,
                                stage_elements = 4096, grid = rows>}
    ```
  }];
  let options = [
    Option<"strategy", "strategy", "std::string", /*default=*/"\"auto\"",
           "Kernel strategy: fused | cluster | online | chunks | auto "
           "(chunks: each block takes the next chunk of block-size + "
           "chunk-stage elements of a row by atomic ticket and meets the "
           "row's other chunks through a global-memory workspace; auto: "
           "fused when the "
           "row fits in one block's registers, cluster when it fits in a "
           "cluster's, else online; on sm_90+, 16-bit rows of 8193 to "
           "57344 elements, a multiple of 8, are online on a block per row "
           "with the whole row staged in shared memory)">,
    Option<"cols", "cols", "int64_t", /*default=*/"0",
           "Number of columns the kernel is compiled for, when the input "
           "type does not say it (0: unknown)">,
    Option<"blockSize", "block-size", "int64_t", /*default=*/"0",
           "Elements per block: a power of two or three times one, >= cols "
           "for fused and cluster; the tile for online, a power of two (0: "
           "derived)">,
    Option<"numWarps", "num-warps", "int64_t", /*default=*/"0",
           "Warps per block, 1 to 32, a power of two or three times one (0: "
           "derived from the block size)">,
    Option<"vectorWidth", "vector-width", "int64_t", /*default=*/"0",
           "Elements per vector access, a power of two (0: 16 bytes; 1: "
           "scalar only)">,
    Option<"rowsPerBlock", "rows-per-block", "int64_t", /*default=*/"0",
           "Fused: rows a block works on at once, each by a group of at most "
           "32 threads with no barrier (0: derived; 4 for rows of up to "
           "1024 elements)">,
    Option<"clusterSize", "cluster-size", "int64_t", /*default=*/"0",
           "Cluster and online: blocks of a thread-block cluster that "
           "share one row, 2 to 8, or 16 where the launcher allows "
           "non-portable clusters; 1: no cluster (online); 0: derived (for "
           "online with a known row length on sm_90+, 8 up to 1 MiB rows "
           "and 16 beyond, else none)">,
    Option<"chip", "chip", "std::string", /*default=*/"\"sm_90\"",
           "Target chip; auto picks clusters only on sm_90 and newer">,
    Option<"reverseSecondPass", "reverse-second-pass", "bool",
           /*default=*/"true",
           "Online: walk the second pass from the last tile to the first, "
           "whose tiles are the most likely to still be in cache">,
    Option<"scalarFallback", "scalar-fallback", "std::string",
           /*default=*/"\"auto\"",
           "Fused: how rows that do not allow vector accesses are handled: "
           "registers (the row held in registers, one read), reread (the "
           "row read again for each reduction and the map, so that the "
           "vector path keeps the register budget) or auto (reread for "
           "blocks of 8192 elements or more)">,
    Option<"prefetch", "prefetch", "std::string", /*default=*/"\"auto\"",
           "Fused and cluster: fetch the block's next row while the current "
           "row is reduced. on: copy it into shared memory with cp.async "
           "(sm_80+; the launcher provides the stage as dynamic shared "
           "memory; the online kernel, for a known row length, stages the "
           "block's whole share of the row, read by both passes); registers: load it into a second set of registers at "
           "the top of the row; off; auto: the stage for fused blocks from "
           "16384, registers for fused 16-bit blocks of 2048-12288, 16-bit "
           "rows of 256-512, 16-bit "
           "cluster slices with the pair reduction, and the online kernel "
           "(whose registers hold its next tile, within the row). Both "
           "need the aligned vector path; the stage also needs one row per "
           "block (asked for, it keeps short rows on a block each)">,
    Option<"pairReduce", "pair-reduce", "std::string", /*default=*/"\"auto\"",
           "Fused and cluster softmax / log-softmax: reduce each thread's "
           "elements to a (max, sum) pair and combine the pairs with the "
           "online combiner, one exchange per row instead of two. on (or 1), "
           "off (or 0), or auto: on for 16-bit cluster slices (unless a "
           "known row length is not a multiple of the vector width), which "
           "then also load their next row ahead into registers">,
    Option<"fastExp", "fast-exp", "bool", /*default=*/"true",
           "Use ex2.approx.ftz / lg2.approx and a per-row reciprocal">,
    Option<"onlineKeep", "online-keep", "int64_t", /*default=*/"-1",
           "Online: KiB of each block's share of a row that pass 1 keeps in "
           "shared memory (in whole tiles, from the share's first) so that "
           "pass 2 reads them there instead of from L2 or DRAM; the launcher "
           "provides it as dynamic shared memory. 0: none; -1: auto (with "
           "keep-ahead, for rows of a known length over clusters of 16: 3/8 "
           "of the share, up to 192 KiB for f32 and 112 KiB for f16, for "
           "f16 rows and f32 rows from 8 MiB; with keep-ahead=bulk, one "
           "tile of f32 shares of 2 to 7 tiles and three of four tiles of "
           "bf16 rows of 2 MiB; none elsewhere)">,
    Option<"keepAhead", "keep-ahead", "std::string", /*default=*/"\"auto\"",
           "Online, with kept tiles (online-keep) and a known row length: "
           "the kept tiles are copied into shared memory with cp.async "
           "during the previous row's second pass (and before the first "
           "row) instead of stored by pass 1, so that the next row's reads "
           "are in flight while this row is written. Pass 1 issues the loads "
           "of the first tile after them and folds the kept tiles while they "
           "fly; the share's last tile is never kept (pass 1 hands it to "
           "pass 2 in registers). Needs the tiles loaded ahead. on, off, "
           "bulk (sm_90+: two buffers of the kept tiles, by turns per row; "
           "thread 0 copies the next row's into the other buffer with one "
           "cp.async.bulk right after this row's block reduction, and pass 1 "
           "waits on the buffer's mbarrier), or auto: auto's kept tiles, "
           "copied in bulk where auto keeps them that way (see "
           "online-keep)">,
    Option<"cacheHints", "cache-hints", "std::string", /*default=*/"\"auto\"",
           "Online: L2 eviction hints on the 16-byte accesses (createpolicy "
           "and .L2::cache_hint): pass 1 loads evict-last, pass 2 loads and "
           "the stores evict-first, so that the share stays in L2 for pass 2. "
           "on, off, or auto: on when pass 2 reads global memory (no stage, "
           "no kept tiles), except f32 rows over clusters of 8">,
    Option<"grid", "grid", "std::string", /*default=*/"\"auto\"",
           "How many programs (blocks, clusters) the launcher starts, as the "
           "kernel's metadata tells it (the kernel loops over rows, so any "
           "grid is correct): persistent (the programs resident at once, "
           "each looping over rows), rows (one per row group; the scheduler "
           "hands each SM a new row as a block ends, and no block has a next "
           "row to fetch ahead; the online kernel's stage holds its own "
           "row), or auto: rows (sm_90+) for fused kernels with a block per "
           "row, f32, or 16-bit blocks of 4096, 8192 and 16384 (the last "
           "two then on 256 threads) or larger ones on at most 512 threads, "
           "and for auto's 16-bit staged rows; persistent elsewhere">,
    Option<"chunkStage", "chunk-stage", "int64_t", /*default=*/"-1",
           "Chunks: elements of each chunk that follow its block-size "
           "elements in registers and are bulk-copied (cp.async.bulk, "
           "sm_90+) into shared memory, a multiple of the block's threads x "
           "the vector width; the launcher provides them as dynamic shared "
           "memory. 0: none; -1: 64 per thread for f32, 96 for 16-bit "
           "types">,
    Option<"maxElementsPerThread", "max-elements-per-thread", "int64_t",
           /*default=*/"32",
           "Fused: refuse blocks that hold more elements per thread than "
           "this in registers (auto's f32 block of 8192, 128 threads x 64, "
           "and its 16-bit block of 16384 with one block per row, 256 x 64, "
           "are exempt)">
  ];
}

def ConvertRowRedToGPU : Pass<"convert-rowred-to-gpu", "::mlir::ModuleOp"> {
  let summary = "Fuse rowred.reduce chains and their rowred.map into GPU kernels";
  let description = [{
    Finds every *group*: a `rowred.map` together with the `rowred.reduce` ops
    that produce its row scalars (directly or through each other), all over
    the same input, whose row-scalar buffers are `memref.alloc`s used by the
    group alone. Each group becomes one `gpu.func` kernel in its own
    `gpu.module`, and the group is replaced on the host by a
    `gpu.launch_func` (the buffers are no longer needed).

    Kernel structure (`docs/kernels.md` has the details):

    * a persistent grid-stride loop over rows: block `b` handles rows
      `b, b + gridDim.x, ...`, so a launcher can size the grid by occupancy
      (with `rows-per-block`, groups of rows, each row handled by at most a
      warp with no barrier; with clusters, cluster `c` handles rows
      `c, c + numClusters, ...`);
    * a block of `block-size` elements covers the row (the whole row for
      `fused`, a tile for `online`): a power of two, or three quarters of one
      for rows that fit it (a row of 12288 elements runs 384 threads x 32
      elements rather than 512 x 32 with a quarter of them masked); lanes
      past the end of the row are masked: they contribute the reduction's
      identity (`-inf` for max, `0` for sum) and store nothing;
    * reductions in-thread, then `gpu.shuffle xor` butterflies, then one
      shared-memory step across warps followed by one `gpu.barrier`;
    * `fused`: the row stays in registers (one read, one write per element);
      `cluster` (sm_90+): the row is split over the blocks of a thread-block
      cluster, each holding its slice in registers, and the per-block
      partials meet in distributed shared memory, sent with `st.async` and
      counted on an mbarrier of the receiving block (one read);
      `online`: a first pass keeps a running (max, sum) pair merged with the
      online combiner, a second pass writes the output (two reads); over a
      cluster, each block walks its share of the row twice;
    * `chunks`: each row is cut into chunks of `block-size + chunk-stage`
      elements, one block each (`rows x K` blocks), taken in row-major order
      by an atomic ticket; a block holds its chunk in registers and a
      bulk-copied shared-memory stage, publishes its (max, sum) pair to the
      row's record in a global-memory workspace, waits for the row's other
      chunks, then writes its chunk (one read);
    * global memory is accessed through `!llvm.ptr<1>` parameters with 16-byte
      vector loads and stores when the row length, both row strides and both
      base pointers allow it (checked once per launch), scalar ones otherwise;
    * with `fast-exp`, `exp(x)` becomes `exp2(x * log2(e))` on PTX
      `ex2.approx.ftz.f32` (results below 2^-126 flush to zero), `log`
      becomes `log2(x) * ln(2)`, and a division by a row scalar becomes one
      reciprocal per row and a multiplication.

    Each group's kernel follows the `#rowred.plan` attribute of its map,
    which `rowred-plan` chooses (or the input states); the conversion makes
    no choice of its own, and refuses a map without a plan or with a plan
    its group cannot take (online, chunks and the pair reduction need the
    softmax pair of reduces).

    The kernel ABI (`docs/abi.md`) is `(ptr x, ptr y, i64 rows, i64 cols,
    i64 x_row_stride, i64 y_row_stride)`, strides in elements, and a
    workspace pointer for chunks kernels. Launch metadata
    is recorded in the `rowred.kernels` attribute of the module.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::gpu::GPUDialect",
    "::mlir::LLVM::LLVMDialect",
    "::mlir::math::MathDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::NVVM::NVVMDialect",
    "::mlir::scf::SCFDialect"
  ];
}

#endif // ROWRED_CONVERSION_PASSES
