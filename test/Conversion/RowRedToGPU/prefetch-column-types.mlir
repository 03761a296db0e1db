// A prefetch row of the table that names its kernels' per-column operand
// types (column_types) applies only where every per-column operand is of
// them: the residual form's backward at 4096 (512 threads, h, dy and the
// weight held) loads its next rows into registers with a bf16 weight, and
// loads nothing ahead with an f32 weight, whose second set of registers
// would cost the kernel resident blocks.

// RUN: softmax-opt %s --rowred-decompose --rowred-plan="cols=4096 chip=sm_90" | FileCheck %s

// CHECK-LABEL: func.func @residual_backward_bf16_weight
// CHECK: rowred.plan = #rowred.plan<strategy = fused, block = 4096, warps = 16, vector = 8, prefetch = registers, max_cols = 4096
// CHECK-LABEL: func.func @residual_backward_f32_weight
// CHECK: rowred.plan = #rowred.plan<strategy = fused, block = 4096, warps = 16, vector = 8, max_cols = 4096

func.func @residual_backward_bf16_weight(
    %h: memref<?x?xbf16>, %dy: memref<?x?xbf16>, %r: memref<?xf32>,
    %w: memref<?xbf16>, %dh: memref<?x?xbf16>, %dx: memref<?x?xbf16>,
    %dw: memref<?xf32>) {
  rowred.rms_norm_backward ins(%h, %dy : memref<?x?xbf16>, memref<?x?xbf16>) rstd(%r : memref<?xf32>) weight(%w : memref<?xbf16>) grad_residual(%dh : memref<?x?xbf16>) outs(%dx : memref<?x?xbf16>) weight_grad(%dw : memref<?xf32>)
  return
}

func.func @residual_backward_f32_weight(
    %h: memref<?x?xbf16>, %dy: memref<?x?xbf16>, %r: memref<?xf32>,
    %w: memref<?xf32>, %dh: memref<?x?xbf16>, %dx: memref<?x?xbf16>,
    %dw: memref<?xf32>) {
  rowred.rms_norm_backward ins(%h, %dy : memref<?x?xbf16>, memref<?x?xbf16>) rstd(%r : memref<?xf32>) weight(%w : memref<?xf32>) grad_residual(%dh : memref<?x?xbf16>) outs(%dx : memref<?x?xbf16>) weight_grad(%dw : memref<?xf32>)
  return
}
