// A plan written in the input, or a plan request whose shape spills at one
// block per SM, is refused with ptxas' report; a ptxas that cannot run, and
// an input not decomposed, are reported as such.
// REQUIRES: ptxas
// RUN: softmax-opt %s -split-input-file -verify-diagnostics --rowred-decompose --rowred-fit-registers="ptxas=%ptxas"
// RUN: not softmax-opt %s -split-input-file --rowred-decompose --rowred-fit-registers="ptxas=%t.missing" 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: not env PATH=%t.nothing softmax-opt %s -split-input-file --rowred-decompose --rowred-fit-registers="cuda-path=%t.nothing" 2>&1 | FileCheck %s --check-prefix=NOT-FOUND
// RUN: not softmax-opt %s -split-input-file --rowred-fit-registers="ptxas=%ptxas" 2>&1 | FileCheck %s --check-prefix=UNDECOMPOSED
// UNDECOMPOSED: error: 'rowred.log_softmax' op must be decomposed before planning (run --rowred-decompose first)
// MISSING: error: cannot run ptxas '{{.*}}.missing': not an executable file
// NOT-FOUND: error: no ptxas to assemble the kernels with: none in '{{.*}}.nothing/bin' nor on the PATH; pass ptxas=PATH
// A ptxas that fails: its message and where the PTX is kept, not the PTX
// itself (the failing op's dump held all of it).
// RUN: printf '#!/bin/sh\necho "ptxas fatal: refused" >&2\nexit 1\n' > %t.failing && chmod +x %t.failing
// RUN: not softmax-opt %s -split-input-file --rowred-decompose --rowred-fit-registers="ptxas=%t.failing" 2>&1 | FileCheck %s --check-prefix=FAILING
// FAILING: error: kernel '{{.*}}_kernel0': ptxas ('{{.*}}.failing') failed on '{{.*}}.ptx' (kept)
// FAILING-NEXT: ptxas fatal: refused
// FAILING-NOT: .version

// The plan auto chooses here without the check (4 bytes of spills).
func.func @lsm(%x: memref<?x16384xf32>, %y: memref<?x16384xf32>) {
  // expected-error @+1 {{kernel 'lsm_kernel0' spills 4 bytes of registers (ptxas -v, sm_90, 64 registers per thread) with #rowred.plan<strategy = fused, block = 16384, warps = 16, vector = 4, reread = true, max_cols = 16384, stage_elements = 16384, grid = rows>: the plan is the input's; give it fewer elements per thread or another min_blocks_per_sm}}
  rowred.log_softmax dimension(1) safe ins(%x : memref<?x16384xf32>) outs(%y : memref<?x16384xf32>) {rowred.plan = #rowred.plan<strategy = fused, block = 16384, warps = 16, vector = 4, reread = true, max_cols = 16384, stage_elements = 16384, grid = rows>}
  return
}

// -----

// A fused block of 1024 threads holds at most 64 registers each.
func.func @xent(%x: memref<?x32001xf32>, %l: memref<?xi64>, %g: memref<?xf32>, %dx: memref<?x32001xf32>, %loss: memref<?xf32>, %lse: memref<?xf32>) {
  // expected-error @+1 {{kernel 'xent_kernel0' spills 96 bytes of registers (ptxas -v, sm_90, 64 registers per thread) with #rowred.plan<strategy = fused, block = 32768, warps = 32, vector = 4, reread = true, max_cols = 32768, stage_elements = 32768, cache_hints = true, grid = rows, min_blocks_per_sm = 1>: it spills at one block per SM, and the plan request fixes the rest; ask for more warps, a larger cluster or the online strategy}}
  rowred.cross_entropy ignore_index(-100) label_smoothing(0.1) ins(%x : memref<?x32001xf32>) labels(%l : memref<?xi64>) grad_scale(%g : memref<?xf32>) outs(%loss : memref<?xf32>) lse(%lse : memref<?xf32>) grad(%dx : memref<?x32001xf32>) {rowred.plan_request = #rowred.plan_request<strategy = fused>}
  return
}

// -----

// A request for the sums down the columns in registers where they leave
// too few (layer_norm_backward's 2 x 32 on a bf16 block of 12288): the
// hint names the field.
func.func @sums(%x: memref<?x12288xbf16>, %dy: memref<?x12288xbf16>, %m: memref<?xf32>, %r: memref<?xf32>, %w: memref<12288xbf16>, %dx: memref<?x12288xbf16>, %dw: memref<12288xbf16>, %db: memref<12288xbf16>) {
  // expected-error @+1 {{, sums_in_registers = true>: it spills at one block per SM, and the plan request fixes the rest; ask for more warps, a larger cluster, sums_in_registers = false or the online strategy}}
  rowred.layer_norm_backward ins(%x, %dy : memref<?x12288xbf16>, memref<?x12288xbf16>) mean(%m : memref<?xf32>) rstd(%r : memref<?xf32>) weight(%w : memref<12288xbf16>) outs(%dx : memref<?x12288xbf16>) weight_grad(%dw : memref<12288xbf16>) bias_grad(%db : memref<12288xbf16>) {rowred.plan_request = #rowred.plan_request<sums_in_registers = true>}
  return
}
