// A map's sums down the columns (rms_norm_backward's weight gradient): a
// fused block per row on the persistent grid, whatever auto would pick for
// the rows alone; each block adds its rows into an accumulator per column
// in dynamic shared memory (after the stage), writes it as its partial row
// of the workspace (the kernel's last parameter), meets the others at a
// grid barrier (arrival counter and generation), and sums a share of the
// columns over every partial row. The host launch takes one block, whose
// barrier waits for none, and a zeroed workspace. Shapes the kernel cannot
// take are refused.

// RUN: softmax-opt %s --rowred-decompose --rowred-plan="cols=4096 chip=sm_90" | FileCheck %s --check-prefix=PLAN
// RUN: softmax-opt %s --rowred-decompose --rowred-plan="cols=8192 chip=sm_90" | FileCheck %s --check-prefix=WIDE
// RUN: sed 's/bf16/f32/g' %s | softmax-opt --rowred-decompose --rowred-plan="cols=8192 chip=sm_90" | FileCheck %s --check-prefix=WIDE32
// RUN: softmax-opt %s --rowred-decompose --rowred-plan="cols=12288 chip=sm_90" | FileCheck %s --check-prefix=B12K
// RUN: sed 's/bf16/f32/g' %s | softmax-opt --rowred-decompose --rowred-plan="cols=12288 chip=sm_90" | FileCheck %s --check-prefix=B12K
// RUN: sed 's/bf16/f16/g' %s | softmax-opt --rowred-decompose --rowred-plan="cols=12288 chip=sm_90" | FileCheck %s --check-prefix=B12K
// RUN: sed 's/bf16/f16/g' %s | softmax-opt --rowred-decompose --rowred-plan="cols=10240 chip=sm_90" | FileCheck %s --check-prefix=B12K
// RUN: softmax-opt %s --rowred-decompose --rowred-plan="cols=4096 chip=sm_90" --convert-rowred-to-gpu | FileCheck %s --check-prefix=GPU
// RUN: rm -rf %t && softmax-opt %s --rowred-to-ptx="cols=1000 chip=sm_90 output-dir=%t" -o /dev/null
// RUN: FileCheck %s --check-prefix=JSON --input-file=%t/rms_norm_backward_kernel0.json
// RUN: not softmax-opt %s --rowred-decompose --rowred-plan="cols=4096 chip=sm_90 strategy=online" 2>&1 | FileCheck %s --check-prefix=ONLINE
// RUN: not softmax-opt %s --test-rowred-plan-request="fields='rows_per_block = 2'" --rowred-decompose --rowred-plan="cols=256 chip=sm_90" 2>&1 | FileCheck %s --check-prefix=ROWS
// RUN: not softmax-opt %s --rowred-decompose --rowred-plan="cols=32000 chip=sm_90" 2>&1 | FileCheck %s --check-prefix=LONG

// PLAN: rowred.map
// PLAN-SAME: column_sums(%{{.*}} : memref<?xbf16>)
// PLAN: rowred.plan = #rowred.plan<strategy = fused, block = 4096,
// PLAN-NOT: grid = rows
// PLAN-NOT: rowred.few_rows_plan

// The table's operand_shapes: 64 bytes of each held operand per thread
// (bf16 32 elements, f32 16), not the 64 elements of the fewest warps that
// leave two blocks per SM.
// WIDE: rowred.plan = #rowred.plan<strategy = fused, block = 8192, warps = 8, vector = 8,
// WIDE32: rowred.plan = #rowred.plan<strategy = fused, block = 8192, warps = 16, vector = 4,
// Rows of 8193-12288: a cluster of 2 slices of 6144 on 512 threads of
// every type (the table's row_lengths), not a block of 12288.
// B12K: rowred.plan = #rowred.plan<strategy = cluster, block = 6144, warps = 16, cluster = 2,

// GPU: gpu.alloc
// GPU: gpu.memset
// GPU: gpu.launch_func @rms_norm_backward_kernel0::@rms_norm_backward_kernel0 blocks in (%[[ONE:.*]], %[[ONE]], %[[ONE]]) threads in (%{{.*}}, %[[ONE]], %[[ONE]]) dynamic_shared_memory_size %c16384_i32
// GPU-SAME: : !llvm.ptr<1>)
// GPU: llvm.mlir.global external @rowred_stage() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<0 x i8>
// GPU: gpu.func @rms_norm_backward_kernel0(%{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %[[SUMS:.*]]: !llvm.ptr<1>, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64, %[[WS:.*]]: !llvm.ptr<1>)
// GPU: llvm.mlir.addressof @rowred_stage : !llvm.ptr<3>
// The accumulators zeroed, then the rows.
// GPU: scf.for
// GPU: llvm.store %{{.*}}, %{{.*}} {alignment = 4 : i64} : f32, !llvm.ptr<3>
// GPU: gpu.barrier
// The grid barrier: arrival, the last block's reset and new generation.
// GPU: llvm.fence syncscope("device") release
// GPU: llvm.load %{{.*}} atomic syncscope("device") monotonic
// GPU: llvm.atomicrmw add %[[WS]], %{{.*}} syncscope("device") acq_rel
// GPU: llvm.store %{{.*}}, %[[WS]] atomic syncscope("device") monotonic
// GPU: llvm.atomicrmw add %{{.*}}, %{{.*}} syncscope("device") release
// GPU: nvvm.nanosleep
// GPU: llvm.fence syncscope("device") acquire
// GPU: gpu.barrier
// The final sums, rounded to the output's type.
// GPU: arith.truncf %{{.*}} : f32 to bf16
// GPU: llvm.getelementptr inbounds %[[SUMS]]

// JSON: "dynamic_shared_bytes": 4096,
// JSON: "grid": "persistent",
// JSON: "operands": [
// JSON: "role": "column_sum",
// JSON: "strategy": "fused",

// ONLINE: error: 'rowred.map' op sums down the columns, which needs strategy = fused or cluster, not online
// ROWS: error: 'rowred.map' op sums down the columns, which needs one row per block (or cluster) and the persistent grid
// LONG: error: 'rowred.map' op a fused block of 1024 threads holding 32 elements per thread of each of 3 operands

func.func @rms_norm_backward(%x: memref<?x?xbf16>, %dy: memref<?x?xbf16>,
                             %r: memref<?xf32>, %w: memref<?xbf16>,
                             %dx: memref<?x?xbf16>, %dw: memref<?xbf16>) {
  rowred.rms_norm_backward ins(%x, %dy : memref<?x?xbf16>, memref<?x?xbf16>) rstd(%r : memref<?xf32>) weight(%w : memref<?xbf16>) outs(%dx : memref<?x?xbf16>) weight_grad(%dw : memref<?xbf16>)
  return
}
