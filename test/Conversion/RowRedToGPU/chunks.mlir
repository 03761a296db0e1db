// RUN: softmax-opt %S/Inputs/dynamic.mlir --rowred-decompose --rowred-plan="strategy=chunks" --convert-rowred-to-gpu | FileCheck %s
// RUN: softmax-opt %S/Inputs/dynamic.mlir --rowred-decompose --rowred-plan="strategy=chunks" --convert-rowred-to-gpu | FileCheck %s --check-prefix=HOST
// RUN: softmax-opt %S/Inputs/dynamic.mlir --rowred-decompose --rowred-plan="strategy=chunks" --convert-rowred-to-gpu | FileCheck %s --check-prefix=PEELED
// RUN: softmax-opt %S/Inputs/bf16.mlir --rowred-decompose --rowred-plan="strategy=chunks" --convert-rowred-to-gpu | FileCheck %s --check-prefix=BF16
// RUN: softmax-opt %S/Inputs/dynamic.mlir --test-rowred-plan-request="fields='chunk_stage = 0'" --rowred-decompose --rowred-plan="strategy=chunks chip=sm_80" --convert-rowred-to-gpu | FileCheck %s --check-prefix=NOSTAGE
// RUN: softmax-opt %S/Inputs/dynamic.mlir --test-rowred-plan-request="fields='vector = 1'" --rowred-decompose --rowred-plan="strategy=chunks" --convert-rowred-to-gpu | FileCheck %s --check-prefix=SCALAR
// RUN: softmax-opt %S/Inputs/dynamic.mlir --rowred-to-ptx="strategy=chunks" | FileCheck %s --check-prefix=PTX
// RUN: softmax-opt %S/Inputs/dynamic.mlir --rowred-to-ptx="strategy=chunks" | FileCheck %s --check-prefix=NO-TRAP
// RUN: softmax-opt %S/Inputs/dynamic.mlir --rowred-decompose --rowred-plan="cols=65536" --convert-rowred-to-gpu | FileCheck %s --check-prefix=AUTO
// RUN: softmax-opt %S/Inputs/dynamic.mlir --rowred-decompose --rowred-plan="cols=65540" --convert-rowred-to-gpu | FileCheck %s --check-prefix=AUTO
// RUN: softmax-opt %S/Inputs/dynamic.mlir --rowred-decompose --rowred-plan="cols=65537" --convert-rowred-to-gpu | FileCheck %s --check-prefix=AUTO
// RUN: softmax-opt %S/Inputs/dynamic.mlir --rowred-decompose --rowred-plan="cols=32768" --convert-rowred-to-gpu | FileCheck %s --check-prefix=NOT-AUTO
// RUN: softmax-opt %S/Inputs/bf16.mlir --rowred-decompose --rowred-plan="cols=1048576" --convert-rowred-to-gpu | FileCheck %s --check-prefix=AUTO
// RUN: softmax-opt %S/Inputs/bf16.mlir --rowred-decompose --rowred-plan="cols=65536" --convert-rowred-to-gpu | FileCheck %s --check-prefix=AUTO
// RUN: softmax-opt %S/Inputs/bf16.mlir --rowred-decompose --rowred-plan="cols=200000" --convert-rowred-to-gpu | FileCheck %s --check-prefix=AUTO
// RUN: softmax-opt %S/Inputs/bf16.mlir --rowred-decompose --rowred-plan="cols=200003" --convert-rowred-to-gpu | FileCheck %s --check-prefix=AUTO
// RUN: softmax-opt %S/Inputs/bf16.mlir --rowred-decompose --rowred-plan="cols=8388608" --convert-rowred-to-gpu | FileCheck %s --check-prefix=NOT-AUTO
// RUN: softmax-opt %S/Inputs/dynamic.mlir --rowred-decompose --rowred-plan="cols=8388608" --convert-rowred-to-gpu | FileCheck %s --check-prefix=NOT-AUTO
// RUN: softmax-opt %S/Inputs/f16.mlir --rowred-decompose --rowred-plan="cols=1048576" --convert-rowred-to-gpu | FileCheck %s --check-prefix=AUTO
// RUN: softmax-opt %S/Inputs/dynamic.mlir --rowred-decompose --rowred-plan="cols=1048576 chip=sm_80" --convert-rowred-to-gpu | FileCheck %s --check-prefix=NOT-AUTO

// RUN: not softmax-opt %S/Inputs/dynamic.mlir --test-rowred-plan-request="fields='rows_per_block = 4'" --rowred-decompose --rowred-plan="strategy=chunks" --convert-rowred-to-gpu 2>&1 | FileCheck %s --check-prefix=ERR-RPB
// RUN: not softmax-opt %S/Inputs/dynamic.mlir --test-rowred-plan-request="fields='cluster = 2'" --rowred-decompose --rowred-plan="strategy=chunks" --convert-rowred-to-gpu 2>&1 | FileCheck %s --check-prefix=ERR-CLUSTER
// RUN: not softmax-opt %S/Inputs/dynamic.mlir --test-rowred-plan-request="fields='grid = rows'" --rowred-decompose --rowred-plan="strategy=chunks" --convert-rowred-to-gpu 2>&1 | FileCheck %s --check-prefix=ERR-GRID
// RUN: not softmax-opt %S/Inputs/dynamic.mlir --test-rowred-plan-request="fields='chunk_stage = 100'" --rowred-decompose --rowred-plan="strategy=chunks" --convert-rowred-to-gpu 2>&1 | FileCheck %s --check-prefix=ERR-STAGE
// RUN: not softmax-opt %S/Inputs/dynamic.mlir --test-rowred-plan-request="fields='chunk_stage = 1048576'" --rowred-decompose --rowred-plan="strategy=chunks" --convert-rowred-to-gpu 2>&1 | FileCheck %s --check-prefix=ERR-BIG
// RUN: not softmax-opt %S/Inputs/dynamic.mlir --rowred-decompose --rowred-plan="strategy=chunks chip=sm_80" --convert-rowred-to-gpu 2>&1 | FileCheck %s --check-prefix=ERR-SM80
// RUN: not softmax-opt %S/Inputs/dynamic.mlir --test-rowred-plan-request="fields='block = 64'" --rowred-decompose --rowred-plan="strategy=chunks" --convert-rowred-to-gpu 2>&1 | FileCheck %s --check-prefix=ERR-BLOCK
// RUN: not softmax-opt %S/Inputs/dynamic.mlir --test-rowred-plan-request="fields='block = 32768'" --rowred-decompose --rowred-plan="strategy=chunks" --convert-rowred-to-gpu 2>&1 | FileCheck %s --check-prefix=ERR-EPT
// Rows cut into chunks (128 threads x (64 f32 in registers + 64 staged)):
// each block loops: thread 0 takes a ticket, which wraps to 0 after rows x
// chunks + grid of them, and hands it to the block through shared memory;
// the loop ends at the first ticket past the last chunk. A launch of no more
// chunks than blocks takes no ticket: block i takes chunk i, once (the
// parity is 0 only on the first iteration). The staged part arrives by one
// bulk copy on an mbarrier while the registers load; the loop carries the
// parity of the mbarrier's phase.
// CHECK: rowred.kernels = {softmax_kernel0 = {block_elements = 8192 : i64, block_threads = 128 : i64, chunk_elements = 16384 : i64, chunk_entries = 1 : i64, cluster_blocks = 1 : i64, dynamic_shared_bytes = 32768 : i64, elements_per_thread = 64 : i64
// CHECK-SAME: grid = "chunks"
// CHECK-SAME: max_cols = 0 : i64
// CHECK-SAME: peeled_path = true
// CHECK-SAME: strategy = "chunks"
// CHECK: llvm.mlir.global internal @rowred_stage_barriers() {addr_space = 3 : i32, alignment = 8 : i64} : !llvm.array<1 x i64>
// CHECK: gpu.func @softmax_kernel0(%{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64, %[[WS:.*]]: !llvm.ptr<1>) workgroup(%[[SLOTS:.*]] : memref<9x4xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}) kernel attributes {known_block_size = array<i32: 128, 1, 1>, nvvm.minctasm = 5 : i32}
// CHECK: nvvm.mbarrier.init
// CHECK: %[[COUNT:.*]] = arith.ceildivui %{{.*}}, %c16384_i32 : i32
// CHECK: %[[TOTAL:.*]] = arith.muli %{{.*}}, %[[COUNT]] : i32
// CHECK: scf.while (%[[PARITY:.*]] = %c0_i32{{.*}}) : (i32) -> (i32, i32) {
// CHECK: %[[GRID:.*]] = gpu.grid_dim  x
// CHECK: %[[GRID32:.*]] = arith.index_cast %[[GRID]] : index to i32
// CHECK: %[[BY_TICKET:.*]] = arith.cmpi ugt, %[[TOTAL]], %[[GRID32]] : i32
// CHECK: %[[THREAD0:.*]] = arith.cmpi eq, %{{.*}}, %c0_i32{{.*}} : i32
// CHECK: %[[TAKE:.*]] = arith.andi %[[THREAD0]], %[[BY_TICKET]] : i1
// CHECK: scf.if %[[TAKE]] {
// CHECK: %[[SUM:.*]] = arith.addi %[[TOTAL]], %[[GRID32]] : i32
// CHECK: %[[WRAP:.*]] = arith.subi %[[SUM]], %c1_i32{{.*}} : i32
// CHECK: llvm.atomicrmw uinc_wrap %[[WS]], %[[WRAP]] syncscope("device") monotonic : !llvm.ptr<1>, i32
// CHECK: memref.store %{{.*}}, %[[SLOTS]][%c4, %c0{{.*}}]
// CHECK: gpu.barrier
// CHECK: %[[BLOCK:.*]] = gpu.block_id  x
// CHECK: %[[BLOCK32:.*]] = arith.index_cast %[[BLOCK]] : index to i32
// CHECK: %[[FIRST:.*]] = arith.cmpi eq, %[[PARITY]], %c0_i32{{.*}} : i32
// CHECK: %[[ONCE:.*]] = arith.select %[[FIRST]], %[[BLOCK32]], %[[TOTAL]] : i32
// CHECK: %[[TAKEN:.*]] = arith.bitcast %{{.*}} : f32 to i32
// CHECK: %[[TICKET:.*]] = arith.select %[[BY_TICKET]], %[[TAKEN]], %[[ONCE]] : i32
// CHECK: %[[MORE:.*]] = arith.cmpi ult, %[[TICKET]], %[[TOTAL]] : i32
// CHECK: scf.condition(%[[MORE]]) %[[PARITY]], %[[TICKET]] : i32, i32
// CHECK: ^bb0(%[[STAGE_PARITY:.*]]: i32, %{{.*}}: i32):
// CHECK: nvvm.mbarrier.arrive.expect_tx
// CHECK: nvvm.cp.async.bulk.shared.cluster.global
// CHECK-COUNT-16: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xf32>
// CHECK: nvvm.mbarrier.try_wait %{{.*}}, %[[STAGE_PARITY]]
// The staged part's passes stay loops of two chunks each.
// CHECK: scf.for %{{.*}} = %c0_i32{{.*}} to %c8192_i32{{.*}} step %c1024_i32
// CHECK-COUNT-2: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<3> -> vector<4xf32>
// CHECK: } {loop_annotation = #loop_annotation}
// The row's exchange: thread 0 stores the chunk's (max, sum) entry in one
// relaxed 8-byte store (then a fence that sends it to L2); warp 0 reads 32
// entries a step until none is zero (no counter of arrivals), folds them,
// and sleeps between reads; lane 0 counts the block out and lane 0's count
// decides for the warp whether it clears the row's record. The wait has no
// time limit: the launch makes the row's blocks resident together.
// CHECK: llvm.store %{{.*}}, %{{.*}} atomic syncscope("device") monotonic {alignment = 8 : i64} : i64, !llvm.ptr<1>
// CHECK-NEXT: llvm.fence syncscope("device") release
// CHECK-NOT: globaltimer
// CHECK: scf.while
// CHECK: llvm.load %{{.*}} atomic syncscope("device") monotonic {alignment = 8 : i64} : !llvm.ptr<1> -> i64
// CHECK: arith.cmpi ne, %{{.*}}, %c0_i64
// CHECK: nvvm.vote.sync  all
// CHECK: nvvm.nanosleep %c64_i32
// CHECK: memref.store %{{.*}}, %[[SLOTS]][%c5{{.*}}, %c0{{.*}}]
// CHECK: memref.store %{{.*}}, %[[SLOTS]][%c6{{.*}}, %c0{{.*}}]
// CHECK-NOT: llvm.fence
// CHECK: llvm.atomicrmw add %[[COUNTER:.*]], %c1_i32{{.*}} syncscope("device") monotonic
// CHECK: gpu.shuffle  idx
// CHECK: llvm.fence syncscope("device") acq_rel
// CHECK: llvm.store %c0_i64{{.*}} : i64, !llvm.ptr<1>
// CHECK: llvm.store %c0_i32{{.*}}, %[[COUNTER]]
// CHECK: gpu.barrier
// CHECK: memref.load %[[SLOTS]][%c5{{.*}}, %c0{{.*}}]
// CHECK-COUNT-16: llvm.store %{{.*}} {alignment = 16 : i64} : vector<4xf32>, !llvm.ptr<1>
// CHECK: %[[NEXT:.*]] = arith.xori %[[STAGE_PARITY]], %c1_i32{{.*}} : i32
// CHECK-NEXT: scf.yield %[[NEXT]] : i32
// CHECK-NOT: llvm.intr.trap

// Rows misaligned alike in x and y (odd lengths) take the peeled path: a
// row's vectors run from its head h (its first aligned column) to its last
// whole vector, its chunks start at h + chunk x 16384, and its first chunk
// also takes the scalar edges, joined to the thread's (max, sum) pair.
// PEELED: %[[TO_ALIGN:.*]] = arith.subi %c0_i64{{.*}}, %{{.*}} : i64
// PEELED: %[[MISALIGN:.*]] = arith.andi %[[TO_ALIGN]], %c3_i64{{.*}} : i64
// PEELED-NEXT: %[[SKIP:.*]] = arith.trunci %[[MISALIGN]] : i64 to i32
// PEELED-NEXT: %[[HEAD:.*]] = arith.minui %[[SKIP]], %[[COLS:.*]] : i32
// PEELED: %[[BODY:.*]] = arith.andi %{{.*}}, %c-4_i32 : i32
// PEELED: %[[VEND:.*]] = arith.addi %[[HEAD]], %[[BODY]] : i32
// PEELED: %[[START:.*]] = arith.addi %[[HEAD]], %{{.*}} : i32
// PEELED: %[[END:.*]] = arith.addi %[[START]], %c16384_i32{{.*}} : i32
// PEELED: arith.cmpi sle, %[[END]], %[[VEND]] : i32
// PEELED: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xf32>
// PEELED: %[[OWNER:.*]] = arith.cmpi eq, %{{.*}}, %c0_i32{{.*}} : i32
// PEELED: %[[EDGE:.*]] = arith.andi %{{.*}}, %[[OWNER]] : i1
// PEELED: scf.if %[[EDGE]] -> (f32)
// PEELED-NEXT: llvm.getelementptr
// PEELED-NEXT: llvm.load %{{.*}} {alignment = 4 : i64} : !llvm.ptr<1> -> f32
// PEELED: arith.maximumf
// PEELED: llvm.atomicrmw add
// PEELED: llvm.store %{{.*}} {alignment = 16 : i64} : vector<4xf32>, !llvm.ptr<1>
// PEELED: llvm.store %{{.*}} {alignment = 4 : i64} : f32, !llvm.ptr<1>

// The host launches a block per chunk of every row (gpu.launch_func cannot
// launch cooperatively; the blocks past the tickets end at once), with a
// zeroed workspace of 32 + rows x (32 + 32 x ceil(8 x chunks / 128)) words
// (softmax's pair: one entry per chunk).
// HOST: %[[CHUNKS:.*]] = arith.ceildivui %{{.*}}, %c16384 : index
// HOST: %[[BLOCKS:.*]] = arith.muli %{{.*}}, %[[CHUNKS]] : index
// HOST: %[[WS:.*]] = gpu.alloc  (%{{.*}}) : memref<?xi32>
// HOST: gpu.memset  %[[WS]], %c0_i32
// HOST: gpu.launch_func  @softmax_kernel0::@softmax_kernel0 blocks in (%[[BLOCKS]], %{{.*}}, %{{.*}}) threads in (%c128, %{{.*}}, %{{.*}})  dynamic_shared_memory_size %c32768_i32
// HOST: gpu.dealloc  %[[WS]]

// 16-bit input: 32 in registers and 96 staged per thread, no register cap.
// BF16: block_elements = 4096 : i64, block_threads = 128 : i64, chunk_elements = 16384 : i64, chunk_entries = 1 : i64, cluster_blocks = 1 : i64, dynamic_shared_bytes = 24576 : i64
// BF16: gpu.func @softmax_kernel0
// BF16-NOT: minctasm
// BF16-SAME: {

// Without a stage (any chip), the chunk is the registers' part alone.
// NOSTAGE: block_elements = 8192 : i64, block_threads = 128 : i64, chunk_elements = 8192 : i64, chunk_entries = 1 : i64, cluster_blocks = 1 : i64, dynamic_shared_bytes = 0 : i64
// NOSTAGE-NOT: rowred_stage
// NOSTAGE-NOT: cp.async.bulk
// NOSTAGE: llvm.atomicrmw uinc_wrap

// Scalar only: no stage, the whole chunk streamed from global memory.
// SCALAR: dynamic_shared_bytes = 0 : i64
// SCALAR-SAME: vector_width = 1 : i64
// SCALAR-NOT: cp.async.bulk
// SCALAR: scf.for %{{.*}} = %c0_i32{{.*}} to %c16384_i32{{.*}} step %c256_i32

// PTX: atom.global.inc.u32
// PTX: cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes
// PTX: nanosleep.u32 {{[^%]*}}64;
// PTX: shfl.sync.idx.b32

// No wall-clock limit and no trap anywhere in the kernel.
// NO-TRAP-NOT: globaltimer
// NO-TRAP-NOT: trap;

// Auto: rows of 65536 to 4194304 elements of every type, of any length
// (odd ones f32 and bf16), on sm_90.
// AUTO: strategy = "chunks"
// NOT-AUTO: strategy = "{{fused|cluster|online}}"

// Bad options name the problem.
// ERR-RPB: 'rowred.map' op rows_per_block does not apply to the chunks strategy, whose blocks each take one chunk of one row
// ERR-CLUSTER: cluster does not apply to the chunks strategy
// ERR-GRID: a chunks kernel's blocks take the chunks of every row by ticket on a grid of at most the resident blocks; grid cannot be asked for
// ERR-STAGE: chunk_stage 100 must be a multiple of 512 (128 threads x 4-element vectors)
// ERR-BIG: chunk_stage 1048576 takes 4194304 bytes of shared memory; a block has at most 229376
// ERR-SM80: chunk_stage fills the stage with cp.async.bulk, which needs sm_90 or newer, not sm_80 (chunk_stage = 0 holds a chunk in registers only)
// ERR-BLOCK: block 64 must be a multiple of the block's 128 threads: each holds the same number of a chunk's elements
// ERR-EPT: a chunk of block 32768 keeps 256 elements per thread in registers (limit 128)
