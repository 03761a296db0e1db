// Totals over the rows (a map's rank-0 column_sums: cross-entropy's loss
// summed over the rows and the count of rows kept): as column sums of one
// column, on the plan the per-row loss takes (a block holding the row, the
// online kernel streaming it where the table says so, or a cluster; not
// chunks), one row per block (or cluster) on the persistent grid. The
// thread that writes a row's per-row results adds the row's values into one
// accumulator per total in dynamic shared memory, which the block writes as
// its partial (one f32 per block and total, after the header) before the
// grid barrier; the block that takes the one column sums every partial in
// order. The host launch takes one block and a zeroed workspace of the
// header's 32 words and one per total.

// RUN: softmax-opt %s --rowred-decompose --rowred-plan="cols=1024 chip=sm_90" | FileCheck %s --check-prefix=PLAN
// RUN: softmax-opt %s --rowred-decompose --rowred-plan="cols=128256 chip=sm_90" | FileCheck %s --check-prefix=VOCAB
// RUN: softmax-opt %s --rowred-decompose --rowred-plan="cols=262144 chip=sm_90" | FileCheck %s --check-prefix=LONG
// RUN: softmax-opt %s --rowred-decompose --rowred-plan="cols=1024 chip=sm_90" --convert-rowred-to-gpu | FileCheck %s --check-prefix=GPU
// RUN: rm -rf %t && softmax-opt %s --rowred-to-ptx="cols=1000 chip=sm_90 output-dir=%t" -o /dev/null
// RUN: FileCheck %s --check-prefix=JSON --input-file=%t/ce_sum_kernel0.json
// RUN: softmax-run %t/ce_sum_kernel0.json --rows 8 --cols 1000 --explain 2>&1 | FileCheck %s --check-prefix=EXPLAIN
// RUN: not softmax-opt %s --rowred-decompose --rowred-plan="cols=1024 chip=sm_90 strategy=chunks" 2>&1 | FileCheck %s --check-prefix=CHUNKS

// PLAN: rowred.map
// PLAN-SAME: column_sums(%{{.*}}, %{{.*}} : memref<f32>, memref<f32>)
// PLAN: rowred.plan = #rowred.plan<strategy = fused, block = 1024,
// PLAN-NOT: grid = rows
// PLAN-NOT: rowred.few_rows_plan

// VOCAB: rowred.plan = #rowred.plan<strategy = online,
// VOCAB-NOT: grid = rows

// LONG: rowred.plan = #rowred.plan<strategy = cluster,
// LONG-NOT: chunk

// The launch: one block, a workspace of 32 + 2 words (no partial rows of
// columns: cols * 0).
// GPU: %[[NONE:.*]] = arith.muli %{{.*}}, %c0{{.*}} : index
// GPU: %[[WORDS:.*]] = arith.addi %[[NONE]], %c34 : index
// GPU: gpu.alloc (%[[WORDS]]) : memref<?xi32>
// GPU: gpu.launch_func @ce_sum_kernel0::@ce_sum_kernel0 blocks in (%c1{{.*}}, %c1{{.*}}, %c1{{.*}}) threads in (%c64,
// The kernel: the row's first thread adds its loss and its count.
// GPU: gpu.func @ce_sum_kernel0(
// GPU: scf.if
// GPU: llvm.load %{{.*}} : !llvm.ptr<3> -> f32
// GPU: arith.addf
// GPU: llvm.store %{{.*}}, %{{.*}} : f32, !llvm.ptr<3>
// The grid barrier, then the final sums.
// GPU: llvm.atomicrmw add
// GPU: nvvm.nanosleep
// GPU: gpu.barrier

// The launcher reads the kernel (its totals, its workspace): a fused
// block of 64 threads whose accumulators take 256 bytes (one f32 per
// thread, the final sum's scratch), on the persistent grid.
// EXPLAIN: strategy: fused
// EXPLAIN: shared memory: 233472 / (16 + 256 dynamic
// EXPLAIN: programs launched: min(8 rows,

// JSON: "dynamic_shared_bytes": 256,
// JSON: "grid": "persistent",
// JSON: "op": "cross_entropy",
// JSON: "name": "r",
// JSON-NEXT: "role": "row",
// JSON: "name": "t",
// JSON-NEXT: "role": "total",
// JSON-NEXT: "type": "f32"
// JSON: "name": "t1",
// JSON-NEXT: "role": "total",
// JSON: "meaning": "total over the rows, global memory, one element"
// JSON: "name": "workspace"

// CHUNKS: sums over the rows, which needs strategy = fused, cluster or online, not chunks

func.func @ce_sum(%x: memref<?x?xbf16>, %y: memref<?xi64>, %loss: memref<f32>, %n: memref<f32>) {
  rowred.cross_entropy ignore_index(-100) ins(%x : memref<?x?xbf16>) labels(%y : memref<?xi64>)
      outs(%loss : memref<f32>) count(%n : memref<f32>)
  return
}
