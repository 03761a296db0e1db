// layer_norm_backward (x, dy and the weight held through two reduces; dw
// and db summed down the columns) by the plan table's row_lengths for
// kernels with column sums: rows of 12289-16384 over a cluster of 8 slices
// on 4 warps in either type, f32 rows of 8193-12288 over a cluster of 2 on
// 16 warps; bf16 rows of 12288 (two reduces) keep their block, and rows of
// 8192 their fused block.

// RUN: softmax-opt %s --rowred-decompose --rowred-plan="cols=16384 chip=sm_90" | FileCheck %s --check-prefix=C8
// RUN: sed 's/bf16/f32/g' %s | softmax-opt --rowred-decompose --rowred-plan="cols=16384 chip=sm_90" | FileCheck %s --check-prefix=C8
// RUN: sed 's/bf16/f32/g' %s | softmax-opt --rowred-decompose --rowred-plan="cols=12288 chip=sm_90" | FileCheck %s --check-prefix=C2
// RUN: softmax-opt %s --rowred-decompose --rowred-plan="cols=12288 chip=sm_90" | FileCheck %s --check-prefix=B12K
// RUN: sed 's/bf16/f32/g' %s | softmax-opt --rowred-decompose --rowred-plan="cols=8192 chip=sm_90" | FileCheck %s --check-prefix=F8K

// C8: column_sums(%{{.*}}, %{{.*}} :
// C8: rowred.plan = #rowred.plan<strategy = cluster, block = 2048, warps = 4, cluster = 8,
// C2: rowred.plan = #rowred.plan<strategy = cluster, block = 6144, warps = 16, cluster = 2,
// B12K: rowred.plan = #rowred.plan<strategy = fused, block = 12288,
// F8K: rowred.plan = #rowred.plan<strategy = fused, block = 8192,

func.func @layer_norm_backward(%x: memref<?x?xbf16>, %dy: memref<?x?xbf16>,
                               %m: memref<?xf32>, %r: memref<?xf32>,
                               %w: memref<?xbf16>, %dx: memref<?x?xbf16>,
                               %dw: memref<?xbf16>, %db: memref<?xbf16>) {
  rowred.layer_norm_backward ins(%x, %dy : memref<?x?xbf16>, memref<?x?xbf16>) mean(%m : memref<?xf32>) rstd(%r : memref<?xf32>) weight(%w : memref<?xbf16>) outs(%dx : memref<?x?xbf16>) weight_grad(%dw : memref<?xbf16>) bias_grad(%db : memref<?xbf16>)
  return
}
