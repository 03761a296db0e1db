// Kernels with per-row operands: labels read once per row, the gather of the
// label's logit, per-row results written by one thread of the row. They
// take softmax's strategies: fused (a block, or several rows per block),
// clusters, chunks, whose first chunk of a row writes its results, and the
// online kernel, whose running pair writes them after the row's exchange
// (its second pass forward, and none without a 2-D output), or which
// streams the row per reduce (reread).

// RUN: softmax-opt %s --rowred-decompose --rowred-plan="cols=1000 chip=sm_90" | FileCheck %s --check-prefix=N1000
// RUN: softmax-opt %s --rowred-decompose --rowred-plan="cols=50257 chip=sm_90 strategy=cluster" | FileCheck %s --check-prefix=N50257
// RUN: softmax-opt %s --rowred-decompose --rowred-plan="cols=131072 chip=sm_90" | FileCheck %s --check-prefix=N131072
// RUN: softmax-opt %s --rowred-decompose --rowred-plan="cols=131072 chip=sm_90 strategy=online" | FileCheck %s --check-prefix=ONLINE
// RUN: softmax-opt %s --rowred-decompose --rowred-plan="chip=sm_90" | FileCheck %s --check-prefix=ANY
// RUN: softmax-opt %s --test-rowred-plan-request="fields='reread = true'" --rowred-decompose --rowred-plan="cols=131072 chip=sm_90 strategy=online" | FileCheck %s --check-prefix=STREAM
// RUN: not softmax-opt %s --test-rowred-plan-request="fields='reverse_second_pass = true, kept_elements = 16384'" --rowred-decompose --rowred-plan="cols=131072 chip=sm_90 strategy=online" 2>&1 | FileCheck %s --check-prefix=KEPT
// RUN: softmax-opt %s --rowred-decompose --rowred-plan="cols=131072 chip=sm_90 strategy=online" --convert-rowred-to-gpu | FileCheck %s --check-prefix=ONLINE-GPU
// RUN: softmax-opt %s --rowred-decompose --rowred-plan="cols=1000 chip=sm_90" --convert-rowred-to-gpu | FileCheck %s --check-prefix=GPU
// RUN: rm -rf %t && softmax-opt %s --rowred-to-ptx="cols=131072 chip=sm_90 output-dir=%t" -o /dev/null
// RUN: FileCheck %s --check-prefix=JSON --input-file=%t/cross_entropy_kernel1.json

// N1000-LABEL: func.func @logsumexp
// N1000: rowred.plan = #rowred.plan<strategy = fused, block = 1024, warps = 4, rows_per_block = 4, vector = 4,
// N1000-LABEL: func.func @cross_entropy
// N1000: rowred.plan = #rowred.plan<strategy = fused, block = 1024, warps = 4, rows_per_block = 4, vector = 8,

// N50257-LABEL: func.func @cross_entropy
// N50257: rowred.plan = #rowred.plan<strategy = cluster, block = 16384, warps = 16, cluster = 4, vector = 8,

// Rows only reduced (no 2-D output) of 32000-151936 are streamed once by
// the online kernel, a block per row (PlanTable.json's row_lengths; 16-bit
// rows on one program per row, row_grid), with a kernel over clusters for
// launches of at most 64 rows (few_rows); rows also written (the gradient, below) are cut
// into chunks.
// N131072-LABEL: func.func @logsumexp
// N131072: few_rows_plan = #rowred.plan<strategy = cluster, {{.*}}, cluster = 16, {{.*}}, max_rows = 64>
// N131072: rowred.plan = #rowred.plan<strategy = online, block = 8192, warps = 8, vector = 4, reverse_second_pass = false, prefetch = registers, stage_elements = 131072>
// N131072-LABEL: func.func @cross_entropy
// N131072: few_rows_plan = #rowred.plan<strategy = cluster, {{.*}}, cluster = 16, {{.*}}, max_rows = 64>
// N131072: rowred.plan = #rowred.plan<strategy = online, block = 4096, warps = 4, vector = 8, reverse_second_pass = false, prefetch = registers, stage_elements = 131072, grid = rows>

// Cross-entropy's gradient: a map of rows that reads the labels and a scale
// per row, on the same strategies, without the register bounds measured on
// maps that read no per-row operand (no min_blocks_per_sm) but on cluster
// slices, where the bound's second block per SM pays, and on chunks, with
// the registers the labels take (six blocks per SM where softmax's chunk
// asks for nine).
// N1000-LABEL: func.func @cross_entropy_grad
// N1000: rowred.plan = #rowred.plan<strategy = fused, block = 1024, warps = 4, rows_per_block = 4, vector = 8, max_cols = 1024, stage_elements = 1024>
// N50257-LABEL: func.func @cross_entropy_grad
// N50257: rowred.plan = #rowred.plan<strategy = cluster, block = 16384, warps = 16, cluster = 4, vector = 8, reread = true, max_cols = 65536, stage_elements = 16384, min_blocks_per_sm = 2>
// N131072-LABEL: func.func @cross_entropy_grad
// N131072: rowred.plan = #rowred.plan<strategy = chunks, block = 4096, warps = 4, vector = 8, chunk_stage = 12288, min_blocks_per_sm = 6>

// Rows only reduced stream in tiles of 32 elements per thread, f32 on 8
// warps and 16-bit on 4 (PlanTable.json's online_warps, `writes_rows:
// false`), whatever their length; the gradient, which writes rows, keeps
// the online kernel's 16.
// ONLINE-LABEL: func.func @logsumexp
// ONLINE: rowred.plan = #rowred.plan<strategy = online, block = 8192, warps = 8, vector = 4, reverse_second_pass = false, prefetch = registers, stage_elements = 131072>
// ONLINE-LABEL: func.func @cross_entropy
// ONLINE: rowred.plan = #rowred.plan<strategy = online, block = 4096, warps = 4, vector = 8, reverse_second_pass = false, prefetch = registers, stage_elements = 131072, grid = rows>
// ONLINE-LABEL: func.func @cross_entropy_grad
// ONLINE: rowred.plan = #rowred.plan<strategy = online, block = 16384, warps = 16, vector = 8, reverse_second_pass = false, prefetch = registers, stage_elements = 131072>
// Rows of any length alike.
// ANY-LABEL: func.func @logsumexp
// ANY: rowred.plan = #rowred.plan<strategy = online, block = 8192, warps = 8, vector = 4, reverse_second_pass = false, prefetch = registers>
// ANY-LABEL: func.func @cross_entropy
// ANY: rowred.plan = #rowred.plan<strategy = online, block = 4096, warps = 4, vector = 8, reverse_second_pass = false, prefetch = registers, grid = rows>
// ANY-LABEL: func.func @cross_entropy_grad
// ANY: rowred.plan = #rowred.plan<strategy = online, block = 16384, warps = 16, vector = 8,

// logsumexp's online kernel: the label-free pass 1 folds (m, d) tile by
// tile (the next tile's 32 elements per thread loaded ahead in eight
// vectors), the first thread stores m + log(d) after the block's exchange,
// and no second pass reads the row again.
// ONLINE-GPU-LABEL: gpu.func @logsumexp_kernel0
// ONLINE-GPU: scf.for {{.*}} step %c8192_i32 {{.*}} -> (f32, f32, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>) : i32 {
// ONLINE-GPU: gpu.barrier
// ONLINE-GPU: math.log
// ONLINE-GPU: llvm.store %{{.*}}, %{{.*}} : f32, !llvm.ptr<1>
// ONLINE-GPU-NOT: scf.for %{{.*}} = %c0_i32{{.*}} to
// ONLINE-GPU: } else {

// Streamed per level: rows only reduced keep online_warps' shape, without
// L2 hints; the gradient written over the logits takes streamed_tiles'.
// STREAM-LABEL: func.func @logsumexp
// STREAM: rowred.plan = #rowred.plan<strategy = online, block = 4096, warps = 8, vector = 4, reread = true>}
// STREAM-LABEL: func.func @cross_entropy
// STREAM: rowred.plan = #rowred.plan<strategy = online, block = 8192, warps = 16, vector = 8, reread = true, cache_hints = true>

// KEPT: error: 'rowred.map' op the online kernel of a map with per-row results takes no stage, kept tiles or cache hints

// The kernel's parameters: the input, the labels, the two per-row outputs,
// rows, cols and the input's row stride. Each row loads its label, the
// logit at the label when it is a column, and its first thread stores the
// loss and the logsumexp.
// GPU: gpu.func @cross_entropy_kernel1(%{{.*}}: !llvm.ptr<1>, %[[L:.*]]: !llvm.ptr<1>, %[[LOSS:.*]]: !llvm.ptr<1>, %[[LSE:.*]]: !llvm.ptr<1>, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64) kernel
// GPU: llvm.getelementptr inbounds %[[L]][%{{.*}}] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, i64
// GPU: llvm.load %{{.*}} : !llvm.ptr<1> -> i64
// GPU: arith.cmpi sge
// GPU: arith.cmpi slt
// GPU: llvm.getelementptr inbounds %[[LOSS]][%{{.*}}] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, f32
// GPU: llvm.getelementptr inbounds %[[LSE]][%{{.*}}] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, f32

// The gradient's kernel: the input, the gradient, the labels, the scale,
// the loss; each element's column (extended to i64) compared with the
// label.
// GPU: gpu.func @cross_entropy_grad_kernel2(%{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %[[L2:.*]]: !llvm.ptr<1>, %[[SC:.*]]: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64) kernel
// GPU: llvm.getelementptr inbounds %[[L2]][%{{.*}}] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, i64
// GPU: llvm.getelementptr inbounds %[[SC]][%{{.*}}] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, f32
// GPU: arith.cmpi eq, %{{[0-9]+}}, %{{[0-9]+}} : i64

// JSON: "ignore_index": -100,
// JSON: "label_smoothing": 0,
// JSON: "op": "cross_entropy",
// JSON: "operands": [
// JSON: "name": "x",
// JSON-NEXT: "role": "input",
// JSON-NEXT: "type": "bf16"
// JSON: "name": "r",
// JSON-NEXT: "role": "row",
// JSON-NEXT: "type": "i64"
// JSON: "name": "z",
// JSON-NEXT: "role": "row_output",
// JSON-NEXT: "type": "f32"
// JSON: "name": "z1",
// JSON-NEXT: "role": "row_output",
// JSON: "strategy": "online",
// JSON: "variants": [
// JSON-NEXT: {
// JSON-NEXT: "kernel": "cross_entropy_kernel1_rows64",
// JSON-NEXT: "max_rows": 64

func.func @logsumexp(%x: memref<?x?xf32>, %lse: memref<?xf32>) {
  rowred.logsumexp ins(%x : memref<?x?xf32>) outs(%lse : memref<?xf32>)
  return
}

func.func @cross_entropy(%x: memref<?x?xbf16>, %labels: memref<?xi64>, %loss: memref<?xf32>, %lse: memref<?xf32>) {
  rowred.cross_entropy ignore_index(-100) ins(%x : memref<?x?xbf16>) labels(%labels : memref<?xi64>) outs(%loss : memref<?xf32>) lse(%lse : memref<?xf32>)
  return
}

func.func @cross_entropy_grad(%x: memref<?x?xbf16>, %labels: memref<?xi64>, %g: memref<?xf32>, %loss: memref<?xf32>) {
  rowred.cross_entropy ignore_index(-100) ins(%x : memref<?x?xbf16>) labels(%labels : memref<?xi64>) grad_scale(%g : memref<?xf32>) outs(%loss : memref<?xf32>) grad(%x : memref<?x?xbf16>)
  return
}
