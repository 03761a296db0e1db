// RUN: softmax-opt %s --rowred-decompose --convert-rowred-to-gpu | FileCheck %s

// A static 256-column bf16 log-softmax: one warp per row (8 elements per
// thread), so no shared memory and no barrier; bf16 is extended to f32 on
// load and rounded on store; log becomes log2 * ln 2 once per row.

// CHECK: rowred.kernels = {log_softmax_kernel0 = {block_elements = 256 : i64, block_threads = 32 : i64, elements_per_thread = 8 : i64, fast_exp = true, input_type = "bf16", max_cols = 256 : i64, min_cols = 1 : i64, op = "log_softmax", output_type = "bf16", reverse_second_pass = false, shared_bytes = 0 : i64, strategy = "fused", vector_width = 8 : i64}}
// CHECK: gpu.func @log_softmax_kernel0
// CHECK-NOT: workgroup
// CHECK-SAME: known_block_size = array<i32: 32, 1, 1>
// CHECK-NOT: gpu.barrier
// CHECK: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<1> -> vector<8xbf16>
// CHECK: arith.extf %{{.*}} : bf16 to f32
// CHECK: gpu.shuffle xor
// CHECK: math.log2 %{{.*}} fastmath<afn> : f32
// CHECK: arith.truncf %{{.*}} : f32 to bf16
// CHECK: llvm.store %{{.*}}, %{{.*}} {alignment = 16 : i64} : vector<8xbf16>, !llvm.ptr<1>
// CHECK-NOT: gpu.barrier
// CHECK: gpu.return
func.func @log_softmax(%x: memref<64x256xbf16>, %y: memref<64x256xbf16>) {
  rowred.log_softmax dimension(1) ins(%x : memref<64x256xbf16>) outs(%y : memref<64x256xbf16>)
  return
}
