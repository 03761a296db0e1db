//===- OperandsTest.cpp - The family's operands and references ------------===//
//
// Part of the softmax kernel compiler.
//
//===----------------------------------------------------------------------===//

#include "Operands.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace softmax_run;
using namespace rowred::runtime;

namespace {
using Role = KernelOperand::Role;

KernelSpec specOf(const std::string &op, std::vector<Role> roles) {
  KernelSpec spec;
  spec.op = op;
  for (Role role : roles)
    spec.operands.push_back({"", role, DType::F32});
  return spec;
}

Matrix matrixOf(std::vector<std::vector<double>> rows) {
  Matrix m(DType::F32, rows.size(), rows[0].size(), rows[0].size());
  for (size_t r = 0; r < rows.size(); ++r)
    for (size_t c = 0; c < rows[r].size(); ++c)
      m.set(r, c, rows[r][c]);
  return m;
}
} // namespace

TEST(Operands, FollowTheKernelsOrder) {
  KernelSpec spec = specOf(
      "layer_norm", {Role::Input, Role::Output, Role::Column, Role::Column});
  Matrix x = matrixOf({{1, 2, 3}, {4, 5, 6}});
  HostOperands ops =
      makeOperands(spec, x, /*yStride=*/5, Distribution::Normal, 0, kPoison);
  ASSERT_EQ(ops.inputs.size(), 1u);
  EXPECT_EQ(ops.inputs[0].get(1, 2), 6);
  ASSERT_EQ(ops.outputs.size(), 1u);
  EXPECT_EQ(ops.outputs[0].stride, 5);
  EXPECT_EQ(ops.outputs[0].get(0, 4), kPoison); // padding of row 0
  EXPECT_EQ(ops.outputs[0].get(1, 2), kPoison);
  ASSERT_EQ(ops.columns.size(), 2u);
  EXPECT_EQ(ops.columns[1].rows, 1);
  EXPECT_EQ(ops.columns[1].cols, 3);
}

TEST(Operands, GradientsTakeTheForwardsOutput) {
  KernelSpec spec =
      specOf("softmax_backward", {Role::Input, Role::Input, Role::Output});
  Matrix x = matrixOf({{0, std::log(3.0)}});
  HostOperands ops = makeOperands(spec, x, 2, Distribution::Normal, 0, 0);
  EXPECT_NEAR(ops.inputs[0].get(0, 0), 0.25, 1e-7);
  EXPECT_NEAR(ops.inputs[0].get(0, 1), 0.75, 1e-7);
}

TEST(Reference, RmsNormAndLayerNorm) {
  KernelSpec rms =
      specOf("rms_norm", {Role::Input, Role::Output, Role::Column});
  rms.epsilon = 0.0;
  HostOperands ops;
  ops.inputs = {matrixOf({{3, 4}})};
  ops.columns = {matrixOf({{2, 1}})};
  // rms = sqrt((9 + 16) / 2); y = x / rms * w.
  double r = std::sqrt(12.5);
  std::vector<double> y = referenceOf(rms, ops);
  EXPECT_NEAR(y[0], 3 / r * 2, 1e-12);
  EXPECT_NEAR(y[1], 4 / r, 1e-12);

  KernelSpec ln = specOf(
      "layer_norm", {Role::Input, Role::Output, Role::Column, Role::Column});
  ln.epsilon = 0.0;
  ops.inputs = {matrixOf({{1e4 + 1, 1e4 - 1}})};
  ops.columns = {matrixOf({{2, 2}}), matrixOf({{0.5, -0.5}})};
  y = referenceOf(ln, ops);
  EXPECT_NEAR(y[0], 2.5, 1e-9);
  EXPECT_NEAR(y[1], -2.5, 1e-9);
}

TEST(Reference, Gradients) {
  HostOperands ops;
  ops.inputs = {matrixOf({{0.25, 0.75}}), matrixOf({{1, -1}})};
  // sum(dy * y) = -0.5: dx = y * (dy + 0.5).
  std::vector<double> dx = referenceOf(
      specOf("softmax_backward", {Role::Input, Role::Input, Role::Output}),
      ops);
  EXPECT_DOUBLE_EQ(dx[0], 0.375);
  EXPECT_DOUBLE_EQ(dx[1], -0.375);
  // log_softmax_backward: dx = dy - exp(y) * sum(dy), sum(dy) = 3 (y as
  // stored in f32).
  ops.inputs = {matrixOf({{std::log(0.25), std::log(0.75)}}),
                matrixOf({{1, 2}})};
  dx = referenceOf(
      specOf("log_softmax_backward", {Role::Input, Role::Input, Role::Output}),
      ops);
  EXPECT_NEAR(dx[0], 1 - 0.25 * 3, 1e-7);
  EXPECT_NEAR(dx[1], 2 - 0.75 * 3, 1e-7);
}

TEST(Operands, NormBackwardsReadTheRowsStatistics) {
  Matrix x = matrixOf({{1, 2, 6}, {3, 4, 5}});
  KernelSpec ln = specOf("layer_norm_backward",
                         {Role::Input, Role::Input, Role::Output, Role::Column,
                          Role::Row, Role::Row, Role::ColumnSum,
                          Role::ColumnSum});
  HostOperands ops = makeOperands(ln, x, 3, Distribution::Normal, 0, kPoison);
  ASSERT_EQ(ops.rows.size(), 2u);
  ASSERT_EQ(ops.columnSums.size(), 2u);
  // Row 0: mean 3, variance 14 / 3.
  EXPECT_DOUBLE_EQ(ops.rows[0].get(0, 0), 3.0);
  EXPECT_NEAR(ops.rows[1].get(0, 0), 1 / std::sqrt(14.0 / 3 + 1e-5), 1e-7);
  EXPECT_EQ(ops.columnSums[1].cols, 3);
  EXPECT_EQ(ops.columnSums[1].get(0, 2), kPoison);

  KernelSpec rms = specOf("rms_norm_backward",
                          {Role::Input, Role::Input, Role::Output,
                           Role::Column, Role::Row, Role::ColumnSum});
  ops = makeOperands(rms, x, 3, Distribution::Normal, 0, kPoison);
  ASSERT_EQ(ops.rows.size(), 1u);
  // Row 1: the mean of the squares 50 / 3, about 0.
  EXPECT_NEAR(ops.rows[0].get(0, 1), 1 / std::sqrt(50.0 / 3 + 1e-5), 1e-7);
}

TEST(Reference, CrossEntropyTotals) {
  KernelSpec spec = specOf("cross_entropy",
                           {Role::Input, Role::Row, Role::Total, Role::Total});
  spec.ignoreIndex = -100;
  Matrix x = matrixOf({{0, 0}, {0, std::log(3.0)}, {5, 1}});
  HostOperands ops = makeOperands(spec, x, 2, Distribution::Normal, 0, kPoison);
  ASSERT_EQ(ops.totals.size(), 2u);
  EXPECT_EQ(ops.totals[1].get(0, 0), kPoison);
  EXPECT_EQ(&ops.checked(), &ops.totals[0]);
  // Labels 0, 1 and row 2 ignored: losses log 2, log(4 / 3) and 0.
  ops.rows = {matrixOf({{0, 1, -100}})};
  std::vector<ColumnSumReference> refs = totalReferences(spec, ops);
  ASSERT_EQ(refs.size(), 2u);
  EXPECT_NEAR(refs[0].sums[0], std::log(2.0) + std::log(4.0 / 3), 1e-6);
  EXPECT_DOUBLE_EQ(refs[1].sums[0], 2.0);
  EXPECT_NEAR(referenceOf(spec, ops).at(0), refs[0].sums[0], 1e-12);
  EXPECT_NEAR(checkedReference(spec, ops).magnitudes.at(0), refs[0].sums[0],
              1e-12);
}

TEST(Reference, NormBackwards) {
  KernelSpec ln = specOf("layer_norm_backward",
                         {Role::Input, Role::Input, Role::Output, Role::Column,
                          Role::Row, Role::Row, Role::ColumnSum,
                          Role::ColumnSum});
  HostOperands ops;
  ops.inputs = {matrixOf({{1, 2, 6}, {0, 3, 3}}),
                matrixOf({{1, 0, 0}, {0, 1, 1}})};
  ops.columns = {matrixOf({{1, 1, 1}})};
  ops.rows = {matrixOf({{3, 2}}), matrixOf({{1, 0.5}})};
  ops.columnSums = {matrixOf({{0, 0, 0}}), matrixOf({{0, 0, 0}})};
  // Row 0: x_hat = (-2, -1, 3), g = dy: dx = g - mean(g) - x_hat *
  // mean(g x_hat) = g - 1/3 + 2/3 x_hat.
  std::vector<double> dx = referenceOf(ln, ops);
  EXPECT_NEAR(dx[0], -2.0 / 3, 1e-12);
  EXPECT_NEAR(dx[1], -1.0, 1e-12);
  EXPECT_NEAR(dx[2], 5.0 / 3, 1e-12);
  // Each element's terms: |g|, mean(|g|) = 1/3 and |x_hat| mean(|g x_hat|)
  // = |x_hat| 2/3; the bound of a dx that cancels to nearly 0.
  std::vector<double> magnitudes = referenceMagnitudes(ln, ops);
  ASSERT_EQ(magnitudes.size(), 6u);
  EXPECT_NEAR(magnitudes[0], 8.0 / 3, 1e-12);
  EXPECT_NEAR(magnitudes[1], 1.0, 1e-12);
  EXPECT_NEAR(magnitudes[2], 7.0 / 3, 1e-12);
  EXPECT_TRUE(referenceMagnitudes(
                  specOf("softmax", {Role::Input, Role::Output}), ops)
                  .empty());
  // dw = the sum over rows of dy * x_hat (row 1: x_hat = (-1, 0.5, 0.5)),
  // db = the sum of dy.
  std::vector<ColumnSumReference> sums = columnSumReferences(ln, ops);
  ASSERT_EQ(sums.size(), 2u);
  EXPECT_EQ(sums[0].sums, (std::vector<double>{-2, 0.5, 0.5}));
  EXPECT_EQ(sums[0].magnitudes, (std::vector<double>{2, 0.5, 0.5}));
  EXPECT_EQ(sums[1].sums, (std::vector<double>{1, 1, 1}));

  // rms_norm: x_hat = x * rstd; with w = (2, 1), x = (1, 3), rstd 0.5,
  // dy = (1, -1): g = (2, -1), mean(g x_hat) = -0.25.
  KernelSpec rms = specOf("rms_norm_backward",
                          {Role::Input, Role::Input, Role::Output,
                           Role::Column, Role::Row, Role::ColumnSum});
  ops.inputs = {matrixOf({{1, 3}}), matrixOf({{1, -1}})};
  ops.columns = {matrixOf({{2, 1}})};
  ops.rows = {matrixOf({{0.5}})};
  ops.columnSums = {matrixOf({{0, 0}})};
  dx = referenceOf(rms, ops);
  EXPECT_DOUBLE_EQ(dx[0], 0.5 * (2 + 0.5 * 0.25));
  EXPECT_DOUBLE_EQ(dx[1], 0.5 * (-1 + 1.5 * 0.25));
  sums = columnSumReferences(rms, ops);
  ASSERT_EQ(sums.size(), 1u);
  EXPECT_EQ(sums[0].sums, (std::vector<double>{0.5, -1.5}));

  // With grad_residual (a third input), dx is the whole gradient of h: the
  // same plus it; the weight's gradient is unchanged.
  KernelSpec residual = specOf(
      "rms_norm_backward", {Role::Input, Role::Input, Role::Input,
                            Role::Output, Role::Column, Role::Row,
                            Role::ColumnSum});
  ops.inputs.push_back(matrixOf({{10, -20}}));
  dx = referenceOf(residual, ops);
  EXPECT_DOUBLE_EQ(dx[0], 0.5 * (2 + 0.5 * 0.25) + 10);
  EXPECT_DOUBLE_EQ(dx[1], 0.5 * (-1 + 1.5 * 0.25) - 20);
  EXPECT_DOUBLE_EQ(referenceMagnitudes(residual, ops)[1],
                   0.5 * (1 + 1.5 * 2.5 / 2) + 20);
  EXPECT_EQ(columnSumReferences(residual, ops)[0].sums,
            (std::vector<double>{0.5, -1.5}));
}

TEST(Reference, ProblemsNameWhatIsMissing) {
  EXPECT_EQ(referenceProblem(specOf("softmax", {Role::Input, Role::Output})),
            "");
  KernelSpec rms = specOf("rms_norm", {Role::Input, Role::Output});
  EXPECT_NE(referenceProblem(rms).find("no epsilon"), std::string::npos);
  rms.epsilon = 1e-6;
  EXPECT_EQ(referenceProblem(rms), "");
  KernelSpec ln =
      specOf("layer_norm", {Role::Input, Role::Output, Role::Column});
  ln.epsilon = 1e-5;
  EXPECT_NE(referenceProblem(ln).find("weight or the bias"), std::string::npos);
  KernelSpec lnb = specOf("layer_norm_backward",
                          {Role::Input, Role::Input, Role::Output, Role::Row,
                           Role::Row, Role::ColumnSum});
  EXPECT_NE(referenceProblem(lnb).find("weight's or the bias's gradient"),
            std::string::npos);
  lnb.operands.push_back({"", Role::ColumnSum, DType::F32});
  EXPECT_EQ(referenceProblem(lnb), "");
  EXPECT_NE(referenceProblem(specOf("custom", {Role::Input, Role::Output}))
                .find("no reference for op 'custom'"),
            std::string::npos);
}

TEST(Operands, LabelsAndPerRowResults) {
  KernelSpec spec =
      specOf("cross_entropy", {Role::Input, Role::Row, Role::RowOutput});
  spec.operands[1].type = DType::I64;
  spec.ignoreIndex = -7;
  Matrix x = matrixOf({{1, 2, 3}, {4, 5, 6}, {7, 8, 9}, {1, 1, 1}});
  HostOperands ops = makeOperands(spec, x, 3, Distribution::Normal, 0, kPoison);
  ASSERT_EQ(ops.rows.size(), 1u);
  ASSERT_EQ(ops.rows[0].cols, 4);
  // Every label a column, but every seventh row's, the ignore_index.
  for (int64_t r = 0; r < 3; ++r) {
    EXPECT_GE(ops.rows[0].get(0, r), 0);
    EXPECT_LT(ops.rows[0].get(0, r), 3);
  }
  EXPECT_EQ(ops.rows[0].get(0, 3), -7);
  ASSERT_EQ(ops.rowOutputs.size(), 1u);
  EXPECT_EQ(ops.rowOutputs[0].get(0, 2), kPoison);
  EXPECT_EQ(&ops.checked(), &ops.rowOutputs[0]);
}

TEST(Reference, LogSumExpAndCrossEntropy) {
  // The inputs are stored as f32: log(3) to about 1e-8.
  KernelSpec lse = specOf("logsumexp", {Role::Input, Role::RowOutput});
  HostOperands ops;
  ops.inputs.push_back(
      matrixOf({{0, std::log(3.0)}, {-INFINITY, -INFINITY}, {INFINITY, 1}}));
  std::vector<double> l = referenceOf(lse, ops);
  EXPECT_NEAR(l[0], std::log(4.0), 1e-6);
  EXPECT_EQ(l[1], -INFINITY); // torch.logsumexp's infinite rows
  EXPECT_EQ(l[2], INFINITY);

  KernelSpec ce =
      specOf("cross_entropy", {Role::Input, Role::Row, Role::RowOutput});
  ce.ignoreIndex = -100;
  ops.rows.push_back(Matrix(DType::I64, 1, 3, 3));
  ops.rows[0].set(0, 0, 1);
  ops.rows[0].set(0, 1, 0);
  ops.rows[0].set(0, 2, -100);
  std::vector<double> loss = referenceOf(ce, ops);
  EXPECT_NEAR(loss[0], std::log(4.0) - std::log(3.0), 1e-6);
  EXPECT_TRUE(std::isnan(loss[1])); // log_softmax's NaN row
  EXPECT_EQ(loss[2], 0.0);          // ignored
  ce.labelSmoothing = 0.5;
  ops.inputs[0] = matrixOf({{0, std::log(3.0)}});
  ops.rows[0] = Matrix(DType::I64, 1, 1, 1);
  ops.rows[0].set(0, 0, 1);
  double nll = std::log(4.0) - std::log(3.0);
  double uniform = std::log(4.0) - std::log(3.0) / 2;
  EXPECT_NEAR(referenceOf(ce, ops)[0], 0.5 * nll + 0.5 * uniform, 1e-6);
  ce.ignoreIndex.reset();
  EXPECT_NE(referenceProblem(ce).find("no ignore_index"), std::string::npos);
}

TEST(Reference, SafeSoftmaxZeroesRowsOfMinusInfinity) {
  KernelSpec spec = specOf("softmax", {Role::Input, Role::Output});
  HostOperands ops;
  ops.inputs.push_back(matrixOf({{-INFINITY, -INFINITY}, {0, 0}}));
  std::vector<double> plain = referenceOf(spec, ops);
  EXPECT_TRUE(std::isnan(plain[0])); // torch.softmax's NaN row
  spec.safe = true;
  std::vector<double> safe = referenceOf(spec, ops);
  EXPECT_EQ(safe[0], 0.0);
  EXPECT_EQ(safe[1], 0.0);
  EXPECT_NEAR(safe[2], 0.5, 1e-12);
}
