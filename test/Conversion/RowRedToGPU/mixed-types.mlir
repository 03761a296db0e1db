// Rows read as bf16 and written as f32: auto's vector is 16 bytes of the
// wider, f32, element (8 bf16 elements would be 32 bytes of output, which
// the plan's verifier refuses), and the kernel compiles.
// RUN: softmax-opt %s --rowred-decompose --rowred-plan="chip=sm_90" | FileCheck %s
// RUN: rm -rf %t && softmax-opt %s --rowred-to-ptx="chip=sm_90 output-dir=%t" -o /dev/null
// RUN: FileCheck %s --check-prefix=JSON --input-file=%t/rms_norm_bf16_to_f32_kernel0.json

// CHECK-LABEL: func.func @rms_norm_bf16_to_f32
// CHECK: rowred.plan = #rowred.plan<strategy = fused, {{.*}}vector = 4,
// JSON: "input_type": "bf16",
// JSON: "output_type": "f32",
// JSON: "vector_width": 4
func.func @rms_norm_bf16_to_f32(%x: memref<8x4096xbf16>, %o: memref<8x4096xf32>) {
  rowred.rms_norm epsilon(1.0e-06) ins(%x : memref<8x4096xbf16>) outs(%o : memref<8x4096xf32>)
  return
}
