// RUN: softmax-opt %S/Inputs/bf16.mlir --test-rowred-plan-request="fields='cluster = 8, kept_elements = 32768, prefetch = none'" --rowred-decompose --rowred-plan="strategy=online cols=262144" --convert-rowred-to-gpu | FileCheck %s
// RUN: softmax-opt %S/Inputs/dynamic.mlir --test-rowred-plan-request="fields='kept_elements = 16384'" --rowred-decompose --rowred-plan="strategy=online" --convert-rowred-to-gpu | FileCheck %s --check-prefix=AHEAD
// RUN: softmax-opt %S/Inputs/dynamic.mlir --rowred-decompose --rowred-plan="strategy=online" --convert-rowred-to-gpu | FileCheck %s --check-prefix=NONE
// RUN: not softmax-opt %S/Inputs/dynamic.mlir --test-rowred-plan-request="fields='kept_elements = 16384'" --rowred-decompose --rowred-plan="strategy=fused cols=1024" --convert-rowred-to-gpu 2>&1 | FileCheck %s --check-prefix=FUSED
// RUN: not softmax-opt %S/Inputs/dynamic.mlir --test-rowred-plan-request="fields='cluster = 8, prefetch = stage, kept_elements = 16384'" --rowred-decompose --rowred-plan="strategy=online cols=262144" --convert-rowred-to-gpu 2>&1 | FileCheck %s --check-prefix=STAGE
// RUN: not softmax-opt %S/Inputs/dynamic.mlir --test-rowred-plan-request="fields='kept_elements = 8192'" --rowred-decompose --rowred-plan="strategy=online" --convert-rowred-to-gpu 2>&1 | FileCheck %s --check-prefix=SMALL
// RUN: not softmax-opt %S/Inputs/dynamic.mlir --test-rowred-plan-request="fields='kept_elements = 65536'" --rowred-decompose --rowred-plan="strategy=online" --convert-rowred-to-gpu 2>&1 | FileCheck %s --check-prefix=BIG

// kept_elements = K: pass 1 stores the first whole tiles of the block's
// share (K elements; here two bf16 tiles of 16384, 64 KiB), as loaded, into the stage in
// dynamic shared memory, and pass 2 reads those tiles there. Each thread
// stores and reads back only its own chunks: the stage adds no barrier.
// CHECK: dynamic_shared_bytes = 65536 : i64
// CHECK: gpu.launch_func {{.*}} dynamic_shared_memory_size %c65536_i32
// CHECK: llvm.mlir.global external @rowred_stage() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<0 x i8>
// CHECK: %[[STG:.*]] = llvm.mlir.addressof @rowred_stage : !llvm.ptr<3>
// Pass 1: the tile's four chunks from the row, then, for a kept tile
// (column - lo < 32768), each valid chunk into the stage at column - lo.
// CHECK: scf.for %[[T:.*]] = %[[LO:.*]] to %{{.*}} step %c16384_i32{{.*}} iter_args(%{{.*}}, %{{.*}}) -> (f32, f32)
// CHECK-COUNT-4: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<1> -> vector<8xbf16>
// CHECK: %[[OFF:.*]] = arith.subi %[[T]], %[[LO]] : i32
// CHECK: %[[KEPT:.*]] = arith.cmpi slt, %[[OFF]], %c32768_i32 : i32
// CHECK: scf.if %[[KEPT]] {
// CHECK: llvm.getelementptr inbounds %[[STG]][%{{.*}}] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, bf16
// CHECK-COUNT-4: llvm.store %{{.*}} {alignment = 16 : i64} : vector<8xbf16>, !llvm.ptr<3>
// Pass 2: a kept tile from the stage, any other from the row.
// CHECK: scf.for
// CHECK: arith.cmpi slt, %{{.*}}, %c32768_i32 : i32
// CHECK: scf.if %{{.*}} -> (vector<8xbf16>, vector<8xbf16>, vector<8xbf16>, vector<8xbf16>)
// CHECK-COUNT-4: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<3> -> vector<8xbf16>
// CHECK: } else {
// CHECK-COUNT-4: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<1> -> vector<8xbf16>
// CHECK-COUNT-4: llvm.store %{{.*}} {alignment = 16 : i64} : vector<8xbf16>, !llvm.ptr<1>

// With the tiles loaded ahead (the default), pass 1 keeps the tile it
// carries, and pass 2's load ahead comes from the stage or the row.
// AHEAD: dynamic_shared_bytes = 65536 : i64
// AHEAD: prefetch = "registers"
// AHEAD: scf.for %{{.*}} iter_args({{.*}}) -> (f32, f32, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>)
// AHEAD-COUNT-4: llvm.load %{{.*}} : !llvm.ptr<1> -> vector<4xf32>
// AHEAD: scf.if
// AHEAD-COUNT-4: llvm.store %{{.*}} {alignment = 16 : i64} : vector<4xf32>, !llvm.ptr<3>
// AHEAD: scf.if %{{.*}} -> (vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>)
// AHEAD-COUNT-4: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<3> -> vector<4xf32>

// Not by default (auto).
// NONE: dynamic_shared_bytes = 0 : i64
// NONE-NOT: rowred_stage

// FUSED: error: 'rowred.map' op kept_elements applies to the online strategy only
// STAGE: error: 'rowred.map' op kept_elements and prefetch = stage both use the stage in shared memory; choose one
// SMALL: error: 'rowred.map' op kept_elements 8192 must be whole tiles of 16384 elements
// BIG: error: 'rowred.map' op kept_elements 65536 take 262144 bytes, more than the shared memory of a block (229376)
