// RUN: softmax-opt %S/Inputs/dynamic.mlir --test-rowred-plan-request="fields='pair_reduce = true'" --rowred-decompose --rowred-plan="cols=4096" --convert-rowred-to-gpu | FileCheck %s
// RUN: softmax-opt %S/Inputs/dynamic.mlir --test-rowred-plan-request="fields='pair_reduce = true'" --rowred-decompose --rowred-plan="cols=4096" --convert-rowred-to-gpu | grep -c gpu.barrier | FileCheck %s --check-prefix=BARRIERS

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
