// RUN: softmax-opt %s -split-input-file -verify-diagnostics

// An impossible #rowred.plan is refused with the field that makes it so.

func.func @cluster_before_sm90(%x: memref<?x?xf32>, %y: memref<?x?xf32>) {
  // expected-error @+4 {{#rowred.plan field 'cluster': thread-block clusters need sm_90 or newer, not sm_80}}
  rowred.map ins(%x : memref<?x?xf32>) outs(%y : memref<?x?xf32>) {
  ^bb0(%xj: f32):
    rowred.yield %xj : f32
  } {rowred.plan = #rowred.plan<strategy = cluster, chip = "sm_80", block = 16384, warps = 16, cluster = 4, vector = 4, max_cols = 65536>}
  return
}

// -----

func.func @bad_chip(%x: memref<?x?xf32>, %y: memref<?x?xf32>) {
  // expected-error @+4 {{#rowred.plan field 'chip': 'bogus' is not a supported chip; expected one of sm_80, sm_86, sm_87, sm_89, sm_90, sm_90a, sm_100, sm_100a, sm_120, sm_120a}}
  rowred.map ins(%x : memref<?x?xf32>) outs(%y : memref<?x?xf32>) {
  ^bb0(%xj: f32):
    rowred.yield %xj : f32
  } {rowred.plan = #rowred.plan<strategy = fused, chip = "bogus", block = 1024, warps = 4, max_cols = 1024>}
  return
}

// -----

func.func @registers(%x: memref<?x?xf32>, %y: memref<?x?xf32>) {
  // expected-error @+4 {{#rowred.plan field 'block': 65536 elements over 128 threads keep 512 per thread in registers; at most 128 fit}}
  rowred.map ins(%x : memref<?x?xf32>) outs(%y : memref<?x?xf32>) {
  ^bb0(%xj: f32):
    rowred.yield %xj : f32
  } {rowred.plan = #rowred.plan<strategy = fused, block = 65536, warps = 4, max_cols = 65536>}
  return
}

// -----

func.func @shared_memory(%x: memref<?x?xf32>, %y: memref<?x?xf32>) {
  // expected-error @+1 {{#rowred.plan field 'stage_elements': the stage takes 262144 bytes of shared memory; a block on sm_90 has at most 229376}}
  rowred.map ins(%x : memref<?x?xf32>) outs(%y : memref<?x?xf32>) {
  ^bb0(%xj: f32):
    rowred.yield %xj : f32
  } {rowred.plan = #rowred.plan<strategy = online, block = 4096, warps = 32, vector = 4, prefetch = stage, stage_elements = 65536>}
  return
}

// -----

func.func @shared_memory_sm89(%x: memref<?x?xf32>, %y: memref<?x?xf32>) {
  // expected-error @+1 {{#rowred.plan field 'stage_elements': the stage takes 131072 bytes of shared memory; a block on sm_89 has at most 98304}}
  rowred.map ins(%x : memref<?x?xf32>) outs(%y : memref<?x?xf32>) {
  ^bb0(%xj: f32):
    rowred.yield %xj : f32
  } {rowred.plan = #rowred.plan<strategy = fused, chip = "sm_89", block = 32768, warps = 32, vector = 4, prefetch = stage, max_cols = 32768, stage_elements = 32768>}
  return
}

// -----

func.func @vector_too_wide(%x: memref<?x?xbf16>, %y: memref<?x?xf32>) {
  // expected-error @+1 {{#rowred.plan field 'vector': 8 elements of 4 bytes exceed a 16-byte access}}
  rowred.map ins(%x : memref<?x?xbf16>) outs(%y : memref<?x?xf32>) {
  ^bb0(%xj: f32):
    rowred.yield %xj : f32
  } {rowred.plan = #rowred.plan<strategy = fused, block = 1024, warps = 4, vector = 8, max_cols = 1024>}
  return
}

// -----

func.func @row_too_long(%x: memref<?x2048xf32>, %y: memref<?x2048xf32>) {
  // expected-error @+1 {{#rowred.plan field 'max_cols': the kernel handles rows of at most 1024 elements, and the input has 2048}}
  rowred.map ins(%x : memref<?x2048xf32>) outs(%y : memref<?x2048xf32>) {
  ^bb0(%xj: f32):
    rowred.yield %xj : f32
  } {rowred.plan = #rowred.plan<strategy = fused, block = 1024, warps = 4, max_cols = 1024>}
  return
}

// -----

func.func @bulk_before_sm90(%x: memref<?x?xf32>, %y: memref<?x?xf32>) {
  // expected-error @+4 {{#rowred.plan field 'keep_ahead': needs cp.async.bulk (sm_90 or newer), not sm_80}}
  rowred.map ins(%x : memref<?x?xf32>) outs(%y : memref<?x?xf32>) {
  ^bb0(%xj: f32):
    rowred.yield %xj : f32
  } {rowred.plan = #rowred.plan<strategy = online, chip = "sm_80", block = 4096, warps = 32, vector = 4, prefetch = registers, stage_elements = 16384, kept_elements = 4096, keep_ahead = bulk>}
  return
}

// -----

func.func @rows_per_block_online(%x: memref<?x?xf32>, %y: memref<?x?xf32>) {
  // expected-error @+4 {{#rowred.plan field 'rows_per_block': applies to the fused strategy only}}
  rowred.map ins(%x : memref<?x?xf32>) outs(%y : memref<?x?xf32>) {
  ^bb0(%xj: f32):
    rowred.yield %xj : f32
  } {rowred.plan = #rowred.plan<strategy = online, block = 4096, warps = 4, rows_per_block = 4>}
  return
}

// -----

func.func @vector_divides(%x: memref<?x?xf32>, %y: memref<?x?xf32>) {
  // expected-error @+4 {{#rowred.plan field 'vector': must be a power of two dividing the 2 elements per thread, got 4}}
  rowred.map ins(%x : memref<?x?xf32>) outs(%y : memref<?x?xf32>) {
  ^bb0(%xj: f32):
    rowred.yield %xj : f32
  } {rowred.plan = #rowred.plan<strategy = fused, block = 256, warps = 4, vector = 4, max_cols = 256>}
  return
}

// -----

func.func @wrong_op(%x: memref<?x?xf32>, %y: memref<?x?xf32>) {
  // expected-error @+1 {{'rowred.plan' belongs on a rowred.map or a high-level rowred op}}
  "func.return"() {rowred.plan = #rowred.plan<strategy = fused, block = 1024, warps = 4, max_cols = 1024>} : () -> ()
}

// -----

func.func @softmax_row_too_long(%x: memref<?x2048xf32>, %y: memref<?x2048xf32>) {
  // expected-error @+1 {{#rowred.plan field 'max_cols': the kernel handles rows of at most 1024 elements, and the input has 2048}}
  rowred.softmax dimension(1) ins(%x : memref<?x2048xf32>) outs(%y : memref<?x2048xf32>) {rowred.plan = #rowred.plan<strategy = fused, block = 1024, warps = 4, max_cols = 1024>}
  return
}

// -----

func.func @not_a_plan(%x: memref<?x?xf32>, %y: memref<?x?xf32>) {
  // expected-error @+1 {{'rowred.plan' must be a #rowred.plan}}
  rowred.map ins(%x : memref<?x?xf32>) outs(%y : memref<?x?xf32>) {
  ^bb0(%xj: f32):
    rowred.yield %xj : f32
  } {rowred.plan = 4 : i64}
  return
}

// -----

func.func @fused_without_max_cols(%x: memref<?x?xf32>, %y: memref<?x?xf32>) {
  // expected-error @+4 {{#rowred.plan field 'max_cols': a fused kernel holds the whole row: from 1 to 1024 (block x cluster), got 0}}
  rowred.map ins(%x : memref<?x?xf32>) outs(%y : memref<?x?xf32>) {
  ^bb0(%xj: f32):
    rowred.yield %xj : f32
  } {rowred.plan = #rowred.plan<strategy = fused, block = 1024, warps = 4>}
  return
}

// -----

func.func @cluster_max_cols(%x: memref<?x?xf32>, %y: memref<?x?xf32>) {
  // expected-error @+4 {{#rowred.plan field 'max_cols': a cluster kernel holds the whole row: from 1 to 32768 (block x cluster), got 65536}}
  rowred.map ins(%x : memref<?x?xf32>) outs(%y : memref<?x?xf32>) {
  ^bb0(%xj: f32):
    rowred.yield %xj : f32
  } {rowred.plan = #rowred.plan<strategy = cluster, block = 16384, warps = 16, cluster = 2, vector = 4, max_cols = 65536>}
  return
}

// -----

func.func @stage_without_elements(%x: memref<?x?xf32>, %y: memref<?x?xf32>) {
  // expected-error @+4 {{#rowred.plan field 'stage_elements': must hold the block's row for prefetch = stage, got 0}}
  rowred.map ins(%x : memref<?x?xf32>) outs(%y : memref<?x?xf32>) {
  ^bb0(%xj: f32):
    rowred.yield %xj : f32
  } {rowred.plan = #rowred.plan<strategy = fused, block = 16384, warps = 16, vector = 4, prefetch = stage, max_cols = 16384>}
  return
}

// -----

func.func @hints_on_cluster(%x: memref<?x?xf32>, %y: memref<?x?xf32>) {
  // expected-error @+4 {{#rowred.plan field 'cache_hints': applies to the fused and online strategies only}}
  rowred.map ins(%x : memref<?x?xf32>) outs(%y : memref<?x?xf32>) {
  ^bb0(%xj: f32):
    rowred.yield %xj : f32
  } {rowred.plan = #rowred.plan<strategy = cluster, block = 8192, warps = 16, cluster = 2, vector = 4, max_cols = 16384, stage_elements = 8192, cache_hints = true>}
  return
}

// -----

func.func @sums_in_registers_online(%x: memref<?x?xf32>, %y: memref<?x?xf32>) {
  // expected-error @+4 {{#rowred.plan field 'sums_in_registers': applies to the fused and cluster strategies only}}
  rowred.map ins(%x : memref<?x?xf32>) outs(%y : memref<?x?xf32>) {
  ^bb0(%xj: f32):
    rowred.yield %xj : f32
  } {rowred.plan = #rowred.plan<strategy = online, block = 4096, warps = 4, vector = 4, sums_in_registers = true>}
  return
}

// -----

func.func @hoist_in_chunks(%x: memref<?x?xf32>, %y: memref<?x?xf32>) {
  // expected-error @+4 {{#rowred.plan field 'hoist_map_loads': applies to the fused and cluster strategies only}}
  rowred.map ins(%x : memref<?x?xf32>) outs(%y : memref<?x?xf32>) {
  ^bb0(%xj: f32):
    rowred.yield %xj : f32
  } {rowred.plan = #rowred.plan<strategy = chunks, block = 8192, warps = 4, vector = 4, hoist_map_loads = true>}
  return
}

// -----

func.func @hints_with_prefetch(%x: memref<?x?xf32>, %y: memref<?x?xf32>) {
  // expected-error @+4 {{#rowred.plan field 'cache_hints': hints a fused block's loads of its own row: not with prefetch, which loads the next row}}
  rowred.map ins(%x : memref<?x?xf32>) outs(%y : memref<?x?xf32>) {
  ^bb0(%xj: f32):
    rowred.yield %xj : f32
  } {rowred.plan = #rowred.plan<strategy = fused, block = 4096, warps = 4, vector = 4, prefetch = registers, max_cols = 4096, cache_hints = true>}
  return
}

// -----

func.func @chunks_prefetch(%x: memref<?x?xf32>, %y: memref<?x?xf32>) {
  // expected-error @+4 {{#rowred.plan field 'prefetch': fetches the vector path's next row or tile: not for chunks, nor with vector = 1}}
  rowred.map ins(%x : memref<?x?xf32>) outs(%y : memref<?x?xf32>) {
  ^bb0(%xj: f32):
    rowred.yield %xj : f32
  } {rowred.plan = #rowred.plan<strategy = chunks, block = 8192, warps = 4, vector = 4, prefetch = stage, stage_elements = 8192>}
  return
}

// -----

func.func @keep_without_registers(%x: memref<?x?xf32>, %y: memref<?x?xf32>) {
  // expected-error @+4 {{#rowred.plan field 'keep_ahead': hands tiles on across the passes: it needs prefetch = registers and the reversed second pass}}
  rowred.map ins(%x : memref<?x?xf32>) outs(%y : memref<?x?xf32>) {
  ^bb0(%xj: f32):
    rowred.yield %xj : f32
  } {rowred.plan = #rowred.plan<strategy = online, block = 4096, warps = 32, vector = 4, stage_elements = 16384, kept_elements = 4096, keep_ahead = tiles>}
  return
}

// -----

// Element counts past the rows a kernel takes: 2^62 staged elements made a
// stage of 0 bytes.
func.func @stage_elements_overflow(%x: memref<?x1024xf32>, %y: memref<?x1024xf32>) {
  // expected-error @+4 {{#rowred.plan field 'stage_elements': must be from 0 to 2^31 - 1, got 4611686018427387904}}
  rowred.map ins(%x : memref<?x1024xf32>) outs(%y : memref<?x1024xf32>) {
  ^bb0(%xj: f32):
    rowred.yield %xj : f32
  } {rowred.plan = #rowred.plan<strategy = fused, block = 1024, warps = 4, vector = 4, max_cols = 1024, prefetch = stage, stage_elements = 4611686018427387904>}
  return
}
