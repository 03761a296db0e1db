// RUN: softmax-opt %S/Inputs/dynamic.mlir --rowred-decompose --rowred-plan="strategy=online row-split=40" --convert-rowred-to-gpu | FileCheck %s
// RUN: softmax-opt %S/Inputs/dynamic.mlir --rowred-decompose --rowred-plan="cols=1024 row-split=4" --convert-rowred-to-gpu | FileCheck %s --check-prefix=AUTO
// RUN: softmax-opt %S/Inputs/dynamic.mlir --rowred-decompose --rowred-plan="strategy=online" --convert-rowred-to-gpu | FileCheck %s --check-prefix=NONE
// RUN: not softmax-opt %S/Inputs/dynamic.mlir --rowred-decompose --rowred-plan="strategy=online row-split=4 cluster-size=4" --convert-rowred-to-gpu 2>&1 | FileCheck %s --check-prefix=CLUSTER
// RUN: not softmax-opt %S/Inputs/dynamic.mlir --rowred-decompose --rowred-plan="strategy=fused cols=1024 row-split=4" --convert-rowred-to-gpu 2>&1 | FileCheck %s --check-prefix=FUSED
// RUN: not softmax-opt %S/Inputs/dynamic.mlir --rowred-decompose --rowred-plan="strategy=online row-split=0" --convert-rowred-to-gpu 2>&1 | FileCheck %s --check-prefix=RANGE
// RUN: not softmax-opt %S/Inputs/dynamic.mlir --rowred-decompose --rowred-plan="strategy=online row-split=1025" --convert-rowred-to-gpu 2>&1 | FileCheck %s --check-prefix=RANGE

// A row split over a group of 40 blocks that combine their (max, sum) pairs
// through a global workspace: an exit counter and an arrival counter per
// buffer (16 bytes with padding), then two buffers of 40
// pairs, rounded up to 128 bytes (768 bytes per group).
// CHECK: row_split = 40 : i64
// CHECK-SAME: workspace_bytes_per_group = 768 : i64

// The host side launches one group with a zeroed workspace of its own.
// CHECK: %[[WS:.*]] = gpu.alloc () : memref<192xi32>
// CHECK: gpu.memset %[[WS]], %{{.*}} : memref<192xi32>, i32
// CHECK: gpu.launch_func @softmax_kernel0::@softmax_kernel0 blocks in (%c40,
// CHECK-SAME: args({{.*}}, %{{.*}} : !llvm.ptr<1>)
// CHECK: gpu.dealloc %[[WS]]

// The kernel takes the workspace as its seventh parameter. Block b is rank
// b % 40 of group b / 40; blocks past the last whole group do nothing.
// CHECK: gpu.func @softmax_kernel0(%{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64, %[[ARG:.*]]: !llvm.ptr<1>)
// CHECK: %[[BLOCK:.*]] = gpu.block_id x
// CHECK: %[[GRID:.*]] = gpu.grid_dim x
// CHECK: arith.remui %{{.*}}, %c40_i32
// CHECK: %[[GROUP:.*]] = arith.divui %{{.*}}, %c40_i32
// CHECK: %[[GROUPS:.*]] = arith.divui %{{.*}}, %c40_i32
// CHECK: %[[WHOLE:.*]] = arith.cmpi ult, %[[GROUP]], %[[GROUPS]]
// CHECK: scf.if %[[WHOLE]]

// Per row, after the block's own reduction: thread 0 stores the block's pair,
// releases it with a fence and a relaxed add to the group's counter, and
// spins on acquire loads until every block of the group has arrived (a
// signed difference, so that the counter may wrap around); after
// a block barrier, each lane of warp 0 alone folds entries lane and lane + 32
// (relaxed loads at gpu scope), the lanes combine by butterfly, and lane 0
// hands the pair to the other warps through shared memory.
// CHECK: scf.if
// CHECK: llvm.store %{{.*}}, %{{.*}} {alignment = 8 : i64} : i64, !llvm.ptr<1>
// CHECK: llvm.fence syncscope("device") release
// CHECK: llvm.atomicrmw add %{{.*}}, %{{.*}} syncscope("device") monotonic
// CHECK: scf.while
// CHECK: %[[ARRIVED:.*]] = llvm.load %{{.*}} atomic syncscope("device") acquire
// CHECK: %[[AHEAD:.*]] = arith.subi %[[ARRIVED]], %{{.*}} : i32
// CHECK: arith.cmpi slt, %[[AHEAD]], %c0_i32
// CHECK: gpu.barrier
// CHECK: %[[WARP0:.*]] = arith.cmpi ult, %{{.*}}, %c32_i32{{.*}} : i32
// CHECK: scf.if %[[WARP0]] {
// CHECK-COUNT-2: llvm.load %{{.*}} atomic syncscope("device") monotonic {alignment = 8 : i64} : !llvm.ptr<1> -> i64
// CHECK: gpu.shuffle xor
// CHECK: memref.store %{{.*}}, %[[SLOTS:.*]][%{{.*}}, %{{.*}}] : memref<2x32xf32, #gpu.address_space<workgroup>>
// CHECK-NOT: gpu.barrier
// CHECK: }
// CHECK-NEXT: }
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: %[[C0:.*]] = arith.constant 0 : index
// CHECK-NEXT: memref.load %[[SLOTS]][%[[C0]], %[[C0]]]

// At the end, the last block out of the group resets its exit counter,
// the arrival counters of both buffers and the entries.
// CHECK: llvm.fence syncscope("device") acq_rel
// CHECK: %[[OUT:.*]] = llvm.atomicrmw add %{{.*}}, %{{.*}} syncscope("device") monotonic
// CHECK: llvm.fence syncscope("device") acq_rel
// CHECK: arith.cmpi eq, %[[OUT]], %c39_i32
// CHECK-COUNT-3: llvm.store %{{.*}} {alignment = 4 : i64} : i32, !llvm.ptr<1>
// Then every (max, sum) entry of the buffers, so that the workspace is zero again.
// CHECK: %[[ENTRIES:.*]] = arith.constant 80 : index
// CHECK: scf.for %{{.*}} = %{{.*}} to %[[ENTRIES]]
// CHECK: llvm.store %{{.*}}, %{{.*}} {alignment = 8 : i64} : i64, !llvm.ptr<1>
// CHECK-NOT: llvm.store

// A row split makes auto pick the online kernel even for a row that fits a
// block; groups of at most 32 read one entry per lane.
// AUTO: row_split = 4 : i64
// AUTO-SAME: strategy = "online"
// AUTO-SAME: workspace_bytes_per_group = 128 : i64
// AUTO-COUNT-1: atomic syncscope("device") monotonic {alignment = 8 : i64} : !llvm.ptr<1> -> i64
// AUTO-NOT: atomic syncscope("device") monotonic {alignment = 8 : i64} : !llvm.ptr<1> -> i64
// AUTO: gpu.shuffle xor

// NONE: row_split = 1 : i64
// NONE-SAME: workspace_bytes_per_group = 0 : i64
// NONE-NOT: gpu.alloc
// NONE-NOT: llvm.atomicrmw

// CLUSTER: error: 'rowred.map' op row-split and cluster-size both split a row over blocks; choose one
// FUSED: error: 'rowred.map' op row-split applies to the online strategy only, not fused
// RANGE: error: 'rowred.map' op row-split must be from 1 (none) to 1024 blocks per row, got
