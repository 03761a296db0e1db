// RUN: softmax-opt %s --rowred-decompose --rowred-plan="cols=12288" | FileCheck %s --check-prefix=PLAN
// RUN: softmax-opt %s --rowred-decompose --rowred-plan="cols=12288" --convert-rowred-to-gpu | FileCheck %s
// RUN: softmax-opt %s --rowred-decompose --rowred-plan="cols=12289" | FileCheck %s --check-prefix=ODD
// RUN: softmax-opt %s --test-rowred-plan-request="fields='strategy = online, reread = true, prefetch = stage, warps = 4'" --rowred-decompose --rowred-plan="cols=10000" | FileCheck %s --check-prefix=ASKED
// RUN: not softmax-opt %s --test-rowred-plan-request="fields='strategy = online, prefetch = stage'" --rowred-decompose --rowred-plan="cols=0" 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// RUN: not softmax-opt %S/Inputs/mixed-types.mlir --test-rowred-plan-request="fields='prefetch = stage'" --rowred-plan="strategy=online cols=4096" 2>&1 | FileCheck %s --check-prefix=MIXED
// RUN: not softmax-opt %s --test-rowred-plan-request="fields='strategy = online, prefetch = stage, cluster = 2'" --rowred-decompose --rowred-plan="cols=131072" 2>&1 | FileCheck %s --check-prefix=TOO-BIG

// A staged streamed row: a group without the running (max, sum) pair (here
// the softmax backward, holding y and dy through its sum) streams its row
// per level of reduces on one block per row (grid = rows), with the block's
// share of every 2-D input copied whole into its slot of the stage first
// (prefetch = stage): every pass then reads shared memory and the row
// comes from DRAM once. auto gives it to the rows of row_lengths' staged
// streamed rows (here 16-bit rows of two operands held, 8193 to 24576),
// on streamed_tiles' 512 threads, two slots of 12288 elements.
// PLAN: rowred.plan = #rowred.plan<strategy = online, block = 4096, warps = 16, vector = 8, reread = true, prefetch = stage, max_cols = 12288, stage_elements = 12288, grid = rows>

// CHECK: gpu.func @softmax_backward_kernel0
// CHECK: %[[STAGE:.*]] = llvm.mlir.addressof @rowred_stage : !llvm.ptr<3>
// The vector path copies each tile of its share: a thread's vector of y
// into slot 0, its vector of dy into slot 1, one cp.async group, then waits
// for its own copies (each thread reads back the vectors it copied).
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %c4096_i32 : i32 {
// CHECK: nvvm.cp.async.shared.global %{{.*}}, %{{.*}}, 16, cache = cg
// CHECK: %[[SLOT:.*]] = arith.constant 12288 : i32
// CHECK: arith.addi %{{.*}}, %[[SLOT]] : i32
// CHECK: nvvm.cp.async.shared.global %{{.*}}, %{{.*}}, 16, cache = cg
// CHECK: nvvm.cp.async.commit.group
// CHECK-NEXT: nvvm.cp.async.wait.group 0
// The sum's pass reads both inputs from the stage.
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %c4096_i32{{.*}} iter_args(%{{.*}} = %{{.*}}) -> (f32) : i32 {
// CHECK: llvm.getelementptr inbounds %[[STAGE]][%{{.*}}] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, bf16
// CHECK: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<3> -> vector<8xbf16>
// CHECK: arith.constant 12288 : i32
// CHECK: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<3> -> vector<8xbf16>
// CHECK: scf.yield
// The map's pass reads them there again and writes dx to global memory,
// without L2 hints.
// CHECK: gpu.barrier
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %c4096_i32{{.*}} : i32 {
// CHECK: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<3> -> vector<8xbf16>
// CHECK: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<3> -> vector<8xbf16>
// CHECK: llvm.store %{{.*}}, %{{.*}} {alignment = 16 : i64} : vector<8xbf16>, !llvm.ptr<1>
// CHECK-NOT: cache_hint
// Rows that do not allow vectors stream scalars from global memory.
// CHECK: } else {
// CHECK-NOT: nvvm.cp.async
// CHECK: llvm.load %{{.*}} {alignment = 2 : i64} : !llvm.ptr<1> -> bf16
// CHECK: gpu.return

// Odd rows, which could not stage whole vectors, are not staged rows.
// ODD: rowred.plan = #rowred.plan<strategy = fused, block = 16384,

// Asked for: prefetch = stage with reread, on any warps (the stage rounded
// up to whole tiles), on the persistent grid unless grid = rows is asked
// for too (each row copies its own share when it starts).
// ASKED: rowred.plan = #rowred.plan<strategy = online, block = 1024, warps = 4, vector = 8, reread = true, prefetch = stage, max_cols = 10240, stage_elements = 10240>

// UNKNOWN: error: 'rowred.map' op prefetch = stage is not possible here: the online kernel stages its share of a row only for a known row length (cols=N)
// MIXED: error: 'rowred.map' op prefetch = stage with reread stages every 2-D input side by side, which needs inputs of one element type
// TOO-BIG: error: 'rowred.map' op prefetch = stage is not possible here: the stage would exceed the shared memory of a block

func.func @softmax_backward(%y: memref<?x?xbf16>, %dy: memref<?x?xbf16>, %dx: memref<?x?xbf16>) {
  rowred.softmax_backward dimension(1) ins(%y, %dy : memref<?x?xbf16>, memref<?x?xbf16>) outs(%dx : memref<?x?xbf16>)
  return
}
