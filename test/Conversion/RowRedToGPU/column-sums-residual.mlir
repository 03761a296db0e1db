// The residual form's backward (h, dy and the weight held through the
// reduction, h's own gradient read by the map alone: four operands, three
// held) on the block shapes of the plan table's operand_shapes: 8 elements
// per thread at 2048-4096, 16 on blocks of 6144 (rows of 5120) and, in
// f32, 8192 (f16 as bf16); 32 for 16-bit at 8192. Rows of 12288 and 16384
// go to the table's clusters (row_lengths): 2 slices of 6144 on 512
// threads, 8 of 2048 on 128 (f32: on 256). The map loads h's gradient a
// vector at a time: the registers count three operands, so that a block of 16384 (asked for)
// fits 256 threads of 64 elements, as rms_norm_backward's; with
// hoist_map_loads it is loaded with the row and counted: refused.

// RUN: softmax-opt %s --rowred-decompose --rowred-plan="cols=4096 chip=sm_90" | FileCheck %s --check-prefix=BF16-4K
// RUN: sed 's/bf16/f32/g' %s | softmax-opt --rowred-decompose --rowred-plan="cols=4096 chip=sm_90" | FileCheck %s --check-prefix=F32-4K
// RUN: softmax-opt %s --rowred-decompose --rowred-plan="cols=2048 chip=sm_90" | FileCheck %s --check-prefix=BF16-2K
// RUN: sed 's/bf16/f16/g' %s | softmax-opt --rowred-decompose --rowred-plan="cols=2048 chip=sm_90" | FileCheck %s --check-prefix=BF16-2K
// RUN: sed 's/bf16/f16/g' %s | softmax-opt --rowred-decompose --rowred-plan="cols=4096 chip=sm_90" | FileCheck %s --check-prefix=F16-4K
// RUN: softmax-opt %s --rowred-decompose --rowred-plan="cols=5120 chip=sm_90" | FileCheck %s --check-prefix=B6K
// RUN: sed 's/bf16/f16/g' %s | softmax-opt --rowred-decompose --rowred-plan="cols=5120 chip=sm_90" | FileCheck %s --check-prefix=B6K
// RUN: sed 's/bf16/f32/g' %s | softmax-opt --rowred-decompose --rowred-plan="cols=5120 chip=sm_90" | FileCheck %s --check-prefix=B6K
// RUN: softmax-opt %s --rowred-decompose --rowred-plan="cols=8192 chip=sm_90" | FileCheck %s --check-prefix=BF16-8K
// RUN: sed 's/bf16/f16/g' %s | softmax-opt --rowred-decompose --rowred-plan="cols=8192 chip=sm_90" | FileCheck %s --check-prefix=BF16-8K
// RUN: sed 's/bf16/f32/g' %s | softmax-opt --rowred-decompose --rowred-plan="cols=8192 chip=sm_90" | FileCheck %s --check-prefix=F32-8K
// RUN: softmax-opt %s --rowred-decompose --rowred-plan="cols=12288 chip=sm_90" | FileCheck %s --check-prefix=B12K
// RUN: sed 's/bf16/f16/g' %s | softmax-opt --rowred-decompose --rowred-plan="cols=12288 chip=sm_90" | FileCheck %s --check-prefix=B12K
// RUN: softmax-opt %s --rowred-decompose --rowred-plan="cols=16384 chip=sm_90" | FileCheck %s --check-prefix=B16K
// RUN: sed 's/bf16/f32/g' %s | softmax-opt --rowred-decompose --rowred-plan="cols=16384 chip=sm_90" | FileCheck %s --check-prefix=F32-16K
// RUN: softmax-opt %s --test-rowred-plan-request="fields='strategy = fused'" --rowred-decompose --rowred-plan="cols=16384 chip=sm_90" | FileCheck %s --check-prefix=F16K
// RUN: sed 's/bf16/f32/g' %s | softmax-opt --test-rowred-plan-request="fields='strategy = fused'" --rowred-decompose --rowred-plan="cols=16384 chip=sm_90" | FileCheck %s --check-prefix=F16K
// RUN: not softmax-opt %s --test-rowred-plan-request="fields='strategy = fused, hoist_map_loads = true'" --rowred-decompose --rowred-plan="cols=16384 chip=sm_90" 2>&1 | FileCheck %s --check-prefix=HOIST

// BF16-4K: column_sums(%{{.*}} : memref<?xbf16>)
// BF16-4K: rowred.plan = #rowred.plan<strategy = fused, block = 4096, warps = 16, vector = 8,
// F16-4K: column_sums(%{{.*}} : memref<?xf16>)
// F16-4K: rowred.plan = #rowred.plan<strategy = fused, block = 4096, warps = 16, vector = 8,
// F32-4K: column_sums(%{{.*}} : memref<?xf32>)
// F32-4K: rowred.plan = #rowred.plan<strategy = fused, block = 4096, warps = 16, vector = 4,
// BF16-2K: rowred.plan = #rowred.plan<strategy = fused, block = 2048, warps = 8, vector = 8,
// B6K: rowred.plan = #rowred.plan<strategy = fused, block = 6144, warps = 12,
// BF16-8K: rowred.plan = #rowred.plan<strategy = fused, block = 8192, warps = 8, vector = 8,
// F32-8K: rowred.plan = #rowred.plan<strategy = fused, block = 8192, warps = 16, vector = 4,
// B12K: rowred.plan = #rowred.plan<strategy = cluster, block = 6144, warps = 16, cluster = 2,
// B16K: rowred.plan = #rowred.plan<strategy = cluster, block = 2048, warps = 4, cluster = 8,
// F32-16K: rowred.plan = #rowred.plan<strategy = cluster, block = 2048, warps = 8, cluster = 8,
// F16K: rowred.plan = #rowred.plan<strategy = fused, block = 16384, warps = 8,
// HOIST: error: 'rowred.map' op a fused block of 512 threads holding 32 elements per thread of each of 4 operands

func.func @rms_norm_residual_backward(
    %h: memref<?x?xbf16>, %dy: memref<?x?xbf16>, %dh: memref<?x?xbf16>,
    %r: memref<?xf32>, %w: memref<?xbf16>, %dx: memref<?x?xbf16>,
    %dw: memref<?xbf16>) {
  rowred.rms_norm_backward ins(%h, %dy : memref<?x?xbf16>, memref<?x?xbf16>) rstd(%r : memref<?xf32>) weight(%w : memref<?xbf16>) grad_residual(%dh : memref<?x?xbf16>) outs(%dx : memref<?x?xbf16>) weight_grad(%dw : memref<?xbf16>)
  return
}
