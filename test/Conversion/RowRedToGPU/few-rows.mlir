// Rows that auto cuts into chunks or runs a block per row, and that the plan
// table's few_rows names, get a second kernel for launches of a few rows:
// the row over a cluster of 16 blocks for at most 16 rows of 100000 to
// 160000 (f32; bf16 from 120000: 48; softmax's pair of 100000-131072 then
// over a cluster of 8 to 24 rows, bf16's to 64), of 8 for at most 64 shorter rows
// (even bf16 staged rows up to 32768: 16; odd 16-bit rows of 32769 to
// 57344: 32; f32 of 24577 to 32768 in a fused block: 1024); smaller chunks for
// longer rows. The plan says so
// (rowred.few_rows_plan, with max_rows), the host code launches it when the
// rows are few, and the metadata of the first kernel lists it under
// `variants`.

// RUN: softmax-opt %s --rowred-decompose --rowred-plan="cols=128256 chip=sm_90" | FileCheck %s --check-prefix=PLAN
// RUN: softmax-opt %s --rowred-decompose --rowred-plan="cols=256000 chip=sm_90" | FileCheck %s --check-prefix=F32-256000
// RUN: softmax-opt %s --rowred-decompose --rowred-plan="cols=65536 chip=sm_90" | FileCheck %s --check-prefix=N65536
// RUN: softmax-opt %s --rowred-decompose --rowred-plan="cols=262144 chip=sm_90" | FileCheck %s --check-prefix=N262144
// RUN: softmax-opt %s --rowred-decompose --rowred-plan="cols=32001 chip=sm_90" | FileCheck %s --check-prefix=N32001
// RUN: softmax-opt %s --rowred-decompose --rowred-plan="cols=32768 chip=sm_90" | FileCheck %s --check-prefix=BLOCK
// RUN: softmax-opt %s --rowred-decompose --rowred-plan="cols=20480 chip=sm_90" | FileCheck %s --check-prefix=N20480
// RUN: softmax-opt %s --rowred-decompose --rowred-plan="cols=16411 chip=sm_90" | FileCheck %s --check-prefix=N16411
// RUN: softmax-opt %s --rowred-decompose --rowred-plan="cols=16384 chip=sm_90" | FileCheck %s --check-prefix=N16384
// RUN: softmax-opt %s --rowred-decompose --rowred-plan="cols=128256 chip=sm_80" | FileCheck %s --check-prefix=NONE
// RUN: softmax-opt %s --rowred-decompose --rowred-plan="cols=128256 chip=sm_90" --convert-rowred-to-gpu | FileCheck %s --check-prefix=LAUNCH
// RUN: rm -rf %t && softmax-opt %s --rowred-to-ptx="cols=128256 chip=sm_90 output-dir=%t" -o /dev/null
// RUN: FileCheck %s --check-prefix=JSON --input-file=%t/softmax_f32_kernel0.json
// RUN: FileCheck %s --check-prefix=JSON-FEW --input-file=%t/softmax_f32_kernel0_rows16.json
// RUN: softmax-opt %s --rowred-decompose --rowred-plan="cols=1048573 chip=sm_90" | FileCheck %s --check-prefix=N1048573
// RUN: rm -rf %t.long && softmax-opt %s --rowred-to-ptx="cols=1048573 chip=sm_90 output-dir=%t.long" -o /dev/null
// RUN: FileCheck %s --check-prefix=JSON-CHUNKS --input-file=%t.long/softmax_f32_kernel0.json
// RUN: FileCheck %s --check-prefix=JSON-CHUNKS-FEW --input-file=%t.long/softmax_f32_kernel0_rows16.json

// PLAN-LABEL: func.func @softmax_f32
// PLAN: rowred.few_rows_plan = [#rowred.plan<strategy = cluster, block = 8192, warps = 16, cluster = 16, {{.*}}max_cols = 131072, {{.*}}max_rows = 16>, #rowred.plan<strategy = cluster, block = 16384, warps = 16, cluster = 8, {{.*}}max_rows = 24>]
// PLAN-SAME: rowred.plan = #rowred.plan<strategy = chunks,
// PLAN-NOT: max_rows
// PLAN-LABEL: func.func @softmax_bf16
// PLAN: rowred.few_rows_plan = [#rowred.plan<strategy = cluster, {{.*}}cluster = 16, {{.*}}max_rows = 48>, #rowred.plan<strategy = cluster, {{.*}}cluster = 8, {{.*}}max_rows = 64>]
// PLAN-SAME: rowred.plan = #rowred.plan<strategy = chunks,
// PLAN-LABEL: func.func @softmax_given
// PLAN-NOT: few_rows_plan
// PLAN: rowred.plan = #rowred.plan<strategy = chunks, {{.*}}min_blocks_per_sm
// PLAN-NOT: few_rows_plan
// PLAN-LABEL: func.func @rms_norm_f32
// PLAN-NOT: few_rows_plan
// PLAN: return
// The generic chunks' rows take the same second kernel.
// PLAN-LABEL: func.func @rms_norm_bf16
// PLAN: rowred.few_rows_plan = #rowred.plan<strategy = cluster, {{.*}}cluster = 16, {{.*}}max_rows = 48>, rowred.origin
// PLAN-SAME: rowred.plan = #rowred.plan<strategy = chunks,

// f32 rms_norm's rows of 262144 are cut into chunks but for launches of at
// most 8 rows, which keep the cluster of 16 holding the row (few_rows keyed
// by the kernel's held operands and reduces); layer_norm's chunks take
// every launch. Softmax's f32 chunks there take chunks of 8192 for at most
// 16 rows.
// N262144-LABEL: func.func @softmax_f32
// N262144: rowred.few_rows_plan = #rowred.plan<strategy = chunks, block = 4096, warps = 4, vector = 4, chunk_stage = 4096, {{.*}}max_rows = 16>
// N262144-SAME: rowred.plan = #rowred.plan<strategy = chunks, block = 8192, warps = 4, vector = 4, chunk_stage = 8192,
// N262144-LABEL: func.func @rms_norm_f32
// N262144: rowred.few_rows_plan = #rowred.plan<strategy = cluster, block = 16384, warps = 16, cluster = 16, {{.*}}max_rows = 8>
// N262144-SAME: rowred.plan = #rowred.plan<strategy = chunks,
// N262144-LABEL: func.func @layer_norm_f32
// N262144-NOT: rowred.few_rows_plan
// N262144: rowred.plan = #rowred.plan<strategy = chunks,

// f32 rows of 256000 measured no faster on clusters beyond one row, but
// faster on smaller chunks (8192 against 16384) up to 16 rows; bf16's on
// clusters.
// F32-256000-LABEL: func.func @softmax_f32
// F32-256000: rowred.few_rows_plan = #rowred.plan<strategy = chunks, block = 4096, {{.*}}chunk_stage = 4096, {{.*}}max_rows = 16>
// F32-256000-LABEL: func.func @softmax_bf16
// F32-256000: rowred.few_rows_plan = #rowred.plan<strategy = cluster,
// F32-256000-SAME: rowred.plan = #rowred.plan<strategy = chunks,

// Shorter chunked rows: at most 64 rows over a cluster of 8.
// N65536-LABEL: func.func @softmax_f32
// N65536: rowred.few_rows_plan = #rowred.plan<strategy = cluster, {{.*}}cluster = 8, {{.*}}max_rows = 64>
// N65536-SAME: rowred.plan = #rowred.plan<strategy = chunks,
// N65536-LABEL: func.func @softmax_bf16
// N65536: rowred.few_rows_plan = #rowred.plan<strategy = cluster, {{.*}}cluster = 8, {{.*}}max_rows = 64>

// The longest rows: chunks of 8192 for at most 16 f32 rows and 8 bf16
// ones, at a block per SM fewer than the chunks' bound; the metadata gives
// the launch its own chunks (and so its workspace).
// N1048573-LABEL: func.func @softmax_f32
// N1048573: rowred.few_rows_plan = #rowred.plan<strategy = chunks, block = 4096, warps = 4, vector = 4, chunk_stage = 4096, min_blocks_per_sm = 8, max_rows = 16>
// N1048573-SAME: rowred.plan = #rowred.plan<strategy = chunks, block = 8192, warps = 4, vector = 4, chunk_stage = 8192,
// N1048573-LABEL: func.func @softmax_bf16
// N1048573: rowred.few_rows_plan = #rowred.plan<strategy = chunks, block = 4096, warps = 4, vector = 8, chunk_stage = 4096, min_blocks_per_sm = 8, max_rows = 8>
// N1048573-SAME: rowred.plan = #rowred.plan<strategy = chunks, block = 4096, warps = 4, vector = 8, chunk_stage = 12288,
// JSON-CHUNKS: "chunk_elements": 16384,
// JSON-CHUNKS: "kernel": "softmax_f32_kernel0_rows16",
// JSON-CHUNKS: "max_rows": 16
// JSON-CHUNKS-FEW: "chunk_elements": 8192,
// JSON-CHUNKS-FEW: "grid": "chunks",
// JSON-CHUNKS-FEW-NOT: "variants"

// Rows a block per row holds, for softmax's pair: f32's fused block of
// 32768 and the 16-bit staged row (the online kernel, a block per row)
// take a cluster of 8 for at most 1024 and 64 rows (16 up to 24576), whose
// 16-bit slices of 32 elements per thread pair their reductions beside the
// path that re-reads the row. The norms' clusters take none.
// BLOCK-LABEL: func.func @softmax_f32
// BLOCK: rowred.few_rows_plan = #rowred.plan<strategy = cluster, block = 4096, warps = 4, cluster = 8, {{.*}}max_rows = 1024>
// BLOCK-SAME: rowred.plan = #rowred.plan<strategy = fused, block = 32768,
// BLOCK-LABEL: func.func @softmax_bf16
// BLOCK: rowred.few_rows_plan = #rowred.plan<strategy = cluster, block = 4096, warps = 4, cluster = 8, vector = 8, reread = true, {{.*}}pair_reduce = true, {{.*}}max_rows = 64>
// BLOCK-SAME: rowred.plan = #rowred.plan<strategy = online, {{.*}}prefetch = stage,
// BLOCK-LABEL: func.func @rms_norm_f32
// BLOCK-NOT: few_rows_plan
// BLOCK: return
// N20480-LABEL: func.func @softmax_bf16
// N20480: rowred.few_rows_plan = #rowred.plan<strategy = cluster, {{.*}}cluster = 8, {{.*}}pair_reduce = true, {{.*}}max_rows = 16>
// N20480-SAME: rowred.plan = #rowred.plan<strategy = online,

// Odd 16-bit rows of 16385 to 57344 are staged (a block per row) and keep
// their cluster of 8 for at most 64 rows (32 beyond 32768); f32's rows of
// 16385 to 24576 are
// over a cluster of 8 (the table's row_lengths) at every row count: one
// kernel.
// N16411-LABEL: func.func @softmax_f32
// N16411-NOT: few_rows_plan
// N16411: rowred.plan = #rowred.plan<strategy = cluster, block = 3072, warps = 3, cluster = 8,
// N16411-LABEL: func.func @softmax_bf16
// N16411: rowred.few_rows_plan = #rowred.plan<strategy = cluster, block = 3072, {{.*}}cluster = 8, {{.*}}max_rows = 64>
// N16411-SAME: rowred.plan = #rowred.plan<strategy = online, block = 8192, warps = 16, vector = 8, prefetch = stage, max_cols = 24576, stage_elements = 24576, grid = rows>

// Softmax's rows of 16384 (f32 measured 0.92-0.99 on the cluster of 8 from
// 64 rows): one kernel; the norms there take a cluster for a few rows
// (few-rows-norms.mlir). Chips without clusters: one kernel.
// N16384-LABEL: func.func @softmax_f32
// N16384-NOT: few_rows_plan
// N16384-LABEL: func.func @rms_norm_f32
// N16384: few_rows_plan
// NONE-NOT: few_rows_plan

// LAUNCH-LABEL: func.func @softmax_f32
// LAUNCH: scf.if
// LAUNCH: %[[FEW:.*]] = arith.cmpi ule, %{{.*}}, %c16
// LAUNCH: scf.if %[[FEW]] {
// LAUNCH: gpu.launch_func @softmax_f32_kernel0_rows16::@softmax_f32_kernel0_rows16 clusters in (%c16
// LAUNCH: } else {
// LAUNCH: %[[LADDER:.*]] = arith.cmpi ule, %{{.*}}, %c24
// LAUNCH: scf.if %[[LADDER]] {
// LAUNCH: gpu.launch_func @softmax_f32_kernel0_rows24::@softmax_f32_kernel0_rows24 clusters in (%c8
// LAUNCH: } else {
// LAUNCH: gpu.launch_func @softmax_f32_kernel0::@softmax_f32_kernel0 blocks
// LAUNCH: gpu.module @softmax_f32_kernel0
// LAUNCH: gpu.module @softmax_f32_kernel0_rows16
// LAUNCH: gpu.func @softmax_f32_kernel0_rows16({{.*}}) kernel attributes {{{.*}}nvvm.cluster_dim = array<i32: 16, 1, 1>

// JSON: "kernel": "softmax_f32_kernel0",
// JSON: "strategy": "chunks",
// JSON: "variants": [
// JSON-NEXT: {
// JSON-NEXT: "kernel": "softmax_f32_kernel0_rows16",
// JSON-NEXT: "max_rows": 16
// JSON-NEXT: },
// JSON-NEXT: {
// JSON-NEXT: "kernel": "softmax_f32_kernel0_rows24",
// JSON-NEXT: "max_rows": 24
// JSON-NEXT: }
// JSON-NEXT: ]

// JSON-FEW: "cluster_blocks": 16,
// JSON-FEW: "kernel": "softmax_f32_kernel0_rows16",
// JSON-FEW: "max_rows": 16,
// JSON-FEW: "strategy": "cluster",
// JSON-FEW-NOT: "variants"

// A slice of a row of odd length (the peeled path) holds another map than
// softmax's at 80 registers, six blocks per SM (at 64, eight, log-softmax's
// spills 44 bytes); softmax's keeps eight.
// N32001-LABEL: func.func @softmax_bf16
// N32001: rowred.few_rows_plan = #rowred.plan<strategy = cluster, block = 4096, {{.*}}cluster = 8, {{.*}}min_blocks_per_sm = 8, max_rows = 64>
// N32001-LABEL: func.func @log_softmax_bf16
// N32001: rowred.few_rows_plan = #rowred.plan<strategy = cluster, block = 4096, {{.*}}cluster = 8, {{.*}}min_blocks_per_sm = 6, max_rows = 64>

func.func @softmax_f32(%x: memref<?x?xf32>, %y: memref<?x?xf32>) {
  rowred.softmax dimension(1) ins(%x : memref<?x?xf32>) outs(%y : memref<?x?xf32>)
  return
}

func.func @softmax_bf16(%x: memref<?x?xbf16>, %y: memref<?x?xbf16>) {
  rowred.softmax dimension(1) ins(%x : memref<?x?xbf16>) outs(%y : memref<?x?xbf16>)
  return
}

func.func @log_softmax_bf16(%x: memref<?x?xbf16>, %y: memref<?x?xbf16>) {
  rowred.log_softmax dimension(1) ins(%x : memref<?x?xbf16>) outs(%y : memref<?x?xbf16>)
  return
}

// A plan request states the kernel: no second one.
func.func @softmax_given(%x: memref<?x?xf32>, %y: memref<?x?xf32>) {
  rowred.softmax dimension(1) ins(%x : memref<?x?xf32>) outs(%y : memref<?x?xf32>) {rowred.plan_request = #rowred.plan_request<strategy = chunks, chunk_stage = 0>}
  return
}

// Rows that auto does not cut into chunks (f32 rms_norm keeps its
// clusters): no second kernel.
func.func @rms_norm_f32(%x: memref<?x?xf32>, %w: memref<?xf32>, %y: memref<?x?xf32>) {
  rowred.rms_norm epsilon(1.0e-6) ins(%x : memref<?x?xf32>) weight(%w : memref<?xf32>) outs(%y : memref<?x?xf32>)
  return
}

// bf16 rms_norm's rows of 65536 to 262144 are cut into generic chunks.
func.func @rms_norm_bf16(%x: memref<?x?xbf16>, %w: memref<?xbf16>, %y: memref<?x?xbf16>) {
  rowred.rms_norm epsilon(1.0e-6) ins(%x : memref<?x?xbf16>) weight(%w : memref<?xbf16>) outs(%y : memref<?x?xbf16>)
  return
}

// layer_norm's f32 rows of 262144: chunks for any launch.
func.func @layer_norm_f32(%x: memref<?x?xf32>, %w: memref<?xf32>, %b: memref<?xf32>, %y: memref<?x?xf32>) {
  rowred.layer_norm epsilon(1.0e-05) ins(%x : memref<?x?xf32>) weight(%w : memref<?xf32>) bias(%b : memref<?xf32>) outs(%y : memref<?x?xf32>)
  return
}
