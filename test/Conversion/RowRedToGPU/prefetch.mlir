// RUN: softmax-opt %S/Inputs/dynamic.mlir --test-rowred-plan-request="fields='prefetch = stage'" --rowred-decompose --rowred-plan="cols=4096" --convert-rowred-to-gpu | FileCheck %s
// RUN: softmax-opt %S/Inputs/dynamic.mlir --rowred-decompose --rowred-plan="cols=4096" --convert-rowred-to-gpu | FileCheck %s --check-prefix=OFF
// RUN: softmax-opt %S/Inputs/bf16.mlir --test-rowred-plan-request="fields='grid = persistent'" --rowred-to-ptx="cols=32768" | FileCheck %s --check-prefix=PTX
// RUN: softmax-opt %S/Inputs/bf16.mlir --rowred-to-ptx="cols=32768" | FileCheck %s --check-prefix=PTX-ROW
// RUN: softmax-opt %S/Inputs/bf16.mlir --test-rowred-plan-request="fields='cluster = 4, prefetch = stage'" --rowred-decompose --rowred-plan="cols=65536" --convert-rowred-to-gpu | FileCheck %s --check-prefix=CLUSTER
// RUN: softmax-opt %S/Inputs/bf16.mlir --rowred-decompose --rowred-plan="cols=65536 strategy=cluster" --convert-rowred-to-gpu | FileCheck %s --check-prefix=CLUSTER-AUTO
// RUN: not softmax-opt %S/Inputs/dynamic.mlir --test-rowred-plan-request="fields='prefetch = stage'" --rowred-decompose --rowred-plan --convert-rowred-to-gpu 2>&1 | FileCheck %s --check-prefix=ONLINE
// RUN: softmax-opt %S/Inputs/bf16.mlir --test-rowred-plan-request="fields='cluster = 8, prefetch = stage'" --rowred-decompose --rowred-plan="strategy=online cols=262144" --convert-rowred-to-gpu | FileCheck %s --check-prefix=ONLINE-STAGE
// RUN: not softmax-opt %S/Inputs/dynamic.mlir --test-rowred-plan-request="fields='prefetch = stage'" --rowred-decompose --rowred-plan="cols=1048576" --convert-rowred-to-gpu 2>&1 | FileCheck %s --check-prefix=ONLINE-TOO-BIG
// RUN: not softmax-opt %S/Inputs/dynamic.mlir --test-rowred-plan-request="fields='rows_per_block = 4, prefetch = stage'" --rowred-decompose --rowred-plan="cols=256" --convert-rowred-to-gpu 2>&1 | FileCheck %s --check-prefix=ROWS
// RUN: softmax-opt %S/Inputs/dynamic.mlir --test-rowred-plan-request="fields='prefetch = stage'" --rowred-decompose --rowred-plan="cols=256" --convert-rowred-to-gpu | FileCheck %s --check-prefix=ROWS-DEFAULT
// RUN: not softmax-opt %S/Inputs/dynamic.mlir --test-rowred-plan-request="fields='vector = 1, prefetch = stage'" --rowred-decompose --rowred-plan="cols=4096" --convert-rowred-to-gpu 2>&1 | FileCheck %s --check-prefix=SCALAR
// RUN: not softmax-opt %S/Inputs/dynamic.mlir --test-rowred-plan-request="fields='prefetch = stage'" --rowred-decompose --rowred-plan="cols=4096 chip=sm_75" --convert-rowred-to-gpu 2>&1 | FileCheck %s --check-prefix=SM75

// The next row staged in shared memory: a fused f32 block of 4096 (128
// threads x 32) gets a 16 KiB stage of dynamic shared memory, which the
// host launch and the metadata carry.
// CHECK: dynamic_shared_bytes = 16384 : i64
// CHECK: gpu.launch_func @softmax_kernel0::@softmax_kernel0 blocks in ({{.*}}) threads in ({{.*}}) dynamic_shared_memory_size %{{.*}} args(
// CHECK: llvm.mlir.global external @rowred_stage() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<0 x i8>
// CHECK: %[[STAGE:.*]] = llvm.mlir.addressof @rowred_stage : !llvm.ptr<3>
// Vector path only: before the row loop, the block's first row is copied in
// (one 16-byte cp.async per chunk the thread will read back, one group).
// CHECK: scf.if
// CHECK-COUNT-8: nvvm.cp.async.shared.global %{{.*}}, %{{.*}}, 16, cache = cg : !llvm.ptr<3>, !llvm.ptr<1>
// CHECK: nvvm.cp.async.commit.group
// CHECK: scf.for
// Each row waits for its own copies, then reads its chunks from the stage.
// CHECK: nvvm.cp.async.wait.group 0
// CHECK-COUNT-8: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<3> -> vector<4xf32>
// Once the first reduction has used every staged value, the next row's copy
// starts, before the first exchange of the row.
// CHECK: arith.maximumf
// CHECK-NOT: gpu.shuffle
// CHECK: arith.cmpi slt, %{{.*}}, %{{.*}} : i64
// CHECK-COUNT-8: nvvm.cp.async.shared.global
// CHECK: nvvm.cp.async.commit.group
// CHECK: gpu.shuffle xor
// The scalar fallback reads global memory and has no stage.
// CHECK: scf.for
// CHECK-NOT: nvvm.cp.async
// CHECK: gpu.return

// auto leaves f32 blocks of 4096 unstaged.
// OFF: dynamic_shared_bytes = 0 : i64
// OFF-NOT: cp.async
// OFF-NOT: rowred_stage

// The assembly: the stage is extern shared memory, copies bypass L1 (.cg).
// auto stages the next row of fused 16-bit blocks of 32768 elements (1024
// threads x 32) on the persistent grid.
// PTX: .extern .shared .align 16 .b8 rowred_stage[];
// PTX: cp.async.cg.shared.global [%rd{{[0-9]+}}], [%rd{{[0-9]+}}], 16;
// PTX: cp.async.commit_group;
// PTX: cp.async.wait_group {{(\\09)?}}0;
// PTX: ld.shared.v4.b32

// With one block per row (auto on sm_90), the online kernel stages the whole
// row before its first pass, waits for the copies and reads the stage in
// both passes.
// PTX-ROW: .maxntid 512, 1, 1
// PTX-ROW: cp.async.cg.shared.global [%rd{{[0-9]+}}], [%rd{{[0-9]+}}], 16;
// PTX-ROW: cp.async.wait_group {{(\\09)?}}0;
// PTX-ROW: ld.shared.v4.b32
// PTX-ROW: ld.shared.v4.b32

// Cluster slices can be staged on request: each block copies its own slice
// (512 threads x 32 bf16, 32 KiB). Not by default: with the exchanges no
// longer waiting for copies in flight, the stage costs clusters 8%.
// CLUSTER: cluster_blocks = 4 : i64, dynamic_shared_bytes = 32768 : i64
// CLUSTER: nvvm.cp.async.shared.global
// CLUSTER-AUTO: cluster_blocks = 2 : i64, dynamic_shared_bytes = 0 : i64
// CLUSTER-AUTO-NOT: nvvm.cp.async.shared.global

// ONLINE: error: 'rowred.map' op prefetch = stage is not possible here: the online kernel stages its share of a row only for a known row length (cols=N)

// The online kernel over a cluster of 8 with the stage: each block's share
// of a bf16 row of 262144 (32768 elements, two tiles of 16384) in 64 KiB of
// dynamic shared memory; the kernel takes rows up to 8 shares.
// ONLINE-STAGE: cluster_blocks = 8 : i64, dynamic_shared_bytes = 65536 : i64
// ONLINE-STAGE-SAME: max_cols = 262144 : i64
// ONLINE-STAGE-SAME: prefetch = "shared"
// ONLINE-STAGE-SAME: strategy = "online"
// Before the row loop, the first row's share, one cp.async group per tile.
// ONLINE-STAGE: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %c16384_i32{{.*}} : i32 {
// ONLINE-STAGE-COUNT-4: nvvm.cp.async.shared.global %{{.*}}, %{{.*}}, 16, cache = cg : !llvm.ptr<3>, !llvm.ptr<1>
// ONLINE-STAGE: nvvm.cp.async.commit.group
// ONLINE-STAGE: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args
// Each row waits for its share, then both passes read the stage, not global
// memory.
// ONLINE-STAGE: nvvm.cp.async.wait.group 0
// ONLINE-STAGE: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %c16384_i32{{.*}} iter_args
// ONLINE-STAGE-NOT: !llvm.ptr<1> -> vector<8xbf16>
// ONLINE-STAGE-COUNT-4: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<3> -> vector<8xbf16>
// ONLINE-STAGE: st.async.shared::cluster
// ONLINE-STAGE-NOT: !llvm.ptr<1> -> vector<8xbf16>
// ONLINE-STAGE-COUNT-4: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<3> -> vector<8xbf16>
// The second pass writes each tile, then refills it with the next row's.
// ONLINE-STAGE-COUNT-4: llvm.store %{{.*}} {alignment = 16 : i64} : vector<8xbf16>, !llvm.ptr<1>
// ONLINE-STAGE-COUNT-4: nvvm.cp.async.shared.global %{{.*}}, %{{.*}}, 16, cache = cg : !llvm.ptr<3>, !llvm.ptr<1>
// ONLINE-STAGE: nvvm.cp.async.commit.group
// A peeled row (of a length or stride off the vector width) starts at its
// own head: each row copies its share's vectors into the stage itself, from
// the head on, loads its few edge elements while the copies are in flight,
// waits, and both passes read the stage.
// ONLINE-STAGE: } else {
// ONLINE-STAGE: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %c16384_i32{{.*}} : i32 {
// ONLINE-STAGE-COUNT-4: nvvm.cp.async.shared.global %{{.*}}, %{{.*}}, 16, cache = cg : !llvm.ptr<3>, !llvm.ptr<1>
// ONLINE-STAGE: nvvm.cp.async.commit.group
// ONLINE-STAGE: llvm.load %{{.*}} {alignment = 2 : i64} : !llvm.ptr<1> -> bf16
// ONLINE-STAGE: nvvm.cp.async.wait.group 0
// ONLINE-STAGE-NOT: !llvm.ptr<1> -> vector<8xbf16>
// ONLINE-STAGE-COUNT-4: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<3> -> vector<8xbf16>
// ONLINE-STAGE: st.async.shared::cluster
// ONLINE-STAGE-NOT: !llvm.ptr<1> -> vector<8xbf16>
// ONLINE-STAGE-COUNT-4: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<3> -> vector<8xbf16>
// ONLINE-STAGE-COUNT-4: llvm.store %{{.*}} {alignment = 16 : i64} : vector<8xbf16>, !llvm.ptr<1>
// The scalar path streams from global memory twice, as without the stage.
// ONLINE-STAGE: } else {
// ONLINE-STAGE-NOT: nvvm.cp.async
// ONLINE-STAGE: llvm.load %{{.*}} {alignment = 2 : i64} : !llvm.ptr<1> -> bf16
// ONLINE-STAGE-NOT: nvvm.cp.async
// ONLINE-STAGE: gpu.return

// An f32 share of 65536 elements (256 KiB) does not fit.
// ONLINE-TOO-BIG: error: 'rowred.map' op prefetch = stage is not possible here: the stage would exceed the shared memory of a block
// ROWS: error: 'rowred.map' op prefetch = stage is not possible here: blocks with several rows hold no stage
// Asked for the stage, a short row keeps a block of its own instead of the
// default warp per row.
// ROWS-DEFAULT: block_threads = 32 : i64, chunk_elements = 0 : i64, cluster_blocks = 1 : i64, dynamic_shared_bytes = 1024 : i64
// ROWS-DEFAULT-SAME: prefetch = "shared"
// ROWS-DEFAULT-SAME: rows_per_block = 1 : i64
// SCALAR: error: 'rowred.map' op prefetch = stage is not possible here: cp.async copies vectors and this kernel has none
// SM75: error: 'rowred.map' op prefetch = stage is not possible here: cp.async needs sm_80 or newer
