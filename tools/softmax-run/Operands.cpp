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

bool isNormBackward(const std::string &op) {
  return op == "rms_norm_backward" || op == "layer_norm_backward";
}

/// Row `r`'s (mean, rstd) as a norm computes them: the mean (0 for rms_norm,
/// not `centered`) and 1 / sqrt(the mean of the squares about it + eps).
std::pair<double, double> rowStatistics(const Matrix &x, int64_t r,
                                        bool centered, double eps) {
  double mean = 0, squares = 0;
  for (int64_t c = 0; centered && c < x.cols; ++c)
    mean += x.get(r, c);
  mean /= double(x.cols);
  for (int64_t c = 0; c < x.cols; ++c)
    squares += (x.get(r, c) - mean) * (x.get(r, c) - mean);
  return {mean, 1.0 / std::sqrt(squares / double(x.cols) + eps)};
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
/// The float64 logsumexp of row `r` of `x`: as torch.logsumexp with
/// `finite` (+inf with a +inf, -inf when every element is -inf, NaN with a
/// NaN), else as log_softmax computes it (NaN for all three).
double logSumExp(const Matrix &x, int64_t r, bool finite) {
  double m = -INFINITY;
  for (int64_t c = 0; c < x.cols; ++c)
    m = std::isnan(x.get(r, c)) ? NAN : std::max(m, x.get(r, c));
  if (std::isnan(m))
    return m;
  double shift = std::isinf(m) && finite ? 0.0 : m, s = 0;
  for (int64_t c = 0; c < x.cols; ++c)
    s += std::exp(x.get(r, c) - shift);
  return shift + std::log(s);
}
} // namespace

std::string softmax_run::referenceProblem(const KernelSpec &spec) {
  if (spec.op == "softmax" || spec.op == "log_softmax" || isBackward(spec.op) ||
      spec.op == "logsumexp" || spec.op == "logsumexp_backward")
    return "";
  if (spec.op == "rms_norm_backward")
    return "";
  if (spec.op == "layer_norm_backward")
    return spec.count(KernelOperand::Role::ColumnSum) == 1
               ? "a layer_norm_backward kernel with one column sum does not "
                 "record whether it is the weight's or the bias's gradient"
               : "";
  if (spec.op == "cross_entropy")
    return spec.ignoreIndex ? ""
                            : "its metadata has no ignore_index (compile it "
                              "again)";
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
    case KernelOperand::Role::Row: {
      // Labels: a column of each row (a fixed stride through them), and the
      // ignore_index on every seventh row. An f32 per-row input (the
      // gradient's scale): 1, 1/2, ..., 1/5 by turns; logsumexp_backward's
      // first is the rows' logsumexp; the norms' backwards read x's
      // statistics (layer_norm's: the mean, then rstd).
      bool scale = isFloatType(operand.type);
      bool lse = spec.op == "logsumexp_backward" && ops.rows.empty();
      bool layer = spec.op == "layer_norm_backward";
      bool mean = layer && ops.rows.empty();
      Matrix values(operand.type, 1, x.rows, x.rows);
      for (int64_t r = 0; r < x.rows; ++r) {
        if (isNormBackward(spec.op)) {
          auto [m, rstd] = rowStatistics(x, r, layer, /*eps=*/1e-5);
          values.set(0, r, mean ? m : rstd);
          continue;
        }
        values.set(0, r,
                   lse          ? logSumExp(x, r, /*finite=*/true)
                   : scale      ? 1.0 / double(r % 5 + 1)
                   : r % 7 == 3 ? double(spec.ignoreIndex.value_or(-100))
                                : double((r * 7919 + int64_t(seed)) % x.cols));
      }
      ops.rows.push_back(std::move(values));
      break;
    }
    case KernelOperand::Role::ColumnSum:
      ops.columnSums.emplace_back(operand.type, 1, x.cols, x.cols);
      ops.columnSums.back().fill(poison);
      break;
    case KernelOperand::Role::RowOutput:
      ops.rowOutputs.emplace_back(operand.type, 1, x.rows, x.rows);
      ops.rowOutputs.back().fill(poison);
      break;
    case KernelOperand::Role::Total:
      ops.totals.emplace_back(operand.type, 1, 1, 1);
      ops.totals.back().fill(poison);
      break;
    }
  }
  return ops;
}

namespace {
/// The reference of cross-entropy's gradient: `scale * (softmax - target)`,
/// the target smoothed one-hot, 0 for ignored rows (NaN for their rows of
/// NaN, as PyTorch's).
std::vector<double> gradReference(const KernelSpec &spec,
                                  const HostOperands &ops) {
  const Matrix &x = ops.inputs[0];
  std::vector<double> out = reference(x, "softmax");
  double smoothing = spec.labelSmoothing.value_or(0.0);
  parallelRows(x.rows, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      double label = ops.rows[0].get(0, r);
      double scale = ops.rows.size() > 1 ? ops.rows[1].get(0, r) : 1.0;
      if (label == double(*spec.ignoreIndex))
        scale = 0.0;
      for (int64_t c = 0; c < x.cols; ++c) {
        double target = smoothing / double(x.cols) +
                        (double(c) == label ? 1.0 - smoothing : 0.0);
        double &o = out[r * x.cols + c];
        o = (o - target) * scale;
      }
    }
  });
  return out;
}

/// The reference of a kernel writing per-row results: the logsumexp, or
/// cross-entropy's loss (F.cross_entropy, reduction="none").
std::vector<double> rowReference(const KernelSpec &spec,
                                 const HostOperands &ops) {
  const Matrix &x = ops.inputs[0];
  std::vector<double> out(static_cast<size_t>(x.rows));
  double smoothing = spec.labelSmoothing.value_or(0.0);
  parallelRows(x.rows, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      double lse = logSumExp(x, r, spec.op == "logsumexp");
      if (spec.op == "logsumexp") {
        out[r] = lse;
        continue;
      }
      double label = ops.rows[0].get(0, r);
      if (label == double(*spec.ignoreIndex)) {
        out[r] = 0.0;
        continue;
      }
      double picked = label >= 0 && label < double(x.cols)
                          ? x.get(r, static_cast<int64_t>(label))
                          : NAN;
      double loss = lse - picked;
      if (smoothing != 0.0) {
        double total = 0;
        for (int64_t c = 0; c < x.cols; ++c)
          total += x.get(r, c);
        loss = (1 - smoothing) * loss + smoothing * (lse - total / x.cols);
      }
      out[r] = loss;
    }
  });
  return out;
}
} // namespace

namespace {
/// The sum `x + r` of a residual rms_norm's inputs as its second output
/// stores it.
Matrix residualSum(const HostOperands &ops) {
  const Matrix &x = ops.inputs[0], &r = ops.inputs[1];
  Matrix h(ops.outputs[1].type, x.rows, x.cols, x.cols);
  for (int64_t i = 0; i < x.rows; ++i)
    for (int64_t c = 0; c < x.cols; ++c)
      h.set(i, c, x.get(i, c) + r.get(i, c));
  return h;
}

/// The reference of the gradients and the norms, whose (first) input is `x`.
std::vector<double> rowwiseReference(const KernelSpec &spec,
                                     const HostOperands &ops, const Matrix &x) {
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
      auto [mean, scale] =
          rowStatistics(x, r, spec.op == "layer_norm", eps);
      for (int64_t c = 0; c < cols; ++c)
        o[c] = (x.get(r, c) - mean) * scale * column(0, c, 1.0) +
               column(1, c, 0.0);
    }
  });
  return out;
}
} // namespace

namespace {
/// For the norms' backwards: row `r`'s x_hat = (x - mean) * rstd and g = dy *
/// weight at every column, from the statistics the kernel reads.
void normTerms(const KernelSpec &spec, const HostOperands &ops, int64_t r,
               std::vector<double> &xHat, std::vector<double> &g) {
  const Matrix &x = ops.inputs[0], &dy = ops.inputs[1];
  bool layer = spec.op == "layer_norm_backward";
  double mean = layer ? ops.rows[0].get(0, r) : 0.0;
  double rstd = ops.rows[layer ? 1 : 0].get(0, r);
  for (int64_t c = 0; c < x.cols; ++c) {
    xHat[c] = (x.get(r, c) - mean) * rstd;
    g[c] = dy.get(r, c) * (ops.columns.empty() ? 1.0 : ops.columns[0].get(0, c));
  }
}

/// dx of the norms' backwards: rstd * (g - x_hat * mean(g * x_hat)), and
/// for layer_norm minus mean(g) as well, plus rms_norm's grad_residual (a
/// third input) where there is one; with `magnitudes`, also per element
/// the magnitudes of those terms, each mean's from its terms'.
std::vector<double> normBackwardReference(const KernelSpec &spec,
                                          const HostOperands &ops,
                                          std::vector<double> *magnitudes) {
  const Matrix &x = ops.inputs[0];
  bool layer = spec.op == "layer_norm_backward";
  const Matrix *residual = ops.inputs.size() > 2 ? &ops.inputs[2] : nullptr;
  size_t size = static_cast<size_t>(x.rows * x.cols);
  std::vector<double> out(size);
  if (magnitudes)
    magnitudes->assign(size, 0.0);
  parallelRows(x.rows, [&](int64_t begin, int64_t end) {
    std::vector<double> xHat(x.cols), g(x.cols);
    for (int64_t r = begin; r < end; ++r) {
      normTerms(spec, ops, r, xHat, g);
      double sumG = 0, sumGX = 0, absG = 0, absGX = 0;
      for (int64_t c = 0; c < x.cols; ++c) {
        sumG += g[c];
        sumGX += g[c] * xHat[c];
        absG += std::fabs(g[c]);
        absGX += std::fabs(g[c] * xHat[c]);
      }
      double rstd = ops.rows[layer ? 1 : 0].get(0, r);
      double n = double(x.cols);
      double meanG = layer ? sumG / n : 0.0;
      for (int64_t c = 0; c < x.cols; ++c) {
        double added = residual ? residual->get(r, c) : 0.0;
        out[r * x.cols + c] =
            rstd * (g[c] - meanG - xHat[c] * sumGX / n) + added;
        if (magnitudes)
          (*magnitudes)[r * x.cols + c] =
              std::fabs(rstd) * (std::fabs(g[c]) + (layer ? absG / n : 0.0) +
                                 std::fabs(xHat[c]) * absGX / n) +
              std::fabs(added);
      }
    }
  });
  return out;
}
} // namespace

CheckedReference softmax_run::checkedReference(const KernelSpec &spec,
                                               const HostOperands &ops) {
  CheckedReference ref;
  if (ops.outputs.empty() && ops.rowOutputs.empty() && !ops.totals.empty()) {
    // A total, summed in the kernel's order, may be off by a fraction of
    // its terms' magnitudes.
    ColumnSumReference total = totalReferences(spec, ops).front();
    ref.values = std::move(total.sums);
    ref.magnitudes = std::move(total.magnitudes);
  } else if (isNormBackward(spec.op)) {
    ref.values = normBackwardReference(spec, ops, &ref.magnitudes);
  } else {
    ref.values = referenceOf(spec, ops);
  }
  return ref;
}

std::vector<ColumnSumReference>
softmax_run::totalReferences(const KernelSpec &spec, const HostOperands &ops) {
  std::vector<ColumnSumReference> refs;
  if (ops.totals.empty())
    return refs;
  ColumnSumReference loss{{0.0}, {0.0}}, count{{0.0}, {0.0}};
  std::vector<double> losses = rowReference(spec, ops);
  for (size_t r = 0; r < losses.size(); ++r) {
    loss.sums[0] += losses[r];
    loss.magnitudes[0] += std::fabs(losses[r]);
    bool kept = ops.rows[0].get(0, r) != double(*spec.ignoreIndex);
    count.sums[0] += kept;
    count.magnitudes[0] += kept;
  }
  refs.push_back(std::move(loss));
  if (ops.totals.size() > 1)
    refs.push_back(std::move(count));
  return refs;
}

std::vector<double>
softmax_run::referenceMagnitudes(const KernelSpec &spec,
                                 const HostOperands &ops) {
  return checkedReference(spec, ops).magnitudes;
}

std::vector<ColumnSumReference>
softmax_run::columnSumReferences(const KernelSpec &spec,
                                 const HostOperands &ops) {
  std::vector<ColumnSumReference> refs(ops.columnSums.size());
  if (refs.empty())
    return refs;
  const Matrix &x = ops.inputs[0], &dy = ops.inputs[1];
  for (ColumnSumReference &ref : refs) {
    ref.sums.assign(x.cols, 0.0);
    ref.magnitudes.assign(x.cols, 0.0);
  }
  std::vector<double> xHat(x.cols), g(x.cols);
  for (int64_t r = 0; r < x.rows; ++r) {
    normTerms(spec, ops, r, xHat, g);
    for (int64_t c = 0; c < x.cols; ++c) {
      // dw first, then db.
      double terms[2] = {dy.get(r, c) * xHat[c], dy.get(r, c)};
      for (size_t k = 0; k < refs.size() && k < 2; ++k) {
        refs[k].sums[c] += terms[k];
        refs[k].magnitudes[c] += std::fabs(terms[k]);
      }
    }
  }
  return refs;
}

std::vector<double> softmax_run::referenceOf(const KernelSpec &spec,
                                             const HostOperands &ops) {
  const Matrix &x = ops.inputs[0];
  if (isNormBackward(spec.op))
    return normBackwardReference(spec, ops, nullptr);
  if (spec.op == "softmax" || spec.op == "log_softmax") {
    std::vector<double> out = reference(x, spec.op);
    // A safe kernel's rows of -inf give zeros.
    for (int64_t r = 0; spec.safe && r < x.rows; ++r) {
      bool masked = true;
      for (int64_t c = 0; masked && c < x.cols; ++c)
        masked = x.get(r, c) == -INFINITY;
      if (masked)
        std::fill_n(out.begin() + r * x.cols, x.cols, 0.0);
    }
    return out;
  }
  if (spec.op == "cross_entropy" && !ops.outputs.empty())
    return gradReference(spec, ops);
  if (spec.op == "logsumexp_backward") {
    // g * exp(x - lse), with the logsumexp as the kernel reads it.
    std::vector<double> out(static_cast<size_t>(x.rows * x.cols));
    for (int64_t r = 0; r < x.rows; ++r)
      for (int64_t c = 0; c < x.cols; ++c)
        out[r * x.cols + c] = ops.rows[1].get(0, r) *
                              std::exp(x.get(r, c) - ops.rows[0].get(0, r));
    return out;
  }
  if (spec.op == "cross_entropy" && ops.rowOutputs.empty() &&
      !ops.totals.empty())
    return {totalReferences(spec, ops).front().sums.front()};
  if (spec.op == "logsumexp" || spec.op == "cross_entropy")
    return rowReference(spec, ops);
  if (spec.op == "rms_norm" && ops.inputs.size() == 2)
    return rowwiseReference(spec, ops, residualSum(ops));
  return rowwiseReference(spec, ops, x);
}
