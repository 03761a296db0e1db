// Decode-size norms: a launch of at most 64 rows of rms_norm or layer_norm
// of 2048 to 8192 elements takes a second kernel, a fused block on 256
// threads (512 for rms_norm beyond 4096) that loads the weight (and bias)
// with the row, before the reduction (hoist_map_loads; the plan table's
// few_rows), at one block per SM. Rows of 12288-16384 take a cluster of 4
// blocks of 8 warps, also hoisting, whose blocks (four a row) keep ptxas'
// register choice, whether the main kernel is a fused block (12288) or the
// online one (f32 rms_norm at 16384); 16-bit layer_norm there a fused block
// of 8 warps at one block per SM; 16-bit rows from 16385 take the
// clusters of the table's 16-bit rows. f32 layer_norm of 16384 keeps the
// cluster of 4 to 56 rows, then takes a cluster of 2 blocks of 16 warps to
// 64 (a ladder). Softmax at these lengths keeps one kernel.

// RUN: softmax-opt %s --rowred-decompose --rowred-plan="cols=4096 chip=sm_90" | FileCheck %s --check-prefix=N4096
// RUN: softmax-opt %s --rowred-decompose --rowred-plan="cols=8192 chip=sm_90" | FileCheck %s --check-prefix=N8192
// RUN: softmax-opt %s --rowred-decompose --rowred-plan="cols=1024 chip=sm_90" | FileCheck %s --check-prefix=N1024
// RUN: softmax-opt %s --rowred-decompose --rowred-plan="cols=12288 chip=sm_90" | FileCheck %s --check-prefix=N12288
// RUN: softmax-opt %s --rowred-decompose --rowred-plan="cols=16384 chip=sm_90" | FileCheck %s --check-prefix=N16384
// RUN: softmax-opt %s --rowred-decompose --rowred-plan="cols=20480 chip=sm_90" | FileCheck %s --check-prefix=N20480
// RUN: rm -rf %t16 && softmax-opt %s --rowred-to-ptx="cols=16384 chip=sm_90 output-dir=%t16" -o /dev/null
// RUN: FileCheck %s --check-prefix=PTX16-FEW --input-file=%t16/rms_norm_f32_kernel0_rows64.ptx
// RUN: FileCheck %s --check-prefix=PTX16-FUSED --input-file=%t16/layer_norm_bf16_kernel1_rows64.ptx
// RUN: rm -rf %t && softmax-opt %s --rowred-to-ptx="cols=4096 chip=sm_90 output-dir=%t" -o /dev/null
// RUN: FileCheck %s --check-prefix=JSON --input-file=%t/rms_norm_f32_kernel0.json
// RUN: FileCheck %s --check-prefix=JSON-FEW --input-file=%t/rms_norm_f32_kernel0_rows64.json
// RUN: FileCheck %s --check-prefix=PTX --input-file=%t/rms_norm_f32_kernel0.ptx
// RUN: FileCheck %s --check-prefix=PTX-FEW --input-file=%t/rms_norm_f32_kernel0_rows64.ptx

// N4096-LABEL: func.func @rms_norm_f32
// N4096: rowred.few_rows_plan = #rowred.plan<strategy = fused, block = 4096, warps = 8,{{.*}}min_blocks_per_sm = 1, max_rows = 64, hoist_map_loads = true>
// N4096-SAME: rowred.plan = #rowred.plan<strategy = fused, block = 4096, warps = 8,
// N4096-NOT: hoist_map_loads
// N4096-LABEL: func.func @layer_norm_bf16
// N4096: rowred.few_rows_plan = #rowred.plan<strategy = fused, block = 4096, warps = 8,{{.*}}max_rows = 64, hoist_map_loads = true>
// N4096-LABEL: func.func @softmax_f32
// N4096-NOT: few_rows_plan
// N4096: return
// N4096-LABEL: func.func @layer_norm_f32
// N4096: rowred.few_rows_plan = #rowred.plan<strategy = fused,

// f32 rms_norm at 8192: the main kernel already has 512 threads; the
// second kernel differs by its hoisted loads.
// N8192-LABEL: func.func @rms_norm_f32
// N8192: rowred.few_rows_plan = #rowred.plan<strategy = fused, block = 8192, warps = 16,{{.*}}hoist_map_loads = true>
// N8192-SAME: rowred.plan = #rowred.plan<strategy = fused, block = 8192, warps = 16,
// N8192-LABEL: func.func @layer_norm_bf16
// N8192: rowred.few_rows_plan = #rowred.plan<strategy = fused, block = 8192, warps = 8,{{.*}}max_rows = 64

// N1024-NOT: few_rows_plan

// N12288-LABEL: func.func @rms_norm_f32
// N12288: rowred.few_rows_plan = #rowred.plan<strategy = cluster, block = 3072, warps = 8, cluster = 4,{{.*}}max_rows = 64, hoist_map_loads = true>
// N12288-SAME: rowred.plan = #rowred.plan<strategy = fused, block = 12288,
// N12288-LABEL: func.func @layer_norm_bf16
// N12288: rowred.few_rows_plan = #rowred.plan<strategy = fused, block = 12288, warps = 8,{{.*}}min_blocks_per_sm = 1, max_rows = 64, hoist_map_loads = true>
// N12288-LABEL: func.func @softmax_f32
// N12288-NOT: few_rows_plan
// N12288-LABEL: func.func @layer_norm_f32
// N12288: rowred.few_rows_plan = #rowred.plan<strategy = cluster, block = 3072, warps = 8, cluster = 4,{{.*}}max_rows = 64, hoist_map_loads = true>, rowred.origin

// N16384-LABEL: func.func @rms_norm_f32
// N16384: rowred.few_rows_plan = #rowred.plan<strategy = cluster, block = 4096, warps = 8, cluster = 4,
// N16384-NOT: min_blocks_per_sm
// N16384-SAME: max_rows = 64, hoist_map_loads = true>
// N16384-SAME: rowred.plan = #rowred.plan<strategy = online,
// N16384-LABEL: func.func @layer_norm_bf16
// N16384: rowred.few_rows_plan = #rowred.plan<strategy = fused, block = 16384, warps = 8,{{.*}}min_blocks_per_sm = 1, max_rows = 64, hoist_map_loads = true>
// N16384-LABEL: func.func @softmax_f32
// N16384-NOT: few_rows_plan
// N16384-LABEL: func.func @layer_norm_f32
// N16384: rowred.few_rows_plan = [#rowred.plan<strategy = cluster, block = 4096, warps = 8, cluster = 4,{{.*}}max_rows = 56, hoist_map_loads = true>, #rowred.plan<strategy = cluster, block = 8192, warps = 16, cluster = 2,{{.*}}max_rows = 64, hoist_map_loads = true>]

// N20480-LABEL: func.func @layer_norm_bf16
// N20480: rowred.few_rows_plan = #rowred.plan<strategy = cluster, block = 3072, warps = 3, cluster = 8,{{.*}}max_rows = 16>

// The cluster's kernel: 256 threads, no bound on blocks per SM, its weight
// and bias loaded before the row's cluster-wide reduction.
// PTX16-FEW: .maxntid 256, 1, 1
// PTX16-FEW-NOT: .minnctapersm
// PTX16-FEW: barrier.cluster
// The fused block of 16-bit layer_norm: 256 threads, one block per SM, no
// cluster.
// PTX16-FUSED: .maxntid 256, 1, 1
// PTX16-FUSED: .minnctapersm 1
// PTX16-FUSED-NOT: barrier.cluster

// JSON: "block_threads": 256,
// JSON: "variants": [
// JSON: "kernel": "rms_norm_f32_kernel0_rows64",
// JSON-NEXT: "max_rows": 64
// JSON-FEW: "block_threads": 256,

// The main kernel loads the weight (plain ld.global; the row's loads carry
// an L2 hint) after the row's rsqrt; the second kernel before it.
// PTX-NOT: ld.global.v4.b32
// PTX: rsqrt.approx.f32
// PTX: ld.global.v4.b32
// PTX-FEW: .minnctapersm 1
// PTX-FEW: ld.global.v4.b32
// PTX-FEW: rsqrt.approx.f32

func.func @rms_norm_f32(%x: memref<?x?xf32>, %w: memref<?xf32>,
                        %y: memref<?x?xf32>, %rstd: memref<?xf32>) {
  rowred.rms_norm epsilon(1.0e-05) ins(%x : memref<?x?xf32>)
      weight(%w : memref<?xf32>) outs(%y : memref<?x?xf32>)
      rstd(%rstd : memref<?xf32>)
  return
}

func.func @layer_norm_bf16(%x: memref<?x?xbf16>, %w: memref<?xbf16>,
                           %b: memref<?xbf16>, %y: memref<?x?xbf16>,
                           %mean: memref<?xf32>, %rstd: memref<?xf32>) {
  rowred.layer_norm epsilon(1.0e-05) ins(%x : memref<?x?xbf16>)
      weight(%w : memref<?xbf16>) bias(%b : memref<?xbf16>)
      outs(%y : memref<?x?xbf16>) mean(%mean : memref<?xf32>)
      rstd(%rstd : memref<?xf32>)
  return
}

func.func @softmax_f32(%x: memref<?x?xf32>, %y: memref<?x?xf32>) {
  rowred.softmax dimension(1) ins(%x : memref<?x?xf32>)
      outs(%y : memref<?x?xf32>)
  return
}

func.func @layer_norm_f32(%x: memref<?x?xf32>, %w: memref<?xf32>,
                          %b: memref<?xf32>, %y: memref<?x?xf32>,
                          %mean: memref<?xf32>, %rstd: memref<?xf32>) {
  rowred.layer_norm epsilon(1.0e-05) ins(%x : memref<?x?xf32>)
      weight(%w : memref<?xf32>) bias(%b : memref<?xf32>)
      outs(%y : memref<?x?xf32>) mean(%mean : memref<?xf32>)
      rstd(%rstd : memref<?xf32>)
  return
}
