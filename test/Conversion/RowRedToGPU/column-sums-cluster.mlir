// Sums down the columns over a cluster of slices (rms_norm_backward's
// residual form at 16384 on a cluster of 4 blocks of 4096): each block adds
// its slice of every row into accumulators of its slice's columns (the
// column less the slice's start), writes them into its cluster's partial
// row (the cluster's id among the grid's clusters) from the slice's first
// column, and after the grid barrier the grid's blocks share the final sums
// over one partial row per cluster. The host launch takes one cluster.
// Another grid or several rows per cluster are refused.

// RUN: softmax-opt %s --test-rowred-plan-request="fields='strategy = cluster, cluster = 4, warps = 8'" --rowred-decompose --rowred-plan="cols=16384 chip=sm_90" | FileCheck %s --check-prefix=PLAN
// RUN: softmax-opt %s --test-rowred-plan-request="fields='strategy = cluster, cluster = 4, warps = 8'" --rowred-decompose --rowred-plan="cols=16384 chip=sm_90" --convert-rowred-to-gpu | FileCheck %s --check-prefix=GPU
// RUN: rm -rf %t && softmax-opt %s --test-rowred-plan-request="fields='strategy = cluster, cluster = 2'" --rowred-to-ptx="cols=16384 chip=sm_90 output-dir=%t" -o /dev/null
// RUN: FileCheck %s --check-prefix=JSON --input-file=%t/rms_norm_residual_backward_kernel0.json
// RUN: not softmax-opt %s --test-rowred-plan-request="fields='strategy = cluster, cluster = 4, grid = rows'" --rowred-decompose --rowred-plan="cols=16384 chip=sm_90" 2>&1 | FileCheck %s --check-prefix=GRID

// PLAN: column_sums(%{{.*}} : memref<?xf32>)
// PLAN: rowred.plan = #rowred.plan<strategy = cluster, block = 4096, warps = 8, cluster = 4,

// GPU: gpu.launch_func @rms_norm_residual_backward_kernel0::@rms_norm_residual_backward_kernel0 clusters in (%[[FOUR:.*]], %[[ONE:.*]], %[[ONE]]) blocks in (%[[FOUR]], %[[ONE]], %[[ONE]]) threads in (%c256,
// GPU: gpu.func @rms_norm_residual_backward_kernel0(
// GPU-SAME: %[[WS:[a-z0-9]+]]: !llvm.ptr<1>) workgroup
// GPU-SAME: nvvm.cluster_dim = array<i32: 4, 1, 1>
// The slice's first column.
// GPU: %[[RANK:.*]] = gpu.cluster_block_id x
// GPU: %[[RANK32:.*]] = arith.index_cast %[[RANK]] : index to i32
// GPU: %[[START:.*]] = arith.muli %[[RANK32]], %c4096_i32
// The cluster's partial row: its id among the clusters.
// GPU: %[[CID:.*]] = gpu.cluster_id x
// GPU: %[[PARTIAL:.*]] = arith.index_cast %[[CID]] : index to i32
// GPU: %[[CDIM:.*]] = gpu.cluster_dim x
// GPU: %[[PARTIALS:.*]] = arith.index_cast %[[CDIM]] : index to i32
// Each element's gradient into the accumulator of its column in the slice.
// GPU: %[[LOCAL:.*]] = arith.subi %{{.*}}, %[[START]] : i32
// GPU-NEXT: arith.constant 0 : i32
// GPU-NEXT: %[[INDEX:.*]] = arith.addi %[[LOCAL]], %{{.*}} : i32
// GPU-NEXT: %[[ACC:.*]] = llvm.getelementptr inbounds %{{.*}}[%[[INDEX]]] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, f32
// GPU-NEXT: llvm.load %[[ACC]]
// GPU-NEXT: arith.addf
// GPU-NEXT: llvm.store %{{.*}}, %[[ACC]]
// The slice into the cluster's row, from its first column.
// GPU: arith.addi %{{.*}}, %[[PARTIAL]] : i32
// GPU: %[[ROW:.*]] = llvm.getelementptr inbounds %[[WS]]
// GPU: llvm.getelementptr inbounds %[[ROW]][%[[START]]]
// GPU: llvm.atomicrmw add %[[WS]]
// The final sums over one partial row per cluster, shared out over the grid.
// GPU: gpu.grid_dim x
// GPU: gpu.block_id x
// GPU: arith.ceildivui %[[PARTIALS]], %c8_i32

// JSON: "cluster_blocks": 2,
// JSON: "grid": "persistent",
// JSON: "role": "column_sum",
// JSON: "strategy": "cluster",

// GRID: error: 'rowred.map' op sums down the columns, which needs one row per block (or cluster) and the persistent grid

func.func @rms_norm_residual_backward(
    %h: memref<?x?xf32>, %dy: memref<?x?xf32>, %dh: memref<?x?xf32>,
    %r: memref<?xf32>, %w: memref<?xf32>, %dx: memref<?x?xf32>,
    %dw: memref<?xf32>) {
  rowred.rms_norm_backward ins(%h, %dy : memref<?x?xf32>, memref<?x?xf32>) rstd(%r : memref<?xf32>) weight(%w : memref<?xf32>) grad_residual(%dh : memref<?x?xf32>) outs(%dx : memref<?x?xf32>) weight_grad(%dw : memref<?xf32>)
  return
}
