// Mixed precision: rms_norm of bf16 rows with an f32 weight (the package's
// kernels of an f32 weight, `rowred.packs build --weight-dtype f32`). The
// rows load and store as vectors of 8 bf16 (16 bytes), the weight as
// vectors of 8 f32 (32 bytes, two 16-byte loads in PTX): the vector path
// asks the weight's base for 32-byte alignment where it asks the rows' for
// 16; otherwise the scalar path loads each element in its own type. The
// metadata names each operand's type; the weight's gradient is f32 too.

// RUN: softmax-opt %s --rowred-decompose --rowred-plan="cols=4096 chip=sm_90" --convert-rowred-to-gpu | FileCheck %s
// RUN: rm -rf %t && softmax-opt %s --rowred-to-ptx="cols=4096 chip=sm_90 ptxas=none output-dir=%t" -o /dev/null
// RUN: FileCheck %s --check-prefix=JSON --input-file=%t/rms_kernel0.json
// RUN: FileCheck %s --check-prefix=BWD --input-file=%t/rms_backward_kernel1.json

// CHECK-LABEL: gpu.func @rms_kernel0(
// CHECK: %[[X:.*]] = llvm.ptrtoint %arg0
// CHECK: arith.remui %[[X]], %c16_i64
// CHECK: %[[W:.*]] = llvm.ptrtoint %arg2
// CHECK: arith.remui %[[W]], %c32_i64
// CHECK-DAG: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<1> -> vector<8xbf16>
// CHECK-DAG: llvm.load %{{.*}} {alignment = 32 : i64} : !llvm.ptr<1> -> vector<8xf32>
// CHECK-DAG: llvm.store %{{.*}} {alignment = 16 : i64} : vector<8xbf16>, !llvm.ptr<1>
// CHECK-DAG: llvm.load %{{.*}} {alignment = 2 : i64} : !llvm.ptr<1> -> bf16
// CHECK-DAG: llvm.load %{{.*}} {alignment = 4 : i64} : !llvm.ptr<1> -> f32

// JSON: "name": "x",
// JSON-NEXT: "role": "input",
// JSON-NEXT: "type": "bf16"
// JSON: "name": "w",
// JSON-NEXT: "role": "column",
// JSON-NEXT: "type": "f32"

// BWD: "role": "column",
// BWD-NEXT: "type": "f32"
// BWD: "role": "column_sum",
// BWD-NEXT: "type": "f32"

func.func @rms(%x: memref<?x?xbf16>, %w: memref<?xf32>, %y: memref<?x?xbf16>, %rstd: memref<?xf32>) {
  rowred.rms_norm epsilon(1.0e-06) ins(%x : memref<?x?xbf16>) weight(%w : memref<?xf32>) outs(%y : memref<?x?xbf16>) rstd(%rstd : memref<?xf32>)
  return
}

func.func @rms_backward(%x: memref<?x?xbf16>, %dy: memref<?x?xbf16>, %rstd: memref<?xf32>, %w: memref<?xf32>, %dx: memref<?x?xbf16>, %dw: memref<?xf32>) {
  rowred.rms_norm_backward ins(%x, %dy : memref<?x?xbf16>, memref<?x?xbf16>) rstd(%rstd : memref<?xf32>) weight(%w : memref<?xf32>) outs(%dx : memref<?x?xbf16>) weight_grad(%dw : memref<?xf32>)
  return
}
