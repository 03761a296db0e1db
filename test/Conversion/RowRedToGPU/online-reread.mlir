// RUN: softmax-opt %S/Inputs/not-softmax.mlir --rowred-plan="strategy=online" | FileCheck %s --check-prefix=PLAN
// RUN: softmax-opt %S/Inputs/not-softmax.mlir --rowred-plan="strategy=online" --convert-rowred-to-gpu | FileCheck %s
// RUN: softmax-opt %s --test-rowred-plan-request="fields='strategy = online, cluster = 16'" --rowred-decompose --rowred-plan="cols=1048576" --convert-rowred-to-gpu | FileCheck %s --check-prefix=CLUSTER
// RUN: softmax-opt %s --test-rowred-plan-request="fields='strategy = online, cluster = 16'" --rowred-decompose --rowred-plan="cols=1048576" | FileCheck %s --check-prefix=CLUSTER-PLAN
// RUN: softmax-opt %S/Inputs/dynamic.mlir --test-rowred-plan-request="fields='reread = true'" --rowred-decompose --rowred-plan="strategy=online" | FileCheck %s --check-prefix=SOFTMAX
// RUN: not softmax-opt %S/Inputs/not-softmax.mlir --test-rowred-plan-request="fields='prefetch = registers'" --rowred-plan="strategy=online" 2>&1 | FileCheck %s --check-prefix=PREFETCH
// RUN: not softmax-opt %S/Inputs/not-softmax.mlir --test-rowred-plan-request="fields='kept_elements = 16384'" --rowred-plan="strategy=online" 2>&1 | FileCheck %s --check-prefix=KEPT

// The online kernel of a group without the running (max, sum) pair (here a
// sum and a map) re-reads its row: each level of reduces streams it in
// tiles, accumulating in registers, and meets in one exchange; then the map
// streams it once more and writes it. Rows of any length, of any chain of
// reduces.
// PLAN: rowred.plan = #rowred.plan<strategy = online, block = 8192, warps = 16, vector = 4, reread = true, cache_hints = true>

// CHECK: gpu.func @online_needs_softmax_kernel0
// The vector path: the sum's pass, four vectors per thread and tile
// (loaded with L2 eviction hints: PlanTable.json's streamed_tiles), masked
// at the row's end.
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %c8192_i32 iter_args(%{{.*}} = %{{.*}}) -> (f32) : i32 {
// CHECK-COUNT-4: nvvm.inline_ptx "ld.global.L2::cache_hint.v4.b32 {$0, $1, $2, $3}, [$4], $5;"
// CHECK: arith.addf
// CHECK: scf.yield
// The block's exchange of the sum, then the map's pass.
// CHECK: gpu.barrier
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %c8192_i32{{(_[0-9]+)?}} : i32 {
// CHECK-COUNT-4: nvvm.inline_ptx "ld.global.L2::cache_hint.v4.b32 {$0, $1, $2, $3}, [$4], $5;"
// CHECK: arith.mulf
// CHECK: nvvm.inline_ptx "st.global.L2::cache_hint.v4.b32 [$0], {$1, $2, $3, $4}, $5;"
// No peeled path: rows that do not allow vectors stream scalars.
// CHECK: } else {
// CHECK: llvm.load %{{.*}} {alignment = 4 : i64} : !llvm.ptr<1> -> f32
// CHECK: gpu.return

// rms_norm's rows of 2^20 (which auto cuts into chunks), asked to be
// streamed over a cluster of 16: each block walks its share of the row; the blocks'
// sums of squares meet in distributed shared memory (one mbarrier per
// exchange), then every block writes its share.
// CLUSTER-PLAN: rowred.plan = #rowred.plan<strategy = online, block = 8192, warps = 32, cluster = 16, vector = 4, reread = true>
// CLUSTER: gpu.func @rms_norm_kernel0
// CLUSTER: nvvm.mbarrier.init
// CLUSTER: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %c8192_i32{{(_[0-9]+)?}} iter_args(%{{.*}} = %{{.*}}) -> (f32) : i32 {
// CLUSTER: arith.mulf
// CLUSTER: arith.addf
// CLUSTER: scf.yield
// CLUSTER: nvvm.mbarrier.try_wait
// CLUSTER: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %c8192_i32{{(_[0-9]+)?}} : i32 {
// CLUSTER: llvm.store %{{.*}}, %{{.*}} {alignment = 16 : i64} : vector<4xf32>, !llvm.ptr<1>

// Softmax asked for reread: the three passes of the tutorials (max, sum of
// exponentials, map) instead of the running pair.
// SOFTMAX: rowred.plan = #rowred.plan<strategy = online, block = 8192, warps = 16, vector = 4, reread = true, cache_hints = true>

// The running pair's memory paths do not apply to streamed tiles.
// PREFETCH: error: 'rowred.map' op prefetch = registers fetches the online kernel's next tile for its running pair; with reread it streams plain tiles (prefetch = none) or stages its share of each input (prefetch = stage)
// KEPT: error: 'rowred.map' op kept_elements keeps tiles of the online kernel's running pair between its passes; with reread it keeps none

func.func @rms_norm(%x: memref<?x?xf32>, %w: memref<?xf32>, %y: memref<?x?xf32>) {
  rowred.rms_norm epsilon(1.0e-05) ins(%x : memref<?x?xf32>) weight(%w : memref<?xf32>) outs(%y : memref<?x?xf32>)
  return
}
