// RUN: softmax-opt %s -split-input-file -verify-diagnostics

// A plan request with a field the plan does not have, a value of the wrong
// kind, or a number out of range is refused where it is written.

func.func @unknown_field(%x: memref<?x?xf32>, %y: memref<?x?xf32>) {
  // expected-error @+1 {{duplicate or unknown struct parameter name: tile}}
  rowred.softmax dimension(1) ins(%x : memref<?x?xf32>) outs(%y : memref<?x?xf32>) {rowred.plan_request = #rowred.plan_request<tile = 4>}
  return
}

// -----

func.func @bad_enum(%x: memref<?x?xf32>, %y: memref<?x?xf32>) {
  // expected-error @+2 {{expected one of [none, stage, registers] for what a block fetches ahead of the row it works on, got: yes}}
  // expected-error @+1 {{failed to parse RowRed_PlanRequestAttr parameter 'prefetch'}}
  rowred.softmax dimension(1) ins(%x : memref<?x?xf32>) outs(%y : memref<?x?xf32>) {rowred.plan_request = #rowred.plan_request<prefetch = yes>}
  return
}

// -----

func.func @bad_bool(%x: memref<?x?xf32>, %y: memref<?x?xf32>) {
  // expected-error @+2 {{expected true or false}}
  // expected-error @+1 {{failed to parse RowRed_PlanRequestAttr parameter 'cache_hints'}}
  rowred.softmax dimension(1) ins(%x : memref<?x?xf32>) outs(%y : memref<?x?xf32>) {rowred.plan_request = #rowred.plan_request<cache_hints = maybe>}
  return
}

// -----

func.func @bad_grid(%x: memref<?x?xf32>, %y: memref<?x?xf32>) {
  // expected-error @+2 {{expected one of [persistent, rows] for the grid a launcher starts, got: waves}}
  // expected-error @+1 {{failed to parse RowRed_PlanRequestAttr parameter 'grid'}}
  rowred.softmax dimension(1) ins(%x : memref<?x?xf32>) outs(%y : memref<?x?xf32>) {rowred.plan_request = #rowred.plan_request<grid = waves>}
  return
}

// -----

func.func @zero_warps(%x: memref<?x?xf32>, %y: memref<?x?xf32>) {
  // expected-error @+1 {{#rowred.plan_request field 'warps': must be positive, got 0}}
  rowred.softmax dimension(1) ins(%x : memref<?x?xf32>) outs(%y : memref<?x?xf32>) {rowred.plan_request = #rowred.plan_request<warps = 0>}
  return
}

// -----

func.func @negative_stage(%x: memref<?x?xf32>, %y: memref<?x?xf32>) {
  // expected-error @+1 {{#rowred.plan_request field 'chunk_stage': must not be negative, got -2}}
  rowred.softmax dimension(1) ins(%x : memref<?x?xf32>) outs(%y : memref<?x?xf32>) {rowred.plan_request = #rowred.plan_request<chunk_stage = -2>}
  return
}

// -----

func.func @wrong_op(%x: memref<?x?xf32>, %y: memref<?x?xf32>) {
  // expected-error @+1 {{'rowred.plan_request' belongs on a rowred.map or a high-level rowred op}}
  "func.return"() {rowred.plan_request = #rowred.plan_request<warps = 4>} : () -> ()
}

// -----

func.func @not_a_request(%x: memref<?x?xf32>, %y: memref<?x?xf32>) {
  // expected-error @+1 {{'rowred.plan_request' must be a #rowred.plan_request}}
  rowred.softmax dimension(1) ins(%x : memref<?x?xf32>) outs(%y : memref<?x?xf32>) {rowred.plan_request = 4 : i64}
  return
}
