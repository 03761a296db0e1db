// Rows only reduced (logsumexp, cross-entropy) at vocabulary lengths: a
// launch of at most 64 rows of 24577-32768 elements (f32, bf16 and f16)
// takes a second kernel over a cluster of 8 blocks, as one of 5 to 64 rows
// of 100000-119999 does (a ladder: at most 4 rows there take a cluster of
// 16), and one of 120000-160000 keeps the cluster of 16 blocks to 64 rows
// (the plan table's few_rows). Softmax, which writes its
// rows, keeps its own rows: 64 rows at 32000 (a cluster that pairs its
// reductions), 16 at 100277 and 48 at 128256 over a cluster of 16, then a
// cluster of 8 to 48 and 64 rows.
// Short rows take one kernel.

// RUN: softmax-opt %s --rowred-decompose --rowred-plan="cols=32000 chip=sm_90" | FileCheck %s --check-prefix=N32000
// RUN: softmax-opt %s --rowred-decompose --rowred-plan="cols=100277 chip=sm_90" | FileCheck %s --check-prefix=N100277
// RUN: softmax-opt %s --rowred-decompose --rowred-plan="cols=128256 chip=sm_90" | FileCheck %s --check-prefix=N128256
// RUN: softmax-opt %s --rowred-decompose --rowred-plan="cols=8192 chip=sm_90" | FileCheck %s --check-prefix=N8192
// RUN: rm -rf %t && softmax-opt %s --rowred-to-ptx="cols=100277 chip=sm_90 output-dir=%t" -o /dev/null
// RUN: FileCheck %s --check-prefix=JSON --input-file=%t/cross_entropy_f16_kernel2.json

// N32000-LABEL: func.func @logsumexp_bf16
// N32000: rowred.few_rows_plan = #rowred.plan<strategy = cluster, block = 4096, warps = 4, cluster = 8,{{.*}}max_rows = 64>
// N32000-SAME: rowred.plan = #rowred.plan<strategy = online,
// N32000-LABEL: func.func @cross_entropy_f32
// N32000: rowred.few_rows_plan = #rowred.plan<strategy = cluster, block = 4096, warps = 4, cluster = 8,{{.*}}max_rows = 64>
// N32000-LABEL: func.func @cross_entropy_f16
// N32000: rowred.few_rows_plan = #rowred.plan<strategy = cluster, block = 4096, warps = 4, cluster = 8,{{.*}}max_rows = 64>
// N32000-SAME: rowred.plan = #rowred.plan<strategy = online,
// N32000-LABEL: func.func @softmax_bf16
// N32000: rowred.few_rows_plan = #rowred.plan<strategy = cluster,{{.*}}cluster = 8,{{.*}}pair_reduce = true,{{.*}}max_rows = 64>

// N100277-LABEL: func.func @logsumexp_bf16
// N100277: rowred.few_rows_plan = [#rowred.plan<strategy = cluster, block = 8192, warps = 16, cluster = 16,{{.*}}max_rows = 4>, #rowred.plan<strategy = cluster, block = 16384, warps = 16, cluster = 8,{{.*}}max_rows = 64>]
// N100277-LABEL: func.func @cross_entropy_f32
// N100277: rowred.few_rows_plan = [#rowred.plan<strategy = cluster, block = 8192, warps = 16, cluster = 16,{{.*}}max_rows = 4>, #rowred.plan<strategy = cluster, block = 16384, warps = 16, cluster = 8,{{.*}}max_rows = 64>]
// N100277-LABEL: func.func @cross_entropy_f16
// N100277: rowred.few_rows_plan = [#rowred.plan<strategy = cluster, block = 8192, warps = 16, cluster = 16,{{.*}}max_rows = 4>, #rowred.plan<strategy = cluster, block = 16384, warps = 16, cluster = 8,{{.*}}max_rows = 64>]
// N100277-LABEL: func.func @softmax_bf16
// N100277: rowred.few_rows_plan = [#rowred.plan<strategy = cluster,{{.*}}cluster = 16,{{.*}}max_rows = 16>, #rowred.plan<strategy = cluster,{{.*}}cluster = 8,{{.*}}max_rows = 48>]

// N128256-LABEL: func.func @logsumexp_bf16
// N128256: rowred.few_rows_plan = #rowred.plan<strategy = cluster, block = 8192, warps = 16, cluster = 16,{{.*}}max_rows = 64>
// N128256-LABEL: func.func @cross_entropy_f32
// N128256: rowred.few_rows_plan = #rowred.plan<strategy = cluster, block = 8192, warps = 16, cluster = 16,{{.*}}max_rows = 64>
// N128256-LABEL: func.func @cross_entropy_f16
// N128256: rowred.few_rows_plan = #rowred.plan<strategy = cluster, block = 8192, warps = 16, cluster = 16,{{.*}}max_rows = 64>
// N128256-LABEL: func.func @softmax_bf16
// N128256: rowred.few_rows_plan = [#rowred.plan<strategy = cluster,{{.*}}cluster = 16,{{.*}}max_rows = 48>, #rowred.plan<strategy = cluster,{{.*}}cluster = 8,{{.*}}max_rows = 64>]

// N8192-NOT: few_rows_plan

// The whole pipeline (with rowred-fit-registers) keeps the ladder.
// JSON: "kernel": "cross_entropy_f16_kernel2_rows4",
// JSON: "max_rows": 4
// JSON: "kernel": "cross_entropy_f16_kernel2_rows64",
// JSON: "max_rows": 64

func.func @logsumexp_bf16(%x: memref<?x?xbf16>, %lse: memref<?xf32>) {
  rowred.logsumexp ins(%x : memref<?x?xbf16>) outs(%lse : memref<?xf32>)
  return
}

func.func @cross_entropy_f32(%x: memref<?x?xf32>, %l: memref<?xi64>, %loss: memref<?xf32>) {
  rowred.cross_entropy ignore_index(-100) ins(%x : memref<?x?xf32>) labels(%l : memref<?xi64>) outs(%loss : memref<?xf32>)
  return
}

func.func @cross_entropy_f16(%x: memref<?x?xf16>, %l: memref<?xi64>, %loss: memref<?xf32>) {
  rowred.cross_entropy ignore_index(-100) ins(%x : memref<?x?xf16>) labels(%l : memref<?xi64>) outs(%loss : memref<?xf32>)
  return
}

func.func @softmax_bf16(%x: memref<?x?xbf16>, %y: memref<?x?xbf16>) {
  rowred.softmax dimension(1) ins(%x : memref<?x?xbf16>) outs(%y : memref<?x?xbf16>)
  return
}
