// RUN: softmax-opt %s --test-rowred-plan-request="fields='warps = 4'" --rowred-decompose --rowred-plan="cols=1024" --convert-rowred-to-gpu | FileCheck %s

// The fused kernel for a 1024-column f32 softmax on 4 warps (128 threads): 8
// elements per thread as two 16-byte chunks, the row held in registers.

// Host side: the group is replaced by a launch guarded against empty inputs,
// and the row-scalar buffers are gone.
// CHECK: module attributes {gpu.container_module, rowred.kernels = {softmax_kernel0 = {block_elements = 1024 : i64, block_threads = 128 : i64, chunk_elements = 0 : i64, cluster_blocks = 1 : i64, dynamic_shared_bytes = 0 : i64, elements_per_thread = 8 : i64, fast_exp = true, grid = "rows", input_type = "f32", keep_ahead = false, keep_ahead_bulk = false, l2_hints = false, max_cols = 1024 : i64, min_cols = 1 : i64, op = "softmax", operands = [{name = "x", role = "input", type = "f32"}, {name = "y", role = "output", type = "f32"}], output_type = "f32", pair_reduce = false, peeled_path = true, plan = {{.*}}, prefetch = "none", reverse_second_pass = false, rows_per_block = 1 : i64, shared_bytes = 32 : i64, strategy = "fused", vector_width = 4 : i64}}}
// CHECK-LABEL: func.func @softmax
// CHECK-NOT: memref.alloc
// CHECK-NOT: rowred.
// CHECK: scf.if
// CHECK: memref.extract_aligned_pointer_as_index
// CHECK: llvm.inttoptr %{{.*}} : i64 to !llvm.ptr<1>
// CHECK: gpu.launch_func @softmax_kernel0::@softmax_kernel0 blocks in (%[[ROWS:.*]], %{{.*}}, %{{.*}}) threads in (%[[T:.*]], %{{.*}}, %{{.*}}) args(%{{.*}} : !llvm.ptr<1>, %{{.*}} : !llvm.ptr<1>, %{{.*}} : i64, %{{.*}} : i64, %{{.*}} : i64, %{{.*}} : i64)
// CHECK-NOT: memref.dealloc

// The kernel: documented ABI, one f32 slot per warp per reduction.
// CHECK: gpu.module @softmax_kernel0
// CHECK: gpu.func @softmax_kernel0(%[[X:.*]]: !llvm.ptr<1>, %[[Y:.*]]: !llvm.ptr<1>, %[[M:.*]]: i64, %[[N:.*]]: i64, %[[SX:.*]]: i64, %[[SY:.*]]: i64) workgroup(%[[SMEM:.*]] : memref<2x4xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}) kernel attributes {known_block_size = array<i32: 128, 1, 1>}

// Vector path only when pointers, strides and N allow 16-byte accesses.
// CHECK: llvm.ptrtoint %[[X]]
// CHECK: arith.remui %[[SX]], %{{.*}} : i64
// CHECK: llvm.ptrtoint %[[Y]]
// CHECK: arith.remui %[[SY]], %{{.*}} : i64
// CHECK: arith.remui %{{.*}}, %{{.*}} : i32
// CHECK: arith.cmpi eq
// CHECK-NEXT: %[[VEC_OK:.*]] = arith.andi
// CHECK: scf.if %[[VEC_OK]] {

// Persistent grid-stride loop over rows.
// CHECK: %[[BID:.*]] = gpu.block_id x
// CHECK: %[[BID64:.*]] = arith.index_cast %[[BID]] : index to i64
// CHECK: %[[GRID:.*]] = gpu.grid_dim x
// CHECK: %[[GRID64:.*]] = arith.index_cast %[[GRID]] : index to i64
// CHECK: scf.for %[[ROW:.*]] = %[[BID64]] to %[[M]] step %[[GRID64]] : i64 {
// CHECK: arith.muli %[[ROW]], %[[SX]] : i64

// Masked 16-byte loads: out-of-range chunks load nothing.
// CHECK: %[[VALID:.*]] = arith.cmpi slt, %{{.*}}, %{{.*}} : i32
// CHECK: scf.if %[[VALID]] -> (vector<4xf32>) {
// CHECK: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xf32>
// CHECK: } else {
// CHECK: scf.yield %{{.*}} : vector<4xf32>

// Max: masked lanes contribute -inf, then in-thread, warp and block steps.
// CHECK: arith.select %[[VALID]], %{{.*}}, %[[NEG_INF:.*]] : f32
// CHECK: arith.maximumf
// CHECK: gpu.shuffle xor %{{.*}}, %{{.*}}, %{{.*}} : f32
// CHECK-COUNT-4: gpu.shuffle xor
// CHECK: %[[LANE0:.*]] = arith.cmpi eq, %{{.*}}, %{{.*}} : i32
// CHECK: scf.if %[[LANE0]] {
// CHECK: memref.store %{{.*}}, %[[SMEM]][%{{.*}}, %{{.*}}]
// CHECK: gpu.barrier
// CHECK-COUNT-4: memref.load %[[SMEM]]

// Sum of exp(x - m) as exp2((x - m) * log2 e) on ex2.approx.ftz (one
// MUFU.EX2); masked lanes contribute 0.
// CHECK: %[[D:.*]] = arith.subf %{{.*}}, %{{.*}} : f32
// CHECK: %[[S:.*]] = arith.mulf %[[D]], %{{.*}} : f32
// CHECK: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f32"(%[[S]]) : (f32) -> f32
// CHECK: arith.select %[[VALID]], %{{.*}}, %{{.*}} : f32
// CHECK: arith.addf
// CHECK-COUNT-5: gpu.shuffle xor
// CHECK: gpu.barrier

// The map: one reciprocal per row, a multiply per element, masked stores.
// CHECK: %[[RCP:.*]] = arith.divf %{{.*}}, %{{.*}} : f32
// CHECK-NOT: arith.divf
// CHECK: arith.mulf %{{.*}}, %[[RCP]] : f32
// CHECK: scf.if %[[VALID]] {
// CHECK: llvm.insertelement
// CHECK: llvm.store %{{.*}}, %{{.*}} {alignment = 16 : i64} : vector<4xf32>, !llvm.ptr<1>

// The scalar path handles unaligned rows with 4-byte accesses.
// CHECK: } else {
// CHECK: scf.for
// CHECK: llvm.load %{{.*}} {alignment = 4 : i64} : !llvm.ptr<1> -> f32
// CHECK: llvm.store %{{.*}}, %{{.*}} {alignment = 4 : i64} : f32, !llvm.ptr<1>
// CHECK: gpu.return

func.func @softmax(%x: memref<?x?xf32>, %y: memref<?x?xf32>) {
  rowred.softmax dimension(1) ins(%x : memref<?x?xf32>) outs(%y : memref<?x?xf32>)
  return
}

// A 1024-thread block (32 warps): after the barrier each lane reads the
// partial of the warp with its own index, and a 32-lane butterfly combines
// them, instead of every thread reading all 32 partials into registers next
// to its 32 elements.
// RUN: softmax-opt %s --test-rowred-plan-request="fields='prefetch = none'" --rowred-decompose --rowred-plan="cols=32768" --convert-rowred-to-gpu | FileCheck %s --check-prefix=WARPS32
// WARPS32: gpu.func @{{.*}} workgroup(%[[SMEM:.*]] : memref<2x32xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64})
// WARPS32: %[[LANE:.*]] = arith.remui %{{.*}}, %c32_i32
// WARPS32: gpu.barrier
// WARPS32-NEXT: arith.constant 0 : index
// WARPS32-NEXT: %[[I:.*]] = arith.index_cast %[[LANE]] : i32 to index
// WARPS32-NEXT: %[[P:.*]] = memref.load %[[SMEM]][%{{.*}}, %[[I]]]
// WARPS32-NOT: memref.load
// WARPS32: gpu.shuffle  xor %[[P]], %c16
// WARPS32: gpu.shuffle  xor %{{.*}}, %c8
// WARPS32: gpu.shuffle  xor %{{.*}}, %c4
// WARPS32: gpu.shuffle  xor %{{.*}}, %c2
// WARPS32: gpu.shuffle  xor %{{.*}}, %c1
