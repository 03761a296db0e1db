// rowred-fit-registers plans, lowers and assembles every kernel with ptxas,
// and changes the plan of a kernel that spills. On sm_90, auto's plan for
// the safe log-softmax's f32 rows of 16384 (a block of 512 threads, 32
// elements each) asked without its L2 hints (with them ptxas fits it) spills
// 4 bytes at ptxas' own choice of 64 registers, and none asked for two
// blocks per SM (the same 64 registers); the smoothed
// cross-entropy gradient's f32 rows of 32001 (a block of 1024 threads,
// held at 64 registers) spill 96 bytes at any bound and fit as chunks (the
// first smaller shape tried; its reduces meet in two exchanges, the max and
// then the sums of the exponentials and of the row). Softmax's kernel
// between them does not spill and keeps auto's plan.
// The kernels are matched to their maps across functions.
// REQUIRES: ptxas
// RUN: softmax-opt %s --rowred-decompose --rowred-fit-registers="ptxas=%ptxas" | FileCheck %s
// RUN: softmax-opt %s --rowred-to-ptx="ptxas=%ptxas output-dir=%t" -o /dev/null
// RUN: for f in %t/*.ptx; do %ptxas -arch=sm_90 -v $f -o /dev/null 2>&1 | grep -o "[0-9]* bytes spill stores"; done | FileCheck %s --check-prefix=PTXAS
// Without the check, the pipeline keeps auto's plans (and their spills).
// RUN: softmax-opt %s --rowred-to-ptx="ptxas=none" | FileCheck %s --check-prefix=NONE

// CHECK: module attributes {gpu.container_module, rowred.kernels = {
// CHECK-SAME: lsm_kernel0 = {
// CHECK-SAME: plan = "#rowred.plan<strategy = fused, block = 16384, warps = 16, {{.*}}min_blocks_per_sm = 2>"
// CHECK-SAME: sm_kernel1 = {
// CHECK-SAME: plan = "#rowred.plan<strategy = fused, block = 16384, warps = 16, vector = 4, reread = true, max_cols = 16384, stage_elements = 16384, cache_hints = true, grid = rows>"
// CHECK-SAME: xent_kernel2 = {
// CHECK-SAME: plan = "#rowred.plan<strategy = chunks, block = 4096, warps = 4, vector = 4, chunk_stage = 8192, min_blocks_per_sm = 6>"
// CHECK: gpu.binary @lsm_kernel0
// CHECK: gpu.binary @sm_kernel1
// CHECK: gpu.binary @xent_kernel2

// PTXAS-COUNT-3: 0 bytes spill stores
// PTXAS-NOT: bytes spill stores

// NONE: lsm_kernel0 = {
// NONE-SAME: plan = "#rowred.plan<strategy = fused, block = 16384, warps = 16, vector = 4, reread = true, max_cols = 16384, stage_elements = 16384, grid = rows>"
// NONE-SAME: xent_kernel2 = {
// NONE-SAME: plan = "#rowred.plan<strategy = fused, block = 32768, warps = 32,

func.func @lsm(%x: memref<?x16384xf32>, %y: memref<?x16384xf32>) {
  rowred.log_softmax dimension(1) safe ins(%x : memref<?x16384xf32>) outs(%y : memref<?x16384xf32>) {rowred.plan_request = #rowred.plan_request<cache_hints = false>}
  return
}

func.func @sm(%x: memref<?x16384xf32>, %y: memref<?x16384xf32>) {
  rowred.softmax dimension(1) ins(%x : memref<?x16384xf32>) outs(%y : memref<?x16384xf32>)
  return
}

func.func @xent(%x: memref<?x32001xf32>, %l: memref<?xi64>, %g: memref<?xf32>, %dx: memref<?x32001xf32>, %loss: memref<?xf32>, %lse: memref<?xf32>) {
  rowred.cross_entropy ignore_index(-100) label_smoothing(0.1) ins(%x : memref<?x32001xf32>) labels(%l : memref<?xi64>) grad_scale(%g : memref<?xf32>) outs(%loss : memref<?xf32>) lse(%lse : memref<?xf32>) grad(%dx : memref<?x32001xf32>)
  return
}
