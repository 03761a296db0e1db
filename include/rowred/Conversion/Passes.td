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
    `docs/kernels.md` describes. A `#rowred.plan_request` on the map (written
    in the input) fixes some fields: the rest are derived around them, and
    the complete plan replaces the request. A plan already on a map (written
    in the input) is kept, and verified like a chosen one.

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
           "Kernel strategy of maps whose plan request names none: fused | "
           "cluster | online | chunks | auto (auto: fused when the row fits "
           "one block's registers, cluster when it fits a cluster's, chunks "
           "for long rows of a known length on sm_90+, else online; "
           "docs/kernels.md has the rules)">,
    Option<"cols", "cols", "int64_t", /*default=*/"0",
           "Number of columns the kernels are compiled for, when the input "
           "type does not say it (0: unknown)">,
    Option<"chip", "chip", "std::string", /*default=*/"\"sm_90\"",
           "Target chip (sm_80, sm_89, sm_90, sm_100, sm_120, ...); auto "
           "picks clusters and bulk copies only on sm_90 and newer">,
    Option<"planTable", "plan-table", "std::string", /*default=*/"\"\"",
           "A plan table (JSON in the format of the one compiled in, "
           "lib/Conversion/RowRedToGPU/PlanTable.json) whose rules auto "
           "plans by instead (empty: the one compiled in)">
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
      (with `rows_per_block`, groups of rows, each row handled by at most a
      warp with no barrier; with clusters, cluster `c` handles rows
      `c, c + numClusters, ...`);
    * a block of `block` elements covers the row (the whole row for
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
      online combiner, a second pass writes the output (two reads); with
      `reread` (any group without that pair: the norms, the backward ops,
      per-row results), one pass per level of reduces and one for the map;
      over a cluster, each block walks its share of the row in each pass;
    * `chunks`: each row is cut into chunks of `block + chunk_stage`
      elements, one block each (`rows x K` blocks), taken in row-major order
      by an atomic ticket; a block holds its chunk in registers and a
      bulk-copied shared-memory stage, publishes its (max, sum) pair to the
      row's record in a global-memory workspace, waits for the row's other
      chunks, then writes its chunk (one read);
    * global memory is accessed through `!llvm.ptr<1>` parameters with 16-byte
      vector loads and stores when the row length, both row strides and both
      base pointers allow it (checked once per launch), scalar ones otherwise;
    * with `fast_exp`, `exp(x)` becomes `exp2(x * log2(e))` on PTX
      `ex2.approx.ftz.f32` (results below 2^-126 flush to zero), `log`
      becomes `log2(x) * ln(2)`, and a division by a row scalar becomes one
      reciprocal per row and a multiplication.

    Each group's kernel follows the `#rowred.plan` attribute of its map,
    which `rowred-plan` chooses (or the input states); the conversion makes
    no choice of its own, and refuses a map without a plan or with a plan
    its group cannot take (the online kernel's running pair, chunks and the
    pair reduction need the softmax pair of reduces).

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
