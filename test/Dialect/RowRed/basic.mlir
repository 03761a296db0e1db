// RUN: softmax-opt %s | FileCheck %s
// Round-trip: print, parse back and print again must agree.
// RUN: softmax-opt %s | softmax-opt | FileCheck %s

// CHECK-LABEL: func.func @softmax_ops
func.func @softmax_ops(%x: memref<?x?xf32>, %y: memref<?x?xf32>,
                       %h: memref<4x1024xbf16>, %g: memref<4x1024xbf16>,
                       %a: memref<8x781xf16, strided<[1024, 1]>>,
                       %b: memref<8x781xf16>) {
  // CHECK: rowred.softmax dimension(1) ins(%{{.*}} : memref<?x?xf32>) outs(%{{.*}} : memref<?x?xf32>)
  rowred.softmax dimension(1) ins(%x : memref<?x?xf32>) outs(%y : memref<?x?xf32>)
  // CHECK: rowred.log_softmax dimension(1) ins(%{{.*}} : memref<4x1024xbf16>) outs(%{{.*}} : memref<4x1024xbf16>)
  rowred.log_softmax dimension(1) ins(%h : memref<4x1024xbf16>) outs(%g : memref<4x1024xbf16>)
  // CHECK: rowred.softmax dimension(1) ins(%{{.*}} : memref<8x781xf16, strided<[1024, 1]>>) outs(%{{.*}} : memref<8x781xf16>)
  rowred.softmax dimension(1) ins(%a : memref<8x781xf16, strided<[1024, 1]>>) outs(%b : memref<8x781xf16>)
  return
}

// CHECK-LABEL: func.func @generic_pieces
func.func @generic_pieces(%x: memref<?x?xf16>, %m: memref<?xf32>,
                          %s: memref<?xf32>, %y: memref<?x?xf32>) {
  // CHECK: rowred.reduce max ins(%[[X:.*]] : memref<?x?xf16>) outs(%[[M:.*]] : memref<?xf32>) {
  // CHECK-NEXT: ^bb0(%[[A:.*]]: f32):
  // CHECK-NEXT: rowred.yield %[[A]] : f32
  rowred.reduce max ins(%x : memref<?x?xf16>) outs(%m : memref<?xf32>) {
  ^bb0(%xj: f32):
    rowred.yield %xj : f32
  }
  // CHECK: rowred.reduce sum ins(%[[X]] : memref<?x?xf16>) rows(%[[M]] : memref<?xf32>) outs(%[[S:.*]] : memref<?xf32>) {
  // CHECK: math.exp
  rowred.reduce sum ins(%x : memref<?x?xf16>) rows(%m : memref<?xf32>) outs(%s : memref<?xf32>) {
  ^bb0(%xj: f32, %mi: f32):
    %d = arith.subf %xj, %mi : f32
    %e = math.exp %d : f32
    rowred.yield %e : f32
  }
  // CHECK: rowred.map ins(%[[X]] : memref<?x?xf16>) rows(%[[M]], %[[S]] : memref<?xf32>, memref<?xf32>) outs(%{{.*}} : memref<?x?xf32>) {
  // CHECK: ^bb0(%{{.*}}: f32, %{{.*}}: f32, %{{.*}}: f32):
  // CHECK: arith.divf
  // CHECK: rowred.yield
  rowred.map ins(%x : memref<?x?xf16>) rows(%m, %s : memref<?xf32>, memref<?xf32>) outs(%y : memref<?x?xf32>) {
  ^bb0(%xj: f32, %mi: f32, %si: f32):
    %d = arith.subf %xj, %mi : f32
    %e = math.exp %d : f32
    %r = arith.divf %e, %si : f32
    rowred.yield %r : f32
  }
  // A map with no row scalars is allowed (an element-wise conversion).
  // CHECK: rowred.map ins(%[[X]] : memref<?x?xf16>) outs(%{{.*}} : memref<?x?xf32>) {
  rowred.map ins(%x : memref<?x?xf16>) outs(%y : memref<?x?xf32>) {
  ^bb0(%xj: f32):
    rowred.yield %xj : f32
  }
  return
}

// The ops declare their memory effects, so CSE and canonicalize keep them.
// CHECK-LABEL: func.func @not_dead
// CHECK: rowred.softmax
func.func @not_dead(%x: memref<2x3xf32>, %y: memref<2x3xf32>) {
  rowred.softmax dimension(1) ins(%x : memref<2x3xf32>) outs(%y : memref<2x3xf32>)
  return
}
// RUN: softmax-opt %s --canonicalize --cse | FileCheck %s --check-prefix=KEEP
// KEEP-LABEL: func.func @not_dead
// KEEP: rowred.softmax
// The family's ops, the generic pieces and the per-row results alike: each
// declares its writes (their outputs, statistics, residual and gradient).
// KEEP-LABEL: func.func @family_ops
// KEEP: rowred.softmax_backward
// KEEP: rowred.log_softmax_backward
// KEEP-COUNT-2: rowred.rms_norm
// KEEP-COUNT-2: rowred.layer_norm
// KEEP-LABEL: func.func @norm_statistics
// KEEP: rowred.rms_norm
// KEEP-COUNT-2: rowred.layer_norm
// KEEP-LABEL: func.func @rms_norm_residual
// KEEP: rowred.rms_norm
// KEEP-LABEL: func.func @several_operands
// KEEP: rowred.reduce
// KEEP: rowred.map
// KEEP-LABEL: func.func @per_row_results
// KEEP: rowred.logsumexp
// KEEP: rowred.logsumexp_backward
// KEEP-COUNT-3: rowred.cross_entropy
// KEEP: rowred.gather
// KEEP-COUNT-2: rowred.map
// KEEP-LABEL: func.func @norm_backward
// KEEP: rowred.rms_norm_backward
// KEEP: rowred.rms_norm_backward
// KEEP: rowred.layer_norm_backward
// KEEP: rowred.map

// CHECK-LABEL: func.func @family_ops
func.func @family_ops(%y: memref<?x?xf32>, %dy: memref<?x?xf32>,
                      %dx: memref<?x?xf32>, %x: memref<8x4096xbf16>,
                      %w: memref<4096xbf16>, %b: memref<4096xf32>,
                      %o: memref<8x4096xbf16>) {
  // CHECK: rowred.softmax_backward dimension(1) ins(%{{.*}}, %{{.*}} : memref<?x?xf32>, memref<?x?xf32>) outs(%{{.*}} : memref<?x?xf32>)
  rowred.softmax_backward dimension(1) ins(%y, %dy : memref<?x?xf32>, memref<?x?xf32>) outs(%dx : memref<?x?xf32>)
  // CHECK: rowred.log_softmax_backward dimension(1) ins(%{{.*}}, %{{.*}} : memref<?x?xf32>, memref<?x?xf32>) outs(%{{.*}} : memref<?x?xf32>)
  rowred.log_softmax_backward dimension(1) ins(%y, %dy : memref<?x?xf32>, memref<?x?xf32>) outs(%dx : memref<?x?xf32>)
  // CHECK: rowred.rms_norm epsilon(9.99999997E-7) ins(%{{.*}} : memref<8x4096xbf16>) weight(%{{.*}} : memref<4096xbf16>) outs(%{{.*}} : memref<8x4096xbf16>)
  rowred.rms_norm epsilon(1.0e-06) ins(%x : memref<8x4096xbf16>) weight(%w : memref<4096xbf16>) outs(%o : memref<8x4096xbf16>)
  // CHECK: rowred.rms_norm epsilon(0.000000e+00) ins(%{{.*}} : memref<8x4096xbf16>) outs(
  rowred.rms_norm epsilon(0.0) ins(%x : memref<8x4096xbf16>) outs(%o : memref<8x4096xbf16>)
  // CHECK: rowred.layer_norm epsilon(9.99999974E-6) ins(%{{.*}} : memref<8x4096xbf16>) weight(%{{.*}} : memref<4096xbf16>) bias(%{{.*}} : memref<4096xf32>) outs(
  rowred.layer_norm epsilon(1.0e-05) ins(%x : memref<8x4096xbf16>) weight(%w : memref<4096xbf16>) bias(%b : memref<4096xf32>) outs(%o : memref<8x4096xbf16>)
  // CHECK: rowred.layer_norm epsilon(9.99999974E-6) ins(%{{.*}} : memref<8x4096xbf16>) bias(%{{.*}} : memref<4096xf32>) outs(
  rowred.layer_norm epsilon(1.0e-05) ins(%x : memref<8x4096xbf16>) bias(%b : memref<4096xf32>) outs(%o : memref<8x4096xbf16>)
  return
}

// The norms' per-row statistics.
// CHECK-LABEL: func.func @norm_statistics
func.func @norm_statistics(%x: memref<8x4096xbf16>, %o: memref<8x4096xbf16>,
                           %m: memref<8xf32>, %r: memref<8xbf16>) {
  // CHECK: rowred.rms_norm epsilon(9.99999997E-7) ins(%{{.*}} : memref<8x4096xbf16>) outs(%{{.*}} : memref<8x4096xbf16>) rstd(%{{.*}} : memref<8xbf16>)
  rowred.rms_norm epsilon(1.0e-06) ins(%x : memref<8x4096xbf16>) outs(%o : memref<8x4096xbf16>) rstd(%r : memref<8xbf16>)
  // CHECK: rowred.layer_norm epsilon(9.99999974E-6) ins(%{{.*}} : memref<8x4096xbf16>) outs(%{{.*}} : memref<8x4096xbf16>) mean(%{{.*}} : memref<8xf32>) rstd(%{{.*}} : memref<8xbf16>)
  rowred.layer_norm epsilon(1.0e-05) ins(%x : memref<8x4096xbf16>) outs(%o : memref<8x4096xbf16>) mean(%m : memref<8xf32>) rstd(%r : memref<8xbf16>)
  // CHECK: rowred.layer_norm epsilon(9.99999974E-6) ins(%{{.*}} : memref<8x4096xbf16>) outs(%{{.*}} : memref<8x4096xbf16>) rstd(
  rowred.layer_norm epsilon(1.0e-05) ins(%x : memref<8x4096xbf16>) outs(%o : memref<8x4096xbf16>) rstd(%r : memref<8xbf16>)
  return
}

// The residual form: the sum written in place over the residual, the rows
// normalized in place over the input.
// CHECK-LABEL: func.func @rms_norm_residual
// CHECK-SAME: (%[[X:.*]]: memref<8x4096xbf16>, %[[H:.*]]: memref<8x4096xbf16>, %[[W:.*]]: memref<4096xbf16>)
// CHECK: rowred.rms_norm epsilon(9.99999997E-7) ins(%[[X]] : memref<8x4096xbf16>) residual(%[[H]] : memref<8x4096xbf16>) weight(%[[W]] : memref<4096xbf16>) outs(%[[X]] : memref<8x4096xbf16>) residual_out(%[[H]] : memref<8x4096xbf16>)
func.func @rms_norm_residual(%x: memref<8x4096xbf16>, %h: memref<8x4096xbf16>, %w: memref<4096xbf16>) {
  rowred.rms_norm epsilon(1.0e-06) ins(%x : memref<8x4096xbf16>) residual(%h : memref<8x4096xbf16>) weight(%w : memref<4096xbf16>) outs(%x : memref<8x4096xbf16>) residual_out(%h : memref<8x4096xbf16>)
  return
}

// Several inputs, per-column operands, several outputs and the row length.
// CHECK-LABEL: func.func @several_operands
func.func @several_operands(%x: memref<?x?xf16>, %r: memref<?x?xf32>,
                            %w: memref<?xbf16>, %s: memref<?xf32>,
                            %y: memref<?x?xf16>, %z: memref<?x?xf32>) {
  // CHECK: rowred.reduce sum ins(%[[X:.*]], %[[R:.*]] : memref<?x?xf16>, memref<?x?xf32>) cols(%[[W:.*]] : memref<?xbf16>) outs(%[[S:.*]] : memref<?xf32>) {
  // CHECK-NEXT: ^bb0(%{{.*}}: f32, %{{.*}}: f32, %{{.*}}: f32):
  rowred.reduce sum ins(%x, %r : memref<?x?xf16>, memref<?x?xf32>) cols(%w : memref<?xbf16>) outs(%s : memref<?xf32>) {
  ^bb0(%xj: f32, %rj: f32, %wj: f32):
    %a = arith.addf %xj, %rj : f32
    %p = arith.mulf %a, %wj : f32
    rowred.yield %p : f32
  }
  // CHECK: rowred.map ins(%[[X]], %[[R]] : memref<?x?xf16>, memref<?x?xf32>) cols(%[[W]] : memref<?xbf16>) rows(%[[S]] : memref<?xf32>) outs(%{{.*}}, %{{.*}} : memref<?x?xf16>, memref<?x?xf32>) {
  // CHECK: %[[N:.*]] = rowred.row_length : f32
  // CHECK: rowred.yield %{{.*}}, %{{.*}} : f32, f32
  rowred.map ins(%x, %r : memref<?x?xf16>, memref<?x?xf32>) cols(%w : memref<?xbf16>) rows(%s : memref<?xf32>) outs(%y, %z : memref<?x?xf16>, memref<?x?xf32>) {
  ^bb0(%xj: f32, %rj: f32, %wj: f32, %si: f32):
    %n = rowred.row_length : f32
    %mean = arith.divf %si, %n : f32
    %a = arith.addf %xj, %rj : f32
    %d = arith.subf %a, %mean : f32
    %e = arith.mulf %d, %wj : f32
    rowred.yield %e, %a : f32, f32
  }
  return
}

// Per-row results: logsumexp, cross_entropy, and the generic pieces they
// decompose into (a gather, integer row operands, rank-1 map outputs).
// CHECK-LABEL: func.func @per_row_results
func.func @per_row_results(%x: memref<?x?xbf16>, %labels: memref<?xi64>,
                           %l32: memref<?xi32>, %loss: memref<?xbf16>,
                           %lse: memref<?xf32>, %g: memref<?xf32>,
                           %sum: memref<f32>, %n: memref<f32>,
                           %half: memref<bf16>) {
  // CHECK: rowred.logsumexp ins(%{{.*}} : memref<?x?xbf16>) outs(%{{.*}} : memref<?xf32>)
  rowred.logsumexp ins(%x : memref<?x?xbf16>) outs(%lse : memref<?xf32>)
  // CHECK: rowred.logsumexp_backward ins(%[[X:.*]] : memref<?x?xbf16>) lse(%{{.*}} : memref<?xf32>) grad(%{{.*}} : memref<?xf32>) outs(%[[X]] : memref<?x?xbf16>)
  rowred.logsumexp_backward ins(%x : memref<?x?xbf16>) lse(%lse : memref<?xf32>) grad(%g : memref<?xf32>) outs(%x : memref<?x?xbf16>)
  // CHECK: rowred.cross_entropy ignore_index(-100) ins(%{{.*}} : memref<?x?xbf16>) labels(%{{.*}} : memref<?xi64>) outs(%{{.*}} : memref<?xbf16>) lse(%{{.*}} : memref<?xf32>)
  rowred.cross_entropy ignore_index(-100) ins(%x : memref<?x?xbf16>) labels(%labels : memref<?xi64>) outs(%loss : memref<?xbf16>) lse(%lse : memref<?xf32>)
  // CHECK: rowred.cross_entropy ignore_index(7) label_smoothing(1.000000e-01) ins(%{{.*}} : memref<?x?xbf16>) labels(%{{.*}} : memref<?xi32>) outs(
  rowred.cross_entropy ignore_index(7) label_smoothing(0.1) ins(%x : memref<?x?xbf16>) labels(%l32 : memref<?xi32>) outs(%loss : memref<?xbf16>)
  // The gradient, scaled per row and in place over the logits.
  // CHECK: rowred.cross_entropy ignore_index(-100) ins(%[[X:.*]] : memref<?x?xbf16>) labels(%{{.*}} : memref<?xi64>) grad_scale(%{{.*}} : memref<?xf32>) outs(%{{.*}} : memref<?xbf16>) grad(%[[X]] : memref<?x?xbf16>)
  rowred.cross_entropy ignore_index(-100) ins(%x : memref<?x?xbf16>) labels(%labels : memref<?xi64>) grad_scale(%g : memref<?xf32>) outs(%loss : memref<?xbf16>) grad(%x : memref<?x?xbf16>)
  // The loss summed over the rows (rank 0) and the count of rows kept.
  // CHECK: rowred.cross_entropy ignore_index(-100) ins(%{{.*}} : memref<?x?xbf16>) labels(%{{.*}} : memref<?xi64>) outs(%{{.*}} : memref<f32>) count(%{{.*}} : memref<f32>) lse(%{{.*}} : memref<?xf32>)
  rowred.cross_entropy ignore_index(-100) ins(%x : memref<?x?xbf16>) labels(%labels : memref<?xi64>) outs(%sum : memref<f32>) count(%n : memref<f32>) lse(%lse : memref<?xf32>)
  // A map of totals only: no outs, rank-0 column_sums of row scalars.
  // CHECK: rowred.map ins(%{{.*}} : memref<?x?xbf16>) rows(%{{.*}} : memref<?xf32>) column_sums(%{{.*}}, %{{.*}} : memref<f32>, memref<bf16>) {
  rowred.map ins(%x : memref<?x?xbf16>) rows(%g : memref<?xf32>) column_sums(%sum, %half : memref<f32>, memref<bf16>) {
  ^bb0(%xj: f32, %gi: f32):
    %one = arith.constant 1.0 : f32
    rowred.yield %gi, %one : f32, f32
  }
  // CHECK: rowred.gather ins(%{{.*}} : memref<?x?xbf16>) indices(%{{.*}} : memref<?xi64>) outs(%{{.*}} : memref<?xf32>)
  rowred.gather ins(%x : memref<?x?xbf16>) indices(%labels : memref<?xi64>) outs(%g : memref<?xf32>)
  // CHECK: rowred.map ins(%{{.*}} : memref<?x?xbf16>) rows(%{{.*}}, %{{.*}} : memref<?xf32>, memref<?xi64>) outs(%{{.*}} : memref<?xbf16>) {
  // CHECK-NEXT: ^bb0(%{{.*}}: f32, %{{.*}}: f32, %{{.*}}: i64):
  rowred.map ins(%x : memref<?x?xbf16>) rows(%g, %labels : memref<?xf32>, memref<?xi64>) outs(%loss : memref<?xbf16>) {
  ^bb0(%xj: f32, %gi: f32, %li: i64):
    %c = arith.constant 0 : i64
    %z = arith.constant 0.0 : f32
    %ignored = arith.cmpi slt, %li, %c : i64
    %v = arith.select %ignored, %z, %gi : f32
    rowred.yield %v : f32
  }
  // A one-hot row from the element's column.
  // CHECK: rowred.column_index : i64
  rowred.map ins(%x : memref<?x?xbf16>) rows(%labels : memref<?xi64>) outs(%x : memref<?x?xbf16>) {
  ^bb0(%xj: f32, %li: i64):
    %j = rowred.column_index : i64
    %hit = arith.cmpi eq, %j, %li : i64
    %one = arith.uitofp %hit : i1 to f32
    rowred.yield %one : f32
  }
  return
}

// A safe softmax and log_softmax (rows of -inf give zeros).
// CHECK-LABEL: func.func @safe
func.func @safe(%x: memref<?x?xf32>, %y: memref<?x?xf32>) {
  // CHECK: rowred.softmax dimension(1) safe ins(%{{.*}} : memref<?x?xf32>) outs(%{{.*}} : memref<?x?xf32>)
  rowred.softmax dimension(1) safe ins(%x : memref<?x?xf32>) outs(%y : memref<?x?xf32>)
  // CHECK: rowred.log_softmax dimension(1) safe ins(
  rowred.log_softmax dimension(1) safe ins(%x : memref<?x?xf32>) outs(%y : memref<?x?xf32>)
  return
}

// RMSNorm's backward (with and without the weight), and the map's sums down
// the columns that it decomposes into.
// CHECK-LABEL: func.func @norm_backward
func.func @norm_backward(%x: memref<?x4096xbf16>, %dy: memref<?x4096xbf16>,
                         %r: memref<?xf32>, %w: memref<4096xbf16>,
                         %dx: memref<?x4096xbf16>, %dw: memref<4096xf32>) {
  // CHECK: rowred.rms_norm_backward ins(%{{.*}}, %{{.*}} : memref<?x4096xbf16>, memref<?x4096xbf16>) rstd(%{{.*}} : memref<?xf32>) weight(%{{.*}} : memref<4096xbf16>) outs(%{{.*}} : memref<?x4096xbf16>) weight_grad(%{{.*}} : memref<4096xf32>)
  rowred.rms_norm_backward ins(%x, %dy : memref<?x4096xbf16>, memref<?x4096xbf16>) rstd(%r : memref<?xf32>) weight(%w : memref<4096xbf16>) outs(%dx : memref<?x4096xbf16>) weight_grad(%dw : memref<4096xf32>)
  // CHECK: rowred.rms_norm_backward ins(%{{.*}}, %{{.*}} : memref<?x4096xbf16>, memref<?x4096xbf16>) rstd(%{{.*}} : memref<?xf32>) outs(%{{.*}} : memref<?x4096xbf16>){{$}}
  rowred.rms_norm_backward ins(%x, %dy : memref<?x4096xbf16>, memref<?x4096xbf16>) rstd(%r : memref<?xf32>) outs(%dx : memref<?x4096xbf16>)
  // CHECK: rowred.rms_norm_backward ins(%{{.*}}, %{{.*}} : memref<?x4096xbf16>, memref<?x4096xbf16>) rstd(%{{.*}} : memref<?xf32>) weight(%{{.*}} : memref<4096xbf16>) grad_residual(%{{.*}} : memref<?x4096xbf16>) outs(%{{.*}} : memref<?x4096xbf16>) weight_grad(%{{.*}} : memref<4096xf32>)
  rowred.rms_norm_backward ins(%x, %dy : memref<?x4096xbf16>, memref<?x4096xbf16>) rstd(%r : memref<?xf32>) weight(%w : memref<4096xbf16>) grad_residual(%dy : memref<?x4096xbf16>) outs(%dx : memref<?x4096xbf16>) weight_grad(%dw : memref<4096xf32>)
  // CHECK: rowred.layer_norm_backward ins(%{{.*}}, %{{.*}} : memref<?x4096xbf16>, memref<?x4096xbf16>) mean(%{{.*}} : memref<?xf32>) rstd(%{{.*}} : memref<?xf32>) outs(%{{.*}} : memref<?x4096xbf16>) bias_grad(%{{.*}} : memref<4096xf32>)
  rowred.layer_norm_backward ins(%x, %dy : memref<?x4096xbf16>, memref<?x4096xbf16>) mean(%r : memref<?xf32>) rstd(%r : memref<?xf32>) outs(%dx : memref<?x4096xbf16>) bias_grad(%dw : memref<4096xf32>)
  // CHECK: rowred.map ins(%{{.*}} : memref<?x4096xbf16>) outs(%{{.*}} : memref<?x4096xbf16>) column_sums(%{{.*}} : memref<4096xf32>) {
  // CHECK-NEXT: ^bb0(%[[E:.*]]: f32):
  // CHECK-NEXT: rowred.yield %[[E]], %[[E]] : f32, f32
  rowred.map ins(%x : memref<?x4096xbf16>) outs(%dx : memref<?x4096xbf16>) column_sums(%dw : memref<4096xf32>) {
  ^bb0(%e: f32):
    rowred.yield %e, %e : f32, f32
  }
  return
}
