// Rows of 64 elements: 8 threads per row (8 elements each), 16 rows per
// block; the butterfly stays within the 8 lanes of a row.
// RUN: softmax-opt %s --test-rowred-plan-request="fields='block = 64, rows_per_block = 16'" --rowred-decompose --rowred-plan --convert-rowred-to-gpu | FileCheck %s --check-prefix=EIGHT
// RUN: softmax-opt %s --test-rowred-plan-request="fields='block = 32, rows_per_block = 32, warps = 1'" --rowred-decompose --rowred-plan --convert-rowred-to-gpu | FileCheck %s --check-prefix=ONE
// RUN: not softmax-opt %s --test-rowred-plan-request="fields='block = 1024, rows_per_block = 2, warps = 4'" --rowred-decompose --rowred-plan --convert-rowred-to-gpu 2>&1 | FileCheck %s --check-prefix=WIDE
// RUN: not softmax-opt %s --test-rowred-plan-request="fields='block = 1024, rows_per_block = 3'" --rowred-decompose --rowred-plan --convert-rowred-to-gpu 2>&1 | FileCheck %s --check-prefix=ODD
// RUN: not softmax-opt %s --test-rowred-plan-request="fields='rows_per_block = 2'" --rowred-decompose --rowred-plan="strategy=online" --convert-rowred-to-gpu 2>&1 | FileCheck %s --check-prefix=ONLINE
// RUN: not softmax-opt %s --test-rowred-plan-request="fields='block = 64, rows_per_block = 4, warps = 3'" --rowred-decompose --rowred-plan --convert-rowred-to-gpu 2>&1 | FileCheck %s --check-prefix=GROUP24
// EIGHT: block_threads = 128 : i64
// EIGHT-SAME: elements_per_thread = 8 : i64
// EIGHT-SAME: rows_per_block = 16 : i64
// EIGHT: gpu.func @small_kernel0
// EIGHT-NOT: gpu.shuffle xor %{{.*}}, %c16_i32
// EIGHT-NOT: gpu.shuffle xor %{{.*}}, %c8_i32
// EIGHT: gpu.shuffle xor %{{.*}}, %c4_i32{{[_0-9]*}}, %c32_i32
// EIGHT-NOT: gpu.barrier
// EIGHT: gpu.return
func.func @small(%x: memref<?x?xf32>, %y: memref<?x?xf32>) {
  rowred.softmax dimension(1) ins(%x : memref<?x?xf32>) outs(%y : memref<?x?xf32>)
  return
}

// One thread per row (32 elements each), 32 rows per warp: no shuffle at all.
// ONE: block_threads = 32 : i64
// ONE-SAME: elements_per_thread = 32 : i64
// ONE-SAME: rows_per_block = 32 : i64
// ONE: gpu.func @small_kernel0
// ONE-NOT: gpu.shuffle
// ONE-NOT: gpu.barrier
// ONE: gpu.return

// Groups larger than a warp would need a block barrier per row.
// GROUP24: error: 'rowred.map' op rows_per_block = 4 over 96 threads must leave a power of two from 1 to 32 threads per row
// WIDE: error: 'rowred.map' op rows_per_block = 2 over 128 threads must leave a power of two from 1 to 32 threads per row
// ODD: error: 'rowred.map' op rows_per_block must be a power of two, got 3
// ONLINE: error: 'rowred.map' op rows_per_block does not apply to the online strategy
