// RUN: softmax-opt %S/Inputs/dynamic.mlir --test-rowred-plan-request="fields='cluster = 16'" --rowred-decompose --rowred-plan="cols=1048576 strategy=online" --convert-rowred-to-gpu | FileCheck %s
// RUN: softmax-opt %S/Inputs/dynamic.mlir --test-rowred-plan-request="fields='cluster = 16, cache_hints = false'" --rowred-decompose --rowred-plan="cols=1048576 strategy=online" --convert-rowred-to-gpu | FileCheck %s --check-prefix=OFF
// RUN: softmax-opt %S/Inputs/dynamic.mlir --rowred-decompose --rowred-plan="cols=262145" --convert-rowred-to-gpu | FileCheck %s --check-prefix=OFF
// RUN: softmax-opt %S/Inputs/bf16.mlir --test-rowred-plan-request="fields='kept_elements = 32768'" --rowred-decompose --rowred-plan="cols=1048576" --convert-rowred-to-gpu | FileCheck %s --check-prefix=OFF
// RUN: softmax-opt %S/Inputs/bf16.mlir --test-rowred-plan-request="fields='cluster = 16'" --rowred-decompose --rowred-plan="cols=1048576 strategy=online" --convert-rowred-to-gpu | FileCheck %s --check-prefix=ON
// RUN: softmax-opt %S/Inputs/dynamic.mlir --rowred-decompose --rowred-plan="strategy=online" --convert-rowred-to-gpu | FileCheck %s --check-prefix=ON
// RUN: softmax-opt %S/Inputs/bf16.mlir --test-rowred-plan-request="fields='cluster = 8'" --rowred-decompose --rowred-plan="cols=450000 strategy=online" --convert-rowred-to-gpu | FileCheck %s --check-prefix=ON
// RUN: softmax-opt %S/Inputs/dynamic.mlir --test-rowred-plan-request="fields='cache_hints = true'" --rowred-decompose --rowred-plan="cols=262145" --convert-rowred-to-gpu | FileCheck %s --check-prefix=ON
// RUN: softmax-opt %S/Inputs/dynamic.mlir --test-rowred-plan-request="fields='cluster = 8, prefetch = stage'" --rowred-decompose --rowred-plan="strategy=online cols=262144" --convert-rowred-to-gpu | FileCheck %s --check-prefix=OFF
// RUN: not softmax-opt %S/Inputs/dynamic.mlir --test-rowred-plan-request="fields='cache_hints = true'" --rowred-decompose --rowred-plan="cols=1024" --convert-rowred-to-gpu 2>&1 | FileCheck %s --check-prefix=FUSED
// RUN: softmax-opt %S/Inputs/layer-norm.mlir --rowred-decompose --rowred-plan="strategy=online" --convert-rowred-to-gpu | FileCheck %s --check-prefix=STREAMED
// RUN: softmax-opt %S/Inputs/layer-norm.mlir --test-rowred-plan-request="fields='cache_hints = false'" --rowred-decompose --rowred-plan="strategy=online" --convert-rowred-to-gpu | FileCheck %s --check-prefix=OFF

// The online kernel with L2 eviction hints (auto's default wherever its
// second pass reads the row from global memory, but f32 over clusters of 8):
// two policies from createpolicy at the top of the kernel;
// pass 1 loads its tiles evict-last, so that they are still in L2 for pass 2,
// which loads them evict-first and writes evict-first.
// CHECK: l2_hints = true
// CHECK: gpu.func @softmax_kernel0
// CHECK: %[[LAST:.*]] = nvvm.inline_ptx "createpolicy.fractional.L2::evict_last.b64 $0, 1.0;" -> i64
// CHECK: %[[FIRST:.*]] = nvvm.inline_ptx "createpolicy.fractional.L2::evict_first.b64 $0, 1.0;" -> i64
// CHECK-COUNT-4: nvvm.inline_ptx "ld.global.L2::cache_hint.v4.b32 {$0, $1, $2, $3}, [$4], $5;" ro(%{{.*}}, %[[LAST]] : !llvm.ptr<1>, i64) -> i32, i32, i32, i32
// CHECK: scf.for
// CHECK-COUNT-4: nvvm.inline_ptx "ld.global.L2::cache_hint.v4.b32 {$0, $1, $2, $3}, [$4], $5;" ro(%{{.*}}, %[[LAST]] : !llvm.ptr<1>, i64)
// CHECK-COUNT-4: nvvm.inline_ptx "ld.global.L2::cache_hint.v4.b32 {$0, $1, $2, $3}, [$4], $5;" ro(%{{.*}}, %[[FIRST]] : !llvm.ptr<1>, i64)
// CHECK: scf.for
// CHECK-COUNT-4: nvvm.inline_ptx "ld.global.L2::cache_hint.v4.b32 {$0, $1, $2, $3}, [$4], $5;" ro(%{{.*}}, %[[FIRST]] : !llvm.ptr<1>, i64)
// CHECK: nvvm.inline_ptx "st.global.L2::cache_hint.v4.b32 [$0], {$1, $2, $3, $4}, $5;" ro(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[FIRST]] : !llvm.ptr<1>, i32, i32, i32, i32, i64)

// Not for f32 rows over clusters of 8, nor with kept tiles (kept_elements) or
// the stage, nor when off.
// OFF: l2_hints = false
// OFF-NOT: createpolicy
// OFF-NOT: cache_hint

// ON: l2_hints = true
// ON: createpolicy.fractional.L2::evict_last

// FUSED: error: 'rowred.map' op cache_hints applies to the online strategy only

// The online kernel that streams the row per level (layer_norm: its sum,
// then its shifted sums) takes the hints by default (PlanTable.json's
// streamed_tiles), on 512 threads: its reduces' passes read x evict-last,
// so that it stays in L2 for the next pass; the map's pass reads x and
// writes y evict-first, and reads the weight and bias, which every row
// reads, with L2's default policy.
// STREAMED: l2_hints = true
// STREAMED-SAME: plan = "#rowred.plan<strategy = online, block = 4096, warps = 16, vector = 4, reread = true, cache_hints = true>"
// STREAMED: %[[LAST:.*]] = nvvm.inline_ptx "createpolicy.fractional.L2::evict_last.b64 $0, 1.0;" -> i64
// STREAMED: %[[FIRST:.*]] = nvvm.inline_ptx "createpolicy.fractional.L2::evict_first.b64 $0, 1.0;" -> i64
// STREAMED: scf.for {{.*}} -> (f32)
// STREAMED: nvvm.inline_ptx "ld.global.L2::cache_hint.v4.b32 {$0, $1, $2, $3}, [$4], $5;" ro(%{{.*}}, %[[LAST]] : !llvm.ptr<1>, i64)
// STREAMED: scf.for {{.*}} -> (f32, f32)
// STREAMED: nvvm.inline_ptx "ld.global.L2::cache_hint.v4.b32 {$0, $1, $2, $3}, [$4], $5;" ro(%{{.*}}, %[[LAST]] : !llvm.ptr<1>, i64)
// STREAMED: scf.for
// STREAMED-NOT: %[[LAST]]
// STREAMED: nvvm.inline_ptx "ld.global.L2::cache_hint.v4.b32 {$0, $1, $2, $3}, [$4], $5;" ro(%{{.*}}, %[[FIRST]] : !llvm.ptr<1>, i64)
// STREAMED: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xf32>
// STREAMED: nvvm.inline_ptx "st.global.L2::cache_hint.v4.b32 [$0], {$1, $2, $3, $4}, $5;" ro({{.*}}, %[[FIRST]] : !llvm.ptr<1>, i32, i32, i32, i32, i64)
