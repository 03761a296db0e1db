// A map may have several kernels for a few rows (rowred.few_rows_plan: an
// array of plans of increasing max_rows, as rowred-plan writes a ladder of
// the plan table's few_rows). The host code tries them in order: a launch
// of at most 4 rows takes the cluster of 16, of 5 to 64 the cluster of 8,
// and longer ones the main kernel. The main kernel's metadata lists both
// variants, by their rows; each variant's lists none.

// RUN: softmax-opt %s --convert-rowred-to-gpu | FileCheck %s --check-prefix=LAUNCH
// RUN: softmax-opt %s --convert-rowred-to-gpu | FileCheck %s --check-prefix=META
// RUN: rm -rf %t && softmax-opt %s --rowred-to-ptx="cols=100277 chip=sm_90 output-dir=%t" -o /dev/null
// RUN: FileCheck %s --check-prefix=JSON --input-file=%t/logsumexp_kernel0.json
// RUN: FileCheck %s --check-prefix=JSON-FOUR --input-file=%t/logsumexp_kernel0_rows4.json
// RUN: FileCheck %s --check-prefix=JSON-SIXTYFOUR --input-file=%t/logsumexp_kernel0_rows64.json

// LAUNCH-LABEL: func.func @logsumexp
// LAUNCH: %[[FOUR:.*]] = arith.cmpi ule, %{{.*}}, %c4
// LAUNCH: scf.if %[[FOUR]] {
// LAUNCH: gpu.launch_func @logsumexp_kernel0_rows4::@logsumexp_kernel0_rows4 clusters in (%c16
// LAUNCH: } else {
// LAUNCH: %[[SIXTYFOUR:.*]] = arith.cmpi ule, %{{.*}}, %c64
// LAUNCH: scf.if %[[SIXTYFOUR]] {
// LAUNCH: gpu.launch_func @logsumexp_kernel0_rows64::@logsumexp_kernel0_rows64 clusters in (%c8
// LAUNCH: } else {
// LAUNCH: gpu.launch_func @logsumexp_kernel0::@logsumexp_kernel0 blocks
// LAUNCH: gpu.module @logsumexp_kernel0
// LAUNCH: gpu.module @logsumexp_kernel0_rows4
// LAUNCH: gpu.func @logsumexp_kernel0_rows4({{.*}}) kernel attributes {{{.*}}nvvm.cluster_dim = array<i32: 16, 1, 1>
// LAUNCH: gpu.module @logsumexp_kernel0_rows64
// LAUNCH: gpu.func @logsumexp_kernel0_rows64({{.*}}) kernel attributes {{{.*}}nvvm.cluster_dim = array<i32: 8, 1, 1>

// META: rowred.kernels = {logsumexp_kernel0 = {{{.*}}variants = [{kernel = "logsumexp_kernel0_rows4", max_rows = 4 : i64}, {kernel = "logsumexp_kernel0_rows64", max_rows = 64 : i64}]
// META-SAME: logsumexp_kernel0_rows4 = {
// META-NOT: variants
// META-SAME: logsumexp_kernel0_rows64 = {
// META-NOT: variants
// META-SAME: }

// JSON: "variants": [
// JSON: "kernel": "logsumexp_kernel0_rows4",
// JSON: "max_rows": 4
// JSON: "kernel": "logsumexp_kernel0_rows64",
// JSON: "max_rows": 64
// JSON-FOUR: "cluster_blocks": 16,
// JSON-FOUR: "max_rows": 4,
// JSON-FOUR-NOT: "variants"
// JSON-SIXTYFOUR: "cluster_blocks": 8,
// JSON-SIXTYFOUR: "max_rows": 64,
// JSON-SIXTYFOUR-NOT: "variants"

func.func @logsumexp(%arg0: memref<?x?xbf16>, %arg1: memref<?xf32>) {
  %cst = arith.constant 0x7F800000 : f32
  %c0 = arith.constant 0 : index
  %dim = memref.dim %arg0, %c0 : memref<?x?xbf16>
  %alloc = memref.alloc(%dim) : memref<?xf32>
  rowred.reduce max ins(%arg0 : memref<?x?xbf16>) outs(%alloc : memref<?xf32>) {
  ^bb0(%arg2: f32):
    rowred.yield %arg2 : f32
  }
  %alloc_0 = memref.alloc(%dim) : memref<?xf32>
  rowred.reduce sum ins(%arg0 : memref<?x?xbf16>) rows(%alloc : memref<?xf32>) outs(%alloc_0 : memref<?xf32>) {
  ^bb0(%arg2: f32, %arg3: f32):
    %0 = arith.subf %arg2, %arg3 : f32
    %1 = math.exp %0 : f32
    rowred.yield %1 : f32
  }
  rowred.map ins(%arg0 : memref<?x?xbf16>) rows(%alloc, %alloc_0 : memref<?xf32>, memref<?xf32>) outs(%arg1 : memref<?xf32>) {
  ^bb0(%arg2: f32, %arg3: f32, %arg4: f32):
    %0 = math.log %arg4 : f32
    %1 = arith.addf %arg3, %0 : f32
    %2 = math.absf %arg3 : f32
    %3 = arith.cmpf oeq, %2, %cst : f32
    %4 = arith.select %3, %arg3, %1 : f32
    rowred.yield %4 : f32
  } {rowred.few_rows_plan = [
      #rowred.plan<strategy = cluster, block = 8192, warps = 16, cluster = 16, vector = 8, reread = true, max_cols = 131072, stage_elements = 8192, max_rows = 4>,
      #rowred.plan<strategy = cluster, block = 16384, warps = 16, cluster = 8, vector = 8, reread = true, max_cols = 131072, stage_elements = 16384, min_blocks_per_sm = 2, max_rows = 64>],
     rowred.plan = #rowred.plan<strategy = online, block = 4096, warps = 4, vector = 8, reverse_second_pass = false, prefetch = registers, stage_elements = 102400, grid = rows>}
  memref.dealloc %alloc_0 : memref<?xf32>
  memref.dealloc %alloc : memref<?xf32>
  return
}
