// rowred.few_rows_plan is one #rowred.plan or an array of at most 8 of
// them, each with a max_rows above the one before.

// RUN: softmax-opt %s -split-input-file -verify-diagnostics --convert-rowred-to-gpu -o /dev/null

func.func @not_increasing(%x: memref<?x?xf32>, %y: memref<?x?xf32>) {
  %c0 = arith.constant 0 : index
  %d = memref.dim %x, %c0 : memref<?x?xf32>
  %m = memref.alloc(%d) : memref<?xf32>
  rowred.reduce max ins(%x : memref<?x?xf32>) outs(%m : memref<?xf32>) {
  ^bb0(%a: f32):
    rowred.yield %a : f32
  }
  // expected-error @+1 {{'rowred.few_rows_plan' needs at most 8 plans, each with a max_rows above the one before}}
  rowred.map ins(%x : memref<?x?xf32>) rows(%m : memref<?xf32>) outs(%y : memref<?x?xf32>) {
  ^bb0(%a: f32, %b: f32):
    %0 = arith.subf %a, %b : f32
    rowred.yield %0 : f32
  } {rowred.few_rows_plan = [
      #rowred.plan<strategy = cluster, block = 1024, warps = 4, cluster = 4, max_cols = 4096, max_rows = 64>,
      #rowred.plan<strategy = cluster, block = 2048, warps = 4, cluster = 8, max_cols = 16384, max_rows = 16>],
     rowred.plan = #rowred.plan<strategy = fused, block = 4096, warps = 4, max_cols = 4096>}
  memref.dealloc %m : memref<?xf32>
  return
}

// -----

func.func @not_plans(%x: memref<?x?xf32>, %y: memref<?x?xf32>) {
  %c0 = arith.constant 0 : index
  %d = memref.dim %x, %c0 : memref<?x?xf32>
  %m = memref.alloc(%d) : memref<?xf32>
  rowred.reduce max ins(%x : memref<?x?xf32>) outs(%m : memref<?xf32>) {
  ^bb0(%a: f32):
    rowred.yield %a : f32
  }
  // expected-error @+1 {{'rowred.few_rows_plan' is neither a #rowred.plan nor an array of them}}
  rowred.map ins(%x : memref<?x?xf32>) rows(%m : memref<?xf32>) outs(%y : memref<?x?xf32>) {
  ^bb0(%a: f32, %b: f32):
    %0 = arith.subf %a, %b : f32
    rowred.yield %0 : f32
  } {rowred.few_rows_plan = [#rowred.plan<strategy = cluster, block = 1024, warps = 4, cluster = 4, max_cols = 4096, max_rows = 16>, 64],
     rowred.plan = #rowred.plan<strategy = fused, block = 4096, warps = 4, max_cols = 4096>}
  memref.dealloc %m : memref<?xf32>
  return
}

// -----

func.func @no_max_rows(%x: memref<?x?xf32>, %y: memref<?x?xf32>) {
  %c0 = arith.constant 0 : index
  %d = memref.dim %x, %c0 : memref<?x?xf32>
  %m = memref.alloc(%d) : memref<?xf32>
  rowred.reduce max ins(%x : memref<?x?xf32>) outs(%m : memref<?xf32>) {
  ^bb0(%a: f32):
    rowred.yield %a : f32
  }
  // expected-error @+1 {{'rowred.few_rows_plan' needs at most 8 plans, each with a max_rows above the one before}}
  rowred.map ins(%x : memref<?x?xf32>) rows(%m : memref<?xf32>) outs(%y : memref<?x?xf32>) {
  ^bb0(%a: f32, %b: f32):
    %0 = arith.subf %a, %b : f32
    rowred.yield %0 : f32
  } {rowred.few_rows_plan = #rowred.plan<strategy = cluster, block = 1024, warps = 4, cluster = 4, max_cols = 4096>,
     rowred.plan = #rowred.plan<strategy = fused, block = 4096, warps = 4, max_cols = 4096>}
  memref.dealloc %m : memref<?xf32>
  return
}
