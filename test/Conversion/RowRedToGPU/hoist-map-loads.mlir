// hoist_map_loads: the operands only the map reads (rms_norm's weight) are
// loaded with the row, before its reduction, instead of after it. Asked for
// here on the main kernel; auto asks for it on the norms' decode-size second
// kernels (few-rows-norms.mlir).

// RUN: softmax-opt %s --test-rowred-plan-request="fields='strategy = fused, hoist_map_loads = true'" --rowred-decompose --rowred-plan="cols=4096" | FileCheck %s --check-prefix=FUSED
// RUN: softmax-opt %s --test-rowred-plan-request="fields='strategy = cluster, cluster = 4, hoist_map_loads = true'" --rowred-decompose --rowred-plan="cols=4096" | FileCheck %s --check-prefix=CLUSTER
// RUN: not softmax-opt %s --test-rowred-plan-request="fields='strategy = online, hoist_map_loads = true'" --rowred-decompose --rowred-plan="cols=4096" 2>&1 | FileCheck %s --check-prefix=ONLINE
// RUN: rm -rf %t && softmax-opt %s --test-rowred-plan-request="fields='strategy = fused, hoist_map_loads = true'" --rowred-to-ptx="cols=4096 chip=sm_90 output-dir=%t" -o /dev/null
// RUN: FileCheck %s --check-prefix=PTX --input-file=%t/rms_norm_bf16_kernel0.ptx
// RUN: rm -rf %t && softmax-opt %s --test-rowred-plan-request="fields='strategy = cluster, cluster = 4, hoist_map_loads = true'" --rowred-to-ptx="cols=4096 chip=sm_90 output-dir=%t" -o /dev/null
// RUN: FileCheck %s --check-prefix=PTX --input-file=%t/rms_norm_bf16_kernel0.ptx

// FUSED-LABEL: func.func @rms_norm_bf16
// FUSED: rowred.plan = #rowred.plan<strategy = fused, {{.*}}hoist_map_loads = true>
// A map that reads no such operand has nothing to hoist: the field is off.
// FUSED-LABEL: func.func @softmax_bf16
// FUSED-NOT: hoist_map_loads
// FUSED: return

// CLUSTER-LABEL: func.func @rms_norm_bf16
// CLUSTER: rowred.plan = #rowred.plan<strategy = cluster, {{.*}}cluster = 4, {{.*}}hoist_map_loads = true>

// ONLINE: error: 'rowred.map' op hoist_map_loads applies to the fused and cluster strategies only

// The vector path loads nothing between the row's rsqrt and its first
// store: the weight came with the row (without the hoist its loads sit
// there).
// PTX-LABEL: .entry rms_norm_bf16_kernel0
// PTX: rsqrt.approx.f32
// PTX-NOT: ld.global
// PTX: st.global.v4.b32

func.func @rms_norm_bf16(%x: memref<?x?xbf16>, %w: memref<?xbf16>,
                         %y: memref<?x?xbf16>, %rstd: memref<?xf32>) {
  rowred.rms_norm epsilon(1.0e-05) ins(%x : memref<?x?xbf16>)
      weight(%w : memref<?xbf16>) outs(%y : memref<?x?xbf16>)
      rstd(%rstd : memref<?xf32>)
  return
}

func.func @softmax_bf16(%x: memref<?x?xbf16>, %y: memref<?x?xbf16>) {
  rowred.softmax dimension(1) ins(%x : memref<?x?xbf16>)
      outs(%y : memref<?x?xbf16>)
  return
}
