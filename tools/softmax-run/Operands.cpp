//===- Operands.cpp - Every operand of a launch and its reference ---------===//
//
// Part of the softmax kernel compiler.
//
//===----------------------------------------------------------------------===//

#include "Operands.h"

#include <cmath>

using namespace softmax_run;
using namespace rowred::runtime;

namespace {
bool isBackward(const std::string &op) {
  return op == "softmax_backward" || op == "log_softmax_backward";
}

/// A matrix of `type` shaped as `like` whose elements are `values` (one per
/// element of a rows x cols matrix, row-major).
Matrix store(DType type, const Matrix &like,
             const std::vector<double> &values) {
  Matrix m(type, like.rows, like.cols, like.stride);
  for (int64_t r = 0; r < m.rows; ++r)
    for (int64_t c = 0; c < m.cols; ++c)
      m.set(r, c, values[r * m.cols + c]);
  return m;
}
} // namespace

std::string softmax_run::referenceProblem(const KernelSpec &spec) {
  if (spec.op == "softmax" || spec.op == "log_softmax" || isBackward(spec.op))
    return "";
  if (spec.op == "rms_norm" || spec.op == "layer_norm") {
    if (!spec.epsilon)
      return "its metadata has no epsilon (compile it again)";
    if (spec.op == "layer_norm" && spec.count(KernelOperand::Role::Column) == 1)
      return "a layer_norm kernel with one per-column operand does not record "
             "whether it is the weight or the bias";
    return "";
  }
  return "softmax-run has no reference for op '" + spec.op + "'";
}

HostOperands softmax_run::makeOperands(const KernelSpec &spec, const Matrix &x,
                                       int64_t yStride, Distribution dist,
                                       uint64_t seed, double poison) {
  HostOperands ops;
  int64_t salt = 1;
  auto generated = [&](DType type, int64_t rows, int64_t stride) {
    Matrix m(type, rows, x.cols, stride);
    generate(m, rows == 1 ? Distribution::Normal : dist, seed + salt++);
    return m;
  };
  for (const KernelOperand &operand : spec.operands) {
    switch (operand.role) {
    case KernelOperand::Role::Input:
      if (ops.inputs.empty() && isBackward(spec.op))
        ops.inputs.push_back(
            store(operand.type, x,
                  reference(x, spec.op == "softmax_backward" ? "softmax"
                                                             : "log_softmax")));
      else if (ops.inputs.empty())
        ops.inputs.push_back(x);
      else
        ops.inputs.push_back(generated(operand.type, x.rows, x.stride));
      break;
    case KernelOperand::Role::Output:
      ops.outputs.emplace_back(operand.type, x.rows, x.cols, yStride);
      ops.outputs.back().fill(poison);
      break;
    case KernelOperand::Role::Column:
      ops.columns.push_back(generated(operand.type, 1, x.cols));
      break;
    }
  }
  return ops;
}

std::vector<double> softmax_run::referenceOf(const KernelSpec &spec,
                                             const HostOperands &ops) {
  const Matrix &x = ops.inputs[0];
  if (spec.op == "softmax" || spec.op == "log_softmax")
    return reference(x, spec.op);
  int64_t cols = x.cols;
  std::vector<double> out(static_cast<size_t>(x.rows * cols));
  // The per-column operands present: rms_norm's weight; layer_norm's weight
  // and bias (two) or none.
  auto column = [&](size_t k, int64_t c, double absent) {
    return k < ops.columns.size() ? ops.columns[k].get(0, c) : absent;
  };
  double eps = spec.epsilon.value_or(0.0);
  parallelRows(x.rows, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      double *o = out.data() + r * cols;
      if (isBackward(spec.op)) {
        const Matrix &dy = ops.inputs[1];
        bool log = spec.op == "log_softmax_backward";
        double s = 0;
        for (int64_t c = 0; c < cols; ++c)
          s += log ? dy.get(r, c) : dy.get(r, c) * x.get(r, c);
        for (int64_t c = 0; c < cols; ++c)
          o[c] = log ? dy.get(r, c) - std::exp(x.get(r, c)) * s
                     : x.get(r, c) * (dy.get(r, c) - s);
        continue;
      }
      double mean = 0;
      if (spec.op == "layer_norm") {
        for (int64_t c = 0; c < cols; ++c)
          mean += x.get(r, c);
        mean /= cols;
      }
      double squares = 0;
      for (int64_t c = 0; c < cols; ++c)
        squares += (x.get(r, c) - mean) * (x.get(r, c) - mean);
      double scale = 1.0 / std::sqrt(squares / cols + eps);
      for (int64_t c = 0; c < cols; ++c)
        o[c] = (x.get(r, c) - mean) * scale * column(0, c, 1.0) +
               column(1, c, 0.0);
    }
  });
  return out;
}
