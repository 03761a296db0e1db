// Rows that fit three quarters of their power-of-two block (P >= 8192) get a
// block of 3P/4 elements over three quarters of the threads, with the same
// elements per thread: N = 12288 runs 384 threads x 32 elements (8 chunks of
// 4 x 384 = 1536 columns, all of them in the row) instead of 512 x 32 with
// two chunks wholly masked.
// RUN: softmax-opt %s --rowred-decompose --rowred-plan=cols=12288 --convert-rowred-to-gpu | FileCheck %s
// RUN: softmax-opt %s --rowred-decompose --rowred-plan=cols=12289 --convert-rowred-to-gpu | FileCheck %s --check-prefix=POW2
// RUN: softmax-opt %s --rowred-decompose --rowred-plan=cols=6144 --convert-rowred-to-gpu | FileCheck %s --check-prefix=N6144
// RUN: softmax-opt %s --rowred-decompose --rowred-plan=cols=3072 --convert-rowred-to-gpu | FileCheck %s --check-prefix=N3072
// RUN: softmax-opt %s --rowred-decompose --rowred-plan="strategy=cluster cols=151936" --convert-rowred-to-gpu | FileCheck %s --check-prefix=CLUSTER
// RUN: softmax-opt %s --rowred-decompose --rowred-plan=cols=49152 --convert-rowred-to-gpu | FileCheck %s --check-prefix=CLUSTER4
// RUN: softmax-opt %s --test-rowred-plan-request="fields='block = 3072, warps = 3'" --rowred-decompose --rowred-plan --convert-rowred-to-gpu | FileCheck %s --check-prefix=EXPLICIT

// CHECK: block_elements = 12288 : i64, block_threads = 384 : i64, chunk_elements = 0 : i64, cluster_blocks = 1 : i64, dynamic_shared_bytes = 0 : i64, elements_per_thread = 32 : i64
// CHECK-SAME: max_cols = 12288 : i64
// CHECK-SAME: strategy = "fused", vector_width = 4 : i64
// CHECK: gpu.func @softmax_kernel0({{.*}}) workgroup(%[[SMEM:.*]] : memref<2x12xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}) kernel attributes {known_block_size = array<i32: 384, 1, 1>}
// Chunk k of thread t starts at column (k * 384 + t) * 4; the last of the
// eight starts at 7 * 1536 = 10752.
// CHECK: arith.cmpi slt, %c0_i32{{.*}}, %[[LEFT:.*]] : i32
// CHECK: arith.cmpi slt, %c1536_i32, %[[LEFT]] : i32
// CHECK: arith.cmpi slt, %c10752_i32, %[[LEFT]] : i32
// CHECK-NOT: arith.cmpi slt, %c12288_i32
// The cross-warp step reads all twelve warp partials.
// CHECK: gpu.barrier
// CHECK: memref.load %[[SMEM]][%{{.*}}, %c11]
// CHECK-NOT: memref.load %[[SMEM]][%{{.*}}, %c12]

// POW2: block_elements = 16384 : i64, block_threads = 512 : i64, chunk_elements = 0 : i64, cluster_blocks = 1 : i64, dynamic_shared_bytes = 0 : i64, elements_per_thread = 32 : i64
// N6144: block_elements = 6144 : i64, block_threads = 384 : i64, chunk_elements = 0 : i64, cluster_blocks = 1 : i64, dynamic_shared_bytes = 0 : i64, elements_per_thread = 16 : i64
// Below 8192 the power-of-two block stays.
// N3072: block_elements = 4096 : i64, block_threads = 128 : i64
// CLUSTER: block_elements = 12288 : i64, block_threads = 384 : i64, chunk_elements = 0 : i64, cluster_blocks = 16 : i64, dynamic_shared_bytes = 0 : i64, elements_per_thread = 32 : i64
// CLUSTER-SAME: max_cols = 196608 : i64
// CLUSTER-SAME: strategy = "cluster"
// CLUSTER4: block_elements = 12288 : i64, block_threads = 384 : i64, chunk_elements = 0 : i64, cluster_blocks = 4 : i64
// CLUSTER4-SAME: strategy = "cluster"
// EXPLICIT: block_elements = 3072 : i64, block_threads = 96 : i64, chunk_elements = 0 : i64, cluster_blocks = 1 : i64, dynamic_shared_bytes = 0 : i64, elements_per_thread = 32 : i64
func.func @softmax(%x: memref<?x?xf32>, %y: memref<?x?xf32>) {
  rowred.softmax dimension(1) ins(%x : memref<?x?xf32>) outs(%y : memref<?x?xf32>)
  return
}
