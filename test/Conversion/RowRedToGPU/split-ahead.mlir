// RUN: softmax-opt %S/Inputs/dynamic.mlir --rowred-decompose --rowred-plan="strategy=online row-split=40 split-ahead=2" --convert-rowred-to-gpu | FileCheck %s
// RUN: softmax-opt %S/Inputs/dynamic.mlir --rowred-decompose --rowred-plan="strategy=online row-split=3 split-ahead=7" --convert-rowred-to-gpu | FileCheck %s --check-prefix=MAX
// RUN: softmax-opt %S/Inputs/dynamic.mlir --rowred-decompose --rowred-plan="strategy=online row-split=8 split-ahead=1 block-size=8192" --convert-rowred-to-gpu | FileCheck %s --check-prefix=PIPE
// RUN: softmax-opt %S/Inputs/bf16.mlir --rowred-decompose --rowred-plan="strategy=online row-split=3 split-ahead=1" --convert-rowred-to-gpu | FileCheck %s --check-prefix=NOPIPE
// RUN: not softmax-opt %S/Inputs/dynamic.mlir --rowred-decompose --rowred-plan="strategy=online split-ahead=1" --convert-rowred-to-gpu 2>&1 | FileCheck %s --check-prefix=NOSPLIT
// RUN: not softmax-opt %S/Inputs/dynamic.mlir --rowred-decompose --rowred-plan="strategy=online row-split=4 split-ahead=8" --convert-rowred-to-gpu 2>&1 | FileCheck %s --check-prefix=RANGE
// RUN: not softmax-opt %S/Inputs/dynamic.mlir --rowred-decompose --rowred-plan="strategy=online row-split=4 split-ahead=-1" --convert-rowred-to-gpu 2>&1 | FileCheck %s --check-prefix=RANGE
// RUN: not softmax-opt %S/Inputs/dynamic.mlir --rowred-decompose --rowred-plan="strategy=online cols=65536 row-split=4 split-ahead=1 prefetch=on" --convert-rowred-to-gpu 2>&1 | FileCheck %s --check-prefix=STAGE
// RUN: not softmax-opt %S/Inputs/dynamic.mlir --rowred-decompose --rowred-plan="strategy=online row-split=4 split-ahead=1 online-keep=64" --convert-rowred-to-gpu 2>&1 | FileCheck %s --check-prefix=KEEP

// A split group of 40 blocks whose pass 1 runs two rows ahead of its pass 2.
// Rows take 2 x 2 + 2 = 6 exchange buffers in turn, rounded up to 8: an exit
// counter and 8 arrival counters (48 bytes with padding), then 8 x 40 pairs
// of 8 bytes, rounded up to 128 bytes.
// CHECK: split_ahead = 2 : i64
// CHECK-SAME: workspace_bytes_per_group = 2688 : i64

// The group's loop runs count + 2 iterations over its count =
// ceil((rows - group) / groups) rows.
// CHECK: gpu.func @softmax_kernel0
// CHECK: %[[FIRST:.*]] = arith.minsi %arg2, %{{.*}} : i64
// CHECK: %[[LEFT:.*]] = arith.subi %arg2, %[[FIRST]] : i64
// CHECK: %[[COUNT:.*]] = arith.ceildivui %[[LEFT]], %{{.*}} : i64
// CHECK: %[[ITERS:.*]] = arith.addi %[[COUNT]], %c2_i64 : i64
// CHECK: scf.for %[[J:.*]] = %{{.*}} to %[[ITERS]] step %{{.*}} : i64 {

// Iteration j: while j < count, pass 1 of row number j (its tiles read
// evict-last), the block's reduction, and thread 0 publishes the pair into
// buffer j & 7 and counts it in, without waiting.
// CHECK: arith.cmpi ult, %[[J]], %[[COUNT]] : i64
// CHECK: scf.for {{.*}} step %c16384_i32 iter_args
// CHECK: ld.global.L2::cache_hint
// CHECK: gpu.barrier
// CHECK: arith.andi %{{.*}}, %c7_i32 : i32
// CHECK: llvm.store %{{.*}} {alignment = 8 : i64} : i64, !llvm.ptr<1>
// CHECK: llvm.fence syncscope("device") release
// CHECK: llvm.atomicrmw add %{{.*}}, %{{.*}} syncscope("device") monotonic
// CHECK-NOT: scf.while
// CHECK-NOT: llvm.atomicrmw

// Then, from j = 2, row number k = j - 2: thread 0 waits until buffer k & 7
// has been used (k >> 3) + 1 times by all 40 blocks, the lanes fold the
// entries and pass 2 writes the row.
// CHECK: arith.cmpi uge, %[[J]], %c2_i64 : i64
// CHECK: %[[K:.*]] = arith.subi %[[J]], %c2_i64 : i64
// CHECK: %[[K32:.*]] = arith.trunci %[[K]] : i64 to i32
// CHECK: arith.shrui %[[K32]], %c3_i32 : i32
// CHECK: scf.while
// CHECK: llvm.load %{{.*}} atomic syncscope("device") acquire
// CHECK: gpu.barrier
// CHECK-COUNT-2: llvm.load %{{.*}} atomic syncscope("device") monotonic {alignment = 8 : i64} : !llvm.ptr<1> -> i64
// CHECK: gpu.shuffle xor
// CHECK: st.global.L2::cache_hint

// The last block out resets the exit counter and the 8 arrival counters.
// CHECK: llvm.fence syncscope("device") acq_rel
// CHECK: %[[OUT:.*]] = llvm.atomicrmw add
// CHECK: arith.cmpi eq, %[[OUT]], %c39_i32
// CHECK-COUNT-9: llvm.store %{{.*}} {alignment = 4 : i64} : i32, !llvm.ptr<1>
// Then every (max, sum) entry of the buffers, so that the workspace is zero again.
// CHECK: %[[ENTRIES:.*]] = arith.constant 320 : index
// CHECK: scf.for %{{.*}} = %{{.*}} to %[[ENTRIES]]
// CHECK: llvm.store %{{.*}}, %{{.*}} {alignment = 8 : i64} : i64, !llvm.ptr<1>
// CHECK-NOT: llvm.store

// Seven ahead: 16 buffers of 3 pairs after 68 bytes of counters (80).
// MAX: split_ahead = 7 : i64
// MAX-SAME: workspace_bytes_per_group = 512 : i64
// MAX: arith.addi %{{.*}}, %c7_i64 : i64
// MAX: arith.andi %{{.*}}, %c15_i32 : i32

// Shares of one tile (rows up to 8 x 8192 here) take the pipelined loop on
// the vector path: both rows' loads first (pass 1 of row j, pass 2 of row
// j - 1), then warp 0 alone waits for row j - 1 and folds its entries, and
// lane 0 puts the group's pair into the last two of four shared slots.
// PIPE: shared_bytes = 512 : i64
// PIPE: %[[FITS:.*]] = arith.cmpi ule, %{{.*}}, %c65536_i32 : i32
// PIPE: scf.if %[[FITS]] {
// PIPE: scf.for
// PIPE-COUNT-4: ld.global.L2::cache_hint.v4.b32
// PIPE-NOT: scf.for
// PIPE: scf.while
// PIPE: llvm.load %{{.*}} atomic syncscope("device") acquire
// PIPE: nvvm.bar.warp.sync %c-1_i32
// PIPE: gpu.shuffle xor
// PIPE: memref.store %{{.*}}, %{{.*}}[%c2, %{{.*}}] : memref<4x32xf32, #gpu.address_space<workgroup>>
// PIPE: memref.store %{{.*}}, %{{.*}}[%c3, %{{.*}}] : memref<4x32xf32, #gpu.address_space<workgroup>>
// Then the block reduction of row j, whose barrier also publishes the
// group's pair of row j - 1 to every warp; row j's pair goes out, and the
// map of row j - 1 is written from the registers.
// PIPE: gpu.barrier
// PIPE: memref.load %{{.*}}[%c2, %{{.*}}] : memref<4x32xf32, #gpu.address_space<workgroup>>
// PIPE: memref.load %{{.*}}[%c3, %{{.*}}] : memref<4x32xf32, #gpu.address_space<workgroup>>
// PIPE: llvm.atomicrmw add
// PIPE-NOT: ld.global
// PIPE: st.global.L2::cache_hint.v4.b32
// PIPE: gpu.barrier
// Longer rows take the loop of tiles (pass 1 walks its share).
// PIPE: } else {
// PIPE: scf.for
// PIPE: scf.for {{.*}} step %c8192_i32 iter_args

// 32 bf16 elements per thread: no pipelined loop (two rows of registers
// would spill), and no extra shared slots.
// NOPIPE: shared_bytes = 128 : i64
// NOPIPE-NOT: nvvm.bar.warp.sync
// NOPIPE-NOT: arith.cmpi ule

// NOSPLIT: error: 'rowred.map' op split-ahead runs a split group's pass 1 ahead; it needs row-split 2 or more
// RANGE: error: 'rowred.map' op split-ahead must be from 0 (none) to 7 rows, got
// STAGE: error: 'rowred.map' op prefetch=on is not possible here: the stage holds one row's share and split-ahead keeps several rows between their passes
// KEEP: error: 'rowred.map' op online-keep keeps one row's tiles and split-ahead keeps several rows between their passes; choose one
