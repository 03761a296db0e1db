// RUN: softmax-opt %S/Inputs/dynamic.mlir --test-rowred-plan-request="fields='cluster = 4, kept_elements = 16384, keep_ahead = bulk'" --rowred-decompose --rowred-plan="strategy=online cols=262144" --convert-rowred-to-gpu | FileCheck %s
// RUN: softmax-opt %S/Inputs/dynamic.mlir --test-rowred-plan-request="fields='cluster = 1, warps = 1, kept_elements = 2048, keep_ahead = bulk'" --rowred-decompose --rowred-plan="strategy=online cols=16384" --convert-rowred-to-gpu | FileCheck %s --check-prefix=WARP
// RUN: not softmax-opt %S/Inputs/dynamic.mlir --test-rowred-plan-request="fields='cluster = 1, kept_elements = 16384, keep_ahead = bulk'" --rowred-decompose --rowred-plan="strategy=online cols=262144 chip=sm_80" --convert-rowred-to-gpu 2>&1 | FileCheck %s --check-prefix=SM80
// RUN: not softmax-opt %S/Inputs/dynamic.mlir --test-rowred-plan-request="fields='cluster = 2, kept_elements = 32768, keep_ahead = bulk'" --rowred-decompose --rowred-plan="strategy=online cols=262144" --convert-rowred-to-gpu 2>&1 | FileCheck %s --check-prefix=TOO-BIG
// RUN: not softmax-opt %S/Inputs/dynamic.mlir --test-rowred-plan-request="fields='keep_ahead = bulk'" --rowred-decompose --rowred-plan="strategy=online cols=262144" --convert-rowred-to-gpu 2>&1 | FileCheck %s --check-prefix=NO-KEEP

// keep_ahead = bulk: the kept tile (64 KiB, the first of the four f32 tiles
// of 16384 of each block's share) lives in two stage buffers that the rows
// take by turns, 128 KiB in all. Thread 0 copies a row's kept tiles with
// one cp.async.bulk that completes the buffer's mbarrier.
// CHECK: dynamic_shared_bytes = 131072 : i64
// CHECK-SAME: keep_ahead = true, keep_ahead_bulk = true
// CHECK: llvm.mlir.global internal @rowred_stage_barriers() {addr_space = 3 : i32, alignment = 8 : i64} : !llvm.array<2 x i64>
// CHECK: %[[STG:.*]] = llvm.mlir.addressof @rowred_stage : !llvm.ptr<3>
// Thread 0 initializes both mbarriers for one arrival each, before the
// cluster barrier that makes them visible.
// CHECK: nvvm.mbarrier.init %{{.*}}, %c1_i32
// CHECK: nvvm.mbarrier.init %{{.*}}, %c1_i32
// CHECK: nvvm.fence.mbarrier.init
// CHECK: nvvm.cluster.arrive
// The first row's kept tiles go into buffer 0 before the row loop: thread
// 0 arms the buffer's mbarrier for their bytes and copies them.
// CHECK: %[[KEPT0:.*]] = arith.minui %{{.*}}, %c16384_i32{{.*}} : i32
// CHECK: %[[BYTES0:.*]] = arith.muli %{{.*}}, %c4_i32{{.*}} : i32
// CHECK: %[[BAR0:.*]] = llvm.getelementptr %{{.*}}[%c0_i32{{.*}}] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i64
// CHECK: nvvm.mbarrier.arrive.expect_tx %[[BAR0]], %[[BYTES0]]
// CHECK: %[[DST0:.*]] = llvm.addrspacecast %{{.*}} : !llvm.ptr<3> to !llvm.ptr<7>
// CHECK: nvvm.cp.async.bulk.shared.cluster.global %[[DST0]], %{{.*}}, %[[BAR0]], %[[BYTES0]] l2_cache_hint
// The row loop counts its rows: buffer k & 1, phase parity (k >> 1) & 1,
// and the row's buffer 64 KiB into the stage for odd rows.
// CHECK: scf.for %{{.*}} = %{{.*}} to %arg2 step %{{.*}} iter_args(%[[K:.*]] = %{{.*}}) -> (i32)
// CHECK: %[[BUF:.*]] = arith.andi %[[K]], %c1_i32{{.*}} : i32
// CHECK: %[[HALF:.*]] = arith.shrui %[[K]], %c1_i32{{.*}} : i32
// CHECK: %[[PAR:.*]] = arith.andi %[[HALF]], %c1_i32{{.*}} : i32
// CHECK: %[[OFF:.*]] = arith.muli %[[BUF]], %c65536_i32{{.*}} : i32
// CHECK: %[[ROWSTG:.*]] = llvm.getelementptr inbounds %[[STG]][%[[OFF]]] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i8
// Pass 1 issues the loads of the first streamed tile, then waits for the
// row's copy (no cp.async group of its own) and folds the kept tile from
// the row's buffer.
// CHECK-NOT: nvvm.cp.async.wait.group
// CHECK-COUNT-4: nvvm.inline_ptx "ld.global.L2::cache_hint
// CHECK: %[[WBAR:.*]] = llvm.getelementptr %{{.*}}[%[[BUF]]] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i64
// CHECK: nvvm.mbarrier.try_wait %[[WBAR]], %[[PAR]]
// CHECK: llvm.getelementptr inbounds %[[ROWSTG]][%{{.*}}] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, f32
// CHECK-NEXT: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<3> -> vector<4xf32>
// After the block reduction's barrier, thread 0 copies the next row's kept
// tile into the other buffer, before the cluster exchange.
// CHECK: gpu.barrier
// CHECK: %[[OTHER:.*]] = arith.xori %[[BUF]], %c1_i32{{.*}} : i32
// CHECK: arith.cmpi slt, %{{.*}}, %arg2 : i64
// CHECK: %[[NBAR:.*]] = llvm.getelementptr %{{.*}}[%[[OTHER]]] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i64
// CHECK: nvvm.mbarrier.arrive.expect_tx %[[NBAR]]
// CHECK: %[[NOFF:.*]] = arith.muli %[[OTHER]], %c65536_i32{{.*}} : i32
// CHECK: %[[NSTG:.*]] = llvm.getelementptr inbounds %[[STG]][%[[NOFF]]]
// CHECK: %[[NDST:.*]] = llvm.addrspacecast %[[NSTG]] : !llvm.ptr<3> to !llvm.ptr<7>
// CHECK: nvvm.cp.async.bulk.shared.cluster.global %[[NDST]], %{{.*}}, %[[NBAR]]
// CHECK: st.async.shared::cluster
// Pass 2 reads the kept tile from the row's buffer and refills nothing:
// no per-thread copies anywhere on this path.
// CHECK: llvm.getelementptr inbounds %[[ROWSTG]][%{{.*}}] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, f32
// CHECK-NEXT: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<3> -> vector<4xf32>
// CHECK-NOT: nvvm.cp.async.shared.global
// CHECK: scf.yield %{{.*}} : i32

// One warp per block: no block reduction barrier of its own, so one goes
// before the copy into the other buffer, which the warp's lanes may still
// have been reading; without clusters a block barrier publishes the
// mbarriers' initialization.
// WARP: nvvm.fence.mbarrier.init
// WARP-NEXT: }
// WARP-NEXT: gpu.barrier
// WARP: nvvm.mbarrier.try_wait
// WARP: gpu.shuffle xor
// WARP: gpu.barrier
// WARP: arith.xori
// WARP: nvvm.cp.async.bulk.shared.cluster.global

// SM80: error: 'rowred.map' op keep_ahead = bulk copies with cp.async.bulk and an mbarrier, which need sm_90 or newer
// TOO-BIG: error: 'rowred.map' op keep_ahead = bulk keeps two buffers of kept_elements 32768, more than the shared memory of a block (229376 bytes)
// NO-KEEP: error: 'rowred.map' op keep_ahead = bulk fills the tiles that kept_elements keeps, and auto keeps none for this kernel with it; ask for kept_elements
