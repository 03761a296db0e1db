// The kernels' float operations may fuse: every LLVM operation with
// fast-math flags gains `contract`, keeping the flags it had; operations of
// the host module are left alone.
// RUN: softmax-opt %s --pass-pipeline="builtin.module(gpu.module(rowred-contract-float-ops))" | FileCheck %s
// And through the whole pipeline: layer_norm's variance and map become
// fma.rn.f32, and no multiply or add keeps the rounding modifier that would
// stop ptxas from fusing it.
// RUN: rm -rf %t && softmax-opt %S/../Conversion/RowRedToGPU/Inputs/layer-norm.mlir --rowred-to-ptx="cols=4096 output-dir=%t" -o /dev/null
// RUN: FileCheck %s --check-prefix=PTX --input-file=%t/layer_norm_kernel0.ptx

// CHECK-LABEL: gpu.module @kernels
// CHECK: llvm.fmul %{{.*}}, %{{.*}} {fastmathFlags = #llvm.fastmath<contract>} : f32
// CHECK: llvm.fadd %{{.*}}, %{{.*}} {fastmathFlags = #llvm.fastmath<contract>} : f32
// CHECK: llvm.fsub %{{.*}}, %{{.*}} {fastmathFlags = #llvm.fastmath<nnan, contract>} : f32
// CHECK: llvm.intr.fma(%{{.*}}, %{{.*}}, %{{.*}}) {fastmathFlags = #llvm.fastmath<contract>} : (f32, f32, f32) -> f32
// CHECK-LABEL: func.func @host
// CHECK: llvm.fmul %{{.*}}, %{{.*}} : f32
gpu.module @kernels {
  llvm.func @f(%a: f32, %b: f32, %c: f32) -> f32 {
    %p = llvm.fmul %a, %b : f32
    %s = llvm.fadd %p, %c : f32
    %d = llvm.fsub %s, %a {fastmathFlags = #llvm.fastmath<nnan>} : f32
    %f = llvm.intr.fma(%d, %b, %c) : (f32, f32, f32) -> f32
    llvm.return %f : f32
  }
}
func.func @host(%a: f32) -> f32 {
  %p = llvm.fmul %a, %a : f32
  return %p : f32
}

// PTX: .entry layer_norm_kernel0(
// PTX-NOT: {{(mul|add|sub)\.rn\.f32}}
// PTX: fma.rn.f32
// PTX-NOT: {{(mul|add|sub)\.rn\.f32}}
