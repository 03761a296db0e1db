// RUN: softmax-opt %S/Inputs/dynamic.mlir --test-rowred-plan-request="fields='cluster = 16'" --rowred-decompose --rowred-plan="cols=1048576 strategy=online" --convert-rowred-to-gpu | FileCheck %s
// RUN: softmax-opt %S/Inputs/dynamic.mlir --test-rowred-plan-request="fields='cluster = 16, cache_hints = false'" --rowred-decompose --rowred-plan="cols=1048576 strategy=online" --convert-rowred-to-gpu | FileCheck %s --check-prefix=OFF
// RUN: softmax-opt %S/Inputs/dynamic.mlir --rowred-decompose --rowred-plan="cols=262145" --convert-rowred-to-gpu | FileCheck %s --check-prefix=OFF
// RUN: softmax-opt %S/Inputs/bf16.mlir --test-rowred-plan-request="fields='kept_elements = 32768'" --rowred-decompose --rowred-plan="cols=1048576" --convert-rowred-to-gpu | FileCheck %s --check-prefix=OFF
// RUN: softmax-opt %S/Inputs/bf16.mlir --test-rowred-plan-request="fields='cluster = 16'" --rowred-decompose --rowred-plan="cols=1048576 strategy=online" --convert-rowred-to-gpu | FileCheck %s --check-prefix=ON
// RUN: softmax-opt %S/Inputs/dynamic.mlir --rowred-decompose --rowred-plan="strategy=online" --convert-rowred-to-gpu | FileCheck %s --check-prefix=ON
// RUN: softmax-opt %S/Inputs/bf16.mlir --test-rowred-plan-request="fields='cluster = 8'" --rowred-decompose --rowred-plan="cols=450000 strategy=online" --convert-rowred-to-gpu | FileCheck %s --check-prefix=ON
// RUN: softmax-opt %S/Inputs/dynamic.mlir --test-rowred-plan-request="fields='cache_hints = true'" --rowred-decompose --rowred-plan="cols=262145" --convert-rowred-to-gpu | FileCheck %s --check-prefix=ON
// RUN: softmax-opt %S/Inputs/dynamic.mlir --test-rowred-plan-request="fields='cluster = 8, prefetch = stage'" --rowred-decompose --rowred-plan="strategy=online cols=262144" --convert-rowred-to-gpu | FileCheck %s --check-prefix=OFF
// RUN: softmax-opt %S/Inputs/layer-norm.mlir --rowred-decompose --rowred-plan="cols=4096" --convert-rowred-to-gpu | FileCheck %s --check-prefix=FUSED
// RUN: softmax-opt %S/Inputs/dynamic.mlir --rowred-decompose --rowred-plan="cols=2048" --convert-rowred-to-gpu | FileCheck %s --check-prefix=OFF
// RUN: softmax-opt %S/Inputs/bf16.mlir --rowred-decompose --rowred-plan="cols=4096" --convert-rowred-to-gpu | FileCheck %s --check-prefix=OFF
// RUN: softmax-opt %S/Inputs/bf16.mlir --rowred-decompose --rowred-plan="cols=8192" --convert-rowred-to-gpu | FileCheck %s --check-prefix=ON
// RUN: softmax-opt %S/Inputs/dynamic.mlir --rowred-decompose --rowred-plan="cols=4096 chip=sm_80" --convert-rowred-to-gpu | FileCheck %s --check-prefix=OFF
// RUN: softmax-opt %S/Inputs/dynamic.mlir --test-rowred-plan-request="fields='cache_hints = true'" --rowred-decompose --rowred-plan="cols=1024" --convert-rowred-to-gpu | FileCheck %s --check-prefix=ON
// RUN: not softmax-opt %S/Inputs/dynamic.mlir --test-rowred-plan-request="fields='cache_hints = true'" --rowred-decompose --rowred-plan="cols=32768 strategy=cluster" --convert-rowred-to-gpu 2>&1 | FileCheck %s --check-prefix=CLUSTER
// RUN: not softmax-opt %S/Inputs/dynamic.mlir --test-rowred-plan-request="fields='cache_hints = true, prefetch = stage'" --rowred-decompose --rowred-plan="cols=16384 strategy=fused" --convert-rowred-to-gpu 2>&1 | FileCheck %s --check-prefix=PREFETCH
// RUN: softmax-opt %S/Inputs/dynamic.mlir --test-rowred-plan-request="fields='prefetch = stage'" --rowred-decompose --rowred-plan="cols=16384 strategy=fused" --convert-rowred-to-gpu | FileCheck %s --check-prefix=OFF
// RUN: softmax-opt %S/Inputs/dynamic.mlir --test-rowred-plan-request="fields='prefetch = registers'" --rowred-decompose --rowred-plan="cols=8192 strategy=fused" --convert-rowred-to-gpu | FileCheck %s --check-prefix=OFF
// RUN: not softmax-opt %S/Inputs/dynamic.mlir --test-rowred-plan-request="fields='cache_hints = true, prefetch = registers'" --rowred-decompose --rowred-plan="cols=8192 strategy=fused" --convert-rowred-to-gpu 2>&1 | FileCheck %s --check-prefix=PREFETCH
// RUN: softmax-opt %S/Inputs/bf16.mlir --test-rowred-plan-request="fields='cache_hints = true'" --rowred-decompose --rowred-plan="cols=4096 chip=sm_80" | FileCheck %s --check-prefix=NOAHEAD
// RUN: softmax-opt %S/Inputs/dynamic.mlir --rowred-decompose --rowred-plan="cols=4095" --convert-rowred-to-gpu | FileCheck %s --check-prefix=PEELED
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

// A fused block of one row of 16 KiB and more (f32 from 4096, 16-bit from
// 8192, on sm_90 and newer, in kernels that write rows: PlanTable.json's
// cache_hints, cache-hints-writes-rows.mlir) loads its row evict-last, its
// one policy; the map's loads of the weight and bias and its stores keep
// L2's default. Not for rows of 2048 f32 or 4096 bf16, nor on sm_80; asked
// for, on any fused block that loads its own row.
// FUSED: l2_hints = true
// FUSED-SAME: plan = "#rowred.plan<strategy = fused, block = 4096, {{.*}}cache_hints = true
// FUSED: gpu.func @layer_norm_kernel0
// FUSED: %[[LAST:.*]] = nvvm.inline_ptx "createpolicy.fractional.L2::evict_last.b64 $0, 1.0;" -> i64
// FUSED-NOT: evict_first
// FUSED: scf.for
// FUSED-COUNT-4: nvvm.inline_ptx "ld.global.L2::cache_hint.v4.b32 {$0, $1, $2, $3}, [$4], $5;" ro(%{{.*}}, %[[LAST]] : !llvm.ptr<1>, i64)
// FUSED-NOT: cache_hint
// FUSED: gpu.barrier
// FUSED-NOT: cache_hint
// FUSED: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xf32>
// FUSED-NOT: cache_hint
// FUSED: llvm.store %{{.*}}, %{{.*}} {alignment = 16 : i64} : vector<4xf32>, !llvm.ptr<1>
// FUSED-NOT: cache_hint
// FUSED: gpu.return

// CLUSTER: error: 'rowred.map' op cache_hints applies to the fused and online strategies only

// A fused block that fetches its next row ahead (prefetch) keeps L2's
// default, and refuses the hints asked for.
// PREFETCH: error: 'rowred.map' op cache_hints hints a fused block's loads of its own row: not with prefetch, which loads the next row; ask for prefetch = none
// Asked for without prefetch, auto fetches nothing ahead (bf16 4096 on sm_80
// would take its next row in registers).
// Rows off the vector width (4095 in a block of 4096) take the peeled path,
// whose row loads are evict-last too: the vector path's row loop, then the
// peeled path's, each with its eight loads.
// PEELED: l2_hints = true
// PEELED: scf.for
// PEELED-COUNT-8: nvvm.inline_ptx "ld.global.L2::cache_hint.v4.b32 {$0, $1, $2, $3}, [$4], $5;"
// PEELED: } else {
// PEELED: scf.for
// PEELED-COUNT-8: nvvm.inline_ptx "ld.global.L2::cache_hint.v4.b32 {$0, $1, $2, $3}, [$4], $5;"
// PEELED-NOT: cache_hint

// NOAHEAD: rowred.plan = #rowred.plan<strategy = fused, chip = "sm_80", block = 4096, warps = 4, vector = 8, max_cols = 4096, stage_elements = 4096, cache_hints = true>

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
