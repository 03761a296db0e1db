// A fused block of several operands loads the next row of each input its
// reductions read into registers (prefetch = registers): auto where the
// table's prefetch rows name the operands it holds (rms_norm_backward holds
// x, dy and the weight: 16-bit blocks of 2048-6144 on at most 256 threads),
// or where asked. The stage holds one input's row, and clusters load none
// ahead: both are refused for several operands.

// RUN: softmax-opt %s --rowred-decompose --rowred-plan="cols=2048 chip=sm_90" --convert-rowred-to-gpu | FileCheck %s
// RUN: softmax-opt %s --rowred-decompose --rowred-plan="cols=5120 chip=sm_90" | FileCheck %s --check-prefix=B6K
// RUN: softmax-opt %s --rowred-decompose --rowred-plan="cols=8192 chip=sm_90" | FileCheck %s --check-prefix=NONE
// RUN: sed 's/bf16/f32/g' %s | softmax-opt --rowred-decompose --rowred-plan="cols=4096 chip=sm_90" | FileCheck %s --check-prefix=NONE
// RUN: softmax-opt %s --test-rowred-plan-request="fields='prefetch = registers'" --rowred-decompose --rowred-plan="cols=8192 chip=sm_90" | FileCheck %s --check-prefix=ASKED
// RUN: not softmax-opt %s --test-rowred-plan-request="fields='prefetch = stage'" --rowred-decompose --rowred-plan="cols=4096 chip=sm_90" 2>&1 | FileCheck %s --check-prefix=STAGE
// RUN: not softmax-opt %s --test-rowred-plan-request="fields='strategy = cluster, cluster = 2, prefetch = registers'" --rowred-decompose --rowred-plan="cols=8192 chip=sm_90" 2>&1 | FileCheck %s --check-prefix=STAGE

// Before the row loop, the block's first row of x, then of dy (4 chunks of
// 8 each on 64 threads); the loop carries all eight.
// CHECK: plan = "#rowred.plan<strategy = fused, block = 2048, warps = 2, vector = 8, prefetch = registers,
// CHECK: gpu.func @rms_norm_backward_kernel0
// CHECK-COUNT-8: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<1> -> vector<8xbf16>
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args({{.*}}) -> (vector<8xbf16>, vector<8xbf16>, vector<8xbf16>, vector<8xbf16>, vector<8xbf16>, vector<8xbf16>, vector<8xbf16>, vector<8xbf16>)
// First in the row, the next row's x (%arg0) and dy (%arg1), masked past
// the last row; then the weight of this row's columns, which a reduction
// reads, and the reduction.
// CHECK: %[[X:.*]] = llvm.getelementptr %arg0[%{{.*}}] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, bf16
// CHECK-COUNT-4: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<1> -> vector<8xbf16>
// CHECK: %[[DY:.*]] = llvm.getelementptr %arg1[%{{.*}}] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, bf16
// CHECK-COUNT-4: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<1> -> vector<8xbf16>
// CHECK-NOT: gpu.shuffle
// CHECK: llvm.getelementptr inbounds %arg3[%{{.*}}] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, bf16
// CHECK: gpu.shuffle xor
// CHECK: scf.yield %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : vector<8xbf16>, vector<8xbf16>, vector<8xbf16>, vector<8xbf16>, vector<8xbf16>, vector<8xbf16>, vector<8xbf16>, vector<8xbf16>

// B6K: rowred.plan = #rowred.plan<strategy = fused, block = 6144, warps = 6, vector = 8, {{.*}}prefetch = registers,

// Blocks of 8192 (a second set of registers would cost resident blocks)
// and f32 rows load none ahead.
// NONE: rowred.plan = #rowred.plan<strategy = fused,
// NONE-NOT: prefetch

// ASKED: rowred.plan = #rowred.plan<strategy = fused, block = 8192, {{.*}}prefetch = registers

// STAGE: prefetch = {{stage|registers}} fetches the next row of one input; of a kernel of several operands only a fused block loads its inputs' next rows, into registers (prefetch = registers or none)

func.func @rms_norm_backward(%x: memref<?x?xbf16>, %dy: memref<?x?xbf16>,
                             %r: memref<?xf32>, %w: memref<?xbf16>,
                             %dx: memref<?x?xbf16>, %dw: memref<?xbf16>) {
  rowred.rms_norm_backward ins(%x, %dy : memref<?x?xbf16>, memref<?x?xbf16>) rstd(%r : memref<?xf32>) weight(%w : memref<?xbf16>) outs(%dx : memref<?x?xbf16>) weight_grad(%dw : memref<?xbf16>)
  return
}
