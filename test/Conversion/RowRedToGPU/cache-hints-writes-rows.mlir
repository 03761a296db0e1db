// A fused block of one row of 16 KiB and more loads its row evict-last (the
// plan table's cache_hints) only where the kernel writes rows: softmax
// (whose 16-bit rows of 16384 are staged instead), in f16 as in bf16, and
// layer_norm. Rows only reduced (logsumexp, cross-entropy's loss) keep L2's
// default, f32 as 16-bit.

// RUN: softmax-opt %s --rowred-decompose --rowred-plan="cols=8192 chip=sm_90" | FileCheck %s --check-prefixes=CHECK,WRITES
// RUN: softmax-opt %s --rowred-decompose --rowred-plan="cols=16384 chip=sm_90" | FileCheck %s

// WRITES-LABEL: func.func @softmax_f16
// WRITES: rowred.plan = #rowred.plan<strategy = fused,{{.*}}cache_hints = true
// WRITES-LABEL: func.func @softmax_bf16
// WRITES: rowred.plan = #rowred.plan<strategy = fused,{{.*}}cache_hints = true
// CHECK-LABEL: func.func @logsumexp_bf16
// CHECK-NOT: cache_hints
// CHECK-LABEL: func.func @cross_entropy_f16
// CHECK-NOT: cache_hints
// CHECK-LABEL: func.func @cross_entropy_f32
// CHECK-NOT: cache_hints
// CHECK-LABEL: func.func @layer_norm_f32
// CHECK: rowred.plan = #rowred.plan<strategy = fused,{{.*}}cache_hints = true

func.func @softmax_f16(%x: memref<?x?xf16>, %y: memref<?x?xf16>) {
  rowred.softmax dimension(1) ins(%x : memref<?x?xf16>) outs(%y : memref<?x?xf16>)
  return
}

func.func @softmax_bf16(%x: memref<?x?xbf16>, %y: memref<?x?xbf16>) {
  rowred.softmax dimension(1) ins(%x : memref<?x?xbf16>) outs(%y : memref<?x?xbf16>)
  return
}

func.func @logsumexp_bf16(%x: memref<?x?xbf16>, %lse: memref<?xf32>) {
  rowred.logsumexp ins(%x : memref<?x?xbf16>) outs(%lse : memref<?xf32>)
  return
}

func.func @cross_entropy_f16(%x: memref<?x?xf16>, %l: memref<?xi64>, %loss: memref<?xf32>) {
  rowred.cross_entropy ignore_index(-100) ins(%x : memref<?x?xf16>) labels(%l : memref<?xi64>) outs(%loss : memref<?xf32>)
  return
}

func.func @cross_entropy_f32(%x: memref<?x?xf32>, %l: memref<?xi64>, %loss: memref<?xf32>) {
  rowred.cross_entropy ignore_index(-100) ins(%x : memref<?x?xf32>) labels(%l : memref<?xi64>) outs(%loss : memref<?xf32>)
  return
}

func.func @layer_norm_f32(%x: memref<?x?xf32>, %w: memref<?xf32>, %b: memref<?xf32>, %y: memref<?x?xf32>) {
  rowred.layer_norm epsilon(1.0e-05) ins(%x : memref<?x?xf32>) weight(%w : memref<?xf32>) bias(%b : memref<?xf32>) outs(%y : memref<?x?xf32>)
  return
}
