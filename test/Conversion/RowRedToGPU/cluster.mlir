// RUN: softmax-opt %S/Inputs/dynamic.mlir --rowred-decompose --rowred-plan="cols=65536 strategy=cluster" --convert-rowred-to-gpu | FileCheck %s
// RUN: softmax-opt %S/Inputs/dynamic.mlir --rowred-decompose --rowred-plan="cols=65536 strategy=cluster" --convert-rowred-to-gpu | grep -B2 gpu.return | FileCheck %s --check-prefix=FINAL
// RUN: softmax-opt %S/Inputs/dynamic.mlir --rowred-to-ptx="cols=65536 strategy=cluster" | FileCheck %s --check-prefix=PTX
// RUN: not softmax-opt %S/Inputs/dynamic.mlir --rowred-decompose --rowred-plan="cols=65536 strategy=cluster chip=sm_80" --convert-rowred-to-gpu 2>&1 | FileCheck %s --check-prefix=SM80
// RUN: not softmax-opt %S/Inputs/dynamic.mlir --test-rowred-plan-request="fields='cluster = 32'" --rowred-decompose --rowred-plan="cols=65536 strategy=cluster" --convert-rowred-to-gpu 2>&1 | FileCheck %s --check-prefix=SIZE
// RUN: softmax-opt %S/Inputs/dynamic.mlir --test-rowred-plan-request="fields='pair_reduce = true'" --rowred-decompose --rowred-plan="cols=65536" --convert-rowred-to-gpu | FileCheck %s --check-prefix=PAIR
// RUN: not softmax-opt %S/Inputs/dynamic.mlir --test-rowred-plan-request="fields='cluster = 1'" --rowred-decompose --rowred-plan="cols=65536 strategy=cluster" --convert-rowred-to-gpu 2>&1 | FileCheck %s --check-prefix=ONE
// RUN: not softmax-opt %S/Inputs/dynamic.mlir --test-rowred-plan-request="fields='strategy = fused, cluster = 4'" --rowred-decompose --rowred-plan="cols=1024" 2>&1 | FileCheck %s --check-prefix=FUSED-CLUSTER
// RUN: softmax-opt %S/Inputs/dynamic.mlir --test-rowred-plan-request="fields='cluster = 16'" --rowred-to-ptx="cols=262144 strategy=cluster" | FileCheck %s --check-prefix=SIXTEEN
// RUN: not softmax-opt %S/Inputs/dynamic.mlir --rowred-decompose --rowred-plan="cols=1048576 strategy=cluster" --convert-rowred-to-gpu 2>&1 | FileCheck %s --check-prefix=LONG
// RUN: softmax-opt %S/Inputs/dynamic.mlir --test-rowred-plan-request="fields='prefetch = registers'" --rowred-decompose --rowred-plan="cols=65536 strategy=cluster" --convert-rowred-to-gpu | FileCheck %s --check-prefix=AHEAD

// A 65536-column f32 softmax split over a cluster of 4 blocks, each holding
// a 16384-element slice in registers (512 threads x 32). The host launches
// one cluster per row.
// CHECK: cluster_blocks = 4 : i64
// CHECK-SAME: max_cols = 65536 : i64
// CHECK-SAME: strategy = "cluster"
// CHECK: %[[BLOCKS:.*]] = arith.muli %dim{{.*}}, %[[C4:.*]] : index
// CHECK: gpu.launch_func @softmax_kernel0::@softmax_kernel0 clusters in (%[[C4]], %{{.*}}, %{{.*}}) blocks in (%[[BLOCKS]], %{{.*}}, %{{.*}}) threads in (%c512

// Per block: one f32 per reduce and cluster block, and one mbarrier per
// reduce, in shared memory.
// CHECK: llvm.mlir.global internal @rowred_cluster_slots() {addr_space = 3 : i32, alignment = 4 : i64} : !llvm.array<8 x f32>
// CHECK: llvm.mlir.global internal @rowred_cluster_barriers() {addr_space = 3 : i32, alignment = 8 : i64} : !llvm.array<2 x i64>
// CHECK: gpu.func @softmax_kernel0
// CHECK-SAME: nvvm.cluster_dim = array<i32: 4, 1, 1>
// Two 512-thread blocks per SM: ptxas is asked to keep to 64 registers.
// CHECK-SAME: nvvm.minctasm = 2 : i32
// The block's slice starts at rank * 16384; rows go cluster by cluster.
// CHECK: %[[RANK:.*]] = gpu.cluster_block_id x
// CHECK: %[[RANK32:.*]] = arith.index_cast %[[RANK]] : index to i32
// CHECK: arith.muli %[[RANK32]], %c16384_i32
// Thread 0 initializes the mbarriers (one arrival: its own), and every block
// of the cluster has arrived after its own before any writes to another's
// shared memory: the cluster barrier's wait comes just before the row loop
// (after the first row's loads, where they are issued ahead of it).
// CHECK: nvvm.mbarrier.init %{{.*}}, %c1_i32
// CHECK: nvvm.mbarrier.init %{{.*}}, %c1_i32
// CHECK: nvvm.fence.mbarrier.init
// CHECK: nvvm.cluster.arrive {aligned}
// CHECK-NOT: nvvm.cluster.wait
// CHECK: scf.if
// CHECK: gpu.cluster_id x
// CHECK: gpu.cluster_dim x
// CHECK: nvvm.cluster.wait {aligned}
// CHECK-NEXT: scf.for
// Each row: its parity k & 1, and thread 0 arms both mbarriers for 4 x 4
// bytes.
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[K:[^ ]*]] = %c0_i32{{[_0-9]*}}) -> (i32)
// CHECK: %[[PARITY:[^ ]*]] = arith.andi %[[K]], %c1_i32
// CHECK: nvvm.mbarrier.arrive.expect_tx %{{.*}}, %c16_i32
// CHECK: nvvm.mbarrier.arrive.expect_tx %{{.*}}, %c16_i32
// Max: warps, then shared memory across warps, then across the cluster:
// threads 0..3 send the block's value into entry [0][rank] of each block's
// array with st.async, counted on that block's mbarrier; every thread waits
// for the phase, then each warp combines the 4 entries.
// CHECK: gpu.barrier
// CHECK: %[[SLOTS:.*]] = llvm.mlir.addressof @rowred_cluster_slots : !llvm.ptr<3>
// CHECK: arith.cmpi ult, %{{.*}}, %c4_i32
// CHECK: scf.if
// CHECK: %[[MINE:.*]] = llvm.getelementptr %{{.*}}[%[[RANK32]]] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, f32
// CHECK: %[[ADDR:.*]] = llvm.ptrtoint %[[MINE]] : !llvm.ptr<3> to i32
// CHECK: nvvm.inline_ptx "{{.*}}mapa.shared::cluster.u32 entry, $0, $3;{{.*}}mapa.shared::cluster.u32 bar, $1, $3;{{.*}}st.async.shared::cluster.mbarrier::complete_tx::bytes.f32 [entry], $2, [bar];{{.*}}" ro(%[[ADDR]], %{{.*}}, %{{.*}}, %{{.*}} : i32, i32, f32, i32)
// CHECK: scf.while
// CHECK-NEXT: nvvm.mbarrier.try_wait %{{.*}}, %[[PARITY]] : !llvm.ptr<3>, i32 -> i1
// CHECK: llvm.load %{{.*}} : !llvm.ptr<3> -> f32
// CHECK: gpu.shuffle xor %{{.*}}, %c2_i32
// CHECK: gpu.shuffle xor %{{.*}}, %c1_i32
// Sum: the same in the second row of the array and the second mbarrier.
// CHECK: gpu.barrier
// CHECK: arith.muli %c1_i32{{.*}}, %c4_i32
// CHECK: nvvm.inline_ptx
// CHECK: nvvm.mbarrier.try_wait %{{.*}}, %[[PARITY]]
// The blocks meet once more before they leave, with a relaxed arrival: no
// block waits for its stores to complete before it arrives.
// FINAL: nvvm.cluster.arrive.relaxed {aligned}
// FINAL-NEXT: nvvm.cluster.wait {aligned}
// FINAL-NEXT: gpu.return

// The PTX (escaped on one line) requires clusters of 4 at compile time, so a
// plain launch with a grid that is a multiple of 4 forms them.
// PTX: .explicitcluster
// PTX-SAME: .reqnctapercluster 4, 1, 1
// PTX-SAME: mbarrier.init.shared.b64
// PTX-SAME: barrier.cluster.arrive.aligned;
// PTX-SAME: barrier.cluster.wait.aligned;
// PTX-SAME: mbarrier.arrive.expect_tx.shared.b64
// PTX-SAME: st.async.shared::cluster.mbarrier::complete_tx::bytes.f32
// PTX-SAME: mbarrier.try_wait.parity.shared.b64
// PTX-SAME: barrier.cluster.arrive.relaxed.aligned;\0A\09barrier.cluster.wait.aligned;

// Where the loop loads each row ahead, the first row's loads are issued
// before the wait at the first cluster barrier, and the loop carries them.
// AHEAD: nvvm.cluster.arrive {aligned}
// AHEAD-NOT: nvvm.cluster.wait
// AHEAD-COUNT-8: llvm.load %{{.*}} : !llvm.ptr<1> -> vector<4xf32>
// AHEAD: nvvm.cluster.wait {aligned}
// AHEAD-NEXT: scf.for {{.*}} -> (i32, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>)

// Clusters of 16 (non-portable): 512-thread slices of 16384 elements; the
// lanes read the 16 partials and a four-step butterfly combines them.
// SIXTEEN: block_elements = 16384 : i64, block_threads = 512 : i64, chunk_elements = 0 : i64, cluster_blocks = 16 : i64
// SIXTEEN-SAME: max_cols = 262144 : i64
// SIXTEEN: .reqnctapercluster 16, 1, 1

// With pair_reduce = true the vector path exchanges one (max, sum) pair per row
// (two buffers, 2 x 4 x 4 bytes each), and the re-reading scalar path one
// value per reduce (two mbarriers, 4 x 4 bytes each): the arrays fit both.
// PAIR: @rowred_cluster_slots() {{.*}} : !llvm.array<16 x f32>
// PAIR: @rowred_cluster_barriers() {{.*}} : !llvm.array<2 x i64>
// PAIR: scf.for
// PAIR: nvvm.mbarrier.arrive.expect_tx %{{.*}}, %c32_i32
// PAIR-NOT: nvvm.mbarrier.arrive.expect_tx
// PAIR: scf.for
// PAIR: nvvm.mbarrier.arrive.expect_tx %{{.*}}, %c16_i32
// PAIR-NOT: {{scf|nvvm}}.
// PAIR: llvm.mlir.addressof @rowred_cluster_barriers
// PAIR-NEXT: llvm.getelementptr
// PAIR-NOT: {{scf|nvvm}}.
// PAIR: nvvm.mbarrier.arrive.expect_tx %{{.*}}, %c16_i32

// SM80: error: 'rowred.map' op the cluster strategy needs thread-block clusters (sm_90 or newer), not sm_80
// SIZE: error: 'rowred.map' op cluster must be 1 (no cluster), 2, 4, 8 or 16 (16 needs a launcher that allows non-portable cluster sizes), got 32
// ONE: error: 'rowred.map' op the cluster strategy needs a cluster of 2 or more; one block per row is strategy = fused
// A fused request with a cluster is refused, as a plan with both is.
// FUSED-CLUSTER: error: 'rowred.map' op a fused kernel is one block per row, not a cluster of 4 (strategy = cluster splits a row)
// LONG: error: 'rowred.map' op a cluster block of 65536 elements over 1024 threads keeps 64 elements per thread in registers (limit 32)
