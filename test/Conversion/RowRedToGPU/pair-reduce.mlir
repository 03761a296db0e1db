// RUN: softmax-opt %S/Inputs/dynamic.mlir --test-rowred-plan-request="fields='pair_reduce = true'" --rowred-decompose --rowred-plan="cols=4096" --convert-rowred-to-gpu | FileCheck %s
// RUN: softmax-opt %S/Inputs/dynamic.mlir --test-rowred-plan-request="fields='pair_reduce = true'" --rowred-decompose --rowred-plan="cols=4096" --convert-rowred-to-gpu | grep -c gpu.barrier | FileCheck %s --check-prefix=BARRIERS
// RUN: not softmax-opt %S/Inputs/bf16.mlir --test-rowred-plan-request="fields='strategy = cluster, block = 65536, pair_reduce = true, reread = false'" --rowred-decompose --rowred-plan --convert-rowred-to-gpu 2>&1 | FileCheck %s --check-prefix=SPILLS
// RUN: not softmax-opt %S/Inputs/dynamic.mlir --test-rowred-plan-request="fields='strategy = cluster, block = 65536, pair_reduce = true, prefetch = registers'" --rowred-decompose --rowred-plan --convert-rowred-to-gpu 2>&1 | FileCheck %s --check-prefix=SPILLS-F32
// RUN: softmax-opt %S/Inputs/dynamic.mlir --test-rowred-plan-request="fields='strategy = cluster, block = 65536, pair_reduce = true'" --rowred-decompose --rowred-plan | FileCheck %s --check-prefix=F32-DERIVED
// RUN: softmax-opt %S/Inputs/bf16.mlir --test-rowred-plan-request="fields='strategy = cluster, cluster = 8'" --rowred-decompose --rowred-plan="cols=32000" | FileCheck %s --check-prefix=BF16-DERIVED

// pair_reduce: each thread reduces its elements to (m_t, d_t) with
// d_t = sum exp(x - m_t) (0 where m_t is -inf), the pairs meet in one
// shared-memory exchange, and softmax writes e * (exp(m_t - m) / s).
// CHECK: gpu.func @softmax_kernel0
// CHECK: scf.for
// CHECK: %[[FINITE:.*]] = arith.cmpf one, %[[MT:.*]], %{{.*}} : f32
// CHECK: arith.andi %{{.*}}, %[[FINITE]] : i1
// CHECK: arith.subf %{{.*}}, %[[MT]] : f32
// CHECK: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f32"
// Max butterfly over the warp, rescale, sum butterfly; one exchange of
// both halves and one barrier.
// CHECK: gpu.shuffle xor %[[MT]]
// CHECK: memref.store %{{.*}}, %{{.*}}[%c0{{.*}}, %{{.*}}]
// CHECK: memref.store %{{.*}}, %{{.*}}[%c1{{.*}}, %{{.*}}]
// CHECK-NEXT: }
// CHECK-NEXT: gpu.barrier
// CHECK-NOT: gpu.barrier
// CHECK: memref.load
// CHECK: memref.load
// CHECK: arith.maximumf
// CHECK: arith.addf
// CHECK: arith.subf %[[MT]], %{{.*}} : f32
// CHECK: %[[EXP:.*]] = llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f32"
// CHECK: %[[SCALE:.*]] = arith.divf %[[EXP]], %{{.*}} : f32
// CHECK: arith.mulf %{{.*}}, %[[SCALE]] : f32
// CHECK: llvm.store
// The row's end: one barrier before the next row reuses the slots.
// CHECK: gpu.barrier

// Two per row (exchange, end of row) in each of the three paths (aligned
// vectors, peeled vectors, scalars), against three each without
// pair_reduce.
// BARRIERS: 6

// Cluster slices of 32 elements per thread with the pair reduction spill
// (ptxas -v) with the scalar path's row in registers (16-bit) or the next
// row loaded ahead into registers (f32); such plans are refused, and f32
// slices with the pair do not load ahead by default; 16-bit slices with the
// pair re-read the row by default, whatever their size (here 4096 elements
// on 128 threads, the few rows' cluster of 8 for bf16 rows of 32000).
// SPILLS: error: 'rowred.map' op a 16-bit cluster slice of 32 elements per thread with pair_reduce and reread = false spills registers; use reread = true (the default here), no pair_reduce or more warps
// SPILLS-F32: error: 'rowred.map' op an f32 cluster slice of 32 elements per thread with pair_reduce and prefetch = registers spills registers; use prefetch = none or stage, no pair_reduce or more warps
// BF16-DERIVED: #rowred.plan<strategy = cluster, block = 4096, warps = 4, cluster = 8, vector = 8, reread = true, prefetch = registers, pair_reduce = true,
// F32-DERIVED: #rowred.plan<strategy = cluster, block = 16384, warps = 16, cluster = 4, vector = 4, reread = true, pair_reduce = true, max_cols = 65536, stage_elements = 16384, min_blocks_per_sm = 2>
