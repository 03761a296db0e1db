// RUN: softmax-opt %s --rowred-decompose --rowred-plan --convert-rowred-to-gpu | FileCheck %s

// A static 256-column bf16 log-softmax: one warp per row (8 elements per
// thread), four rows per 128-thread block, so no shared memory and no
// barrier; bf16 is extended to f32 on load and rounded on store; log becomes
// log2 * ln 2 once per row. Each warp loads its next row ahead into
// registers (the 16-bit default for rows of 256-512). The host launches
// ceil(64 / 4) blocks.

// CHECK: rowred.kernels = {log_softmax_kernel0 = {block_elements = 256 : i64, block_threads = 128 : i64, chunk_elements = 0 : i64, cluster_blocks = 1 : i64, dynamic_shared_bytes = 0 : i64, elements_per_thread = 8 : i64, fast_exp = true, grid = "persistent", input_type = "bf16", keep_ahead = false, keep_ahead_bulk = false, l2_hints = false, max_cols = 256 : i64, min_cols = 1 : i64, op = "log_softmax", operands = [{name = "x", role = "input", type = "bf16"}, {name = "y", role = "output", type = "bf16"}], output_type = "bf16", pair_reduce = false, peeled_path = true, plan = {{.*}}, prefetch = "registers", reverse_second_pass = false, rows_per_block = 4 : i64, shared_bytes = 0 : i64, strategy = "fused", vector_width = 8 : i64}}
// CHECK: %[[GROUPS:.*]] = arith.ceildivui %{{.*}}, %c4
// CHECK: gpu.launch_func @log_softmax_kernel0::@log_softmax_kernel0 blocks in (%[[GROUPS]], %{{.*}}, %{{.*}}) threads in (%c128
// CHECK: gpu.func @log_softmax_kernel0
// CHECK-NOT: workgroup
// CHECK-SAME: known_block_size = array<i32: 128, 1, 1>
// Thread t works on row group t / 32 of the block, lane t % 32 of its row;
// the block's rows start at blockIdx.x * 4 and step by gridDim.x * 4.
// CHECK: %[[TID:.*]] = arith.index_cast %{{.*}} : index to i32
// CHECK: arith.remui %[[TID]], %c32_i32{{[_0-9]*}}
// CHECK: arith.divui %[[TID]], %c32_i32{{[_0-9]*}}
// CHECK: arith.muli %{{.*}}, %c4_i64{{[_0-9]*}} : i64
// CHECK: arith.muli %{{.*}}, %c4_i64{{[_0-9]*}} : i64
// CHECK: scf.for
// Rows past the end are masked, not skipped, so the warp stays converged.
// CHECK: arith.cmpi slt, %{{.*}}, %{{.*}} : i64
// CHECK-NOT: gpu.barrier
// CHECK: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<1> -> vector<8xbf16>
// CHECK: arith.extf %{{.*}} : bf16 to f32
// CHECK: gpu.shuffle xor %{{.*}}, %c16_i32{{[_0-9]*}}, %c32_i32
// CHECK: math.log2 %{{.*}} fastmath<afn> : f32
// CHECK: arith.truncf %{{.*}} : f32 to bf16
// CHECK: llvm.store %{{.*}}, %{{.*}} {alignment = 16 : i64} : vector<8xbf16>, !llvm.ptr<1>
// CHECK-NOT: gpu.barrier
// CHECK: gpu.return
func.func @log_softmax(%x: memref<64x256xbf16>, %y: memref<64x256xbf16>) {
  rowred.log_softmax dimension(1) ins(%x : memref<64x256xbf16>) outs(%y : memref<64x256xbf16>)
  return
}

