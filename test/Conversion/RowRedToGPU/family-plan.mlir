// The plans rowred-plan chooses for ops of several operands (inputs and
// per-column operands), whose kernels hold every operand's elements of a
// row in registers: fused while a block of up to 1024 threads holds them,
// then rows split over clusters that grow until each block's slice fits;
// longer rows, rows of unknown length and long rows on chips without
// clusters are streamed by the online kernel, once per reduce and once for
// the map (reread).

// RUN: softmax-opt %s --rowred-decompose --rowred-plan="cols=2048 chip=sm_90" | FileCheck %s --check-prefix=N2048
// RUN: softmax-opt %s --rowred-decompose --rowred-plan="cols=4096 chip=sm_90" | FileCheck %s --check-prefix=N4096
// RUN: softmax-opt %s --rowred-decompose --rowred-plan="cols=8192 chip=sm_90" | FileCheck %s --check-prefix=N8192
// RUN: sed 's/bf16/f16/g' %s | softmax-opt --rowred-decompose --rowred-plan="cols=2048 chip=sm_90" | FileCheck %s --check-prefix=F16-N2048
// RUN: sed 's/bf16/f16/g' %s | softmax-opt --rowred-decompose --rowred-plan="cols=4096 chip=sm_90" | FileCheck %s --check-prefix=F16-N4096
// RUN: softmax-opt %s --rowred-decompose --rowred-plan="cols=6144 chip=sm_90" | FileCheck %s --check-prefix=N6144
// RUN: softmax-opt %s --rowred-decompose --rowred-plan="cols=5120 chip=sm_90" | FileCheck %s --check-prefix=N6144
// RUN: softmax-opt %s --rowred-decompose --rowred-plan="cols=12288 chip=sm_90" | FileCheck %s --check-prefix=N12288
// RUN: softmax-opt %s --rowred-decompose --rowred-plan="cols=16384 chip=sm_90" | FileCheck %s --check-prefix=N16384
// RUN: softmax-opt %s --rowred-decompose --rowred-plan="cols=10000 chip=sm_90" | FileCheck %s --check-prefix=N10000
// RUN: softmax-opt %s --rowred-decompose --rowred-plan="cols=20480 chip=sm_90" | FileCheck %s --check-prefix=N20480
// RUN: softmax-opt %s --rowred-decompose --rowred-plan="cols=16383 chip=sm_90" | FileCheck %s --check-prefix=N16383
// RUN: softmax-opt %s --rowred-decompose --rowred-plan="cols=32768 chip=sm_90" | FileCheck %s --check-prefix=N32768
// RUN: softmax-opt %s --rowred-decompose --rowred-plan="cols=131072 chip=sm_90" | FileCheck %s --check-prefix=N131072
// RUN: softmax-opt %s --rowred-decompose --rowred-plan="cols=262144 chip=sm_90" | FileCheck %s --check-prefix=N262144
// RUN: not softmax-opt %s --rowred-decompose --rowred-plan="cols=32768 chip=sm_90 strategy=fused" 2>&1 | FileCheck %s --check-prefix=FUSED
// RUN: softmax-opt %s --rowred-decompose --rowred-plan="cols=0 chip=sm_90" | FileCheck %s --check-prefix=UNKNOWN
// RUN: softmax-opt %s --rowred-decompose --rowred-plan="cols=32768 chip=sm_80" | FileCheck %s --check-prefix=SM80
// RUN: softmax-opt %s --rowred-decompose --rowred-plan="cols=1048576 chip=sm_90" | FileCheck %s --check-prefix=N1048576
// RUN: rm -rf %t && softmax-opt %s --rowred-to-ptx="cols=4096 chip=sm_90 output-dir=%t" -o /dev/null
// RUN: FileCheck %s --check-prefix=JSON --input-file=%t/rms_norm_kernel0.json

// The metadata names the op, its epsilon (as the kernel's f32) and the
// operands in parameter order.
// JSON: "epsilon": 9.9999997473787516e-06,
// JSON: "op": "rms_norm",
// JSON: "operands": [
// JSON: "name": "x",
// JSON-NEXT: "role": "input",
// JSON-NEXT: "type": "f32"
// JSON: "name": "y",
// JSON-NEXT: "role": "output",
// JSON: "name": "w",
// JSON-NEXT: "role": "column",
// JSON: "name": "x_row_stride",

// f32 blocks of two operands hold 16 elements per thread (2048 to 8192).
// Blocks of one row of 16 KiB and more (f32 from 4096, bf16 from 8192) load
// it evict-last (PlanTable.json's cache_hints).
// N4096-LABEL: func.func @rms_norm
// N4096: rowred.plan = #rowred.plan<strategy = fused, block = 4096, warps = 8, vector = 4, max_cols = 4096, stage_elements = 4096, cache_hints = true, grid = rows>
// N4096-LABEL: func.func @layer_norm
// N4096: rowred.plan = #rowred.plan<strategy = fused, block = 4096, warps = 4, vector = 8, max_cols = 4096, stage_elements = 4096, grid = rows>

// Fewer threads until two blocks fit an SM, counting the operands a thread
// holds through its reductions: the bf16 layer norm holds only x (the map
// loads its weight and bias), 256 threads of 32 elements (about 72
// registers) leave room for three blocks and stay.
// N8192-LABEL: func.func @rms_norm
// N8192: rowred.plan = #rowred.plan<strategy = fused, block = 8192, warps = 16, vector = 4, reread = true,
// N8192-LABEL: func.func @layer_norm
// N8192: rowred.plan = #rowred.plan<strategy = fused, block = 8192, warps = 8, vector = 8, reread = true,

// Blocks of 6144 (rows of 4097 to 6144) of several operands re-read the row
// on the scalar path rather than hold it, which leaves the vector path its
// registers; the 16-bit layer_norm takes 192 threads of 32 (the table's
// operand_shapes), the others keep 384 of 16.
// N6144-LABEL: func.func @rms_norm
// N6144: rowred.plan = #rowred.plan<strategy = fused, block = 6144, warps = 12, vector = 4, reread = true,
// N6144-LABEL: func.func @layer_norm
// N6144: rowred.plan = #rowred.plan<strategy = fused, block = 6144, warps = 6, vector = 8, reread = true,
// N6144-LABEL: func.func @softmax_backward
// N6144: rowred.plan = #rowred.plan<strategy = fused, block = 6144, warps = 12, vector = 4, reread = true,

// At 12288 the f32 rms_norm takes 768 threads of 16, asking ptxas for two
// blocks per SM, and the bf16 layer_norm keeps 384 of 32 (x alone held,
// about 72 registers: two blocks); the f32 backward's two held inputs take
// 1024 threads of 12 (the table's operand_shapes). The 16-bit backwards
// stage their share of y and dy whole for streamed passes on 512 threads
// (row_lengths' staged streamed rows: prefetch = stage with reread).
// N12288-LABEL: func.func @rms_norm
// N12288: rowred.plan = #rowred.plan<strategy = fused, block = 12288, warps = 24, vector = 4, reread = true, max_cols = 12288, stage_elements = 12288, cache_hints = true, grid = rows, min_blocks_per_sm = 2>
// N12288-LABEL: func.func @layer_norm
// N12288: rowred.plan = #rowred.plan<strategy = fused, block = 12288, warps = 12, vector = 8, reread = true,
// The bf16 layer_norm's rows that a fused block (10000 in 12288) or a
// cluster (20480 in two blocks of 12288) would pad by a sixth or more are
// staged streamed rows on 256 threads (the table's row_lengths name their
// warps).
// N10000-LABEL: func.func @layer_norm
// N10000: rowred.plan = #rowred.plan<strategy = online, block = 2048, warps = 8, vector = 8, reread = true, prefetch = stage, max_cols = 10240, stage_elements = 10240, grid = rows>
// N20480-LABEL: func.func @layer_norm
// N20480: rowred.plan = #rowred.plan<strategy = online, block = 2048, warps = 8, vector = 8, reread = true, prefetch = stage, max_cols = 20480, stage_elements = 20480, grid = rows>
// N12288-LABEL: func.func @softmax_backward
// N12288: rowred.plan = #rowred.plan<strategy = fused, block = 12288, warps = 32, vector = 4, reread = true,
// N12288-LABEL: func.func @log_softmax_backward_bf16
// N12288: rowred.plan = #rowred.plan<strategy = online, block = 4096, warps = 16, vector = 8, reread = true, prefetch = stage, max_cols = 12288, stage_elements = 12288, grid = rows>
// N12288-LABEL: func.func @softmax_backward_f16
// N12288: rowred.plan = #rowred.plan<strategy = online, block = 4096, warps = 16, vector = 8, reread = true, prefetch = stage, max_cols = 12288, stage_elements = 12288, grid = rows>

// Rows of 16384 (and odd ones up to it): the f32 backward, holding two
// inputs, goes to a cluster of 2 slices (the table's row_lengths, by the
// number of operands held). Rows of 16384 of the f32 rms_norm and the
// 16-bit backwards are staged streamed rows; the odd ones, which the
// staged rows do not take, keep a block: rms_norm's of 512 threads of 32
// (operand_shapes).
// N16384-LABEL: func.func @rms_norm
// N16384: rowred.plan = #rowred.plan<strategy = online, block = 4096, warps = 16, vector = 4, reread = true, prefetch = stage, max_cols = 16384, stage_elements = 16384, grid = rows>
// N16384-LABEL: func.func @softmax_backward
// N16384: rowred.plan = #rowred.plan<strategy = cluster, block = 8192, warps = 16, cluster = 2, vector = 4, reread = true, max_cols = 16384, stage_elements = 8192>
// N16384-LABEL: func.func @log_softmax_backward_bf16
// N16384: rowred.plan = #rowred.plan<strategy = online, block = 4096, warps = 16, vector = 8, reread = true, prefetch = stage, max_cols = 16384, stage_elements = 16384, grid = rows>
// N16383-LABEL: func.func @rms_norm
// N16383: rowred.plan = #rowred.plan<strategy = fused, block = 16384, warps = 16,
// N16383-LABEL: func.func @softmax_backward
// N16383: rowred.plan = #rowred.plan<strategy = cluster, block = 8192, warps = 16, cluster = 2, vector = 4, reread = true, max_cols = 16384, stage_elements = 8192>
// N16383-LABEL: func.func @log_softmax_backward_bf16
// N16383: rowred.plan = #rowred.plan<strategy = fused, block = 16384, warps = 16, vector = 8, reread = true,

// 32768 x 2 f32 operands need 64 K registers: two blocks of 16384. The
// bf16 layer norm is a staged streamed row (its three operands would need
// a cluster of four blocks of 8192).
// N32768-LABEL: func.func @rms_norm
// N32768: rowred.plan = #rowred.plan<strategy = cluster, block = 16384, warps = 16, cluster = 2, vector = 4, reread = true, max_cols = 32768, stage_elements = 16384>
// N32768-LABEL: func.func @layer_norm
// N32768: rowred.plan = #rowred.plan<strategy = online, block = 4096, warps = 16, vector = 8, reread = true, prefetch = stage, max_cols = 32768, stage_elements = 32768, grid = rows>

// f32 rms_norm, which holds x alone, over clusters of 4 and more: slices of
// 8 elements per thread on 1024 threads (the table's operand_shapes).
// N131072-LABEL: func.func @rms_norm
// N131072: rowred.plan = #rowred.plan<strategy = cluster, block = 8192, warps = 32, cluster = 16, vector = 4, reread = true, max_cols = 131072, stage_elements = 8192>
// bf16 layer_norm (x held; its weight and bias the map reads): slices of 32
// elements per thread on 256 threads (the table's operand_shapes; on 1024
// threads of 8 it ran at a third of the copy).
// N131072-LABEL: func.func @layer_norm
// N131072: rowred.plan = #rowred.plan<strategy = cluster, block = 8192, warps = 8, cluster = 16, vector = 8, reread = true, max_cols = 131072, stage_elements = 8192>

// rms_norm's residual form: two inputs and two outputs of bf16, as the bf16
// layer norm's three operands (in place: each element is read by the thread
// that writes it, and before it writes it), on 16 elements per thread
// (PlanTable.json's operand_shapes: on 32, ptxas spills 4 bytes); f16
// alike, faster there though it does not spill on 32.
// F16-N2048-LABEL: func.func @rms_norm_residual
// F16-N2048: rowred.plan = #rowred.plan<strategy = fused, block = 2048, warps = 4, vector = 8,
// F16-N4096-LABEL: func.func @rms_norm_residual
// F16-N4096: rowred.plan = #rowred.plan<strategy = fused, block = 4096, warps = 8, vector = 8,
// N4096-LABEL: func.func @rms_norm_residual
// N4096: rowred.plan = #rowred.plan<strategy = fused, block = 4096, warps = 8, vector = 8, max_cols = 4096, stage_elements = 4096, grid = rows>
// N32768-LABEL: func.func @rms_norm_residual
// N32768: rowred.plan = #rowred.plan<strategy = cluster, block = 8192, warps = 16, cluster = 4, vector = 8, reread = true, max_cols = 32768, stage_elements = 8192>

// The backward's two held inputs: slices of 16 elements per thread on 512
// threads (the table's operand_shapes), not the norm's 32.
// N32768-LABEL: func.func @softmax_backward
// N32768: rowred.plan = #rowred.plan<strategy = cluster, block = 8192, warps = 16, cluster = 4, vector = 4, reread = true, max_cols = 32768, stage_elements = 8192>
// N131072-LABEL: func.func @softmax_backward
// N131072: rowred.plan = #rowred.plan<strategy = cluster, block = 8192, warps = 16, cluster = 16, vector = 4, reread = true, max_cols = 131072, stage_elements = 8192>
// f32 rms_norm's rows of 262144 are cut into chunks, but for launches of
// at most 8 rows (few_rows), which keep 16 blocks of 16384, 32 elements
// per thread: where no cluster reaches those slices, the rows do not apply.
// N262144-LABEL: func.func @rms_norm
// N262144: rowred.few_rows_plan = #rowred.plan<strategy = cluster, block = 16384, warps = 16, cluster = 16, vector = 4, reread = true, max_cols = 262144, stage_elements = 16384, max_rows = 8>
// N262144-SAME: rowred.plan = #rowred.plan<strategy = chunks, block = 4096, warps = 4, vector = 4, chunk_stage = 8192>
// Rows of two held operands from 131073 elements are cut into generic
// chunks (the table's row_lengths): 16 elements of each per thread in
// registers and 32 (f32) or 48 (16-bit) in the stage.
// N262144-LABEL: func.func @rms_norm_residual
// N262144: rowred.plan = #rowred.plan<strategy = chunks, block = 2048, warps = 4, vector = 8, chunk_stage = 6144>
// N262144-LABEL: func.func @softmax_backward
// N262144: rowred.plan = #rowred.plan<strategy = chunks, block = 2048, warps = 4, vector = 4, chunk_stage = 4096>
// N262144-LABEL: func.func @log_softmax_backward_bf16
// N262144: rowred.plan = #rowred.plan<strategy = chunks, block = 2048, warps = 4, vector = 8, chunk_stage = 6144>

// FUSED: error: 'rowred.map' op a fused block of 1024 threads holding 32 elements per thread of each of 2 operands needs about 104 registers per thread and has 64: a kernel of several operands holds whole rows in registers, and rows this long do not fit

// Rows of unknown length: streamed on 512 threads with L2 eviction hints
// (PlanTable.json's streamed_tiles), each thread loading at most 24
// elements of all operands per tile (one vector of each of layer_norm's
// three).
// UNKNOWN-LABEL: func.func @rms_norm
// UNKNOWN: rowred.plan = #rowred.plan<strategy = online, block = 4096, warps = 16, vector = 4, reread = true, cache_hints = true>
// UNKNOWN-LABEL: func.func @layer_norm
// UNKNOWN: rowred.plan = #rowred.plan<strategy = online, block = 4096, warps = 16, vector = 8, reread = true, cache_hints = true>
// UNKNOWN-LABEL: func.func @rms_norm_residual
// UNKNOWN: rowred.plan = #rowred.plan<strategy = online, block = 4096, warps = 16, vector = 8, reread = true, cache_hints = true>

// No clusters before sm_90: rows a block does not hold are streamed; on a
// chip other than sm_90, the kernels of maps other than softmax's ask
// ptxas for one block per SM (chip-plans.mlir).
// SM80-LABEL: func.func @rms_norm
// SM80: rowred.plan = #rowred.plan<strategy = online, chip = "sm_80", block = 4096, warps = 16, vector = 4, reread = true, cache_hints = true, min_blocks_per_sm = 1>

// Rows longer than a cluster holds are cut into chunks: rms_norm's one
// level of reduces, layer_norm's two (two exchanges; its map's loads of the
// weight and bias counted in the blocks per SM asked of ptxas), the
// backward's two held operands.
// N1048576-LABEL: func.func @rms_norm
// N1048576: rowred.plan = #rowred.plan<strategy = chunks, block = 4096, warps = 4, vector = 4, chunk_stage = 8192>
// N1048576-LABEL: func.func @layer_norm
// N1048576: rowred.plan = #rowred.plan<strategy = chunks, block = 4096, warps = 4, vector = 8, chunk_stage = 12288, min_blocks_per_sm = 5>
// N1048576-LABEL: func.func @softmax_backward
// N1048576: rowred.plan = #rowred.plan<strategy = chunks, block = 2048, warps = 4, vector = 4, chunk_stage = 4096>

// The f32 layer_norm holds x alone (its weight and bias the map reads):
// blocks of 2048-4096 on 16 elements per thread and of 8192 on 32 (the
// table's operand_shapes), rather than the 32 and 64 the registers allow;
// 6144 keeps 384 threads of 16.
// N2048-LABEL: func.func @layer_norm_f32
// N2048: rowred.plan = #rowred.plan<strategy = fused, block = 2048, warps = 4, vector = 4,
// N4096-LABEL: func.func @layer_norm_f32
// N4096: rowred.plan = #rowred.plan<strategy = fused, block = 4096, warps = 8, vector = 4,
// N6144-LABEL: func.func @layer_norm_f32
// N6144: rowred.plan = #rowred.plan<strategy = fused, block = 6144, warps = 12, vector = 4,
// N8192-LABEL: func.func @layer_norm_f32
// N8192: rowred.plan = #rowred.plan<strategy = fused, block = 8192, warps = 8, vector = 4, reread = true,

func.func @rms_norm(%x: memref<?x?xf32>, %w: memref<?xf32>, %y: memref<?x?xf32>) {
  rowred.rms_norm epsilon(1.0e-05) ins(%x : memref<?x?xf32>) weight(%w : memref<?xf32>) outs(%y : memref<?x?xf32>)
  return
}

func.func @layer_norm(%x: memref<?x?xbf16>, %w: memref<?xbf16>, %b: memref<?xbf16>, %y: memref<?x?xbf16>) {
  rowred.layer_norm epsilon(1.0e-05) ins(%x : memref<?x?xbf16>) weight(%w : memref<?xbf16>) bias(%b : memref<?xbf16>) outs(%y : memref<?x?xbf16>)
  return
}

func.func @rms_norm_residual(%x: memref<?x?xbf16>, %r: memref<?x?xbf16>, %w: memref<?xbf16>) {
  rowred.rms_norm epsilon(1.0e-06) ins(%x : memref<?x?xbf16>) residual(%r : memref<?x?xbf16>) weight(%w : memref<?xbf16>) outs(%x : memref<?x?xbf16>) residual_out(%r : memref<?x?xbf16>)
  return
}

func.func @softmax_backward(%y: memref<?x?xf32>, %dy: memref<?x?xf32>, %dx: memref<?x?xf32>) {
  rowred.softmax_backward dimension(1) ins(%y, %dy : memref<?x?xf32>, memref<?x?xf32>) outs(%dx : memref<?x?xf32>)
  return
}

func.func @log_softmax_backward_bf16(%y: memref<?x?xbf16>, %dy: memref<?x?xbf16>, %dx: memref<?x?xbf16>) {
  rowred.log_softmax_backward dimension(1) ins(%y, %dy : memref<?x?xbf16>, memref<?x?xbf16>) outs(%dx : memref<?x?xbf16>)
  return
}

func.func @softmax_backward_f16(%y: memref<?x?xf16>, %dy: memref<?x?xf16>, %dx: memref<?x?xf16>) {
  rowred.softmax_backward dimension(1) ins(%y, %dy : memref<?x?xf16>, memref<?x?xf16>) outs(%dx : memref<?x?xf16>)
  return
}

func.func @layer_norm_f32(%x: memref<?x?xf32>, %w: memref<?xf32>, %b: memref<?xf32>, %y: memref<?x?xf32>) {
  rowred.layer_norm epsilon(1.0e-05) ins(%x : memref<?x?xf32>) weight(%w : memref<?xf32>) bias(%b : memref<?xf32>) outs(%y : memref<?x?xf32>)
  return
}
