// layer_norm_backward (x, dy and the weight held through two reduces; dw
// and db summed down the columns) by the plan table's row_lengths for
// kernels with column sums: rows of 12289-16384 over a cluster of 8 slices
// on 4 warps in either type, each thread's dw and db of its 16 columns in
// registers the row loop carries (sums_in_registers: stored into the
// shared accumulators after its last row, not added there per element),
// f32 rows of 8193-12288 over a cluster of 2 on 16 warps; bf16 rows of
// 12288 (two reduces) keep their block, and rows of 8192 their fused
// block, both adding into the shared accumulators. A request for the
// registers is refused where nothing sums down the columns.

// RUN: softmax-opt %s --rowred-decompose --rowred-plan="cols=16384 chip=sm_90" | FileCheck %s --check-prefix=C8
// RUN: sed 's/bf16/f32/g' %s | softmax-opt --rowred-decompose --rowred-plan="cols=16384 chip=sm_90" | FileCheck %s --check-prefix=C8
// RUN: sed 's/bf16/f32/g' %s | softmax-opt --rowred-decompose --rowred-plan="cols=12288 chip=sm_90" | FileCheck %s --check-prefix=C2
// RUN: softmax-opt %s --rowred-decompose --rowred-plan="cols=12288 chip=sm_90" | FileCheck %s --check-prefix=B12K
// RUN: sed 's/bf16/f32/g' %s | softmax-opt --rowred-decompose --rowred-plan="cols=8192 chip=sm_90" | FileCheck %s --check-prefix=F8K
// RUN: softmax-opt %s --rowred-decompose --rowred-plan="cols=16384 chip=sm_90" --convert-rowred-to-gpu | FileCheck %s --check-prefix=REGS
// RUN: not softmax-opt %s --test-rowred-plan-request="fields='sums_in_registers = true'" --rowred-decompose --rowred-plan="cols=4096 chip=sm_90" 2>&1 | FileCheck %s --check-prefix=NOSUMS

// C8: column_sums(%{{.*}}, %{{.*}} :
// C8: rowred.plan = #rowred.plan<strategy = cluster, block = 2048, warps = 4, cluster = 8, {{.*}}sums_in_registers = true>
// C2: rowred.plan = #rowred.plan<strategy = cluster, block = 6144, warps = 16, cluster = 2,
// C2-NOT: sums_in_registers
// B12K: rowred.plan = #rowred.plan<strategy = fused, block = 12288,
// B12K-NOT: sums_in_registers
// F8K: rowred.plan = #rowred.plan<strategy = fused, block = 8192,
// F8K-NOT: sums_in_registers

// The vector path's row loop carries the row count and 2 x 16 sums (two
// vectors of 8 columns a thread), zero at first; after it, each sum is
// stored into its column's accumulator (the column less the slice's start).
// REGS-LABEL: gpu.func @layer_norm_backward_kernel1
// REGS: %[[LOOP:.*]]:33 = scf.for {{.*}} iter_args(%{{.*}} = %c0_i32{{.*}}, %{{.*}} = %[[ZERO:cst[_0-9]*]], %{{.*}} = %[[ZERO]],
// REGS: scf.yield %{{.*}} : i32, f32, f32,
// REGS: scf.if
// REGS-NEXT: arith.subi
// REGS: %[[ACC:.*]] = llvm.getelementptr inbounds %{{.*}}[%{{.*}}] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, f32
// REGS-NEXT: llvm.store %[[LOOP]]#1, %[[ACC]] {alignment = 4 : i64} : f32, !llvm.ptr<3>

// NOSUMS: error: 'rowred.map' op sums_in_registers applies to kernels that sum down the columns only

func.func @softmax(%x: memref<?x?xf32>, %y: memref<?x?xf32>, %m: memref<?xf32>) {
  rowred.map ins(%x : memref<?x?xf32>) outs(%y : memref<?x?xf32>) {
  ^bb0(%xj: f32):
    rowred.yield %xj : f32
  }
  return
}

func.func @layer_norm_backward(%x: memref<?x?xbf16>, %dy: memref<?x?xbf16>,
                               %m: memref<?xf32>, %r: memref<?xf32>,
                               %w: memref<?xbf16>, %dx: memref<?x?xbf16>,
                               %dw: memref<?xbf16>, %db: memref<?xbf16>) {
  rowred.layer_norm_backward ins(%x, %dy : memref<?x?xbf16>, memref<?x?xbf16>) mean(%m : memref<?xf32>) rstd(%r : memref<?xf32>) weight(%w : memref<?xbf16>) outs(%dx : memref<?x?xbf16>) weight_grad(%dw : memref<?xbf16>) bias_grad(%db : memref<?xbf16>)
  return
}
