// RUN: softmax-opt %s --rowred-decompose --split-input-file | FileCheck %s

// CHECK-LABEL: func.func @softmax
// CHECK-SAME: (%[[X:.*]]: memref<?x?xf32>, %[[Y:.*]]: memref<?x?xf32>)
// CHECK-NOT: rowred.softmax
// CHECK: %[[C0:.*]] = arith.constant 0 : index
// CHECK: %[[ROWS:.*]] = memref.dim %[[X]], %[[C0]]
// CHECK: %[[M:.*]] = memref.alloc(%[[ROWS]]) : memref<?xf32>
// CHECK: rowred.reduce max ins(%[[X]] : memref<?x?xf32>) outs(%[[M]] : memref<?xf32>) {
// CHECK-NEXT: ^bb0(%[[A:.*]]: f32):
// CHECK-NEXT: rowred.yield %[[A]] : f32
// CHECK: %[[S:.*]] = memref.alloc(%[[ROWS]]) : memref<?xf32>
// CHECK: rowred.reduce sum ins(%[[X]] : memref<?x?xf32>) rows(%[[M]] : memref<?xf32>) outs(%[[S]] : memref<?xf32>) {
// CHECK-NEXT: ^bb0(%[[B:.*]]: f32, %[[BM:.*]]: f32):
// CHECK-NEXT: %[[D:.*]] = arith.subf %[[B]], %[[BM]] : f32
// CHECK-NEXT: %[[E:.*]] = math.exp %[[D]] : f32
// CHECK-NEXT: rowred.yield %[[E]] : f32
// CHECK: rowred.map ins(%[[X]] : memref<?x?xf32>) rows(%[[M]], %[[S]] : memref<?xf32>, memref<?xf32>) outs(%[[Y]] : memref<?x?xf32>) {
// CHECK-NEXT: ^bb0(%[[C:.*]]: f32, %[[CM:.*]]: f32, %[[CS:.*]]: f32):
// CHECK-NEXT: %[[D2:.*]] = arith.subf %[[C]], %[[CM]] : f32
// CHECK-NEXT: %[[E2:.*]] = math.exp %[[D2]] : f32
// CHECK-NEXT: %[[R:.*]] = arith.divf %[[E2]], %[[CS]] : f32
// CHECK-NEXT: rowred.yield %[[R]] : f32
// CHECK-NEXT: } {rowred.origin = "softmax"}
// CHECK: memref.dealloc %[[S]]
// CHECK: memref.dealloc %[[M]]
func.func @softmax(%x: memref<?x?xf32>, %y: memref<?x?xf32>) {
  rowred.softmax dimension(1) ins(%x : memref<?x?xf32>) outs(%y : memref<?x?xf32>)
  return
}

// -----

// Static shapes give static row-scalar buffers; log-softmax maps with
// x - m - log(s).
// CHECK-LABEL: func.func @log_softmax
// CHECK-NOT: memref.dim
// CHECK: %[[M:.*]] = memref.alloc() : memref<16xf32>
// CHECK: rowred.reduce max ins(%{{.*}} : memref<16x781xbf16>) outs(%[[M]] : memref<16xf32>)
// CHECK: %[[S:.*]] = memref.alloc() : memref<16xf32>
// CHECK: rowred.reduce sum
// CHECK: rowred.map
// CHECK-NEXT: ^bb0(%[[C:.*]]: f32, %[[CM:.*]]: f32, %[[CS:.*]]: f32):
// CHECK-NEXT: %[[D:.*]] = arith.subf %[[C]], %[[CM]] : f32
// CHECK-NEXT: %[[L:.*]] = math.log %[[CS]] : f32
// CHECK-NEXT: %[[R:.*]] = arith.subf %[[D]], %[[L]] : f32
// CHECK-NEXT: rowred.yield %[[R]] : f32
// CHECK-NEXT: } {rowred.origin = "log_softmax"}
func.func @log_softmax(%x: memref<16x781xbf16>, %y: memref<16x781xbf16>) {
  rowred.log_softmax dimension(1) ins(%x : memref<16x781xbf16>) outs(%y : memref<16x781xbf16>)
  return
}

// -----

// Other ops are left alone.
// CHECK-LABEL: func.func @untouched
// CHECK: rowred.reduce max
// CHECK-NOT: memref.alloc
func.func @untouched(%x: memref<4x8xf32>, %m: memref<4xf32>) {
  rowred.reduce max ins(%x : memref<4x8xf32>) outs(%m : memref<4xf32>) {
  ^bb0(%xj: f32):
    rowred.yield %xj : f32
  }
  return
}

// -----

// softmax_backward: s = sum(dy * y), then dx = y * (dy - s).
// CHECK-LABEL: func.func @softmax_backward
// CHECK-SAME: (%[[Y:.*]]: memref<?x?xf32>, %[[DY:.*]]: memref<?x?xf32>, %[[DX:.*]]: memref<?x?xf32>)
// CHECK: %[[S:.*]] = memref.alloc(%{{.*}}) : memref<?xf32>
// CHECK: rowred.reduce sum ins(%[[Y]], %[[DY]] : memref<?x?xf32>, memref<?x?xf32>) outs(%[[S]] : memref<?xf32>) {
// CHECK-NEXT: ^bb0(%[[A:.*]]: f32, %[[B:.*]]: f32):
// CHECK-NEXT: %[[P:.*]] = arith.mulf %[[B]], %[[A]] : f32
// CHECK-NEXT: rowred.yield %[[P]] : f32
// CHECK: rowred.map ins(%[[Y]], %[[DY]] : memref<?x?xf32>, memref<?x?xf32>) rows(%[[S]] : memref<?xf32>) outs(%[[DX]] : memref<?x?xf32>) {
// CHECK-NEXT: ^bb0(%[[C:.*]]: f32, %[[D:.*]]: f32, %[[CS:.*]]: f32):
// CHECK-NEXT: %[[E:.*]] = arith.subf %[[D]], %[[CS]] : f32
// CHECK-NEXT: %[[R:.*]] = arith.mulf %[[C]], %[[E]] : f32
// CHECK-NEXT: rowred.yield %[[R]] : f32
// CHECK-NEXT: } {rowred.origin = "softmax_backward"}
// CHECK: memref.dealloc %[[S]]
func.func @softmax_backward(%y: memref<?x?xf32>, %dy: memref<?x?xf32>, %dx: memref<?x?xf32>) {
  rowred.softmax_backward dimension(1) ins(%y, %dy : memref<?x?xf32>, memref<?x?xf32>) outs(%dx : memref<?x?xf32>)
  return
}

// -----

// log_softmax_backward: s = sum(dy), then dx = dy - exp(y) * s.
// CHECK-LABEL: func.func @log_softmax_backward
// CHECK-SAME: (%[[Y:.*]]: memref<4x512xbf16>, %[[DY:.*]]: memref<4x512xbf16>, %[[DX:.*]]: memref<4x512xbf16>)
// CHECK: %[[S:.*]] = memref.alloc() : memref<4xf32>
// CHECK: rowred.reduce sum ins(%[[DY]] : memref<4x512xbf16>) outs(%[[S]] : memref<4xf32>) {
// CHECK-NEXT: ^bb0(%[[A:.*]]: f32):
// CHECK-NEXT: rowred.yield %[[A]] : f32
// CHECK: rowred.map ins(%[[Y]], %[[DY]] : memref<4x512xbf16>, memref<4x512xbf16>) rows(%[[S]] : memref<4xf32>) outs(%[[DX]] : memref<4x512xbf16>) {
// CHECK-NEXT: ^bb0(%[[C:.*]]: f32, %[[D:.*]]: f32, %[[CS:.*]]: f32):
// CHECK-NEXT: %[[E:.*]] = math.exp %[[C]] : f32
// CHECK-NEXT: %[[M:.*]] = arith.mulf %[[E]], %[[CS]] : f32
// CHECK-NEXT: %[[R:.*]] = arith.subf %[[D]], %[[M]] : f32
// CHECK-NEXT: rowred.yield %[[R]] : f32
// CHECK-NEXT: } {rowred.origin = "log_softmax_backward"}
func.func @log_softmax_backward(%y: memref<4x512xbf16>, %dy: memref<4x512xbf16>, %dx: memref<4x512xbf16>) {
  rowred.log_softmax_backward dimension(1) ins(%y, %dy : memref<4x512xbf16>, memref<4x512xbf16>) outs(%dx : memref<4x512xbf16>)
  return
}

// -----

// rms_norm: s = sum(x * x), then y = x * rsqrt(s / N + eps) * w. A plan
// request written on the op moves to the map, and so does epsilon (for the
// kernel's metadata).
// CHECK-LABEL: func.func @rms_norm
// CHECK-SAME: (%[[X:.*]]: memref<?x4096xbf16>, %[[W:.*]]: memref<4096xbf16>, %[[Y:.*]]: memref<?x4096xbf16>)
// CHECK: %[[EPS:.*]] = arith.constant 9.99999997E-7 : f32
// CHECK: %[[S:.*]] = memref.alloc(%{{.*}}) : memref<?xf32>
// CHECK: rowred.reduce sum ins(%[[X]] : memref<?x4096xbf16>) outs(%[[S]] : memref<?xf32>) {
// CHECK-NEXT: ^bb0(%[[A:.*]]: f32):
// CHECK-NEXT: %[[SQ:.*]] = arith.mulf %[[A]], %[[A]] : f32
// CHECK-NEXT: rowred.yield %[[SQ]] : f32
// CHECK: rowred.map ins(%[[X]] : memref<?x4096xbf16>) cols(%[[W]] : memref<4096xbf16>) rows(%[[S]] : memref<?xf32>) outs(%[[Y]] : memref<?x4096xbf16>) {
// CHECK-NEXT: ^bb0(%[[C:.*]]: f32, %[[CW:.*]]: f32, %[[CS:.*]]: f32):
// CHECK-NEXT: %[[N:.*]] = rowred.row_length : f32
// CHECK-NEXT: %[[MS:.*]] = arith.divf %[[CS]], %[[N]] : f32
// CHECK-NEXT: %[[SH:.*]] = arith.addf %[[MS]], %[[EPS]] : f32
// CHECK-NEXT: %[[RS:.*]] = math.rsqrt %[[SH]] : f32
// CHECK-NEXT: %[[V:.*]] = arith.mulf %[[C]], %[[RS]] : f32
// CHECK-NEXT: %[[R:.*]] = arith.mulf %[[V]], %[[CW]] : f32
// CHECK-NEXT: rowred.yield %[[R]] : f32
// CHECK-NEXT: } {rowred.epsilon = 9.99999997E-7 : f32, rowred.origin = "rms_norm", rowred.plan_request = #rowred.plan_request<warps = 4>}
func.func @rms_norm(%x: memref<?x4096xbf16>, %w: memref<4096xbf16>, %y: memref<?x4096xbf16>) {
  rowred.rms_norm epsilon(1.0e-06) ins(%x : memref<?x4096xbf16>) weight(%w : memref<4096xbf16>) outs(%y : memref<?x4096xbf16>) {rowred.plan_request = #rowred.plan_request<warps = 4>}
  return
}

// -----

// Without a weight, the map has no per-column operand.
// CHECK-LABEL: func.func @rms_norm_unweighted
// CHECK: rowred.map ins(%{{.*}} : memref<8x64xf32>) rows(%{{.*}} : memref<8xf32>) outs(
// CHECK-NEXT: ^bb0(%[[C:.*]]: f32, %[[CS:.*]]: f32):
// CHECK: %[[V:.*]] = arith.mulf %[[C]], %{{.*}} : f32
// CHECK-NEXT: rowred.yield %[[V]] : f32
func.func @rms_norm_unweighted(%x: memref<8x64xf32>, %y: memref<8x64xf32>) {
  rowred.rms_norm epsilon(1.0e-06) ins(%x : memref<8x64xf32>) outs(%y : memref<8x64xf32>)
  return
}

// -----

// The residual form: both bodies read x and r and normalize h = x + r as
// residual_out stores it (rounded to bf16); the map writes y and h.
// CHECK-LABEL: func.func @rms_norm_residual
// CHECK-SAME: (%[[X:.*]]: memref<?x?xbf16>, %[[R:.*]]: memref<?x?xbf16>, %[[W:.*]]: memref<?xf32>)
// CHECK: rowred.reduce sum ins(%[[X]], %[[R]] : memref<?x?xbf16>, memref<?x?xbf16>) outs(%[[S:.*]] : memref<?xf32>) {
// CHECK-NEXT: ^bb0(%[[A:.*]]: f32, %[[B:.*]]: f32):
// CHECK-NEXT: %[[SUM:.*]] = arith.addf %[[A]], %[[B]] : f32
// CHECK-NEXT: %[[NARROW:.*]] = arith.truncf %[[SUM]] : f32 to bf16
// CHECK-NEXT: %[[H:.*]] = arith.extf %[[NARROW]] : bf16 to f32
// CHECK-NEXT: %[[SQ:.*]] = arith.mulf %[[H]], %[[H]] : f32
// CHECK-NEXT: rowred.yield %[[SQ]] : f32
// CHECK: rowred.map ins(%[[X]], %[[R]] : memref<?x?xbf16>, memref<?x?xbf16>) cols(%[[W]] : memref<?xf32>) rows(%[[S]] : memref<?xf32>) outs(%[[X]], %[[R]] : memref<?x?xbf16>, memref<?x?xbf16>) {
// CHECK-NEXT: ^bb0(%[[C:.*]]: f32, %[[D:.*]]: f32, %[[CW:.*]]: f32, %[[CS:.*]]: f32):
// CHECK-NEXT: %[[SUM2:.*]] = arith.addf %[[C]], %[[D]] : f32
// CHECK-NEXT: %[[NARROW2:.*]] = arith.truncf %[[SUM2]] : f32 to bf16
// CHECK-NEXT: %[[H2:.*]] = arith.extf %[[NARROW2]] : bf16 to f32
// CHECK: %[[RS:.*]] = math.rsqrt
// CHECK-NEXT: %[[V:.*]] = arith.mulf %[[H2]], %[[RS]] : f32
// CHECK-NEXT: %[[Y:.*]] = arith.mulf %[[V]], %[[CW]] : f32
// CHECK-NEXT: rowred.yield %[[Y]], %[[H2]] : f32, f32
func.func @rms_norm_residual(%x: memref<?x?xbf16>, %r: memref<?x?xbf16>, %w: memref<?xf32>) {
  rowred.rms_norm epsilon(1.0e-06) ins(%x : memref<?x?xbf16>) residual(%r : memref<?x?xbf16>) weight(%w : memref<?xf32>) outs(%x : memref<?x?xbf16>) residual_out(%r : memref<?x?xbf16>)
  return
}

// -----

// An f32 residual stream needs no rounding.
// CHECK-LABEL: func.func @rms_norm_residual_f32
// CHECK: ^bb0(%[[A:.*]]: f32, %[[B:.*]]: f32):
// CHECK-NEXT: %[[H:.*]] = arith.addf %[[A]], %[[B]] : f32
// CHECK-NEXT: %[[SQ:.*]] = arith.mulf %[[H]], %[[H]] : f32
func.func @rms_norm_residual_f32(%x: memref<8x64xbf16>, %r: memref<8x64xf32>, %y: memref<8x64xbf16>, %h: memref<8x64xf32>) {
  rowred.rms_norm epsilon(1.0e-06) ins(%x : memref<8x64xbf16>) residual(%r : memref<8x64xf32>) outs(%y : memref<8x64xbf16>) residual_out(%h : memref<8x64xf32>)
  return
}

// -----

// layer_norm: s = sum(x); with e = x - s/N, c = sum(e) and q = sum(e^2), both
// reading only s; y = (e - c/N) * rsqrt(max(q/N - (c/N)^2, 0) + eps) * w + b.
// CHECK-LABEL: func.func @layer_norm
// CHECK-SAME: (%[[X:.*]]: memref<?x?xf16>, %[[W:.*]]: memref<?xf16>, %[[B:.*]]: memref<?xf32>, %[[Y:.*]]: memref<?x?xf16>)
// CHECK-DAG: %[[EPS:.*]] = arith.constant 9.99999974E-6 : f32
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[S:.*]] = memref.alloc(%[[ROWS:.*]]) : memref<?xf32>
// CHECK: rowred.reduce sum ins(%[[X]] : memref<?x?xf16>) outs(%[[S]] : memref<?xf32>) {
// CHECK-NEXT: ^bb0(%[[A:.*]]: f32):
// CHECK-NEXT: rowred.yield %[[A]] : f32
// CHECK: %[[C:.*]] = memref.alloc(%[[ROWS]]) : memref<?xf32>
// CHECK: rowred.reduce sum ins(%[[X]] : memref<?x?xf16>) rows(%[[S]] : memref<?xf32>) outs(%[[C]] : memref<?xf32>) {
// CHECK-NEXT: ^bb0(%[[A1:.*]]: f32, %[[S1:.*]]: f32):
// CHECK-NEXT: %[[N1:.*]] = rowred.row_length : f32
// CHECK-NEXT: %[[M1:.*]] = arith.divf %[[S1]], %[[N1]] : f32
// CHECK-NEXT: %[[D1:.*]] = arith.subf %[[A1]], %[[M1]] : f32
// CHECK-NEXT: rowred.yield %[[D1]] : f32
// CHECK: %[[Q:.*]] = memref.alloc(%[[ROWS]]) : memref<?xf32>
// CHECK: rowred.reduce sum ins(%[[X]] : memref<?x?xf16>) rows(%[[S]] : memref<?xf32>) outs(%[[Q]] : memref<?xf32>) {
// CHECK-NEXT: ^bb0(%[[A2:.*]]: f32, %[[S2:.*]]: f32):
// CHECK-NEXT: %[[N2:.*]] = rowred.row_length : f32
// CHECK-NEXT: %[[M2:.*]] = arith.divf %[[S2]], %[[N2]] : f32
// CHECK-NEXT: %[[D2:.*]] = arith.subf %[[A2]], %[[M2]] : f32
// CHECK-NEXT: %[[SQ:.*]] = arith.mulf %[[D2]], %[[D2]] : f32
// CHECK-NEXT: rowred.yield %[[SQ]] : f32
// CHECK: rowred.map ins(%[[X]] : memref<?x?xf16>) cols(%[[W]], %[[B]] : memref<?xf16>, memref<?xf32>) rows(%[[S]], %[[C]], %[[Q]] : memref<?xf32>, memref<?xf32>, memref<?xf32>) outs(%[[Y]] : memref<?x?xf16>) {
// CHECK-NEXT: ^bb0(%[[A3:.*]]: f32, %[[W3:.*]]: f32, %[[B3:.*]]: f32, %[[S3:.*]]: f32, %[[C3:.*]]: f32, %[[Q3:.*]]: f32):
// CHECK-NEXT: %[[N3:.*]] = rowred.row_length : f32
// CHECK-NEXT: %[[M3:.*]] = arith.divf %[[S3]], %[[N3]] : f32
// CHECK-NEXT: %[[E3:.*]] = arith.subf %[[A3]], %[[M3]] : f32
// CHECK-NEXT: %[[K3:.*]] = arith.divf %[[C3]], %[[N3]] : f32
// CHECK-NEXT: %[[CE:.*]] = arith.subf %[[E3]], %[[K3]] : f32
// CHECK-NEXT: %[[MS:.*]] = arith.divf %[[Q3]], %[[N3]] : f32
// CHECK-NEXT: %[[K2:.*]] = arith.mulf %[[K3]], %[[K3]] : f32
// CHECK-NEXT: %[[V3:.*]] = arith.subf %[[MS]], %[[K2]] : f32
// CHECK-NEXT: %[[P3:.*]] = arith.maximumf %[[V3]], %[[ZERO]] : f32
// CHECK-NEXT: %[[SH:.*]] = arith.addf %[[P3]], %[[EPS]] : f32
// CHECK-NEXT: %[[RS:.*]] = math.rsqrt %[[SH]] : f32
// CHECK-NEXT: %[[Y3:.*]] = arith.mulf %[[CE]], %[[RS]] : f32
// CHECK-NEXT: %[[YW:.*]] = arith.mulf %[[Y3]], %[[W3]] : f32
// CHECK-NEXT: %[[YB:.*]] = arith.addf %[[YW]], %[[B3]] : f32
// CHECK-NEXT: rowred.yield %[[YB]] : f32
// CHECK-NEXT: } {rowred.epsilon = 9.99999974E-6 : f32, rowred.origin = "layer_norm"}
// CHECK: memref.dealloc %[[Q]]
// CHECK: memref.dealloc %[[C]]
// CHECK: memref.dealloc %[[S]]
func.func @layer_norm(%x: memref<?x?xf16>, %w: memref<?xf16>, %b: memref<?xf32>, %y: memref<?x?xf16>) {
  rowred.layer_norm epsilon(1.0e-05) ins(%x : memref<?x?xf16>) weight(%w : memref<?xf16>) bias(%b : memref<?xf32>) outs(%y : memref<?x?xf16>)
  return
}

// -----

// A bias without a weight is the map's only per-column operand.
// CHECK-LABEL: func.func @layer_norm_bias
// CHECK: rowred.map ins(%{{.*}} : memref<2x16xf32>) cols(%[[B:.*]] : memref<16xf32>) rows(
// CHECK-NEXT: ^bb0(%{{.*}}: f32, %[[B3:.*]]: f32, %{{.*}}: f32, %{{.*}}: f32, %{{.*}}: f32):
// CHECK: math.rsqrt
// CHECK-NEXT: %[[Y3:.*]] = arith.mulf
// CHECK-NEXT: %[[YB:.*]] = arith.addf %[[Y3]], %[[B3]] : f32
// CHECK-NEXT: rowred.yield %[[YB]] : f32
func.func @layer_norm_bias(%x: memref<2x16xf32>, %b: memref<16xf32>, %y: memref<2x16xf32>) {
  rowred.layer_norm epsilon(1.0e-05) ins(%x : memref<2x16xf32>) bias(%b : memref<16xf32>) outs(%y : memref<2x16xf32>)
  return
}

// -----

// logsumexp: softmax's max and sum of exp(x - m), and a map whose only
// output has one element per row: m + log(s), or m when m is infinite
// (torch.logsumexp's +inf and -inf rows).
// CHECK-LABEL: func.func @logsumexp
// CHECK: %[[M:.*]] = memref.alloc(%{{.*}}) : memref<?xf32>
// CHECK: rowred.reduce max ins(%[[X:.*]] : memref<?x?xf32>) outs(%[[M]] : memref<?xf32>)
// CHECK: %[[S:.*]] = memref.alloc(%{{.*}}) : memref<?xf32>
// CHECK: rowred.reduce sum ins(%[[X]] : memref<?x?xf32>) rows(%[[M]] : memref<?xf32>) outs(%[[S]] : memref<?xf32>) {
// CHECK-NEXT: ^bb0(%[[XJ:.*]]: f32, %[[MI:.*]]: f32):
// CHECK-NEXT: %[[D:.*]] = arith.subf %[[XJ]], %[[MI]] : f32
// CHECK-NEXT: %[[E:.*]] = math.exp %[[D]] : f32
// CHECK-NEXT: rowred.yield %[[E]] : f32
// CHECK: rowred.map ins(%[[X]] : memref<?x?xf32>) rows(%[[M]], %[[S]] : memref<?xf32>, memref<?xf32>) outs(%{{.*}} : memref<?xbf16>) {
// CHECK-NEXT: ^bb0(%{{.*}}: f32, %[[M2:.*]]: f32, %[[S2:.*]]: f32):
// CHECK-NEXT: %[[L:.*]] = math.log %[[S2]] : f32
// CHECK-NEXT: %[[R:.*]] = arith.addf %[[M2]], %[[L]] : f32
// CHECK-NEXT: %[[A:.*]] = math.absf %[[M2]] : f32
// CHECK-NEXT: %[[INF:.*]] = arith.cmpf oeq, %[[A]], %{{.*}} : f32
// CHECK-NEXT: %[[OUT:.*]] = arith.select %[[INF]], %[[M2]], %[[R]] : f32
// CHECK-NEXT: rowred.yield %[[OUT]] : f32
// CHECK-NEXT: } {rowred.origin = "logsumexp"}
func.func @logsumexp(%x: memref<?x?xf32>, %lse: memref<?xbf16>) {
  rowred.logsumexp ins(%x : memref<?x?xf32>) outs(%lse : memref<?xbf16>)
  return
}

// -----

// logsumexp_backward: no reduce, one map of the input and the two row
// scalars, g * exp(x - lse).
// CHECK-LABEL: func.func @logsumexp_backward
// CHECK-NOT: rowred.reduce
// CHECK: rowred.map ins(%[[X:.*]] : memref<?x4096xbf16>) rows(%[[L:.*]], %[[G:.*]] : memref<?xf32>, memref<?xf32>) outs(%{{.*}} : memref<?x4096xf32>) {
// CHECK-NEXT: ^bb0(%[[XJ:.*]]: f32, %[[LI:.*]]: f32, %[[GI:.*]]: f32):
// CHECK-NEXT: %[[D:.*]] = arith.subf %[[XJ]], %[[LI]] : f32
// CHECK-NEXT: %[[E:.*]] = math.exp %[[D]] : f32
// CHECK-NEXT: %[[R:.*]] = arith.mulf %[[E]], %[[GI]] : f32
// CHECK-NEXT: rowred.yield %[[R]] : f32
// CHECK-NEXT: } {rowred.origin = "logsumexp_backward"}
// CHECK-NOT: memref.alloc
func.func @logsumexp_backward(%x: memref<?x4096xbf16>, %lse: memref<?xf32>,
                              %g: memref<?xf32>, %dx: memref<?x4096xf32>) {
  rowred.logsumexp_backward ins(%x : memref<?x4096xbf16>) lse(%lse : memref<?xf32>) grad(%g : memref<?xf32>) outs(%dx : memref<?x4096xf32>)
  return
}

// -----

// rms_norm_backward: s = sum(dy * w * x * rstd) over x, dy and the weight,
// then one map writing dx = rstd * (g - x_hat * s / N) and the weight's
// gradient as a sum down the columns of dy * x_hat.
// CHECK-LABEL: func.func @rms_norm_backward
// CHECK: %[[S:.*]] = memref.alloc(%{{.*}}) : memref<?xf32>
// CHECK: rowred.reduce sum ins(%[[X:.*]], %[[DY:.*]] : memref<?x4096xbf16>, memref<?x4096xbf16>) cols(%[[W:.*]] : memref<4096xbf16>) rows(%[[R:.*]] : memref<?xf32>) outs(%[[S]] : memref<?xf32>) {
// CHECK-NEXT: ^bb0(%[[XJ:.*]]: f32, %[[DYJ:.*]]: f32, %[[WJ:.*]]: f32, %[[RI:.*]]: f32):
// CHECK-NEXT: %[[XH:.*]] = arith.mulf %[[XJ]], %[[RI]] : f32
// CHECK-NEXT: %[[G:.*]] = arith.mulf %[[DYJ]], %[[WJ]] : f32
// CHECK-NEXT: %[[P:.*]] = arith.mulf %[[G]], %[[XH]] : f32
// CHECK-NEXT: rowred.yield %[[P]] : f32
// CHECK: rowred.map ins(%[[X]], %[[DY]] : memref<?x4096xbf16>, memref<?x4096xbf16>) cols(%[[W]] : memref<4096xbf16>) rows(%[[R]], %[[S]] : memref<?xf32>, memref<?xf32>) outs(%{{.*}} : memref<?x4096xbf16>) column_sums(%{{.*}} : memref<4096xf32>) {
// CHECK-NEXT: ^bb0(%[[MX:.*]]: f32, %[[MDY:.*]]: f32, %[[MW:.*]]: f32, %[[MR:.*]]: f32, %[[MS:.*]]: f32):
// CHECK-NEXT: %[[MXH:.*]] = arith.mulf %[[MX]], %[[MR]] : f32
// CHECK-NEXT: %[[MG:.*]] = arith.mulf %[[MDY]], %[[MW]] : f32
// CHECK-NEXT: %[[N:.*]] = rowred.row_length : f32
// CHECK-NEXT: %[[MEAN:.*]] = arith.divf %[[MS]], %[[N]] : f32
// CHECK-NEXT: %[[PROJ:.*]] = arith.mulf %[[MXH]], %[[MEAN]] : f32
// CHECK-NEXT: %[[D:.*]] = arith.subf %[[MG]], %[[PROJ]] : f32
// CHECK-NEXT: %[[DX:.*]] = arith.mulf %[[MR]], %[[D]] : f32
// CHECK-NEXT: %[[DW:.*]] = arith.mulf %[[MDY]], %[[MXH]] : f32
// CHECK-NEXT: rowred.yield %[[DX]], %[[DW]] : f32, f32
// CHECK-NEXT: } {rowred.origin = "rms_norm_backward"}
// CHECK: memref.dealloc %[[S]]
func.func @rms_norm_backward(%x: memref<?x4096xbf16>, %dy: memref<?x4096xbf16>,
                             %r: memref<?xf32>, %w: memref<4096xbf16>,
                             %dx: memref<?x4096xbf16>, %dw: memref<4096xf32>) {
  rowred.rms_norm_backward ins(%x, %dy : memref<?x4096xbf16>, memref<?x4096xbf16>) rstd(%r : memref<?xf32>) weight(%w : memref<4096xbf16>) outs(%dx : memref<?x4096xbf16>) weight_grad(%dw : memref<4096xf32>)
  return
}

// -----

// With grad_residual (the residual form's h): the map alone reads it and
// adds it to dx; the reduce reads x and dy as without.
// CHECK-LABEL: func.func @rms_norm_backward_residual
// CHECK: rowred.reduce sum ins(%[[X:.*]], %[[DY:.*]] : memref<?x4096xbf16>, memref<?x4096xbf16>) cols(%[[W:.*]] : memref<4096xbf16>)
// CHECK: rowred.map ins(%[[X]], %[[DY]], %{{.*}} : memref<?x4096xbf16>, memref<?x4096xbf16>, memref<?x4096xbf16>) cols(%[[W]] : memref<4096xbf16>) rows(%{{.*}}, %{{.*}} : memref<?xf32>, memref<?xf32>) outs(%{{.*}} : memref<?x4096xbf16>) column_sums(%{{.*}} : memref<4096xf32>) {
// CHECK-NEXT: ^bb0(%[[MX:.*]]: f32, %[[MDY:.*]]: f32, %[[MDH:.*]]: f32, %[[MW:.*]]: f32, %[[MR:.*]]: f32, %[[MS:.*]]: f32):
// CHECK-NEXT: %[[MXH:.*]] = arith.mulf %[[MX]], %[[MR]] : f32
// CHECK-NEXT: %[[MG:.*]] = arith.mulf %[[MDY]], %[[MW]] : f32
// CHECK: %[[DX:.*]] = arith.mulf %[[MR]], %{{.*}} : f32
// CHECK-NEXT: %[[SUM:.*]] = arith.addf %[[DX]], %[[MDH]] : f32
// CHECK-NEXT: %[[DW:.*]] = arith.mulf %[[MDY]], %[[MXH]] : f32
// CHECK-NEXT: rowred.yield %[[SUM]], %[[DW]] : f32, f32
func.func @rms_norm_backward_residual(
    %h: memref<?x4096xbf16>, %dy: memref<?x4096xbf16>, %r: memref<?xf32>,
    %w: memref<4096xbf16>, %dh: memref<?x4096xbf16>,
    %dx: memref<?x4096xbf16>, %dw: memref<4096xf32>) {
  rowred.rms_norm_backward ins(%h, %dy : memref<?x4096xbf16>, memref<?x4096xbf16>) rstd(%r : memref<?xf32>) weight(%w : memref<4096xbf16>) grad_residual(%dh : memref<?x4096xbf16>) outs(%dx : memref<?x4096xbf16>) weight_grad(%dw : memref<4096xf32>)
  return
}

// -----

// Without the weight: g is dy, and nothing is summed down the columns.
// CHECK-LABEL: func.func @rms_norm_backward_unweighted
// CHECK: rowred.reduce sum ins(%{{.*}}, %{{.*}} : memref<?x?xf32>, memref<?x?xf32>) rows(%{{.*}} : memref<?xf32>) outs(
// CHECK-NEXT: ^bb0(%[[XJ:.*]]: f32, %[[DYJ:.*]]: f32, %[[RI:.*]]: f32):
// CHECK-NEXT: %[[XH:.*]] = arith.mulf %[[XJ]], %[[RI]] : f32
// CHECK-NEXT: %[[P:.*]] = arith.mulf %[[DYJ]], %[[XH]] : f32
// CHECK: rowred.map ins(%{{.*}}, %{{.*}} : memref<?x?xf32>, memref<?x?xf32>) rows(%{{.*}}, %{{.*}} : memref<?xf32>, memref<?xf32>) outs(%{{.*}} : memref<?x?xf32>) {
// CHECK: rowred.yield %{{.*}} : f32
func.func @rms_norm_backward_unweighted(%x: memref<?x?xf32>, %dy: memref<?x?xf32>,
                                        %r: memref<?xf32>, %dx: memref<?x?xf32>) {
  rowred.rms_norm_backward ins(%x, %dy : memref<?x?xf32>, memref<?x?xf32>) rstd(%r : memref<?xf32>) outs(%dx : memref<?x?xf32>)
  return
}

// -----

// layer_norm_backward: s = sum(g) and t = sum(g * x_hat), one level (both
// read only the mean and rstd), then one map writing dx = rstd * (g - s / N
// - x_hat * t / N) and, down the columns, dy * x_hat and dy.
// CHECK-LABEL: func.func @layer_norm_backward
// CHECK: rowred.reduce sum ins(%[[X:.*]], %[[DY:.*]] : memref<?x?xf32>, memref<?x?xf32>) cols(%[[W:.*]] : memref<?xf32>) rows(%[[M:.*]], %[[R:.*]] : memref<?xf32>, memref<?xf32>) outs(%[[S:.*]] : memref<?xf32>) {
// CHECK-NEXT: ^bb0(%{{.*}}: f32, %[[DYJ:.*]]: f32, %[[WJ:.*]]: f32, %{{.*}}: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[G:.*]] = arith.mulf %[[DYJ]], %[[WJ]] : f32
// CHECK-NEXT: rowred.yield %[[G]] : f32
// CHECK: rowred.reduce sum ins(%[[X]], %[[DY]] : memref<?x?xf32>, memref<?x?xf32>) cols(%[[W]] : memref<?xf32>) rows(%[[M]], %[[R]] : memref<?xf32>, memref<?xf32>) outs(%[[T:.*]] : memref<?xf32>) {
// CHECK: rowred.map ins(%[[X]], %[[DY]] : memref<?x?xf32>, memref<?x?xf32>) cols(%[[W]] : memref<?xf32>) rows(%[[M]], %[[R]], %[[S]], %[[T]] : memref<?xf32>, memref<?xf32>, memref<?xf32>, memref<?xf32>) outs(%{{.*}} : memref<?x?xf32>) column_sums(%{{.*}}, %{{.*}} : memref<?xf32>, memref<?xf32>) {
// CHECK-NEXT: ^bb0(%[[MX:.*]]: f32, %[[MDY:.*]]: f32, %[[MW:.*]]: f32, %[[MM:.*]]: f32, %[[MR:.*]]: f32, %[[MS:.*]]: f32, %[[MT:.*]]: f32):
// CHECK-NEXT: %[[C:.*]] = arith.subf %[[MX]], %[[MM]] : f32
// CHECK-NEXT: %[[XH:.*]] = arith.mulf %[[C]], %[[MR]] : f32
// CHECK-NEXT: %[[MG:.*]] = arith.mulf %[[MDY]], %[[MW]] : f32
// CHECK-NEXT: %[[N:.*]] = rowred.row_length : f32
// CHECK-NEXT: %[[MEANG:.*]] = arith.divf %[[MS]], %[[N]] : f32
// CHECK-NEXT: %[[MEANGX:.*]] = arith.divf %[[MT]], %[[N]] : f32
// CHECK-NEXT: %[[SH:.*]] = arith.subf %[[MG]], %[[MEANG]] : f32
// CHECK-NEXT: %[[PR:.*]] = arith.mulf %[[XH]], %[[MEANGX]] : f32
// CHECK-NEXT: %[[D:.*]] = arith.subf %[[SH]], %[[PR]] : f32
// CHECK-NEXT: %[[DX:.*]] = arith.mulf %[[MR]], %[[D]] : f32
// CHECK-NEXT: %[[DW:.*]] = arith.mulf %[[MDY]], %[[XH]] : f32
// CHECK-NEXT: rowred.yield %[[DX]], %[[DW]], %[[MDY]] : f32, f32, f32
// CHECK-NEXT: } {rowred.origin = "layer_norm_backward"}
func.func @layer_norm_backward(%x: memref<?x?xf32>, %dy: memref<?x?xf32>,
                               %m: memref<?xf32>, %r: memref<?xf32>,
                               %w: memref<?xf32>, %dx: memref<?x?xf32>,
                               %dw: memref<?xf32>, %db: memref<?xf32>) {
  rowred.layer_norm_backward ins(%x, %dy : memref<?x?xf32>, memref<?x?xf32>) mean(%m : memref<?xf32>) rstd(%r : memref<?xf32>) weight(%w : memref<?xf32>) outs(%dx : memref<?x?xf32>) weight_grad(%dw : memref<?xf32>) bias_grad(%db : memref<?xf32>)
  return
}

// -----

// cross_entropy: the reduces of logsumexp (with label smoothing, the sum of
// the logits beside the max: one level), the gather of the label's logit,
// and a map of two per-row outputs reading the labels as i64: the loss (NaN
// where the max is infinite, 0 where ignored) and the logsumexp.
// CHECK-LABEL: func.func @cross_entropy
// CHECK: rowred.reduce max ins(%[[X:.*]] : memref<8x32000xbf16>) outs(%[[M:.*]] : memref<8xf32>)
// CHECK: rowred.reduce sum ins(%[[X]] : memref<8x32000xbf16>) outs(%[[T:.*]] : memref<8xf32>)
// CHECK: rowred.reduce sum ins(%[[X]] : memref<8x32000xbf16>) rows(%[[M]] : memref<8xf32>) outs(%[[S:.*]] : memref<8xf32>)
// CHECK: rowred.gather ins(%[[X]] : memref<8x32000xbf16>) indices(%[[LBL:.*]] : memref<8xi64>) outs(%[[G:.*]] : memref<8xf32>)
// CHECK: rowred.map ins(%[[X]] : memref<8x32000xbf16>) rows(%[[M]], %[[S]], %[[G]], %[[LBL]], %[[T]] : memref<8xf32>, memref<8xf32>, memref<8xf32>, memref<8xi64>, memref<8xf32>) outs(%{{.*}}, %{{.*}} : memref<8xf32>, memref<8xf32>) {
// CHECK-NEXT: ^bb0(%{{.*}}: f32, %{{.*}}: f32, %{{.*}}: f32, %[[GI:.*]]: f32, %[[LI:.*]]: i64, %[[TI:.*]]: f32):
// CHECK: %[[LSE:.*]] = arith.addf %[[MI:.*]], %{{.*}} : f32
// CHECK-NEXT: %[[NLL:.*]] = arith.subf %[[LSE]], %[[GI]] : f32
// CHECK-NEXT: %[[A:.*]] = math.absf %[[MI]] : f32
// CHECK-NEXT: %[[INF:.*]] = arith.cmpf oeq, %[[A]], %{{.*}} : f32
// CHECK-NEXT: %[[N:.*]] = rowred.row_length : f32
// CHECK-NEXT: %[[MEAN:.*]] = arith.divf %[[TI]], %[[N]] : f32
// CHECK: %[[LOSS:.*]] = arith.addf
// CHECK-NEXT: %[[NAN:.*]] = arith.select %[[INF]], %{{.*}}, %[[LOSS]] : f32
// CHECK-NEXT: %[[IGN:.*]] = arith.cmpi eq, %[[LI]], %{{.*}} : i64
// CHECK-NEXT: %[[OUT:.*]] = arith.select %[[IGN]], %{{.*}}, %[[NAN]] : f32
// CHECK-NEXT: %[[LSE2:.*]] = arith.select %[[INF]], %[[MI]], %[[LSE]] : f32
// CHECK-NEXT: rowred.yield %[[OUT]], %[[LSE2]] : f32, f32
// CHECK-NEXT: } {rowred.ignore_index = 3 : i64, rowred.label_smoothing = 2.500000e-01 : f32, rowred.origin = "cross_entropy"}
func.func @cross_entropy(%x: memref<8x32000xbf16>, %y: memref<8xi64>, %loss: memref<8xf32>, %lse: memref<8xf32>) {
  rowred.cross_entropy ignore_index(3) label_smoothing(0.25) ins(%x : memref<8x32000xbf16>) labels(%y : memref<8xi64>) outs(%loss : memref<8xf32>) lse(%lse : memref<8xf32>)
  return
}

// -----

// cross_entropy's gradient: a third output of the map, the scale (0 where
// ignored) times the softmax minus the one-hot of the label at the element's
// column.
// CHECK-LABEL: func.func @cross_entropy_grad
// CHECK: rowred.map ins(%[[X:.*]] : memref<?x?xf32>) rows(%{{.*}}, %{{.*}}, %{{.*}}, %[[LBL:.*]], %[[SC:.*]] : memref<?xf32>, memref<?xf32>, memref<?xf32>, memref<?xi32>, memref<?xf32>) outs(%{{.*}}, %[[X]] : memref<?xf32>, memref<?x?xf32>) {
// CHECK-NEXT: ^bb0(%[[XJ:.*]]: f32, %[[MI:.*]]: f32, %[[SI:.*]]: f32, %{{.*}}: f32, %[[LI:.*]]: i32, %[[GI:.*]]: f32):
// CHECK: %[[IGN:.*]] = arith.cmpi eq, %[[LI]], %{{.*}} : i32
// CHECK: %[[SCALE:.*]] = arith.select %[[IGN]], %{{.*}}, %[[GI]] : f32
// CHECK-NEXT: %[[D:.*]] = arith.subf %[[XJ]], %[[MI]] : f32
// CHECK-NEXT: %[[E:.*]] = math.exp %[[D]] : f32
// CHECK-NEXT: %[[P:.*]] = arith.divf %[[E]], %[[SI]] : f32
// CHECK-NEXT: %[[J:.*]] = rowred.column_index : i32
// CHECK-NEXT: %[[HIT:.*]] = arith.cmpi eq, %[[J]], %[[LI]] : i32
// CHECK-NEXT: %[[T:.*]] = arith.select %[[HIT]], %{{.*}}, %{{.*}} : f32
// CHECK-NEXT: %[[PT:.*]] = arith.subf %[[P]], %[[T]] : f32
// CHECK-NEXT: %[[G:.*]] = arith.mulf %[[PT]], %[[SCALE]] : f32
// CHECK-NEXT: rowred.yield %{{.*}}, %[[G]] : f32, f32
func.func @cross_entropy_grad(%x: memref<?x?xf32>, %y: memref<?xi32>, %g: memref<?xf32>, %loss: memref<?xf32>) {
  rowred.cross_entropy ignore_index(-100) ins(%x : memref<?x?xf32>) labels(%y : memref<?xi32>) grad_scale(%g : memref<?xf32>) outs(%loss : memref<?xf32>) grad(%x : memref<?x?xf32>)
  return
}

// -----

// The norms' statistics: rms_norm's rstd is the map's second, per-row
// output (the rsqrt the rows are scaled by); layer_norm's mean is the first
// mean corrected, m + d.
// CHECK-LABEL: func.func @norm_statistics
// CHECK: rowred.map ins(%{{.*}} : memref<?x64xf32>) rows(%{{.*}} : memref<?xf32>) outs(%{{.*}}, %{{.*}} : memref<?x64xf32>, memref<?xf32>) {
// CHECK: %[[RS:.*]] = math.rsqrt
// CHECK-NEXT: %[[Y:.*]] = arith.mulf %{{.*}}, %[[RS]] : f32
// CHECK-NEXT: rowred.yield %[[Y]], %[[RS]] : f32, f32
// CHECK: rowred.map ins(%{{.*}} : memref<?x64xf32>) rows({{.*}}) outs(%{{.*}}, %{{.*}}, %{{.*}} : memref<?x64xf32>, memref<?xbf16>, memref<?xf32>) {
// CHECK-NEXT: ^bb0(%{{.*}}: f32, %[[S:.*]]: f32, %[[C:.*]]: f32, %{{.*}}: f32):
// CHECK: %[[K:.*]] = arith.divf %[[C]]
// CHECK: %[[R:.*]] = math.rsqrt
// CHECK-NEXT: %[[Y2:.*]] = arith.mulf %{{.*}}, %[[R]] : f32
// CHECK-NEXT: %[[M1:.*]] = arith.divf %[[S]], %{{.*}} : f32
// CHECK-NEXT: %[[M:.*]] = arith.addf %[[M1]], %[[K]] : f32
// CHECK-NEXT: rowred.yield %[[Y2]], %[[M]], %[[R]] : f32, f32, f32
func.func @norm_statistics(%x: memref<?x64xf32>, %y: memref<?x64xf32>, %m: memref<?xbf16>, %r: memref<?xf32>) {
  rowred.rms_norm epsilon(1.0e-06) ins(%x : memref<?x64xf32>) outs(%y : memref<?x64xf32>) rstd(%r : memref<?xf32>)
  rowred.layer_norm epsilon(1.0e-05) ins(%x : memref<?x64xf32>) outs(%y : memref<?x64xf32>) mean(%m : memref<?xbf16>) rstd(%r : memref<?xf32>)
  return
}

// -----

// A safe softmax: the map gives 0 where the row's max is -inf.
// CHECK-LABEL: func.func @safe_softmax
// CHECK: rowred.map ins(%{{.*}} : memref<?x?xf32>) rows(%{{.*}}, %{{.*}} : memref<?xf32>, memref<?xf32>) outs(%{{.*}} : memref<?x?xf32>) {
// CHECK-NEXT: ^bb0(%{{.*}}: f32, %[[M:.*]]: f32, %{{.*}}: f32):
// CHECK: %[[Y:.*]] = arith.divf
// CHECK-NEXT: %[[MASKED:.*]] = arith.cmpf oeq, %[[M]], %{{.*}} : f32
// CHECK-NEXT: %[[OUT:.*]] = arith.select %[[MASKED]], %{{.*}}, %[[Y]] : f32
// CHECK-NEXT: rowred.yield %[[OUT]] : f32
// CHECK-NEXT: } {rowred.origin = "softmax", rowred.safe}
func.func @safe_softmax(%x: memref<?x?xf32>, %y: memref<?x?xf32>) {
  rowred.softmax dimension(1) safe ins(%x : memref<?x?xf32>) outs(%y : memref<?x?xf32>)
  return
}

// -----

// cross_entropy of a rank-0 loss: the map's totals over the rows (rank-0
// column_sums), no outputs: the loss (0 where ignored) and the count of
// rows kept (1, 0 where ignored).
// CHECK-LABEL: func.func @cross_entropy_sum
// CHECK: rowred.map ins(%{{.*}} : memref<?x?xbf16>) rows(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : memref<?xf32>, memref<?xf32>, memref<?xf32>, memref<?xi64>) column_sums(%[[SUM:.*]], %[[N:.*]] : memref<f32>, memref<f32>) {
// CHECK: %[[IGN:.*]] = arith.cmpi eq, %{{.*}}, %{{.*}} : i64
// CHECK: %[[LOSS:.*]] = arith.select %[[IGN]], %{{.*}}, %{{.*}} : f32
// CHECK: %[[KEPT:.*]] = arith.select %[[IGN]], %{{.*}}, %{{.*}} : f32
// CHECK: rowred.yield %[[LOSS]], %[[KEPT]] : f32, f32
func.func @cross_entropy_sum(%x: memref<?x?xbf16>, %y: memref<?xi64>, %sum: memref<f32>, %n: memref<f32>) {
  rowred.cross_entropy ignore_index(-100) ins(%x : memref<?x?xbf16>) labels(%y : memref<?xi64>) outs(%sum : memref<f32>) count(%n : memref<f32>)
  return
}
