// Generic chunks: a group whose reduces form levels of at most two (a
// level's reduces reading only earlier levels' results) is cut into chunks
// like softmax's pair, its chunks meeting once per level in an exchange of
// the level's partial results.
// RUN: softmax-opt %S/Inputs/backward.mlir --rowred-decompose --rowred-plan="strategy=chunks" --convert-rowred-to-gpu | FileCheck %s
// RUN: softmax-opt %S/Inputs/not-softmax.mlir --rowred-plan="strategy=chunks" | FileCheck %s --check-prefix=ONE
// RUN: softmax-opt %S/Inputs/mixed-types.mlir --rowred-plan="strategy=chunks" | FileCheck %s --check-prefix=MIXED
// RUN: softmax-opt %S/Inputs/layer-norm.mlir --rowred-decompose --rowred-plan="strategy=chunks" --convert-rowred-to-gpu | FileCheck %s --check-prefix=TWO
// RUN: not softmax-opt %S/Inputs/three-sums.mlir --rowred-plan="strategy=chunks" 2>&1 | FileCheck %s --check-prefix=ERR-LEVELS
// RUN: softmax-opt %S/Inputs/not-moments.mlir --rowred-plan="strategy=chunks" --convert-rowred-to-gpu | FileCheck %s --check-prefix=NOT-MOMENTS
// RUN: not softmax-opt %S/Inputs/mixed-types.mlir --test-rowred-plan-request="fields='chunk_stage = 1024'" --rowred-plan="strategy=chunks" 2>&1 | FileCheck %s --check-prefix=ERR-MIXED
// RUN: not softmax-opt %S/Inputs/mixed-types.mlir --test-rowred-plan-request="fields='strategy = chunks, block = 512, chunk_stage = 512'" --rowred-plan 2>&1 | FileCheck %s --check-prefix=ERR-MIXED
// RUN: softmax-opt %S/Inputs/backward.mlir --rowred-decompose --rowred-plan="cols=262144" | FileCheck %s --check-prefix=AUTO
// RUN: softmax-opt %S/Inputs/backward.mlir --rowred-decompose --rowred-plan="cols=131072" | FileCheck %s --check-prefix=NOT-AUTO
// RUN: softmax-opt %S/Inputs/backward.mlir --rowred-decompose --rowred-plan="cols=262147" | FileCheck %s --check-prefix=NOT-AUTO
// RUN: softmax-opt %S/Inputs/layer-norm.mlir --rowred-decompose --rowred-plan="cols=131072" | FileCheck %s --check-prefix=NOT-AUTO
// RUN: softmax-opt %S/Inputs/layer-norm.mlir --rowred-decompose --rowred-plan="cols=524288" | FileCheck %s --check-prefix=AUTO
// RUN: softmax-opt %S/Inputs/family-f16.mlir --rowred-decompose --rowred-plan="cols=131072" | FileCheck %s --check-prefix=F16-131072
// RUN: softmax-opt %S/Inputs/family-f16.mlir --rowred-decompose --rowred-plan="cols=262144" | FileCheck %s --check-prefix=F16-262144
// RUN: softmax-opt %S/Inputs/family-f16.mlir --rowred-decompose --rowred-plan="cols=262160" | FileCheck %s --check-prefix=F16-262160

// Two inputs held (y and dy): each thread holds 16 of each in registers and
// the stage 32 more of each, side by side: 2 x 4096 f32 of dynamic shared
// memory, filled by two bulk copies that complete one mbarrier phase.
// CHECK: softmax_backward_kernel0 = {{{.*}}chunk_elements = 6144 : i64{{.*}}dynamic_shared_bytes = 32768 : i64
// CHECK: gpu.func @softmax_backward_kernel0
// A chunk inside the row takes a path without masks, the row's partial last
// chunk the masked one (chunks that meet twice keep one masked path).
// CHECK: %[[END:.*]] = arith.addi %{{.*}}, %c6144_i32{{.*}} : i32
// CHECK-NEXT: %[[WHOLE:.*]] = arith.cmpi sle, %[[END]], %{{.*}} : i32
// CHECK-NEXT: scf.if %[[WHOLE]] {
// CHECK: %[[BYTES:.*]] = arith.muli %{{.*}}, %c4_i32{{.*}} : i32
// CHECK: %[[BOTH:.*]] = arith.muli %[[BYTES]], %c2_i32{{.*}} : i32
// CHECK: nvvm.mbarrier.arrive.expect_tx %[[BARRIER:.*]], %[[BOTH]]
// CHECK: nvvm.cp.async.bulk.shared.cluster.global %{{.*}}, %{{.*}}, %[[BARRIER]], %[[BYTES]]
// CHECK: %[[SLOT1:.*]] = llvm.getelementptr inbounds %{{.*}}[%c4096_i32{{.*}}] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, f32
// CHECK: %[[SLOT1_CLUSTER:.*]] = llvm.addrspacecast %[[SLOT1]]
// CHECK: nvvm.cp.async.bulk.shared.cluster.global %[[SLOT1_CLUSTER]], %{{.*}}, %[[BARRIER]], %[[BYTES]]
// CHECK-COUNT-8: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xf32>
// CHECK: nvvm.mbarrier.try_wait
// The staged part: y from slot 0, dy from slot 1 (4096 elements on).
// CHECK: scf.for %{{.*}} = %c0_i32{{.*}} to %c4096_i32{{.*}} step %c1024_i32
// CHECK: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<3> -> vector<4xf32>
// CHECK: arith.addi %{{.*}}, %c4096_i32{{.*}} : i32
// CHECK: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<3> -> vector<4xf32>
// The row's one exchange: one value per entry, beside the marker 1.0 that
// makes a written entry nonzero; folded by the sum, no exponential.
// CHECK: %[[ENTRY:.*]] = llvm.insertelement %cst{{.*}}[%c1_i32{{.*}} : i32] : vector<2xf32>
// CHECK: %[[WORD:.*]] = llvm.bitcast %[[ENTRY]] : vector<2xf32> to i64
// CHECK: llvm.store %[[WORD]], %{{.*}} atomic syncscope("device") monotonic {alignment = 8 : i64} : i64, !llvm.ptr<1>
// CHECK-NEXT: llvm.fence syncscope("device") release
// CHECK: llvm.load %{{.*}} atomic syncscope("device") monotonic {alignment = 8 : i64} : !llvm.ptr<1> -> i64
// CHECK: nvvm.vote.sync  all
// CHECK: arith.addf
// CHECK-NOT: math.exp
// CHECK: nvvm.nanosleep
// CHECK: llvm.atomicrmw add %[[COUNTER:.*]], %c1_i32{{.*}} syncscope("device") monotonic
// CHECK: llvm.store %c0_i32{{.*}}, %[[COUNTER]]
// CHECK: gpu.barrier
// The map over the registers, then over the stage.
// CHECK-COUNT-4: llvm.store %{{.*}} {alignment = 16 : i64} : vector<4xf32>, !llvm.ptr<1>
// CHECK: scf.for
// CHECK: llvm.store %{{.*}} {alignment = 16 : i64} : vector<4xf32>, !llvm.ptr<1>
// CHECK-NOT: math.exp

// One input: 32 elements per thread in registers, 64 staged.
// ONE: #rowred.plan<strategy = chunks, block = 4096, warps = 4, vector = 4, chunk_stage = 8192{{[,>]}}

// Inputs of two types: the stage cannot hold them; registers only.
// MIXED: #rowred.plan<strategy = chunks, block = 2048, warps = 4, vector = 4>
// ERR-MIXED: chunk_stage needs inputs of one element type

// Two levels that are shifted moments (layer_norm: the sum, then the sums
// of x - s / N and of its square): one exchange. Each chunk reduces its sum
// and its count of elements over the block (slots 0 and 1), then its
// shifted sums about its own mean, the sum over the count (slots 2 and 3),
// and publishes the four (chunk_entries = 4); warp 0 folds them, moving
// each pair of moments to the mean of both, then every lane's to the row's
// mean s / N, before the sums across lanes. Groups of two levels keep one
// masked path.
// TWO: chunk_entries = 4 : i64
// The host's workspace holds them: 8 x 4 bytes per chunk in each row's
// record.
// TWO: %[[CHUNKS:.*]] = arith.ceildivui %{{.*}}, %c12288 : index
// TWO: %[[ENTRY_BYTES:.*]] = arith.muli %[[CHUNKS]], %c32 : index
// TWO: %[[UP:.*]] = arith.addi %[[ENTRY_BYTES]], %c127 : index
// TWO: %[[ALIGNED:.*]] = arith.andi %[[UP]], %c-128 : index
// TWO: %[[RECORD:.*]] = arith.addi %[[ALIGNED]], %c128{{.*}} : index
// TWO: %[[ROWS_BYTES:.*]] = arith.muli %{{.*}}, %[[RECORD]] : index
// TWO: %[[BYTES:.*]] = arith.addi %c128{{.*}}, %[[ROWS_BYTES]] : index
// TWO: arith.divui %[[BYTES]], %c4{{.*}} : index
// TWO: gpu.func @layer_norm_kernel0
// TWO: %[[COLS:.*]] = arith.trunci
// TWO: %[[K:.*]] = arith.ceildivui %{{.*}}, %c12288_i32
// TWO-NOT: arith.cmpi sle
// The chunk's sum and count, then its mean.
// TWO: memref.store %{{.*}}, %[[SLOTS:.*]][%c0{{.*}}, %{{.*}}]
// TWO: memref.store %{{.*}}, %[[SLOTS]][%c1{{.*}}, %{{.*}}]
// TWO: gpu.barrier
// TWO-COUNT-4: memref.load %[[SLOTS]][%c0
// TWO-COUNT-4: memref.load %[[SLOTS]][%c1
// TWO-NOT: gpu.barrier
// TWO: arith.divf %{{.*}}, %{{.*}} : f32
// TWO: memref.store %{{.*}}, %[[SLOTS]][%c2{{.*}}, %{{.*}}]
// TWO: memref.store %{{.*}}, %[[SLOTS]][%c3{{.*}}, %{{.*}}]
// TWO: gpu.barrier
// One exchange of four entries.
// TWO-COUNT-4: llvm.store %{{.*}}, %{{.*}} atomic syncscope("device") monotonic {alignment = 8 : i64} : i64, !llvm.ptr<1>
// TWO-NEXT: llvm.fence syncscope("device") release
// TWO: scf.while {{.*}} -> (i32, f32, f32, f32, f32)
// TWO-COUNT-4: llvm.load %{{.*}} atomic syncscope("device") monotonic {alignment = 8 : i64} : !llvm.ptr<1> -> i64
// TWO: nvvm.vote.sync  all
// The pairwise step: the mean of both, and each one's.
// TWO: %[[BOTH:.*]] = arith.addf %{{.*}}, %{{.*}} : f32
// TWO: %[[BOTH_COUNT:.*]] = arith.addf %{{.*}}, %{{.*}} : f32
// TWO: arith.divf %[[BOTH]], %[[BOTH_COUNT]] : f32
// TWO: nvvm.nanosleep
// Across lanes: the row's sum, then each lane's moments moved to s / N.
// TWO: gpu.shuffle  xor
// TWO: %[[N:.*]] = arith.uitofp %[[COLS]] : i32 to f32
// TWO: arith.divf %{{.*}}, %[[N]] : f32
// TWO: llvm.atomicrmw add %[[COUNTER:.*]], %{{.*}} syncscope("device") monotonic
// TWO: llvm.fence syncscope("device") acq_rel
// TWO: llvm.store %c0_i32{{.*}}, %[[COUNTER]]
// TWO: gpu.barrier
// TWO-NOT: scf.while
// The map loads the weight and bias of half the held vectors (4 of 8)
// before it stores any of them, then the other half's; the stage's loop
// takes 4 vectors an iteration (mapBatch), its 4 from the stage with their
// weights and biases, then their stores.
// TWO-COUNT-8: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xf32>
// TWO-NOT: llvm.load
// TWO-COUNT-4: llvm.store %{{.*}} {alignment = 16 : i64} : vector<4xf32>, !llvm.ptr<1>
// TWO-COUNT-8: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xf32>
// TWO-NOT: llvm.load
// TWO-COUNT-4: llvm.store %{{.*}} {alignment = 16 : i64} : vector<4xf32>, !llvm.ptr<1>
// TWO-NEXT: }
// TWO: scf.for %{{.*}} = %c0_i32{{.*}} to %c8192_i32{{.*}} step %c2048_i32
// TWO-COUNT-4: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<3> -> vector<4xf32>
// TWO-COUNT-8: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xf32>
// TWO-NOT: llvm.load
// TWO-COUNT-4: llvm.store %{{.*}} {alignment = 16 : i64} : vector<4xf32>, !llvm.ptr<1>

// Two levels like layer_norm's but for a second sum that is not the square
// of the shifted element: one exchange per level (chunk_entries = 3), the
// first of one value, the second of two.
// NOT-MOMENTS: chunk_entries = 3 : i64
// NOT-MOMENTS: gpu.func @not_moments_kernel0
// NOT-MOMENTS: scf.while {{.*}} -> (i32, f32) {
// NOT-MOMENTS: scf.while {{.*}} -> (i32, f32, f32) {
// NOT-MOMENTS-NOT: -> (i32, f32, f32, f32, f32)

// ERR-LEVELS: the chunks strategy needs a max reduce followed by a sum of exp(x - max), as produced by rowred-decompose, or levels of at most two reduces each (a level's reduces read only earlier levels' results; a row's chunks meet once per level)

// Auto: rows of two held operands from 131073 to 1048576 elements that are a
// multiple of the vector width, layer_norm's (three reduces) from 262144
// (the table's row_lengths).
// AUTO: strategy = chunks
// NOT-AUTO-NOT: strategy = chunks

// f16 (rows of its own): the backward's chunks from 131072, rms_norm's and
// layer_norm's from 262144.
// F16-131072-LABEL: func.func @rms_norm
// F16-131072: strategy = cluster
// F16-131072-LABEL: func.func @layer_norm
// F16-131072-NOT: strategy = chunks
// F16-131072-LABEL: func.func @softmax_backward
// F16-131072: strategy = chunks, block = 2048, warps = 4, vector = 8, chunk_stage = 6144
// F16-262144-LABEL: func.func @rms_norm
// F16-262144: strategy = chunks, block = 4096, warps = 4, vector = 8, chunk_stage = 12288
// F16-262144-LABEL: func.func @layer_norm
// F16-262144: strategy = chunks, block = 4096, warps = 4, vector = 8, chunk_stage = 12288, min_blocks_per_sm = 5
// F16-262144-LABEL: func.func @softmax_backward
// F16-262144: strategy = chunks
// F16-262160-LABEL: func.func @layer_norm
// F16-262160: strategy = chunks, block = 4096, warps = 4, vector = 8, chunk_stage = 12288, min_blocks_per_sm = 5
