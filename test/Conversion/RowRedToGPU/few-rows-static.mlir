// A row length the input type states takes the same kernels for a few rows
// as the same length given by the cols option (few-rows.mlir): the f32
// softmax of 128256 its ladder of clusters, layer_norm of 4096 its fused
// block that loads the weight and bias with the row.
// RUN: softmax-opt %s --rowred-decompose --rowred-plan | FileCheck %s
// RUN: sed -e 's/128256/?/g' -e 's/4096/?/g' %s | softmax-opt --rowred-decompose --rowred-plan="cols=128256" | FileCheck %s --check-prefix=SOFTMAX
// RUN: sed -e 's/128256/?/g' -e 's/4096/?/g' %s | softmax-opt --rowred-decompose --rowred-plan="cols=4096" | FileCheck %s --check-prefix=NORM

// CHECK-LABEL: func.func @softmax_f32
// CHECK: rowred.few_rows_plan = [#rowred.plan<strategy = cluster, block = 8192, warps = 16, cluster = 16, {{.*}}max_rows = 16>, #rowred.plan<strategy = cluster, block = 16384, warps = 16, cluster = 8, {{.*}}max_rows = 24>]
// CHECK-SAME: rowred.plan = #rowred.plan<strategy = chunks,
// CHECK-LABEL: func.func @layer_norm_f32
// CHECK: rowred.few_rows_plan = #rowred.plan<strategy = fused, block = 4096, warps = 8, {{.*}}max_rows = 64, hoist_map_loads = true>

// SOFTMAX-LABEL: func.func @softmax_f32
// SOFTMAX: rowred.few_rows_plan = [#rowred.plan<strategy = cluster, block = 8192, warps = 16, cluster = 16, {{.*}}max_rows = 16>, #rowred.plan<strategy = cluster, block = 16384, warps = 16, cluster = 8, {{.*}}max_rows = 24>]
// NORM-LABEL: func.func @layer_norm_f32
// NORM: rowred.few_rows_plan = #rowred.plan<strategy = fused, block = 4096, warps = 8, {{.*}}max_rows = 64, hoist_map_loads = true>

func.func @softmax_f32(%x: memref<?x128256xf32>, %y: memref<?x128256xf32>) {
  rowred.softmax dimension(1) ins(%x : memref<?x128256xf32>)
      outs(%y : memref<?x128256xf32>)
  return
}

func.func @layer_norm_f32(%x: memref<?x4096xf32>, %w: memref<4096xf32>,
                          %b: memref<4096xf32>, %y: memref<?x4096xf32>,
                          %mean: memref<?xf32>, %rstd: memref<?xf32>) {
  rowred.layer_norm epsilon(1.0e-05) ins(%x : memref<?x4096xf32>)
      weight(%w : memref<4096xf32>) bias(%b : memref<4096xf32>)
      outs(%y : memref<?x4096xf32>) mean(%mean : memref<?xf32>)
      rstd(%rstd : memref<?xf32>)
  return
}
