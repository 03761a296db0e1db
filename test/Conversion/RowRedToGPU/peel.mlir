// RUN: softmax-opt %S/Inputs/dynamic.mlir --rowred-decompose --rowred-plan="cols=1024" --convert-rowred-to-gpu | FileCheck %s
// RUN: softmax-opt %S/Inputs/bf16.mlir --test-rowred-plan-request="fields='block = 32, rows_per_block = 32, warps = 1'" --rowred-decompose --rowred-plan --convert-rowred-to-gpu | FileCheck %s --check-prefix=ONE
// RUN: softmax-opt %S/Inputs/dynamic.mlir --rowred-decompose --rowred-plan="cols=65536 strategy=cluster" --convert-rowred-to-gpu | FileCheck %s --check-prefix=CLUSTER
// RUN: softmax-opt %S/Inputs/dynamic.mlir --test-rowred-plan-request="fields='pair_reduce = true'" --rowred-decompose --rowred-plan="cols=65536" --convert-rowred-to-gpu | FileCheck %s --check-prefix=PAIR
// RUN: softmax-opt %S/Inputs/bf16.mlir --test-rowred-plan-request="fields='cluster = 8, cache_hints = false'" --rowred-decompose --rowred-plan="strategy=online cols=262144" --convert-rowred-to-gpu | FileCheck %s --check-prefix=ONLINE
// RUN: softmax-opt %S/Inputs/backward.mlir --rowred-decompose --rowred-plan="cols=781" --convert-rowred-to-gpu | FileCheck %s --check-prefix=BACKWARD
// RUN: softmax-opt %S/Inputs/backward.mlir --rowred-decompose --rowred-plan="cols=16383" --convert-rowred-to-gpu | FileCheck %s --check-prefix=BACKWARD-CLUSTER
// RUN: softmax-opt %S/Inputs/layer-norm.mlir --rowred-decompose --rowred-plan="cols=781" --convert-rowred-to-gpu | FileCheck %s --check-prefix=COLUMNS

// Rows that are not aligned for vectors (odd lengths of contiguous
// tensors, a base pointer off by some elements) but are misaligned alike in
// the input and the output take the peeled vector path: after the aligned
// vector path, before the scalar one. Fused kernels, cluster slices and the
// online kernel have it.
// CHECK: gpu.func @softmax_kernel0
// CHECK: scf.for
// CHECK: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xf32>
// CHECK: } else {
// Input and output element offsets agree modulo 4: the strides, then the
// bases.
// CHECK: %[[DSTRIDE:.*]] = arith.subi %arg4, %arg5 : i64
// CHECK: %[[SMOD:.*]] = arith.andi %[[DSTRIDE]], %c3_i64{{.*}} : i64
// CHECK: %[[SOK:.*]] = arith.cmpi eq, %[[SMOD]], %c0_i64{{.*}} : i64
// CHECK: %[[Y:.*]] = llvm.ptrtoint %arg1 : !llvm.ptr<1> to i64
// CHECK: %[[YI:.*]] = arith.divui %[[Y]], %c4_i64{{.*}} : i64
// CHECK: %[[X:.*]] = llvm.ptrtoint %arg0 : !llvm.ptr<1> to i64
// CHECK: %[[XI:.*]] = arith.divui %[[X]], %c4_i64{{.*}} : i64
// CHECK: %[[DBASE:.*]] = arith.subi %[[XI]], %[[YI]] : i64
// CHECK: %[[BMOD:.*]] = arith.andi %[[DBASE]], %c3_i64{{.*}} : i64
// CHECK: %[[BOK:.*]] = arith.cmpi eq, %[[BMOD]], %c0_i64{{.*}} : i64
// CHECK: %[[ALIKE:.*]] = arith.andi %[[BOK]], %[[SOK]] : i1
// CHECK: scf.if %[[ALIKE]] {
// CHECK: scf.for
// Per row: the head h = (-(row address / 4)) mod 4, at most the row, and
// the end of the vectors h + ((cols - h) & -4).
// CHECK: %[[XROW:.*]] = llvm.getelementptr %arg0[%{{.*}}] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, f32
// CHECK: %[[ADDR:.*]] = llvm.ptrtoint %[[XROW]] : !llvm.ptr<1> to i64
// CHECK: %[[INDEX:.*]] = arith.divui %[[ADDR]], %c4_i64{{.*}} : i64
// CHECK: %[[NEG:.*]] = arith.subi %c0_i64{{.*}}, %[[INDEX]] : i64
// CHECK: %[[H64:.*]] = arith.andi %[[NEG]], %c3_i64{{.*}} : i64
// CHECK: %[[H32:.*]] = arith.trunci %[[H64]] : i64 to i32
// CHECK: %[[HEAD:.*]] = arith.minui %[[H32]], %[[COLS:.*]] : i32
// CHECK: %[[REST:.*]] = arith.subi %[[COLS]], %[[HEAD]] : i32
// CHECK: %[[BODY:.*]] = arith.andi %[[REST]], %c-4_i32 : i32
// CHECK: %[[END:.*]] = arith.addi %[[HEAD]], %[[BODY]] : i32
// The block's eight vectors per thread from column h, aligned, masked at
// the end of the vectors...
// CHECK: %[[FIRST:.*]] = arith.addi %{{.*}}, %[[HEAD]] : i32
// CHECK: arith.subi %[[END]], %[[FIRST]] : i32
// CHECK-COUNT-4: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xf32>
// ...then one head element (column t < h) and one tail element (column
// end + t < cols) per thread of the 64-thread row.
// CHECK: %[[HCOL:.*]] = arith.addi %{{.*}}, %c0_i32{{.*}} : i32
// CHECK: arith.cmpi ult, %[[HCOL]], %[[HEAD]] : i32
// CHECK: llvm.load %{{.*}} {alignment = 4 : i64} : !llvm.ptr<1> -> f32
// CHECK: %[[TCOL:.*]] = arith.addi %[[END]], %[[HCOL]] : i32
// CHECK: arith.cmpi ult, %[[TCOL]], %[[COLS]] : i32
// CHECK: llvm.load %{{.*}} {alignment = 4 : i64} : !llvm.ptr<1> -> f32
// CHECK-NOT: llvm.load
// CHECK: gpu.shuffle xor
// The same places are written back: four vectors and two scalars.
// CHECK-COUNT-4: llvm.store %{{.*}} {alignment = 16 : i64} : vector<4xf32>, !llvm.ptr<1>
// CHECK-COUNT-2: llvm.store %{{.*}} {alignment = 4 : i64} : f32, !llvm.ptr<1>
// CHECK-NOT: llvm.store
// The scalar path stays for rows misaligned differently.
// CHECK: } else {
// CHECK: scf.for
// CHECK: llvm.load %{{.*}} {alignment = 4 : i64} : !llvm.ptr<1> -> f32
// CHECK: gpu.return

// One thread per row (bf16, 8 per vector): the thread takes all seven head
// and all seven tail elements, alternately.
// ONE: rows_per_block = 32
// ONE-SAME: vector_width = 8
// ONE: arith.minui
// ONE-COUNT-4: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<1> -> vector<8xbf16>
// ONE-COUNT-14: llvm.load %{{.*}} {alignment = 2 : i64} : !llvm.ptr<1> -> bf16
// ONE-NOT: llvm.load
// ONE: llvm.store

// A row split over a cluster of 4 (f32, 512 x 32 slices of 16384): the
// slices shift by h, each block loads its eight vectors from column
// h + rank * 16384, and the first block takes the edges, one per thread:
// edge e < h + (cols - end) is column e (head) or e + end - h (tail).
// CLUSTER: cluster_blocks = 4
// CLUSTER: %[[RANK:.*]] = arith.index_cast %cluster_block_id_x : index to i32
// CLUSTER: %[[SLICE:.*]] = arith.muli %[[RANK]], %c16384_i32 : i32
// CLUSTER: %[[HEAD:.*]] = arith.minui %{{.*}}, %[[COLS:.*]] : i32
// CLUSTER: %[[END:.*]] = arith.addi %[[HEAD]], %{{.*}} : i32
// CLUSTER: arith.addi %[[HEAD]], %[[SLICE]] : i32
// CLUSTER-COUNT-8: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xf32>
// CLUSTER: %[[FIRST:.*]] = arith.cmpi eq, %[[RANK]], %c0_i32{{.*}} : i32
// CLUSTER: %[[TAIL:.*]] = arith.subi %[[COLS]], %[[END]] : i32
// CLUSTER: %[[EDGES:.*]] = arith.addi %[[HEAD]], %[[TAIL]] : i32
// CLUSTER: %[[SHIFT:.*]] = arith.subi %[[END]], %[[HEAD]] : i32
// CLUSTER: %[[EDGE:.*]] = arith.addi %{{.*}}, %c0_i32{{.*}} : i32
// CLUSTER: %[[INHEAD:.*]] = arith.cmpi ult, %[[EDGE]], %[[HEAD]] : i32
// CLUSTER: %[[TAILCOL:.*]] = arith.addi %[[EDGE]], %[[SHIFT]] : i32
// CLUSTER: %[[COL:.*]] = arith.select %[[INHEAD]], %[[EDGE]], %[[TAILCOL]] : i32
// CLUSTER: %[[INROW:.*]] = arith.cmpi ult, %[[EDGE]], %[[EDGES]] : i32
// CLUSTER: %[[TAKEN:.*]] = arith.andi %[[INROW]], %[[FIRST]] : i1
// CLUSTER: scf.if %[[TAKEN]] -> (f32) {
// CLUSTER-NEXT: llvm.getelementptr inbounds %{{.*}}[%[[COL]]]
// CLUSTER-NEXT: llvm.load %{{.*}} {alignment = 4 : i64} : !llvm.ptr<1> -> f32
// CLUSTER-NOT: llvm.load
// CLUSTER: nvvm.inline_ptx
// CLUSTER: gpu.return

// With the pair reduction, cluster slices send the (max, sum) pair in one
// exchange on the vector path (two values), but their peeled path reduces
// one value at a time, two exchanges of one value: the pair would spill
// there at 64 registers.
// PAIR: cluster_blocks = 4
// PAIR-SAME: peeled_path = true
// PAIR: scf.for
// PAIR-COUNT-2: nvvm.inline_ptx
// PAIR: llvm.load %{{.*}} : !llvm.ptr<3> -> f32
// PAIR-NEXT: llvm.getelementptr
// PAIR-NEXT: llvm.getelementptr
// PAIR-NEXT: llvm.load %{{.*}} : !llvm.ptr<3> -> f32
// The peeled path: its head element, then two exchanges.
// PAIR: llvm.load %{{.*}} {alignment = 4 : i64} : !llvm.ptr<1> -> f32
// PAIR: nvvm.inline_ptx
// PAIR: llvm.load %{{.*}} : !llvm.ptr<3> -> f32
// PAIR-NOT: !llvm.ptr<3> -> f32
// PAIR: nvvm.inline_ptx
// PAIR: llvm.load %{{.*}} : !llvm.ptr<3> -> f32
// PAIR: gpu.return

// The online kernel over a cluster of 8 (bf16, tiles of 16384): each
// block's share [lo, hi) shifts by h and stops at the end of the vectors;
// the first block folds the edges (one per thread) into the pair that
// pass 1 starts from, and writes them after pass 2. Pass 1 folds the
// share's last tile after its loop, and pass 2 starts on it from registers.
// ONLINE: strategy = "online"
// ONLINE: %[[RANK:.*]] = arith.index_cast %cluster_block_id_x : index to i32
// The peeled path: rows whose input and output start equally far from
// alignment (their strides agree modulo the vector).
// ONLINE: arith.subi %arg4, %arg5 : i64
// ONLINE: scf.if
// ONLINE: %[[LO:.*]] = arith.trunci %{{.*}} : i64 to i32
// ONLINE: %[[HI:.*]] = arith.trunci %{{.*}} : i64 to i32
// ONLINE: %[[HEAD:.*]] = arith.minui %{{.*}}, %[[COLS:.*]] : i32
// ONLINE: %[[END:.*]] = arith.addi %[[HEAD]], %{{.*}} : i32
// ONLINE: %[[LOH:.*]] = arith.addi %[[LO]], %[[HEAD]] : i32
// ONLINE: %[[HIH:.*]] = arith.addi %[[HI]], %[[HEAD]] : i32
// ONLINE: %[[NEWHI:.*]] = arith.minui %[[HIH]], %[[END]] : i32
// ONLINE: %[[NEWLO:.*]] = arith.minui %[[LOH]], %[[NEWHI]] : i32
// ONLINE: %[[FIRST:.*]] = arith.cmpi eq, %[[RANK]], %c0_i32{{.*}} : i32
// ONLINE: llvm.load %{{.*}} {alignment = 2 : i64} : !llvm.ptr<1> -> bf16
// ONLINE-NOT: llvm.load
// ONLINE: %[[D0:.*]] = arith.addf %{{.*}}, %{{.*}} : f32
// ONLINE-COUNT-4: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<1> -> vector<8xbf16>
// ONLINE: %[[SPAN:.*]] = arith.subi %[[NEWHI]], %[[NEWLO]] : i32
// ONLINE: %[[TILES:.*]] = arith.ceildivui %[[SPAN]], %c16384_i32{{.*}} : i32
// ONLINE: %[[BEFORE:.*]] = arith.subi %[[TILES]], %{{.*}} : i32
// ONLINE: %[[OFF:.*]] = arith.muli %[[BEFORE]], %c16384_i32{{.*}} : i32
// ONLINE: %[[LAST:.*]] = arith.addi %[[NEWLO]], %[[OFF]] : i32
// ONLINE: %[[P1:.*]]:6 = scf.for %{{.*}} = %[[NEWLO]] to %[[LAST]] step %c16384_i32{{.*}} iter_args(%{{.*}} = %[[M0:.*]], %{{.*}} = %[[D0]], {{.*}}) -> (f32, f32, vector<8xbf16>, vector<8xbf16>, vector<8xbf16>, vector<8xbf16>)
// ONLINE-COUNT-4: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<1> -> vector<8xbf16>
// ONLINE-NOT: !llvm.ptr<1> -> vector<8xbf16>
// ONLINE: scf.for %{{.*}} iter_args(%{{.*}} = %[[P1]]#2, %{{.*}} = %[[P1]]#3, %{{.*}} = %[[P1]]#4, %{{.*}} = %[[P1]]#5)
// ONLINE-COUNT-4: llvm.store %{{.*}} {alignment = 16 : i64} : vector<8xbf16>, !llvm.ptr<1>
// ONLINE: llvm.store %{{.*}} {alignment = 2 : i64} : bf16, !llvm.ptr<1>
// ONLINE-NEXT: }
// ONLINE-NEXT: scf.yield

// Several inputs and outputs of rows (the softmax backward's y, dy and dx)
// take the peeled path when every one starts as far from alignment as the
// first input: dx's stride and base, then dy's, against y's. Each vector
// and edge element of y comes with dy's at the same column, and dx is
// written at the same places.
// BACKWARD: peeled_path = true
// BACKWARD: gpu.func @softmax_backward_kernel0(%arg0: !llvm.ptr<1>, %arg1: !llvm.ptr<1>, %arg2: !llvm.ptr<1>
// BACKWARD: } else {
// BACKWARD: %[[S0:.*]] = arith.subi %arg5, %arg7 : i64
// BACKWARD: llvm.ptrtoint %arg2 : !llvm.ptr<1> to i64
// BACKWARD: llvm.ptrtoint %arg0 : !llvm.ptr<1> to i64
// BACKWARD: %[[DX:.*]] = arith.andi %{{.*}}, %{{.*}} : i1
// BACKWARD: arith.subi %arg5, %arg6 : i64
// BACKWARD: llvm.ptrtoint %arg1 : !llvm.ptr<1> to i64
// BACKWARD: %[[DY:.*]] = arith.andi %{{.*}}, %{{.*}} : i1
// BACKWARD: %[[ALIKE:.*]] = arith.andi %[[DX]], %[[DY]] : i1
// BACKWARD: scf.if %[[ALIKE]] {
// BACKWARD: arith.minui
// BACKWARD-COUNT-16: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xf32>
// BACKWARD-COUNT-4: llvm.load %{{.*}} {alignment = 4 : i64} : !llvm.ptr<1> -> f32
// BACKWARD-NOT: llvm.load
// BACKWARD: gpu.shuffle xor
// BACKWARD-COUNT-8: llvm.store %{{.*}} {alignment = 16 : i64} : vector<4xf32>, !llvm.ptr<1>
// BACKWARD-COUNT-2: llvm.store %{{.*}} {alignment = 4 : i64} : f32, !llvm.ptr<1>
// BACKWARD-NOT: llvm.store
// BACKWARD: } else {
// BACKWARD: llvm.load %{{.*}} {alignment = 4 : i64} : !llvm.ptr<1> -> f32
// BACKWARD: gpu.return

// Over a cluster of slices as well.
// BACKWARD-CLUSTER: cluster_blocks = 2
// BACKWARD-CLUSTER-SAME: peeled_path = true

// Not with per-column operands (layer_norm's weight and bias), whose
// vectors would start at the row's head: misaligned rows go scalar.
// COLUMNS: peeled_path = false
