// RUN: softmax-opt %s -split-input-file -verify-diagnostics --rowred-plan --convert-rowred-to-gpu
// RUN: not softmax-opt %S/Inputs/dynamic.mlir --rowred-decompose --convert-rowred-to-gpu 2>&1 | FileCheck %s --check-prefix=NO-PLAN
// NO-PLAN: error: 'rowred.map' op has no #rowred.plan; run --rowred-plan before the GPU lowering
// RUN: not softmax-opt %S/Inputs/dynamic.mlir --rowred-decompose --rowred-plan="cols=2147483648" 2>&1 | FileCheck %s --check-prefix=TOO-WIDE
// RUN: not softmax-opt %S/Inputs/dynamic.mlir --rowred-decompose --rowred-plan="cols=9223372036854775807" 2>&1 | FileCheck %s --check-prefix=TOO-WIDE
// TOO-WIDE: error: 'rowred.map' op rows of {{[0-9]+}} columns are too long: the kernels take N < 2^31
// A block whose elements do not fit its threads' registers (f32 1024 threads
// x 64) would spill: refused, whatever asked for its warps.
// RUN: not softmax-opt %S/Inputs/dynamic.mlir --test-rowred-plan-request="fields='warps = 32'" --rowred-decompose --rowred-plan="cols=65536 strategy=fused" 2>&1 | FileCheck %s --check-prefix=SPILL
// SPILL: error: 'rowred.map' op a fused block of 1024 threads holding 64 elements per thread needs about 88 registers per thread and has 64, and would spill
// RUN: not softmax-opt %S/Inputs/dynamic.mlir --rowred-decompose --rowred-plan="strategy=fused cols=100000" --convert-rowred-to-gpu 2>&1 | FileCheck %s --check-prefix=TOO-LONG
// RUN: not softmax-opt %S/Inputs/not-softmax.mlir --test-rowred-plan-request="fields='reread = false'" --rowred-plan="strategy=online" --convert-rowred-to-gpu 2>&1 | FileCheck %s --check-prefix=ONLINE
// RUN: not softmax-opt %S/Inputs/dynamic.mlir --rowred-decompose --rowred-plan="strategy=fused" --convert-rowred-to-gpu 2>&1 | FileCheck %s --check-prefix=NEEDS-COLS
// RUN: not softmax-opt %S/Inputs/dynamic.mlir --test-rowred-plan-request="fields='block = 512'" --rowred-decompose --rowred-plan="strategy=fused cols=1000" --convert-rowred-to-gpu 2>&1 | FileCheck %s --check-prefix=SMALL-BLOCK
// RUN: not softmax-opt %S/Inputs/dynamic.mlir --test-rowred-plan-request="fields='block = 1000'" --rowred-decompose --rowred-plan="strategy=fused" --convert-rowred-to-gpu 2>&1 | FileCheck %s --check-prefix=POW2
// RUN: not softmax-opt %S/Inputs/dynamic.mlir --rowred-decompose --rowred-plan="strategy=fastest" --convert-rowred-to-gpu 2>&1 | FileCheck %s --check-prefix=STRATEGY
// RUN: not softmax-opt %S/Inputs/dynamic.mlir --test-rowred-plan-request="fields='warps = 5'" --rowred-decompose --rowred-plan --convert-rowred-to-gpu 2>&1 | FileCheck %s --check-prefix=WARPS
// RUN: not softmax-opt %S/Inputs/dynamic.mlir --test-rowred-plan-request="fields='vector = 8'" --rowred-decompose --rowred-plan --convert-rowred-to-gpu 2>&1 | FileCheck %s --check-prefix=VECTOR
// RUN: not softmax-opt %S/Inputs/dynamic.mlir --test-rowred-plan-request="fields='warps = 8, block = 128'" --rowred-decompose --rowred-plan="strategy=online" --convert-rowred-to-gpu 2>&1 | FileCheck %s --check-prefix=TILE
// RUN: not softmax-opt %S/Inputs/static.mlir --rowred-decompose --rowred-plan="cols=512" --convert-rowred-to-gpu 2>&1 | FileCheck %s --check-prefix=CONTRADICT
// RUN: not softmax-opt %S/Inputs/dynamic.mlir --test-rowred-plan-request="fields='block = 96, warps = 2'" --rowred-decompose --rowred-plan="strategy=fused" --convert-rowred-to-gpu 2>&1 | FileCheck %s --check-prefix=UNEVEN
// RUN: not softmax-opt %S/Inputs/dynamic.mlir --test-rowred-plan-request="fields='block = 12288'" --rowred-decompose --rowred-plan="strategy=online" --convert-rowred-to-gpu 2>&1 | FileCheck %s --check-prefix=ONLINE-TILE
// RUN: not softmax-opt %S/Inputs/dynamic.mlir --test-rowred-plan-request="fields='warps = 48'" --rowred-decompose --rowred-plan --convert-rowred-to-gpu 2>&1 | FileCheck %s --check-prefix=WARPS48

// TOO-LONG: error: 'rowred.map' op a fused block of 131072 elements over 1024 threads keeps 128 elements per thread in registers (limit 32); ask for more warps, or strategy=online for rows this long
// NEEDS-COLS: dynamic.mlir:3:3: error: 'rowred.map' op the fused strategy holds the whole row in registers and needs its length: set cols=N or the request's block (or use strategy=online)
// SMALL-BLOCK: error: 'rowred.map' op block 512 is smaller than the 1000 columns; the fused kernel holds the whole row
// POW2: error: 'rowred.map' op block must be a power of two or three times one, got 1000
// STRATEGY: error: 'rowred.map' op unknown strategy 'fastest'; expected fused, cluster, online, chunks or auto
// WARPS: error: 'rowred.map' op warps must be from 1 to 32, a power of two or three times one, got 5
// VECTOR: error: 'rowred.map' op vector must be a power of two with accesses of at most 16 bytes (at most 4 elements here), got 8
// TILE: error: 'rowred.map' op the online tile (block 128) must hold at least one element per thread (256)
// ONLINE: not-softmax.mlir:8:3: error: 'rowred.map' op an online kernel without reread needs the running (max, sum) pair: a max reduce followed by a sum of exp(x - max), as produced by rowred-decompose
// UNEVEN: error: 'rowred.map' op a block of 96 elements does not divide evenly over 64 threads per row
// ONLINE-TILE: error: 'rowred.map' op an online tile (block) must be a power of two, got 12288
// WARPS48: error: 'rowred.map' op warps must be from 1 to 32, a power of two or three times one, got 48
// CONTRADICT: error: 'rowred.map' op cols=512 contradicts the input type, which has 1024 columns

func.func @undecomposed(%x: memref<?x?xf32>, %y: memref<?x?xf32>) {
  // expected-error @+1 {{'rowred.softmax' op must be decomposed before planning (run --rowred-decompose first)}}
  rowred.softmax dimension(1) ins(%x : memref<?x?xf32>) outs(%y : memref<?x?xf32>)
  return
}

// -----

func.func @reduce_without_map(%x: memref<4x8xf32>, %m: memref<4xf32>) {
  // expected-error @+1 {{'rowred.reduce' op is not consumed by a rowred.map; only reduce chains that feed a map are lowered}}
  rowred.reduce max ins(%x : memref<4x8xf32>) outs(%m : memref<4xf32>) {
  ^bb0(%xj: f32):
    rowred.yield %xj : f32
  }
  return
}

// -----

func.func @scalars_never_written(%x: memref<4x8xf32>, %y: memref<4x8xf32>) {
  %m = memref.alloc() : memref<4xf32>
  // expected-error @+1 {{'rowred.map' op row scalar has no rowred.reduce or rowred.gather writing it before the map}}
  rowred.map ins(%x : memref<4x8xf32>) rows(%m : memref<4xf32>) outs(%y : memref<4x8xf32>) {
  ^bb0(%xj: f32, %mi: f32):
    %d = arith.subf %xj, %mi : f32
    rowred.yield %d : f32
  }
  return
}

// -----

func.func @escaping_scalars(%x: memref<4x8xf32>, %y: memref<4x8xf32>, %out: memref<4xf32>) {
  %m = memref.alloc() : memref<4xf32>
  rowred.reduce max ins(%x : memref<4x8xf32>) outs(%m : memref<4xf32>) {
  ^bb0(%xj: f32):
    rowred.yield %xj : f32
  }
  rowred.map ins(%x : memref<4x8xf32>) rows(%m : memref<4xf32>) outs(%y : memref<4x8xf32>) {
  ^bb0(%xj: f32, %mi: f32):
    %d = arith.subf %xj, %mi : f32
    rowred.yield %d : f32
  }
  // expected-error @+1 {{'memref.copy' op uses a row-scalar buffer of a fused group; the buffer is not materialized by the GPU kernel}}
  memref.copy %m, %out : memref<4xf32> to memref<4xf32>
  return
}

// -----

func.func @other_input(%x: memref<4x8xf32>, %z: memref<4x8xf32>, %y: memref<4x8xf32>) {
  %m = memref.alloc() : memref<4xf32>
  // expected-error @+1 {{'rowred.reduce' op reads an input that the rowred.map it feeds does not read; only reductions of the map's inputs can be fused}}
  rowred.reduce max ins(%z : memref<4x8xf32>) outs(%m : memref<4xf32>) {
  ^bb0(%xj: f32):
    rowred.yield %xj : f32
  }
  rowred.map ins(%x : memref<4x8xf32>) rows(%m : memref<4xf32>) outs(%y : memref<4x8xf32>) {
  ^bb0(%xj: f32, %mi: f32):
    rowred.yield %mi : f32
  }
  return
}

// -----

func.func @captures(%x: memref<4x8xf32>, %y: memref<4x8xf32>, %c: f32) {
  rowred.map ins(%x : memref<4x8xf32>) outs(%y : memref<4x8xf32>) {
  ^bb0(%xj: f32):
    // expected-error @+1 {{'arith.mulf' op uses a value defined outside the rowred body; only constants can be captured}}
    %r = arith.mulf %xj, %c : f32
    rowred.yield %r : f32
  }
  return
}


// -----

// A kernel is named after its function, and the name becomes a PTX entry and
// a file name: it must be an identifier.
func.func @"a b"(%x: memref<4x8xf32>, %y: memref<4x8xf32>) {
  %c0 = arith.constant 0 : index
  %rows = memref.dim %x, %c0 : memref<4x8xf32>
  %s = memref.alloc(%rows) : memref<?xf32>
  rowred.reduce sum ins(%x : memref<4x8xf32>) outs(%s : memref<?xf32>) {
  ^bb0(%xj: f32):
    rowred.yield %xj : f32
  }
  // expected-error @+1 {{'rowred.map' op is in function 'a b', whose name cannot name its kernel: a kernel is named after its function, in letters, digits and '_' (not starting with a digit)}}
  rowred.map ins(%x : memref<4x8xf32>) rows(%s : memref<?xf32>) outs(%y : memref<4x8xf32>) {
  ^bb0(%xj: f32, %si: f32):
    %r = arith.divf %xj, %si : f32
    rowred.yield %r : f32
  }
  memref.dealloc %s : memref<?xf32>
  return
}
