// RUN: softmax-opt %s -split-input-file -verify-diagnostics

func.func @rank(%x: memref<4xf32>, %y: memref<4xf32>) {
  // expected-error @+1 {{'rowred.softmax' op input must be a rank-2 memref, got rank 1}}
  rowred.softmax dimension(0) ins(%x : memref<4xf32>) outs(%y : memref<4xf32>)
  return
}

// -----

func.func @rank3(%x: memref<2x4x8xf32>, %y: memref<2x4x8xf32>) {
  // expected-error @+1 {{'rowred.log_softmax' op input must be a rank-2 memref, got rank 3}}
  rowred.log_softmax dimension(2) ins(%x : memref<2x4x8xf32>) outs(%y : memref<2x4x8xf32>)
  return
}

// -----

func.func @element_type(%x: memref<4x8xf64>, %y: memref<4x8xf64>) {
  // expected-error @+1 {{'rowred.softmax' op input element type must be f32, f16 or bf16, got 'f64'}}
  rowred.softmax dimension(1) ins(%x : memref<4x8xf64>) outs(%y : memref<4x8xf64>)
  return
}

// -----

func.func @int_type(%x: memref<4x8xi32>, %y: memref<4x8xf32>) {
  // expected-error @+1 {{'rowred.softmax' op input element type must be f32, f16 or bf16, got 'i32'}}
  rowred.softmax dimension(1) ins(%x : memref<4x8xi32>) outs(%y : memref<4x8xf32>)
  return
}

// -----

func.func @type_mismatch(%x: memref<4x8xf32>, %y: memref<4x8xf16>) {
  // expected-error @+1 {{'rowred.softmax' op input and output element types differ: 'f32' vs 'f16'}}
  rowred.softmax dimension(1) ins(%x : memref<4x8xf32>) outs(%y : memref<4x8xf16>)
  return
}

// -----

func.func @shape_mismatch(%x: memref<4x8xf32>, %y: memref<4x9xf32>) {
  // expected-error @+1 {{'rowred.softmax' op input and output shapes differ: 'memref<4x8xf32>' vs 'memref<4x9xf32>'}}
  rowred.softmax dimension(1) ins(%x : memref<4x8xf32>) outs(%y : memref<4x9xf32>)
  return
}

// -----

func.func @dim_out_of_range(%x: memref<4x8xf32>, %y: memref<4x8xf32>) {
  // expected-error @+1 {{'rowred.softmax' op dimension 2 is out of range for a rank-2 input}}
  rowred.softmax dimension(2) ins(%x : memref<4x8xf32>) outs(%y : memref<4x8xf32>)
  return
}

// -----

func.func @dim_negative(%x: memref<4x8xf32>, %y: memref<4x8xf32>) {
  // expected-error @+1 {{'rowred.log_softmax' op dimension -1 is out of range for a rank-2 input}}
  rowred.log_softmax dimension(-1) ins(%x : memref<4x8xf32>) outs(%y : memref<4x8xf32>)
  return
}

// -----

func.func @dim_outer(%x: memref<4x8xf32>, %y: memref<4x8xf32>) {
  // expected-error @+1 {{'rowred.softmax' op only the innermost dimension (1) can be reduced, got 0}}
  rowred.softmax dimension(0) ins(%x : memref<4x8xf32>) outs(%y : memref<4x8xf32>)
  return
}

// -----

func.func @reduce_init_type(%x: memref<4x8xf32>, %m: memref<4xf16>) {
  // expected-error @+1 {{'rowred.reduce' op init must be a rank-1 memref of f32 (one per row), got 'memref<4xf16>'}}
  rowred.reduce max ins(%x : memref<4x8xf32>) outs(%m : memref<4xf16>) {
  ^bb0(%xj: f32):
    rowred.yield %xj : f32
  }
  return
}

// -----

func.func @reduce_init_rows(%x: memref<4x8xf32>, %m: memref<5xf32>) {
  // expected-error @+1 {{'rowred.reduce' op init has 5 elements but the input has 4 rows}}
  rowred.reduce max ins(%x : memref<4x8xf32>) outs(%m : memref<5xf32>) {
  ^bb0(%xj: f32):
    rowred.yield %xj : f32
  }
  return
}

// -----

func.func @reduce_rows_operand(%x: memref<4x8xf32>, %m: memref<4x2xf32>, %s: memref<4xf32>) {
  // expected-error @+1 {{'rowred.reduce' op rows operand #0 must be a rank-1 memref of f32, i32 or i64 (one per row), got 'memref<4x2xf32>'}}
  rowred.reduce sum ins(%x : memref<4x8xf32>) rows(%m : memref<4x2xf32>) outs(%s : memref<4xf32>) {
  ^bb0(%xj: f32, %mi: f32):
    rowred.yield %xj : f32
  }
  return
}

// -----

func.func @reduce_body_arity(%x: memref<4x8xf32>, %m: memref<4xf32>, %s: memref<4xf32>) {
  // expected-error @+1 {{'rowred.reduce' op body must have 2 arguments (one per input, per cols operand and per row scalar), got 1}}
  rowred.reduce sum ins(%x : memref<4x8xf32>) rows(%m : memref<4xf32>) outs(%s : memref<4xf32>) {
  ^bb0(%xj: f32):
    rowred.yield %xj : f32
  }
  return
}

// -----

func.func @reduce_body_type(%x: memref<4x8xf16>, %m: memref<4xf32>) {
  // expected-error @+1 {{'rowred.reduce' op body argument #0 must be 'f32', got 'f16'}}
  rowred.reduce max ins(%x : memref<4x8xf16>) outs(%m : memref<4xf32>) {
  ^bb0(%xj: f16):
    %e = arith.extf %xj : f16 to f32
    rowred.yield %e : f32
  }
  return
}

// -----

func.func @reduce_unknown_combiner(%x: memref<4x8xf32>, %m: memref<4xf32>) {
  // expected-error @+1 {{expected string or keyword containing one of the following enum values for attribute 'combiner' [max, sum]}}
  rowred.reduce min ins(%x : memref<4x8xf32>) outs(%m : memref<4xf32>) {
  ^bb0(%xj: f32):
    rowred.yield %xj : f32
  }
  return
}

// -----

func.func @yield_type(%x: memref<4x8xf32>, %m: memref<4xf32>) {
  rowred.reduce max ins(%x : memref<4x8xf32>) outs(%m : memref<4xf32>) {
  ^bb0(%xj: f32):
    %t = arith.truncf %xj : f32 to f16
    // expected-error @+1 {{'rowred.yield' op operand #0 must be variadic of 32-bit float, but got 'f16'}}
    rowred.yield %t : f16
  }
  return
}

// -----

func.func @yield_outside(%v: f32) {
  // expected-error @+1 {{'rowred.yield' op expects parent op to be one of 'rowred.reduce, rowred.map'}}
  rowred.yield %v : f32
}

// -----

func.func @map_shape(%x: memref<4x8xf32>, %y: memref<4x16xf32>) {
  // expected-error @+1 {{'rowred.map' op output has shape 'memref<4x16xf32>', which differs from 'memref<4x8xf32>'}}
  rowred.map ins(%x : memref<4x8xf32>) outs(%y : memref<4x16xf32>) {
  ^bb0(%xj: f32):
    rowred.yield %xj : f32
  }
  return
}

// -----

func.func @map_output_type(%x: memref<4x8xf32>, %y: memref<4x8xi8>) {
  // expected-error @+1 {{'rowred.map' op output element type must be f32, f16 or bf16, got 'i8'}}
  rowred.map ins(%x : memref<4x8xf32>) outs(%y : memref<4x8xi8>) {
  ^bb0(%xj: f32):
    rowred.yield %xj : f32
  }
  return
}

// -----

func.func @map_rows_count(%x: memref<4x8xf32>, %m: memref<3xf32>, %y: memref<4x8xf32>) {
  // expected-error @+1 {{'rowred.map' op rows operand #0 has 3 elements but the input has 4 rows}}
  rowred.map ins(%x : memref<4x8xf32>) rows(%m : memref<3xf32>) outs(%y : memref<4x8xf32>) {
  ^bb0(%xj: f32, %mi: f32):
    rowred.yield %xj : f32
  }
  return
}

// -----

func.func @map_body_terminator(%x: memref<4x8xf32>, %y: memref<4x8xf32>) {
  rowred.map ins(%x : memref<4x8xf32>) outs(%y : memref<4x8xf32>) {
  ^bb0(%xj: f32):
    // expected-error @+1 {{block with no terminator}}
    %a = arith.addf %xj, %xj : f32
  }
  return
}

// -----

func.func @not_memref(%x: tensor<4x8xf32>, %y: memref<4x8xf32>) {
  // expected-error @+1 {{invalid kind of type specified: expected builtin.memref, but found 'tensor<4x8xf32>'}}
  rowred.softmax dimension(1) ins(%x : tensor<4x8xf32>) outs(%y : memref<4x8xf32>)
  return
}

// -----

// The kernels read a row's elements with stride 1: any other column stride,
// static or dynamic, is refused rather than dropped.
func.func @column_stride(%x: memref<?x?xf32, strided<[?, 2]>>, %y: memref<?x?xf32>) {
  // expected-error @+1 {{'rowred.softmax' op input rows must be contiguous (stride 1 between the elements of a row), got stride 2}}
  rowred.softmax dimension(1) ins(%x : memref<?x?xf32, strided<[?, 2]>>) outs(%y : memref<?x?xf32>)
  return
}

// -----

func.func @dynamic_column_stride(%x: memref<?x?xf32>, %y: memref<?x?xf32, strided<[1, ?]>>) {
  // expected-error @+1 {{'rowred.log_softmax' op output rows must be contiguous (stride 1 between the elements of a row), got a dynamic stride}}
  rowred.log_softmax dimension(1) ins(%x : memref<?x?xf32>) outs(%y : memref<?x?xf32, strided<[1, ?]>>)
  return
}

// -----

func.func @map_column_stride(%x: memref<?x?xf32, strided<[?, ?]>>, %y: memref<?x?xf32>) {
  // expected-error @+1 {{'rowred.map' op input rows must be contiguous (stride 1 between the elements of a row), got a dynamic stride}}
  rowred.map ins(%x : memref<?x?xf32, strided<[?, ?]>>) outs(%y : memref<?x?xf32>) {
  ^bb0(%xj: f32):
    rowred.yield %xj : f32
  }
  return
}

// -----

// A row stride of any value is the ABI's: accepted.
func.func @row_stride(%x: memref<?x?xf32, strided<[?, 1], offset: ?>>, %y: memref<?x?xf32>) {
  rowred.softmax dimension(1) ins(%x : memref<?x?xf32, strided<[?, 1], offset: ?>>) outs(%y : memref<?x?xf32>)
  return
}

// -----

func.func @backward_shape(%y: memref<4x8xf32>, %dy: memref<4x9xf32>, %dx: memref<4x8xf32>) {
  // expected-error @+1 {{'rowred.softmax_backward' op grad_output has shape 'memref<4x9xf32>', which differs from 'memref<4x8xf32>'}}
  rowred.softmax_backward dimension(1) ins(%y, %dy : memref<4x8xf32>, memref<4x9xf32>) outs(%dx : memref<4x8xf32>)
  return
}

// -----

func.func @backward_dimension(%y: memref<4x8xf32>, %dy: memref<4x8xf32>, %dx: memref<4x8xf32>) {
  // expected-error @+1 {{'rowred.log_softmax_backward' op only the innermost dimension (1) can be reduced, got 0}}
  rowred.log_softmax_backward dimension(0) ins(%y, %dy : memref<4x8xf32>, memref<4x8xf32>) outs(%dx : memref<4x8xf32>)
  return
}

// -----

func.func @backward_type(%y: memref<4x8xf32>, %dy: memref<4x8xf64>, %dx: memref<4x8xf32>) {
  // expected-error @+1 {{'rowred.softmax_backward' op grad_output element type must be f32, f16 or bf16, got 'f64'}}
  rowred.softmax_backward dimension(1) ins(%y, %dy : memref<4x8xf32>, memref<4x8xf64>) outs(%dx : memref<4x8xf32>)
  return
}

// -----

func.func @norm_epsilon(%x: memref<4x8xf32>, %y: memref<4x8xf32>) {
  // expected-error @+1 {{'rowred.rms_norm' op epsilon must be finite and not negative, got -1.000000e-05}}
  rowred.rms_norm epsilon(-1.0e-05) ins(%x : memref<4x8xf32>) outs(%y : memref<4x8xf32>)
  return
}

// -----

func.func @norm_weight_length(%x: memref<4x8xf32>, %w: memref<9xf32>, %y: memref<4x8xf32>) {
  // expected-error @+1 {{'rowred.rms_norm' op weight has 9 elements but the rows have 8 columns}}
  rowred.rms_norm epsilon(1.0e-05) ins(%x : memref<4x8xf32>) weight(%w : memref<9xf32>) outs(%y : memref<4x8xf32>)
  return
}

// -----

func.func @norm_bias_stride(%x: memref<4x8xf32>, %b: memref<8xf32, strided<[2]>>, %y: memref<4x8xf32>) {
  // expected-error @+1 {{'rowred.layer_norm' op bias must be contiguous (stride 1), got 'memref<8xf32, strided<[2]>>'}}
  rowred.layer_norm epsilon(1.0e-05) ins(%x : memref<4x8xf32>) bias(%b : memref<8xf32, strided<[2]>>) outs(%y : memref<4x8xf32>)
  return
}

// -----

func.func @norm_weight_rank(%x: memref<4x8xf32>, %w: memref<4x8xf32>, %y: memref<4x8xf32>) {
  // expected-error @+1 {{'rowred.layer_norm' op weight must be a rank-1 memref of f32, f16 or bf16 (one element per column), got 'memref<4x8xf32>'}}
  rowred.layer_norm epsilon(1.0e-05) ins(%x : memref<4x8xf32>) weight(%w : memref<4x8xf32>) outs(%y : memref<4x8xf32>)
  return
}

// -----

func.func @norm_output_shape(%x: memref<4x8xf32>, %y: memref<8x4xf32>) {
  // expected-error @+1 {{'rowred.layer_norm' op output has shape 'memref<8x4xf32>', which differs from 'memref<4x8xf32>'}}
  rowred.layer_norm epsilon(1.0e-05) ins(%x : memref<4x8xf32>) outs(%y : memref<8x4xf32>)
  return
}

// -----

func.func @map_yield_count(%x: memref<4x8xf32>, %y: memref<4x8xf32>, %z: memref<4x8xf32>) {
  rowred.map ins(%x : memref<4x8xf32>) outs(%y, %z : memref<4x8xf32>, memref<4x8xf32>) {
  ^bb0(%xj: f32):
    // expected-error @+1 {{'rowred.yield' op yields 1 values; rowred.map takes 2 (one per output)}}
    rowred.yield %xj : f32
  }
  return
}

// -----

func.func @reduce_yield_count(%x: memref<4x8xf32>, %s: memref<4xf32>) {
  rowred.reduce sum ins(%x : memref<4x8xf32>) outs(%s : memref<4xf32>) {
  ^bb0(%xj: f32):
    // expected-error @+1 {{'rowred.yield' op yields 2 values; rowred.reduce takes 1}}
    rowred.yield %xj, %xj : f32, f32
  }
  return
}

// -----

func.func @reduce_second_input(%x: memref<4x8xf32>, %r: memref<4x7xf32>, %s: memref<4xf32>) {
  // expected-error @+1 {{'rowred.reduce' op input #1 has shape 'memref<4x7xf32>', which differs from 'memref<4x8xf32>'}}
  rowred.reduce sum ins(%x, %r : memref<4x8xf32>, memref<4x7xf32>) outs(%s : memref<4xf32>) {
  ^bb0(%xj: f32, %rj: f32):
    rowred.yield %xj : f32
  }
  return
}

// -----

func.func @map_column_length(%x: memref<4x8xf32>, %w: memref<4xf16>, %y: memref<4x8xf32>) {
  // expected-error @+1 {{'rowred.map' op cols operand #0 has 4 elements but the rows have 8 columns}}
  rowred.map ins(%x : memref<4x8xf32>) cols(%w : memref<4xf16>) outs(%y : memref<4x8xf32>) {
  ^bb0(%xj: f32, %wj: f32):
    rowred.yield %xj : f32
  }
  return
}

// -----

func.func @map_body_arguments(%x: memref<4x8xf32>, %w: memref<8xf16>, %y: memref<4x8xf32>) {
  // expected-error @+1 {{'rowred.map' op body must have 2 arguments (one per input, per cols operand and per row scalar), got 1}}
  rowred.map ins(%x : memref<4x8xf32>) cols(%w : memref<8xf16>) outs(%y : memref<4x8xf32>) {
  ^bb0(%xj: f32):
    rowred.yield %xj : f32
  }
  return
}

// -----

func.func @row_length_outside(%x: f32) -> f32 {
  // expected-error @+1 {{'rowred.row_length' op expects parent op to be one of 'rowred.reduce, rowred.map'}}
  %n = rowred.row_length : f32
  return %n : f32
}

// -----

func.func @row_output_reads_elements(%x: memref<4x8xf32>, %s: memref<4xf32>) {
  // expected-error @+1 {{'rowred.map' op output #0 has one element per row, but the value yielded for it depends on the row's elements (body argument #0): it may use only row scalars}}
  rowred.map ins(%x : memref<4x8xf32>) outs(%s : memref<4xf32>) {
  ^bb0(%xj: f32):
    %d = arith.addf %xj, %xj : f32
    rowred.yield %d : f32
  }
  return
}

// -----

func.func @row_output_length(%x: memref<4x8xf32>, %s: memref<3xf32>) {
  // expected-error @+1 {{'rowred.map' op output has 3 elements but the input has 4 rows}}
  rowred.map ins(%x : memref<4x8xf32>) outs(%s : memref<3xf32>) {
  ^bb0(%xj: f32):
    %c = arith.constant 1.0 : f32
    rowred.yield %c : f32
  }
  return
}

// -----

func.func @integer_row_argument(%x: memref<4x8xf32>, %l: memref<4xi32>, %y: memref<4x8xf32>) {
  // expected-error @+1 {{'rowred.map' op body argument #1 must be 'i32', got 'f32'}}
  rowred.map ins(%x : memref<4x8xf32>) rows(%l : memref<4xi32>) outs(%y : memref<4x8xf32>) {
  ^bb0(%xj: f32, %li: f32):
    rowred.yield %xj : f32
  }
  return
}

// -----

func.func @row_operand_type(%x: memref<4x8xf32>, %l: memref<4xi16>, %y: memref<4x8xf32>) {
  // expected-error @+1 {{'rowred.map' op rows operand #0 must be a rank-1 memref of f32, i32 or i64 (one per row), got 'memref<4xi16>'}}
  rowred.map ins(%x : memref<4x8xf32>) rows(%l : memref<4xi16>) outs(%y : memref<4x8xf32>) {
  ^bb0(%xj: f32, %li: i16):
    rowred.yield %xj : f32
  }
  return
}

// -----

func.func @gather_indices(%x: memref<4x8xf32>, %i: memref<4xf32>, %g: memref<4xf32>) {
  // expected-error @+1 {{'rowred.gather' op indices must be a rank-1 memref of i32 or i64 (one per row), got 'memref<4xf32>'}}
  rowred.gather ins(%x : memref<4x8xf32>) indices(%i : memref<4xf32>) outs(%g : memref<4xf32>)
  return
}

// -----

func.func @gather_strided(%x: memref<4x8xf32>, %i: memref<4xi64, strided<[2]>>, %g: memref<4xf32>) {
  // expected-error @+1 {{'rowred.gather' op indices must be contiguous (stride 1), got 'memref<4xi64, strided<[2]>>'}}
  rowred.gather ins(%x : memref<4x8xf32>) indices(%i : memref<4xi64, strided<[2]>>) outs(%g : memref<4xf32>)
  return
}

// -----

func.func @logsumexp_output(%x: memref<4x8xf32>, %y: memref<4x8xf32>) {
  // expected-error @+1 {{'rowred.logsumexp' op output must be a rank-1 memref of f32, f16 or bf16 (one per row), got 'memref<4x8xf32>'}}
  rowred.logsumexp ins(%x : memref<4x8xf32>) outs(%y : memref<4x8xf32>)
  return
}

// -----

func.func @logsumexp_backward_lse(%x: memref<4x8xf32>, %l: memref<4xbf16>, %g: memref<4xf32>) {
  // expected-error @+1 {{'rowred.logsumexp_backward' op lse must be a rank-1 memref of f32 (one per row), got 'memref<4xbf16>'}}
  rowred.logsumexp_backward ins(%x : memref<4x8xf32>) lse(%l : memref<4xbf16>) grad(%g : memref<4xf32>) outs(%x : memref<4x8xf32>)
  return
}

// -----

func.func @logsumexp_backward_grad_rows(%x: memref<4x8xf32>, %l: memref<4xf32>, %g: memref<5xf32>) {
  // expected-error @+1 {{'rowred.logsumexp_backward' op grad has 5 elements but the input has 4 rows}}
  rowred.logsumexp_backward ins(%x : memref<4x8xf32>) lse(%l : memref<4xf32>) grad(%g : memref<5xf32>) outs(%x : memref<4x8xf32>)
  return
}

// -----

func.func @logsumexp_backward_shape(%x: memref<4x8xf32>, %l: memref<4xf32>, %dx: memref<4x9xf32>) {
  // expected-error @+1 {{'rowred.logsumexp_backward' op grad_input has shape 'memref<4x9xf32>', which differs from 'memref<4x8xf32>'}}
  rowred.logsumexp_backward ins(%x : memref<4x8xf32>) lse(%l : memref<4xf32>) grad(%l : memref<4xf32>) outs(%dx : memref<4x9xf32>)
  return
}

// -----

func.func @cross_entropy_labels(%x: memref<4x8xf32>, %l: memref<4xf32>, %loss: memref<4xf32>) {
  // expected-error @+1 {{'rowred.cross_entropy' op labels must be a rank-1 memref of i32 or i64 (one per row), got 'memref<4xf32>'}}
  rowred.cross_entropy ignore_index(-100) ins(%x : memref<4x8xf32>) labels(%l : memref<4xf32>) outs(%loss : memref<4xf32>)
  return
}

// -----

func.func @cross_entropy_rows(%x: memref<4x8xf32>, %l: memref<5xi64>, %loss: memref<4xf32>) {
  // expected-error @+1 {{'rowred.cross_entropy' op labels has 5 elements but the input has 4 rows}}
  rowred.cross_entropy ignore_index(-100) ins(%x : memref<4x8xf32>) labels(%l : memref<5xi64>) outs(%loss : memref<4xf32>)
  return
}

// -----

func.func @cross_entropy_smoothing(%x: memref<4x8xf32>, %l: memref<4xi64>, %loss: memref<4xf32>) {
  // expected-error @+1 {{'rowred.cross_entropy' op label_smoothing must be in [0, 1], got 1.5}}
  rowred.cross_entropy ignore_index(-100) label_smoothing(1.5) ins(%x : memref<4x8xf32>) labels(%l : memref<4xi64>) outs(%loss : memref<4xf32>)
  return
}

// -----

func.func @rms_norm_rstd(%x: memref<4x8xf32>, %y: memref<4x8xf32>, %r: memref<4x8xf32>) {
  // expected-error @+1 {{'rowred.rms_norm' op rstd must be a rank-1 memref of f32, f16 or bf16 (one per row), got 'memref<4x8xf32>'}}
  rowred.rms_norm epsilon(1.0e-06) ins(%x : memref<4x8xf32>) outs(%y : memref<4x8xf32>) rstd(%r : memref<4x8xf32>)
  return
}

// -----

func.func @layer_norm_mean(%x: memref<4x8xf32>, %y: memref<4x8xf32>, %m: memref<5xf32>) {
  // expected-error @+1 {{'rowred.layer_norm' op mean has 5 elements but the input has 4 rows}}
  rowred.layer_norm epsilon(1.0e-05) ins(%x : memref<4x8xf32>) outs(%y : memref<4x8xf32>) mean(%m : memref<5xf32>)
  return
}

// -----

func.func @rms_norm_residual_alone(%x: memref<4x8xf32>, %r: memref<4x8xf32>, %y: memref<4x8xf32>) {
  // expected-error @+1 {{'rowred.rms_norm' op takes residual and residual_out together, got residual alone}}
  rowred.rms_norm epsilon(1.0e-06) ins(%x : memref<4x8xf32>) residual(%r : memref<4x8xf32>) outs(%y : memref<4x8xf32>)
  return
}

// -----

func.func @rms_norm_residual_out_alone(%x: memref<4x8xf32>, %y: memref<4x8xf32>, %h: memref<4x8xf32>) {
  // expected-error @+1 {{'rowred.rms_norm' op takes residual and residual_out together, got residual_out alone}}
  rowred.rms_norm epsilon(1.0e-06) ins(%x : memref<4x8xf32>) outs(%y : memref<4x8xf32>) residual_out(%h : memref<4x8xf32>)
  return
}

// -----

func.func @rms_norm_residual_shape(%x: memref<4x8xf32>, %r: memref<4x9xf32>, %y: memref<4x8xf32>) {
  // expected-error @+1 {{'rowred.rms_norm' op residual has shape 'memref<4x9xf32>', which differs from 'memref<4x8xf32>'}}
  rowred.rms_norm epsilon(1.0e-06) ins(%x : memref<4x8xf32>) residual(%r : memref<4x9xf32>) outs(%y : memref<4x8xf32>) residual_out(%r : memref<4x9xf32>)
  return
}

// -----

func.func @rms_norm_residual_out_rank(%x: memref<4x8xf32>, %r: memref<4x8xf32>, %y: memref<4x8xf32>, %h: memref<4xf32>) {
  // expected-error @+1 {{'rowred.rms_norm' op residual_out must be a rank-2 memref, got rank 1}}
  rowred.rms_norm epsilon(1.0e-06) ins(%x : memref<4x8xf32>) residual(%r : memref<4x8xf32>) outs(%y : memref<4x8xf32>) residual_out(%h : memref<4xf32>)
  return
}

// -----

func.func @cross_entropy_scale_without_grad(%x: memref<4x8xf32>, %l: memref<4xi64>, %g: memref<4xf32>, %loss: memref<4xf32>) {
  // expected-error @+1 {{'rowred.cross_entropy' op has a grad_scale but no grad to scale}}
  rowred.cross_entropy ignore_index(-100) ins(%x : memref<4x8xf32>) labels(%l : memref<4xi64>) grad_scale(%g : memref<4xf32>) outs(%loss : memref<4xf32>)
  return
}

// -----

func.func @cross_entropy_grad_shape(%x: memref<4x8xf32>, %l: memref<4xi64>, %loss: memref<4xf32>, %dx: memref<4x9xf32>) {
  // expected-error @+1 {{'rowred.cross_entropy' op grad has shape 'memref<4x9xf32>', which differs from 'memref<4x8xf32>'}}
  rowred.cross_entropy ignore_index(-100) ins(%x : memref<4x8xf32>) labels(%l : memref<4xi64>) outs(%loss : memref<4xf32>) grad(%dx : memref<4x9xf32>)
  return
}

// -----

func.func @cross_entropy_grad_scale_type(%x: memref<4x8xf32>, %l: memref<4xi64>, %g: memref<4xbf16>, %loss: memref<4xf32>) {
  // expected-error @+1 {{'rowred.cross_entropy' op grad_scale must be a rank-1 memref of f32 (one per row), got 'memref<4xbf16>'}}
  rowred.cross_entropy ignore_index(-100) ins(%x : memref<4x8xf32>) labels(%l : memref<4xi64>) grad_scale(%g : memref<4xbf16>) outs(%loss : memref<4xf32>) grad(%x : memref<4x8xf32>)
  return
}

// -----

func.func @column_index_in_reduce(%x: memref<4x8xf32>, %s: memref<4xf32>) {
  rowred.reduce sum ins(%x : memref<4x8xf32>) outs(%s : memref<4xf32>) {
  ^bb0(%a: f32):
    // expected-error @+1 {{'rowred.column_index' op expects parent op 'rowred.map'}}
    %j = rowred.column_index : i32
    rowred.yield %a : f32
  }
  return
}

// -----

func.func @column_index_per_row(%x: memref<4x8xf32>, %z: memref<4xf32>) {
  // expected-error @+1 {{'rowred.map' op output #0 has one element per row, but the value yielded for it depends on the element's column (rowred.column_index): it may use only row scalars}}
  rowred.map ins(%x : memref<4x8xf32>) outs(%z : memref<4xf32>) {
  ^bb0(%a: f32):
    %j = rowred.column_index : i32
    %f = arith.sitofp %j : i32 to f32
    rowred.yield %f : f32
  }
  return
}

// -----

func.func @column_sums_length(%x: memref<4x8xf32>, %s: memref<4xf32>) {
  // expected-error @+1 {{'rowred.map' op column_sums has 4 elements but the rows have 8 columns}}
  rowred.map ins(%x : memref<4x8xf32>) outs(%x : memref<4x8xf32>) column_sums(%s : memref<4xf32>) {
  ^bb0(%e: f32):
    rowred.yield %e, %e : f32, f32
  }
  return
}

// -----

func.func @column_sums_yield(%x: memref<4x8xf32>, %s: memref<8xf32>) {
  // expected-error @+3 {{'rowred.yield' op yields 1 values; rowred.map takes 2 (one per output)}}
  rowred.map ins(%x : memref<4x8xf32>) outs(%x : memref<4x8xf32>) column_sums(%s : memref<8xf32>) {
  ^bb0(%e: f32):
    rowred.yield %e : f32
  }
  return
}

// -----

func.func @rms_norm_backward_weight_grad(%x: memref<4x8xf32>, %r: memref<4xf32>, %dw: memref<8xf32>) {
  // expected-error @+1 {{'rowred.rms_norm_backward' op has a weight_grad but no weight}}
  rowred.rms_norm_backward ins(%x, %x : memref<4x8xf32>, memref<4x8xf32>) rstd(%r : memref<4xf32>) outs(%x : memref<4x8xf32>) weight_grad(%dw : memref<8xf32>)
  return
}

// -----

func.func @rms_norm_backward_rstd(%x: memref<4x8xf32>, %r: memref<4xbf16>) {
  // expected-error @+1 {{'rowred.rms_norm_backward' op rstd must be a rank-1 memref of f32 (one per row), got 'memref<4xbf16>'}}
  rowred.rms_norm_backward ins(%x, %x : memref<4x8xf32>, memref<4x8xf32>) rstd(%r : memref<4xbf16>) outs(%x : memref<4x8xf32>)
  return
}

// -----

func.func @rms_norm_backward_grad_residual(%x: memref<4x8xf32>, %r: memref<4xf32>, %dh: memref<4x9xf32>) {
  // expected-error @+1 {{'rowred.rms_norm_backward' op grad_residual}}
  rowred.rms_norm_backward ins(%x, %x : memref<4x8xf32>, memref<4x8xf32>) rstd(%r : memref<4xf32>) grad_residual(%dh : memref<4x9xf32>) outs(%x : memref<4x8xf32>)
  return
}

// -----

func.func @layer_norm_backward_weight_grad(%x: memref<4x8xf32>, %r: memref<4xf32>, %dw: memref<8xf32>) {
  // expected-error @+1 {{'rowred.layer_norm_backward' op has a weight_grad but no weight}}
  rowred.layer_norm_backward ins(%x, %x : memref<4x8xf32>, memref<4x8xf32>) mean(%r : memref<4xf32>) rstd(%r : memref<4xf32>) outs(%x : memref<4x8xf32>) weight_grad(%dw : memref<8xf32>)
  return
}

// -----

func.func @layer_norm_backward_bias_grad(%x: memref<4x8xf32>, %r: memref<4xf32>, %db: memref<9xf32>) {
  // expected-error @+1 {{'rowred.layer_norm_backward' op bias_grad has 9 elements but the rows have 8 columns}}
  rowred.layer_norm_backward ins(%x, %x : memref<4x8xf32>, memref<4x8xf32>) mean(%r : memref<4xf32>) rstd(%r : memref<4xf32>) outs(%x : memref<4x8xf32>) bias_grad(%db : memref<9xf32>)
  return
}

// -----

// Labels are signless: a kernel loads and compares them as i32 or i64.
func.func @cross_entropy_unsigned_labels(%x: memref<4x8xf32>, %l: memref<4xui64>, %loss: memref<4xf32>) {
  // expected-error @+1 {{'rowred.cross_entropy' op labels must be a rank-1 memref of i32 or i64 (one per row), got 'memref<4xui64>'}}
  rowred.cross_entropy ignore_index(-100) ins(%x : memref<4x8xf32>) labels(%l : memref<4xui64>) outs(%loss : memref<4xf32>)
  return
}

// -----

func.func @cross_entropy_signed_labels(%x: memref<4x8xf32>, %l: memref<4xsi32>, %loss: memref<4xf32>) {
  // expected-error @+1 {{labels must be a rank-1 memref of i32 or i64 (one per row), got 'memref<4xsi32>'}}
  rowred.cross_entropy ignore_index(-100) ins(%x : memref<4x8xf32>) labels(%l : memref<4xsi32>) outs(%loss : memref<4xf32>)
  return
}

// -----

// An ignore_index the labels' type cannot hold would be truncated.
func.func @cross_entropy_ignore_index_i32(%x: memref<4x8xf32>, %l: memref<4xi32>, %loss: memref<4xf32>) {
  // expected-error @+1 {{'rowred.cross_entropy' op ignore_index 4294967296 does not fit the labels' i32}}
  rowred.cross_entropy ignore_index(4294967296) ins(%x : memref<4x8xf32>) labels(%l : memref<4xi32>) outs(%loss : memref<4xf32>)
  return
}

// -----

func.func @cross_entropy_ignore_index_i64(%x: memref<4x8xf32>, %l: memref<4xi64>, %loss: memref<4xf32>) {
  // expected-error @+1 {{ignore_index 9223372036854775808 does not fit in 64 bits}}
  rowred.cross_entropy ignore_index(9223372036854775808) ins(%x : memref<4x8xf32>) labels(%l : memref<4xi64>) outs(%loss : memref<4xf32>)
  return
}

// -----

// The kernels take pointers to global memory.
func.func @workgroup_memory(%x: memref<8x4096xbf16, 3>, %o: memref<8x4096xbf16>) {
  // expected-error @+1 {{'rowred.rms_norm' op input must be in global memory (the default memory space, 0 or 1), got 'memref<8x4096xbf16, 3>'}}
  rowred.rms_norm epsilon(1.0e-06) ins(%x : memref<8x4096xbf16, 3>) outs(%o : memref<8x4096xbf16>)
  return
}

// -----

// Two results written to one buffer would race.
func.func @outputs_alias(%x: memref<8x4096xbf16>, %h: memref<8x4096xbf16>, %o: memref<8x4096xbf16>) {
  // expected-error @+1 {{'rowred.rms_norm' op output and residual_out must be different buffers}}
  rowred.rms_norm epsilon(1.0e-06) ins(%x : memref<8x4096xbf16>) residual(%h : memref<8x4096xbf16>) outs(%o : memref<8x4096xbf16>) residual_out(%o : memref<8x4096xbf16>)
  return
}

// -----

func.func @map_outputs_alias(%x: memref<4x8xf32>, %y: memref<4x8xf32>) {
  // expected-error @+1 {{'rowred.map' op output #0 and output #1 must be different buffers}}
  rowred.map ins(%x : memref<4x8xf32>) outs(%y, %y : memref<4x8xf32>, memref<4x8xf32>) {
  ^bb0(%e: f32):
    rowred.yield %e, %e : f32, f32
  }
  return
}

// -----

func.func @total_reads_elements(%x: memref<4x8xf32>, %t: memref<f32>) {
  // expected-error @+1 {{'rowred.map' op column_sums #0 is a total over the rows, but the value yielded for it depends on the row's elements (body argument #0): it may use only row scalars}}
  rowred.map ins(%x : memref<4x8xf32>) column_sums(%t : memref<f32>) {
  ^bb0(%xj: f32):
    rowred.yield %xj : f32
  }
  return
}

// -----

func.func @map_writes_nothing(%x: memref<4x8xf32>) {
  // expected-error @+1 {{'rowred.map' op needs at least one input and one output or column sum}}
  rowred.map ins(%x : memref<4x8xf32>) {
  ^bb0(%xj: f32):
    rowred.yield %xj : f32
  }
  return
}

// -----

func.func @total_of_integers(%x: memref<4x8xf32>, %s: memref<4xf32>, %t: memref<i32>) {
  // expected-error @+1 {{'rowred.map' op column_sums must be a rank-0 memref of f32, f16 or bf16, got 'memref<i32>'}}
  rowred.map ins(%x : memref<4x8xf32>) rows(%s : memref<4xf32>) column_sums(%t : memref<i32>) {
  ^bb0(%xj: f32, %si: f32):
    rowred.yield %si : f32
  }
  return
}

// -----

func.func @count_without_sum(%x: memref<4x8xf32>, %y: memref<4xi64>, %loss: memref<4xf32>, %n: memref<f32>) {
  // expected-error @+1 {{'rowred.cross_entropy' op has a count, which needs a rank-0 loss (the sum of the rows' losses)}}
  rowred.cross_entropy ignore_index(-100) ins(%x : memref<4x8xf32>) labels(%y : memref<4xi64>) outs(%loss : memref<4xf32>) count(%n : memref<f32>)
  return
}

// -----

func.func @count_of_bf16(%x: memref<4x8xf32>, %y: memref<4xi64>, %loss: memref<f32>, %n: memref<bf16>) {
  // expected-error @+1 {{'rowred.cross_entropy' op count must be a rank-0 memref of f32, got 'memref<bf16>'}}
  rowred.cross_entropy ignore_index(-100) ins(%x : memref<4x8xf32>) labels(%y : memref<4xi64>) outs(%loss : memref<f32>) count(%n : memref<bf16>)
  return
}

// -----

func.func @count_is_loss(%x: memref<4x8xf32>, %y: memref<4xi64>, %loss: memref<f32>) {
  // expected-error @+1 {{'rowred.cross_entropy' op loss and count must be different buffers}}
  rowred.cross_entropy ignore_index(-100) ins(%x : memref<4x8xf32>) labels(%y : memref<4xi64>) outs(%loss : memref<f32>) count(%loss : memref<f32>)
  return
}
