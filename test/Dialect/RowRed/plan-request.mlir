// RUN: softmax-opt %s -split-input-file | softmax-opt -split-input-file | FileCheck %s
// RUN: softmax-opt %s -split-input-file --rowred-decompose | FileCheck %s --check-prefix=DECOMPOSED
// RUN: softmax-opt %s -split-input-file --rowred-decompose --rowred-plan="cols=16384" | FileCheck %s --check-prefix=PLANNED

// A plan request round-trips with the fields written, in the plan's order,
// and rowred-decompose hands it from the softmax to the map, which
// rowred-plan completes: the request's fields stay as asked, the others are
// derived, and the request is gone.

// CHECK-LABEL: func.func @request
// CHECK: rowred.softmax {{.*}} {rowred.plan_request = #rowred.plan_request<strategy = fused, warps = 16, reread = true, prefetch = none>}
// DECOMPOSED-LABEL: func.func @request
// DECOMPOSED: rowred.map {{.*}}
// DECOMPOSED: } {rowred.origin = "softmax", rowred.plan_request = #rowred.plan_request<strategy = fused, warps = 16, reread = true, prefetch = none>}
// PLANNED-LABEL: func.func @request
// PLANNED: rowred.plan = #rowred.plan<strategy = fused, block = 16384, warps = 16, vector = 4, reread = true, max_cols = 16384, stage_elements = 16384, cache_hints = true, grid = rows>
// PLANNED-NOT: plan_request
func.func @request(%x: memref<?x?xf32>, %y: memref<?x?xf32>) {
  rowred.softmax dimension(1) ins(%x : memref<?x?xf32>) outs(%y : memref<?x?xf32>) {rowred.plan_request = #rowred.plan_request<prefetch = none, reread = true, warps = 16, strategy = fused>}
  return
}

// -----

// An empty request asks for nothing: the plan is auto's.
// CHECK-LABEL: func.func @empty
// CHECK: {rowred.plan_request = #rowred.plan_request<>}
// PLANNED-LABEL: func.func @empty
// PLANNED: rowred.plan = #rowred.plan<strategy = fused, block = 16384, warps = 16, vector = 4, reread = true, max_cols = 16384, stage_elements = 16384, cache_hints = true, grid = rows>
func.func @empty(%x: memref<?x?xf32>, %y: memref<?x?xf32>) {
  rowred.log_softmax dimension(1) ins(%x : memref<?x?xf32>) outs(%y : memref<?x?xf32>) {rowred.plan_request = #rowred.plan_request<>}
  return
}

// -----

// A field of the plan's last ones: written in the plan's order, kept by the
// plan (a norm's weight is read by the map alone).
// CHECK-LABEL: func.func @hoisted
// CHECK: {rowred.plan_request = #rowred.plan_request<strategy = fused, hoist_map_loads = true>}
// DECOMPOSED-LABEL: func.func @hoisted
// DECOMPOSED: rowred.plan_request = #rowred.plan_request<strategy = fused, hoist_map_loads = true>
// PLANNED-LABEL: func.func @hoisted
// PLANNED: rowred.plan = #rowred.plan<strategy = fused, {{.*}}hoist_map_loads = true>
func.func @hoisted(%x: memref<?x?xf32>, %w: memref<?xf32>, %y: memref<?x?xf32>, %rstd: memref<?xf32>) {
  rowred.rms_norm epsilon(1.0e-05) ins(%x : memref<?x?xf32>) weight(%w : memref<?xf32>) outs(%y : memref<?x?xf32>) rstd(%rstd : memref<?xf32>) {rowred.plan_request = #rowred.plan_request<hoist_map_loads = true, strategy = fused>}
  return
}
