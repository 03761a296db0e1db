// The named pipeline from the dialect to PTX text, and the files it writes.
// RUN: rm -rf %t && softmax-opt %s --test-rowred-plan-request="fields='warps = 4'" --rowred-to-ptx="cols=1024 output-dir=%t" | FileCheck %s --check-prefix=IR
// RUN: FileCheck %s --check-prefix=PTX --input-file=%t/softmax_kernel0.ptx
// RUN: FileCheck %s --check-prefix=JSON --input-file=%t/softmax_kernel0.json
// RUN: FileCheck %s --check-prefix=SLOTS --input-file=%t/softmax_kernel0.ptx
// RUN: softmax-opt %s --rowred-to-ptx="strategy=online output-dir=%t/online" -o /dev/null
// RUN: FileCheck %s --check-prefix=ONLINE --input-file=%t/online/softmax_kernel0.ptx
// RUN: FileCheck %s --check-prefix=ONLINE-JSON --input-file=%t/online/softmax_kernel0.json
// RUN: softmax-opt %s --rowred-to-ptx="cols=1024 chip=sm_80" | FileCheck %s --check-prefix=SM80

// The host keeps its launch; the kernel module became a binary holding PTX.
// IR: gpu.launch_func @softmax_kernel0::@softmax_kernel0
// PTX ISA 8.1 for every kernel: the cluster exchanges use st.async.
// IR: gpu.binary @softmax_kernel0 [#gpu.object<#nvvm.target<O = 3, chip = "sm_90", features = "+ptx81">, {{.*}}assembly = "

// The fused kernel: 16-byte loads and stores on the aligned path, 4-byte ones
// on the fallback, warp butterflies, one barrier per block-level reduction,
// ex2.approx for exp, one reciprocal per row.
// The exchange slots are 16-byte aligned, as the vector loads that read
// them back need (an array of the default alignment 4 after the cluster's
// arrays was read with ld.shared.v4 and faulted).
// SLOTS: .shared .align 16 .b8 __wg_softmax_kernel0_0

// PTX: .version 8.1
// PTX-NEXT: .target sm_90
// PTX: .visible .entry softmax_kernel0(
// PTX-NEXT: .param .u64 .ptr .global .align 1 softmax_kernel0_param_0,
// PTX-NEXT: .param .u64 .ptr .global .align 1 softmax_kernel0_param_1,
// PTX-NEXT: .param .u64 softmax_kernel0_param_2,
// PTX-NEXT: .param .u64 softmax_kernel0_param_3,
// PTX-NEXT: .param .u64 softmax_kernel0_param_4,
// PTX-NEXT: .param .u64 softmax_kernel0_param_5
// PTX: .maxntid 128, 1, 1
// PTX-DAG: ld.global.v4.b32
// PTX-DAG: st.global.v4.b32
// PTX-DAG: ld.global.b32
// PTX-DAG: st.global.b32
// PTX-DAG: shfl.sync.bfly.b32 {{.*}}, 16, 31, -1;
// PTX-DAG: shfl.sync.bfly.b32 {{.*}}, 1, 31, -1;
// PTX-DAG: bar.sync 0;
// PTX-DAG: ex2.approx.ftz.f32
// PTX-DAG: rcp.rn.f32
// PTX-NOT: div.rn.f32
// PTX-NOT: .local

// JSON: "abi_version": 7,
// JSON: "block_elements": 1024,
// JSON: "block_threads": 128,
// JSON: "chip": "sm_90",
// JSON: "kernel": "softmax_kernel0",
// JSON: "max_cols": 1024,
// JSON: "min_cols": 1,
// JSON: "op": "softmax",
// JSON: "params": [
// JSON: "name": "x",
// JSON-NEXT: "type": "const f32 *"
// JSON: "name": "y",
// JSON: "name": "rows",
// JSON: "name": "cols",
// JSON: "name": "x_row_stride",
// JSON: "name": "y_row_stride",
// JSON: "ptx": "softmax_kernel0.ptx",
// JSON: "shared_bytes": 32,
// JSON: "strategy": "fused",
// JSON: "vector_width": 4

// The online kernel works for any N; its 16-byte loads carry an L2 policy.
// ONLINE: .maxntid 1024, 1, 1
// ONLINE-DAG: createpolicy.fractional.L2::evict_last.b64
// ONLINE-DAG: ld.global.L2::cache_hint.v4.b32
// ONLINE-DAG: st.global.L2::cache_hint.v4.b32
// ONLINE-DAG: ex2.approx.ftz.f32
// ONLINE-DAG: shfl.sync.bfly.b32
// ONLINE-DAG: bar.sync 0;
// ONLINE-NOT: .local
// ONLINE-JSON: "max_cols": 0,
// ONLINE-JSON: "strategy": "online",

// SM80: chip = "sm_80"
// SM80: .target sm_80
func.func @softmax(%x: memref<?x?xf32>, %y: memref<?x?xf32>) {
  rowred.softmax dimension(1) ins(%x : memref<?x?xf32>) outs(%y : memref<?x?xf32>)
  return
}
