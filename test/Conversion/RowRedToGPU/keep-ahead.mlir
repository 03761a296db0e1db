// RUN: softmax-opt %S/Inputs/dynamic.mlir --test-rowred-plan-request="fields='cluster = 4, kept_elements = 32768, keep_ahead = tiles'" --rowred-decompose --rowred-plan="strategy=online cols=262144" --convert-rowred-to-gpu | FileCheck %s
// RUN: not softmax-opt %S/Inputs/dynamic.mlir --test-rowred-plan-request="fields='keep_ahead = tiles'" --rowred-decompose --rowred-plan="strategy=online cols=262144" --convert-rowred-to-gpu 2>&1 | FileCheck %s --check-prefix=NO-KEEP
// RUN: not softmax-opt %S/Inputs/dynamic.mlir --test-rowred-plan-request="fields='kept_elements = 0, keep_ahead = tiles'" --rowred-decompose --rowred-plan="strategy=online cols=262144" --convert-rowred-to-gpu 2>&1 | FileCheck %s --check-prefix=NO-KEEP0
// RUN: not softmax-opt %S/Inputs/dynamic.mlir --test-rowred-plan-request="fields='kept_elements = 16384, keep_ahead = tiles'" --rowred-decompose --rowred-plan="strategy=online" --convert-rowred-to-gpu 2>&1 | FileCheck %s --check-prefix=NO-COLS
// RUN: not softmax-opt %S/Inputs/dynamic.mlir --test-rowred-plan-request="fields='kept_elements = 32768, keep_ahead = tiles'" --rowred-decompose --rowred-plan="strategy=online cols=32768" --convert-rowred-to-gpu 2>&1 | FileCheck %s --check-prefix=WHOLE
// RUN: not softmax-opt %S/Inputs/dynamic.mlir --test-rowred-plan-request="fields='kept_elements = 16384, keep_ahead = tiles, prefetch = none'" --rowred-decompose --rowred-plan="strategy=online cols=262144" --convert-rowred-to-gpu 2>&1 | FileCheck %s --check-prefix=NOT-AHEAD
// RUN: not softmax-opt %S/Inputs/dynamic.mlir --test-rowred-plan-request="fields='kept_elements = 16384, keep_ahead = tiles, reverse_second_pass = false'" --rowred-decompose --rowred-plan="strategy=online cols=262144" --convert-rowred-to-gpu 2>&1 | FileCheck %s --check-prefix=NOT-AHEAD
// RUN: not softmax-opt %S/Inputs/dynamic.mlir --test-rowred-plan-request="fields='kept_elements = 16384, keep_ahead = tiles'" --rowred-decompose --rowred-plan="strategy=online cols=262144 chip=sm_75" --convert-rowred-to-gpu 2>&1 | FileCheck %s --check-prefix=SM75

// keep_ahead: the kept tiles (here 128 KiB, two f32 tiles of 16384 of the
// 65536-element share of each of 4 blocks) are copied into the stage with
// cp.async, before the row loop for the first row and in pass 2 for the
// next, instead of stored by pass 1. The stage holds the tiles of a share
// of the given length, which bounds the row length.
// CHECK: dynamic_shared_bytes = 131072 : i64
// CHECK-SAME: keep_ahead = true, keep_ahead_bulk = false, l2_hints = true, max_cols = 262144 : i64
// CHECK: %[[STG:.*]] = llvm.mlir.addressof @rowred_stage : !llvm.ptr<3>
// The kept tiles end before the share's last tile, at most 32768 elements
// from lo: lo + min(tilesBeforeLast * 16384, 32768).
// CHECK: %[[KEPT:.*]] = arith.minui %{{.*}}, %c32768_i32 : i32
// CHECK: %[[END:.*]] = arith.addi %[[LO:.*]], %[[KEPT]] : i32
// The first row's kept tiles, a cp.async group per tile.
// CHECK: scf.for %{{.*}} = %[[LO]] to %[[END]] step %c16384_i32
// CHECK-COUNT-4: nvvm.cp.async.shared.global %{{.*}}, %{{.*}}, 16, cache = cg : !llvm.ptr<3>, !llvm.ptr<1>
// CHECK: nvvm.cp.async.commit.group
// The row loop. Pass 1 issues the loads of the first streamed tile, waits
// for this thread's copies, folds the kept tiles from the stage, then walks
// the streamed tiles with the next one's loads ahead (evict-last loads in
// inline PTX).
// CHECK: scf.for %{{.*}} = %{{.*}} to %arg2 step
// CHECK-COUNT-4: nvvm.inline_ptx "ld.global.L2::cache_hint
// CHECK: nvvm.cp.async.wait.group 0
// CHECK: scf.for %{{.*}} iter_args(%{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) -> (f32, f32)
// CHECK-COUNT-4: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<3> -> vector<4xf32>
// CHECK: scf.for %{{.*}} iter_args({{.*}}) -> (f32, f32, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>)
// Pass 2 (reversed): the next tile from the stage when kept, else from the
// row; each kept tile, once written, is refilled with the next row's.
// CHECK: scf.for %{{.*}} iter_args({{.*}}) -> (vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>)
// CHECK: scf.if %{{.*}} -> (vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>)
// CHECK-COUNT-4: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<3> -> vector<4xf32>
// CHECK: } else {
// CHECK-COUNT-4: nvvm.inline_ptx "ld.global.L2::cache_hint
// CHECK-COUNT-4: nvvm.inline_ptx "st.global.L2::cache_hint
// CHECK: %[[REFILL:.*]] = arith.cmpi slt, %{{.*}}, %{{.*}} : i32
// CHECK: scf.if %[[REFILL]] {
// CHECK-COUNT-4: nvvm.cp.async.shared.global
// CHECK: nvvm.cp.async.commit.group

// NO-KEEP0: error: 'rowred.map' op keep_ahead = tiles fills the tiles that kept_elements keeps, and kept_elements = 0 keeps none; ask for kept_elements
// NO-KEEP: error: 'rowred.map' op keep_ahead = tiles fills the tiles that kept_elements keeps, and auto keeps none for this kernel with it; ask for kept_elements
// NO-COLS: error: 'rowred.map' op keep_ahead copies the first tiles of each block's share ahead and needs the row length (cols=N)
// WHOLE: error: 'rowred.map' op kept_elements 32768 keeps the whole share of a row, and keep_ahead streams at least its last tile; keep less, or use prefetch = stage to stage the whole share
// NOT-AHEAD: error: 'rowred.map' op keep_ahead hands tiles on across the passes: it needs the tiles loaded ahead (prefetch = registers or derived) and the reversed second pass
// SM75: error: 'rowred.map' op keep_ahead copies with cp.async, which needs sm_80 or newer
