// RUN: softmax-opt %s --test-rowred-plan-request="fields='warps = 2, block = 256, reverse_second_pass = false'" --rowred-decompose --rowred-plan="strategy=online" --convert-rowred-to-gpu | FileCheck %s
// RUN: softmax-opt %s --test-rowred-plan-request="fields='warps = 2, block = 256, reverse_second_pass = true'" --rowred-decompose --rowred-plan="strategy=online" --convert-rowred-to-gpu | FileCheck %s --check-prefix=REV
// RUN: softmax-opt %s --test-rowred-plan-request="fields='fast_exp = false'" --rowred-decompose --rowred-plan="strategy=online" --convert-rowred-to-gpu | FileCheck %s --check-prefix=EXACT
// RUN: softmax-opt %s --test-rowred-plan-request="fields='cluster = 4'" --rowred-decompose --rowred-plan="strategy=online" --convert-rowred-to-gpu | FileCheck %s --check-prefix=CLUSTER
// RUN: not softmax-opt %s --test-rowred-plan-request="fields='cluster = 4'" --rowred-decompose --rowred-plan="strategy=online chip=sm_80" --convert-rowred-to-gpu 2>&1 | FileCheck %s --check-prefix=CLUSTER-SM80

// Online over a cluster of 4: block r walks columns [r * span, (r + 1) *
// span) with span = ceil(ceil(N / 4) / tile) tiles, the block pairs (m, d)
// meet in distributed shared memory, and the second pass walks the block's
// own share again. The single exchange per row alternates between two
// buffers (rows k and k + 1), each an mbarrier and 2 x 4 entries (the max in
// 0-3, the sum in 4-7) per block.
// CLUSTER: cluster_blocks = 4 : i64
// CLUSTER-SAME: strategy = "online"
// CLUSTER: llvm.mlir.global internal @rowred_cluster_slots() {addr_space = 3 : i32, alignment = 4 : i64} : !llvm.array<16 x f32>
// CLUSTER: llvm.mlir.global internal @rowred_cluster_barriers() {addr_space = 3 : i32, alignment = 8 : i64} : !llvm.array<2 x i64>
// CLUSTER: gpu.func @{{.*}}_kernel0
// CLUSTER: gpu.cluster_block_id  x
// CLUSTER-COUNT-2: nvvm.mbarrier.init %{{.*}}, %c1_i32
// CLUSTER: nvvm.fence.mbarrier.init
// CLUSTER: nvvm.cluster.arrive {aligned}
// CLUSTER: nvvm.cluster.wait {aligned}
// The row loop counts its rows: buffer k & 1, phase parity (k >> 1) & 1;
// thread 0 arms the row's mbarrier for 4 blocks x 2 values x 4 bytes.
// CLUSTER: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[K:[^ ]*]] = %c0_i32{{[_0-9]*}}) -> (i32)
// CLUSTER: %{{.*}} = arith.andi %[[K]], %c1_i32{{.*}}
// CLUSTER: %[[HALF:.*]] = arith.shrui %[[K]], %c1_i32{{.*}}
// CLUSTER: %[[PARITY:[^ ]*]] = arith.andi %[[HALF]], %c1_i32{{.*}}
// CLUSTER: nvvm.mbarrier.arrive.expect_tx %{{.*}}, %c32_i32{{.*}}
// The block exchange of the pair takes shared slots 0-1 or 2-3 by turns
// (k & 1), so that no barrier has to end the row.
// CLUSTER: %[[ODD:.*]] = arith.andi %[[K]], %c1_i32{{.*}}
// CLUSTER: %[[BASE32:.*]] = arith.shli %[[ODD]], %c1_i32{{.*}}
// CLUSTER: %[[BASE:.*]] = arith.index_cast %[[BASE32]] : i32 to index
// CLUSTER: arith.ceildivui %{{.*}}, %c4_i64
// CLUSTER: %[[LO64:.*]] = arith.minui
// CLUSTER: %[[HI64:.*]] = arith.minui
// CLUSTER: %[[LO:.*]] = arith.trunci %[[LO64]] : i64 to i32
// CLUSTER: %[[HI:.*]] = arith.trunci %[[HI64]] : i64 to i32
// CLUSTER: scf.for %{{.*}} = %[[LO]] to %[[HI]] step %c16384_i32
// CLUSTER: memref.store %{{.*}}, %{{.*}}[%[[BASE]], %{{.*}}] : memref<4x32xf32, #gpu.address_space<workgroup>>
// CLUSTER: %[[BASE1:.*]] = arith.addi %[[BASE]], %c1{{.*}} : index
// CLUSTER-NEXT: memref.store %{{.*}}, %{{.*}}[%[[BASE1]], %{{.*}}]
// CLUSTER: gpu.barrier
// CLUSTER: memref.load %{{.*}}[%[[BASE]], %{{.*}}]
// Threads 0-3 send the block's max and sum to block tid with st.async, which
// counts the bytes on that block's mbarrier; every thread waits for the
// phase, then reads entry lane % 4.
// CLUSTER: arith.cmpi ult, %{{.*}}, %c4_i32{{.*}}
// CLUSTER: scf.if
// CLUSTER: nvvm.inline_ptx "{{.*}}mapa.shared::cluster.u32 entry{{.*}}st.async.shared::cluster.mbarrier::complete_tx::bytes.f32 [entry], $2, [bar]
// CLUSTER-SAME: ro(%{{.*}}, %{{.*}}, %[[M:[^,]*]], %{{.*}} : i32, i32, f32, i32)
// CLUSTER: nvvm.inline_ptx
// CLUSTER-NOT: ro(%{{.*}}, %{{.*}}, %[[M]],
// CLUSTER-SAME: : i32, i32, f32, i32)
// CLUSTER: scf.while
// CLUSTER-NEXT: nvvm.mbarrier.try_wait %{{.*}}, %[[PARITY]] : !llvm.ptr<3>, i32 -> i1
// CLUSTER-COUNT-2: gpu.shuffle xor
// CLUSTER-NOT: gpu.barrier
// CLUSTER: scf.yield %{{[0-9]+}} : i32{{$}}
// No cluster barrier inside the row loop; one before the kernel returns,
// arrived at without waiting for the block's stores.
// CLUSTER-NOT: nvvm.cluster.wait
// CLUSTER: nvvm.cluster.arrive.relaxed {aligned}
// CLUSTER-NEXT: nvvm.cluster.wait {aligned}
// CLUSTER-NEXT: gpu.return
// CLUSTER-SM80: error: 'rowred.map' op an online kernel over clusters needs thread-block clusters (sm_90 or newer), not sm_80

// The online kernel: pass 1 walks the row in tiles keeping a running
// (max, sum) per thread, merged across threads with the online combiner;
// pass 2 reads the row again and writes it.

// CHECK: max_cols = 0
// CHECK-SAME: strategy = "online"
// CHECK: gpu.func @softmax_kernel0
// CHECK-SAME: workgroup(%[[SMEM:.*]] : memref<2x2xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64})
// CHECK: scf.for %[[ROW:.*]] = %{{.*}} to %{{.*}} step %{{.*}} : i64 {

// Pass 1: tile max, new running max, rescale of the running sum (0 while the
// running max is -inf), masked exp terms.
// CHECK: %[[P1:.*]]:2 = scf.for %{{.*}} = %{{.*}} to %[[COLS:.*]] step %{{.*}} iter_args(%[[M:.*]] = %[[NEG_INF:.*]], %[[D:.*]] = %{{.*}}) -> (f32, f32) : i32 {
// CHECK: %[[MNEW:.*]] = arith.maximumf %[[M]], %{{.*}} : f32
// CHECK: %[[FINITE:.*]] = arith.cmpf one, %[[MNEW]], %{{.*}} : f32
// CHECK: %[[OLD:.*]] = arith.subf %[[M]], %[[MNEW]] : f32
// CHECK: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f32"
// CHECK: %[[SCALE:.*]] = arith.select %[[FINITE]], %{{.*}}, %{{.*}} : f32
// CHECK: arith.andi %{{.*}}, %[[FINITE]] : i1
// CHECK: arith.mulf %[[D]], %[[SCALE]] : f32
// CHECK: scf.yield %[[MNEW]], %{{.*}} : f32, f32

// Cross-thread merge of (m, d) pairs: a max butterfly over the warp, each
// lane's sum rescaled to the warp's max (0 when its own max is -inf), then a
// sum butterfly.
// CHECK: gpu.shuffle xor %[[P1]]#0, %{{.*}}, %{{.*}} : f32
// CHECK-COUNT-4: gpu.shuffle xor
// CHECK: %[[WM:.*]] = arith.maximumf
// CHECK: %[[ISNEG:.*]] = arith.cmpf oeq, %[[P1]]#0, %{{.*}} : f32
// CHECK: arith.subf %[[P1]]#0, %[[WM]] : f32
// CHECK: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f32"
// CHECK: %[[SCALED:.*]] = arith.mulf %[[P1]]#1, %{{.*}} : f32
// CHECK: %[[WD0:.*]] = arith.select %[[ISNEG]], %{{.*}}, %[[SCALED]] : f32
// CHECK: gpu.shuffle xor %[[WD0]], %{{.*}}, %{{.*}} : f32
// Lane 0 of each warp publishes the warp's pair; after one barrier lane w
// reads warp w's pair and the warps' pairs meet by the same butterflies.
// CHECK: memref.store %[[WM]], %[[SMEM]]
// CHECK: memref.store %{{.*}}, %[[SMEM]]
// CHECK: gpu.barrier
// CHECK: memref.load %[[SMEM]]
// CHECK: memref.load %[[SMEM]]

// Pass 2 over ceil(N / tile) tiles, forwards.
// CHECK: %[[TILES:.*]] = arith.ceildivui %{{.*}}, %{{.*}} : i32
// CHECK: scf.for %[[I:.*]] = %{{.*}} to %[[TILES]] step %{{.*}} : i32 {
// CHECK-NEXT: arith.muli %[[I]], %{{.*}} : i32
// CHECK: llvm.store
// The pair exchange uses both slots once per row: a barrier before the next
// row may overwrite them.
// CHECK: gpu.barrier
// CHECK-NEXT: }

// Reversed, the passes hand their tiles on (the vector path): the row loop
// carries its next row's first tile, loaded evict-last before the loop and
// at the end of each row; pass 1 folds its last tile after its loop, and
// pass 2 starts on it from registers, runs its loop without its last
// iteration (the share's first tile), loads the next row's first tile, then
// writes that last tile.
// REV: reverse_second_pass = true
// REV: %[[FIRST:.*]] = scf.if %{{.*}} -> (vector<4xf32>) {
// REV: ld.global.L2::cache_hint{{.*}} ro(%{{.*}}, %[[EVL:[0-9]+]] :
// REV: scf.for %[[ROW:.*]] = %{{.*}} to %{{.*}} step %[[STEP:[0-9]+]] iter_args(%[[CARRIED:.*]] = %[[FIRST]]) -> (vector<4xf32>) : i64 {
// REV: %[[T1:.*]] = arith.ceildivui
// REV: %[[M1:.*]] = arith.minui %[[T1]], %{{.*}} : i32
// REV: %[[B1:.*]] = arith.subi %[[T1]], %[[M1]] : i32
// REV: %[[E1:.*]] = arith.muli %[[B1]], %{{.*}} : i32
// REV: %[[END1:.*]] = arith.addi %{{.*}}, %[[E1]] : i32
// REV: %[[P1:.*]]:3 = scf.for %{{.*}} = %{{.*}} to %[[END1]] step %{{.*}} iter_args(%{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}, %{{.*}} = %[[CARRIED]]) -> (f32, f32, vector<4xf32>) : i32 {
// REV: %[[TILES:.*]] = arith.ceildivui
// REV: %[[M2:.*]] = arith.minui %[[TILES]], %{{.*}} : i32
// REV: %[[LOOP:.*]] = arith.subi %[[TILES]], %[[M2]] : i32
// REV: %[[P2:.*]] = scf.for %[[I:.*]] = %{{.*}} to %[[LOOP]] step %{{.*}} iter_args(%{{.*}} = %[[P1]]#2) -> (vector<4xf32>) : i32 {
// REV: %[[LAST:.*]] = arith.subi %[[TILES]], %{{.*}} : i32
// REV-NEXT: %[[IDX:.*]] = arith.subi %[[LAST]], %[[I]] : i32
// REV-NEXT: arith.muli %[[IDX]], %{{.*}} : i32
// REV: st.global.L2::cache_hint
// REV: scf.yield
// REV-NEXT: }
// REV-NEXT: %[[NEXTROW:.*]] = arith.addi %[[ROW]], %[[STEP]] : i64
// REV-NEXT: arith.cmpi slt, %[[NEXTROW]], %{{.*}} : i64
// REV: %[[NEXT:.*]] = scf.if %{{.*}} -> (vector<4xf32>) {
// REV: ld.global.L2::cache_hint{{.*}} ro(%{{.*}}, %[[EVL]] :
// REV: st.global.L2::cache_hint
// REV: gpu.barrier
// REV-NEXT: scf.yield %[[NEXT]] : vector<4xf32>
// The peeled path's rows start anywhere: nothing crosses its rows.
// REV: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} : i64 {

// Without fast_exp the exponentials stay math.exp and the division stays.
// EXACT-NOT: ex2.approx
// EXACT: math.exp
// EXACT: arith.divf
func.func @softmax(%x: memref<?x?xf32>, %y: memref<?x?xf32>) {
  rowred.softmax dimension(1) ins(%x : memref<?x?xf32>) outs(%y : memref<?x?xf32>)
  return
}
