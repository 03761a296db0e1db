// The default block shape, chosen from a sweep on an H200 (docs/performance.md):
// fused blocks keep 16 elements per thread up to 1024 columns and 32 beyond,
// from one warp to 1024 threads; auto picks fused while that fits in 32
// elements per thread, online (1024 threads) beyond.
// RUN: softmax-opt %s --rowred-decompose --convert-rowred-to-gpu=cols=100 | FileCheck %s --check-prefix=N100
// RUN: softmax-opt %s --rowred-decompose --convert-rowred-to-gpu=cols=781 | FileCheck %s --check-prefix=N781
// RUN: softmax-opt %s --rowred-decompose --convert-rowred-to-gpu=cols=4096 | FileCheck %s --check-prefix=N4096
// RUN: softmax-opt %s --rowred-decompose --convert-rowred-to-gpu=cols=12288 | FileCheck %s --check-prefix=N12288
// RUN: softmax-opt %s --rowred-decompose --convert-rowred-to-gpu=cols=32768 | FileCheck %s --check-prefix=N32768
// RUN: softmax-opt %s --rowred-decompose --convert-rowred-to-gpu=cols=32769 | FileCheck %s --check-prefix=N32769
// RUN: softmax-opt %s --rowred-decompose --convert-rowred-to-gpu | FileCheck %s --check-prefix=UNKNOWN

// N100: block_elements = 128 : i64, block_threads = 32 : i64, elements_per_thread = 4 : i64
// N100-SAME: max_cols = 128 : i64
// N100-SAME: strategy = "fused", vector_width = 4 : i64
// N781: block_elements = 1024 : i64, block_threads = 64 : i64, elements_per_thread = 16 : i64
// N4096: block_elements = 4096 : i64, block_threads = 128 : i64, elements_per_thread = 32 : i64
// N12288: block_elements = 16384 : i64, block_threads = 512 : i64, elements_per_thread = 32 : i64
// N32768: block_elements = 32768 : i64, block_threads = 1024 : i64, elements_per_thread = 32 : i64
// N32768-SAME: strategy = "fused"
// N32769: block_elements = 16384 : i64, block_threads = 1024 : i64, elements_per_thread = 16 : i64
// N32769-SAME: max_cols = 0 : i64
// N32769-SAME: strategy = "online"
// UNKNOWN: block_threads = 1024 : i64
// UNKNOWN-SAME: strategy = "online"
func.func @softmax(%x: memref<?x?xf32>, %y: memref<?x?xf32>) {
  rowred.softmax dimension(1) ins(%x : memref<?x?xf32>) outs(%y : memref<?x?xf32>)
  return
}

// 16-bit rows: 16 elements per thread past 4096 columns, online past 8192.
// RUN: softmax-opt %S/Inputs/bf16.mlir --rowred-decompose --convert-rowred-to-gpu=cols=8192 | FileCheck %s --check-prefix=BF8192
// RUN: softmax-opt %S/Inputs/bf16.mlir --rowred-decompose --convert-rowred-to-gpu=cols=8193 | FileCheck %s --check-prefix=BF8193
// BF8192: block_elements = 8192 : i64, block_threads = 512 : i64, elements_per_thread = 16 : i64
// BF8192-SAME: strategy = "fused", vector_width = 8 : i64
// BF8193: block_elements = 16384 : i64, block_threads = 512 : i64, elements_per_thread = 32 : i64
// BF8193-SAME: strategy = "online", vector_width = 8 : i64
