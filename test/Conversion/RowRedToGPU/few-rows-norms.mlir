// Decode-size norms: a launch of at most 64 rows of rms_norm or layer_norm
// of 2048 to 8192 elements takes a second kernel, a fused block on 256
// threads (512 for rms_norm beyond 4096) that loads the weight (and bias)
// with the row, before the reduction (hoist_map_loads; the plan table's
// few_rows), at one block per SM. Softmax at these lengths keeps one
// kernel.

// RUN: softmax-opt %s --rowred-decompose --rowred-plan="cols=4096 chip=sm_90" | FileCheck %s --check-prefix=N4096
// RUN: softmax-opt %s --rowred-decompose --rowred-plan="cols=8192 chip=sm_90" | FileCheck %s --check-prefix=N8192
// RUN: softmax-opt %s --rowred-decompose --rowred-plan="cols=1024 chip=sm_90" | FileCheck %s --check-prefix=N1024
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

// f32 rms_norm at 8192: the main kernel already has 512 threads; the
// second kernel differs by its hoisted loads.
// N8192-LABEL: func.func @rms_norm_f32
// N8192: rowred.few_rows_plan = #rowred.plan<strategy = fused, block = 8192, warps = 16,{{.*}}hoist_map_loads = true>
// N8192-SAME: rowred.plan = #rowred.plan<strategy = fused, block = 8192, warps = 16,
// N8192-LABEL: func.func @layer_norm_bf16
// N8192: rowred.few_rows_plan = #rowred.plan<strategy = fused, block = 8192, warps = 8,{{.*}}max_rows = 64

// N1024-NOT: few_rows_plan

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
