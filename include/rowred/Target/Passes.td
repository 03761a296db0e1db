//===- Passes.td - RowRed target passes --------------------*- tablegen -*-===//
//
// Part of the softmax kernel compiler.
//
//===----------------------------------------------------------------------===//

#ifndef ROWRED_TARGET_PASSES
#define ROWRED_TARGET_PASSES

include "mlir/Pass/PassBase.td"

def RowRedExportKernels : Pass<"rowred-export-kernels", "::mlir::ModuleOp"> {
  let summary = "Write each kernel's PTX and launch metadata to files";
  let description = [{
    After `gpu-module-to-binary{format=isa}`, writes for every `gpu.binary`
    produced from a rowred kernel the PTX text to `<output-dir>/<kernel>.ptx`
    and its launch metadata to `<output-dir>/<kernel>.json` (the fields are
    documented in `docs/abi.md`). The metadata comes from the module's
    `rowred.kernels` attribute, recorded by `convert-rowred-to-gpu`.

    It fails with a diagnostic when a binary holds no PTX (a format other
    than `isa`) or a file cannot be written. The IR is left unchanged.
  }];
  let options = [
    Option<"outputDir", "output-dir", "std::string", /*default=*/"\".\"",
           "Directory the .ptx and .json files are written to (created if "
           "missing)">
  ];
}

def RowRedFitRegisters : Pass<"rowred-fit-registers", "::mlir::ModuleOp"> {
  let summary = "Plan and lower every kernel, re-planning those that spill";
  let description = [{
    Plans each `rowred.map` as `rowred-plan` does, lowers the module to
    `gpu.binary` ops holding PTX as `rowred-to-ptx` does after planning
    (`convert-rowred-to-gpu` through `gpu-module-to-binary{format=isa}`), and
    assembles every kernel with `ptxas -v` for the chip. Where ptxas spills
    registers to local memory, the kernel's plan is changed and the module
    lowered again, until no kernel spills:

    1. the same block, asking ptxas (`min_blocks_per_sm`, `.minnctapersm`)
       for the most blocks per SM it fits, from as many as the spilling
       kernel had down to one;
    2. then, for a block of one row that `auto` chose, a smaller shape, the
       first of these the planner can give the group: chunks of the row
       (the softmax pair's maps), a cluster of twice the blocks (a fused
       block is a cluster of one), the online kernel; each again from as
       many blocks per SM as it has. A kernel for launches of a few rows is
       dropped instead (the group's main kernel takes those launches).

    A plan written in the input is the user's: it is assembled as written,
    and the pass fails naming the kernel and its spills. A plan request
    keeps its fields: only the bound changes, and the pass fails when that
    is not enough. The output is what `rowred-plan` and the lowering would
    give for the final plans; the plans are in the kernels' metadata.

    Example: the safe log-softmax's f32 block of 16384 elements on 512
    threads spills 4 bytes at ptxas' choice of 64 registers (sm_90), and
    assembles without spills asked for two blocks per SM, the same 64
    registers: `#rowred.plan<..., min_blocks_per_sm = 2>`.
  }];
  let options = [
    Option<"strategy", "strategy", "std::string", /*default=*/"\"auto\"",
           "As rowred-plan's">,
    Option<"cols", "cols", "int64_t", /*default=*/"0", "As rowred-plan's">,
    Option<"chip", "chip", "std::string", /*default=*/"\"sm_90\"",
           "As rowred-plan's; the kernels are assembled for it">,
    Option<"planTable", "plan-table", "std::string", /*default=*/"\"\"",
           "As rowred-plan's">,
    Option<"cudaPath", "cuda-path", "std::string",
           /*default=*/"\"/usr/local/cuda\"",
           "CUDA toolkit, for libdevice (fast_exp = false) and, with no "
           "ptxas given, its bin/ptxas">,
    Option<"ptxas", "ptxas", "std::string", /*default=*/"\"\"",
           "ptxas to assemble with (empty: <cuda-path>/bin/ptxas, else the "
           "PATH's)">
  ];
}

def RowRedContractFloatOps
    : Pass<"rowred-contract-float-ops", "::mlir::gpu::GPUModuleOp"> {
  let summary = "Allow the kernels' float multiplies and adds to fuse";
  let description = [{
    Adds the `contract` fast-math flag to every LLVM dialect operation of the
    GPU module that carries fast-math flags (`llvm.fmul`, `llvm.fadd`,
    `llvm.fsub`, ...), so that the NVPTX backend fuses a multiply and the add
    of its result into one `fma.rn.f32`, as `clang -ffp-contract=fast` and
    Triton do. Without the flag the backend writes `mul.rn.f32` and
    `add.rn.f32`, whose rounding modifiers keep ptxas from fusing them too.
    An `fma` rounds once where the pair rounds twice: results stay within the
    float64 checks' bounds, and a kernel issues fewer instructions per element
    (layer_norm's variance `q += e * e`, its map `(e - d) * r * w + b`).

    ```mlir
    %p = llvm.fmul %a, %b : f32
    %s = llvm.fadd %p, %c : f32
    // becomes
    %p = llvm.fmul %a, %b {fastmathFlags = #llvm.fastmath<contract>} : f32
    %s = llvm.fadd %p, %c {fastmathFlags = #llvm.fastmath<contract>} : f32
    ```
  }];
}

#endif // ROWRED_TARGET_PASSES
