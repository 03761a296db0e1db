// RUN: softmax-opt %S/Inputs/dynamic.mlir --test-rowred-plan-request="fields='prefetch = registers'" --rowred-decompose --rowred-plan="cols=4096" --convert-rowred-to-gpu | FileCheck %s
// RUN: softmax-opt %S/Inputs/bf16.mlir --test-rowred-plan-request="fields='cluster = 4, prefetch = registers'" --rowred-decompose --rowred-plan="cols=65536" --convert-rowred-to-gpu | FileCheck %s --check-prefix=CLUSTER
// RUN: softmax-opt %S/Inputs/bf16.mlir --rowred-to-ptx="cols=4096" | FileCheck %s --check-prefix=PTX
// RUN: softmax-opt %S/Inputs/dynamic.mlir --test-rowred-plan-request="fields='prefetch = registers, cache_hints = false'" --rowred-decompose --rowred-plan --convert-rowred-to-gpu | FileCheck %s --check-prefix=ONLINE
// RUN: softmax-opt %S/Inputs/dynamic.mlir --test-rowred-plan-request="fields='cache_hints = false'" --rowred-decompose --rowred-plan --convert-rowred-to-gpu | FileCheck %s --check-prefix=ONLINE
// RUN: softmax-opt %S/Inputs/dynamic.mlir --test-rowred-plan-request="fields='prefetch = none, cache_hints = false'" --rowred-decompose --rowred-plan --convert-rowred-to-gpu | FileCheck %s --check-prefix=ONLINE-OFF
// RUN: softmax-opt %S/Inputs/dynamic.mlir --test-rowred-plan-request="fields='prefetch = registers'" --rowred-decompose --rowred-plan="cols=256" --convert-rowred-to-gpu | FileCheck %s --check-prefix=ROWS
// RUN: not softmax-opt %S/Inputs/dynamic.mlir --test-rowred-plan-request="fields='vector = 1, prefetch = registers'" --rowred-decompose --rowred-plan="cols=4096" --convert-rowred-to-gpu 2>&1 | FileCheck %s --check-prefix=SCALAR

// The next row loaded ahead into registers: no shared memory; a fused f32
// block of 4096 (128 threads x 32, eight 16-byte chunks per thread) loads
// the block's first row before the row loop, and the loop carries the
// chunks of the row it works on.
// CHECK: dynamic_shared_bytes = 0 : i64
// CHECK-SAME: prefetch = "registers"
// CHECK: gpu.func @softmax_kernel0
// CHECK-NOT: rowred_stage
// CHECK-COUNT-8: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xf32>
// CHECK: %[[LOOP:.*]]:8 = scf.for %[[ROW:.*]] = %{{.*}} to %[[NROWS:.*]] step %[[STEP:.*]] iter_args({{.*}}) -> (vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>)
// First in the row, the next row's loads, masked past the last row; nothing
// of the current row waits for them.
// CHECK-NEXT: %[[NEXT:.*]] = arith.addi %[[ROW]], %[[STEP]] : i64
// CHECK-NEXT: %[[EXISTS:.*]] = arith.cmpi slt, %[[NEXT]], %[[NROWS]] : i64
// CHECK-NOT: gpu.shuffle
// CHECK-COUNT-8: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xf32>
// CHECK-NOT: llvm.load %{{.*}} : !llvm.ptr<1> -> vector<4xf32>
// CHECK: gpu.shuffle xor
// CHECK: llvm.store %{{.*}} : vector<4xf32>, !llvm.ptr<1>
// CHECK: scf.yield %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : vector<4xf32>, vector<4xf32>
// The scalar fallback loads its own row and carries nothing.
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK: gpu.return

// Cluster slices: the loop carries the row counter of the mbarrier phases
// and the slice's chunks as loaded (bf16, 8 per chunk).
// CLUSTER: cluster_blocks = 4 : i64, dynamic_shared_bytes = 0 : i64
// CLUSTER-SAME: prefetch = "registers"
// CLUSTER: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args({{.*}}) -> (i32, vector<8xbf16>, vector<8xbf16>, vector<8xbf16>, vector<8xbf16>

// Several rows per block (a warp per row of 256, four per block): each
// warp loads ahead the row of its own place in the next group, row + step
// + (thread / 32), masked past the last row; the loop carries its two
// chunks.
// ROWS: rows_per_block = 4 : i64
// ROWS: %[[TID:.*]] = arith.index_cast %thread_id_x : index to i32
// The warp index, then the row in the block (the same with 32 threads per
// row).
// ROWS: arith.divui %[[TID]], %c32_i32{{.*}} : i32
// ROWS: %[[ROWINBLOCK:.*]] = arith.divui %[[TID]], %c32_i32{{.*}} : i32
// ROWS: scf.for %[[ROW:.*]] = %{{.*}} to %[[NROWS:.*]] step %[[STEP:.*]] iter_args({{.*}}) -> (vector<4xf32>, vector<4xf32>)
// ROWS-NEXT: %[[NEXT:.*]] = arith.addi %[[ROW]], %[[STEP]] : i64
// ROWS-NEXT: %[[OFFSET:.*]] = arith.extui %[[ROWINBLOCK]] : i32 to i64
// ROWS-NEXT: %[[MINE:.*]] = arith.addi %[[NEXT]], %[[OFFSET]] : i64
// ROWS-NEXT: arith.cmpi slt, %[[MINE]], %[[NROWS]] : i64
// ROWS-COUNT-2: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xf32>
// ROWS: gpu.shuffle xor
// ROWS: scf.yield %{{.*}}, %{{.*}} : vector<4xf32>, vector<4xf32>

// auto loads ahead fused 16-bit blocks of 4096: one 16-byte global load per
// chunk, no cp.async and no stage.
// PTX-NOT: rowred_stage
// PTX-NOT: cp.async
// PTX: ld.global.v4.b32

// The online kernel loads each tile one ahead (auto's default), and the
// reversed passes hand tiles on: the row loop carries the four chunks of
// its next row's first tile, loaded before the loop; pass 1's loop carries
// them and loads the next tile's before folding its own, and stops before
// the last tile, which it folds after the loop; pass 2 starts on that tile
// from registers (no load before its loop), loads one ahead in reverse
// tile order, leaves out its last iteration, then loads the next row's
// first tile, writes its own last one and yields the loads to the row loop.
// ONLINE: prefetch = "registers"
// ONLINE-SAME: strategy = "online"
// ONLINE: gpu.func @softmax_kernel0
// ONLINE-COUNT-4: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xf32>
// ONLINE-NOT: llvm.load
// ONLINE: %{{.*}}:4 = scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[R0:.*]] = %{{.*}}, %[[R1:.*]] = %{{.*}}, %[[R2:.*]] = %{{.*}}, %[[R3:.*]] = %{{.*}}) -> (vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>) : i64 {
// ONLINE-NOT: llvm.load
// ONLINE: %[[P1:.*]]:6 = scf.for %[[T:.*]] = %{{.*}} to %[[END:.*]] step %c16384_i32 iter_args(%[[M:.*]] = %{{.*}}, %[[D:.*]] = %{{.*}}, %[[C0:.*]] = %[[R0]], %[[C1:.*]] = %[[R1]], %[[C2:.*]] = %[[R2]], %[[C3:.*]] = %[[R3]]) -> (f32, f32, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>)
// ONLINE: %[[NEXT:.*]] = arith.addi %[[T]], %c16384_i32
// ONLINE-COUNT-4: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xf32>
// ONLINE-NOT: llvm.load
// ONLINE: llvm.extractelement %[[C0]]
// ONLINE: scf.yield %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : f32, f32, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>
// ONLINE-NOT: llvm.load
// ONLINE: llvm.extractelement %[[P1]]#2
// ONLINE-NOT: llvm.load
// ONLINE: %[[TILES:.*]] = arith.ceildivui
// ONLINE: %[[LOOP:.*]] = arith.subi %[[TILES]], %{{.*}} : i32
// ONLINE-NOT: llvm.load
// ONLINE: %[[P2:.*]]:4 = scf.for %[[I:.*]] = %{{.*}} to %[[LOOP]] step %{{.*}} iter_args(%{{.*}} = %[[P1]]#2, %{{.*}} = %[[P1]]#3, %{{.*}} = %[[P1]]#4, %{{.*}} = %[[P1]]#5) -> (vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>)
// ONLINE: %[[INEXT:.*]] = arith.addi %[[I]], %c1
// ONLINE: arith.cmpi slt, %[[INEXT]], %[[TILES]]
// ONLINE-COUNT-4: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xf32>
// ONLINE-COUNT-4: llvm.store %{{.*}} {alignment = 16 : i64} : vector<4xf32>, !llvm.ptr<1>
// ONLINE: scf.yield %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>
// ONLINE-COUNT-4: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xf32>
// ONLINE: llvm.extractelement %[[P2]]#0
// ONLINE-COUNT-4: llvm.store %{{.*}} {alignment = 16 : i64} : vector<4xf32>, !llvm.ptr<1>
// ONLINE: scf.yield %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>

// ONLINE-OFF: prefetch = "none"
// ONLINE-OFF: scf.for %{{.*}} iter_args(%{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) -> (f32, f32)
// ONLINE-OFF-COUNT-4: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xf32>
// SCALAR: error: 'rowred.map' op prefetch = registers is not possible here: only the vector path loads ahead and this kernel has none
