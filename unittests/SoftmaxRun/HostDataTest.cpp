//===- HostDataTest.cpp - Conversions, reference, checks, .npy ------------===//
//
// Part of the softmax kernel compiler.
//
//===----------------------------------------------------------------------===//

#include "HostData.h"

#include <fstream>

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <limits>

using namespace softmax_run;
using namespace rowred::runtime;

TEST(Conversions, HalfRoundTripsEveryFiniteValue) {
  for (uint32_t bits = 0; bits < 0x10000; ++bits) {
    uint16_t h = static_cast<uint16_t>(bits);
    float f = halfToFloat(h);
    if (std::isnan(f))
      EXPECT_TRUE(std::isnan(halfToFloat(floatToHalf(f))));
    else
      EXPECT_EQ(floatToHalf(f), h) << "bits " << bits;
  }
}

TEST(Conversions, HalfRoundsToNearestEven) {
  EXPECT_EQ(floatToHalf(1.0f), 0x3C00);
  // 1 + 2^-11 is halfway between 1 and the next half: ties to even (1).
  EXPECT_EQ(floatToHalf(1.0f + std::ldexp(1.0f, -11)), 0x3C00);
  // 1 + 3 * 2^-11 is halfway between 1 + 2^-10 and 1 + 2^-9: to even.
  EXPECT_EQ(floatToHalf(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3C02);
  EXPECT_EQ(floatToHalf(65520.0f), 0x7C00); // overflows to infinity
  EXPECT_EQ(floatToHalf(-std::numeric_limits<float>::infinity()), 0xFC00);
  EXPECT_EQ(floatToHalf(std::ldexp(1.0f, -24)), 0x0001); // smallest subnormal
  EXPECT_EQ(halfToFloat(0x0001), std::ldexp(1.0f, -24));
}

TEST(Conversions, BF16RoundsToNearestEvenAndKeepsNaN) {
  EXPECT_EQ(floatToBF16(1.0f), 0x3F80);
  EXPECT_EQ(bf16ToFloat(0x3F80), 1.0f);
  // 1 + 2^-8 is a tie between 1 and 1 + 2^-7: to even.
  EXPECT_EQ(floatToBF16(1.0f + std::ldexp(1.0f, -8)), 0x3F80);
  EXPECT_EQ(floatToBF16(1.0f + 3 * std::ldexp(1.0f, -8)), 0x3F82);
  EXPECT_TRUE(std::isnan(bf16ToFloat(floatToBF16(std::nanf("")))));
}

TEST(Reference, SoftmaxFollowsTorchOnSpecialValues) {
  const double inf = std::numeric_limits<double>::infinity();
  Matrix x(DType::F32, 4, 3, 3);
  double rows[4][3] = {
      {1, 2, 3}, {0, std::nan(""), 1}, {-inf, -inf, -inf}, {-inf, 0, 0}};
  for (int r = 0; r < 4; ++r)
    for (int c = 0; c < 3; ++c)
      x.set(r, c, rows[r][c]);
  std::vector<double> y = reference(x, "softmax");
  double s = std::exp(-2.0) + std::exp(-1.0) + 1;
  EXPECT_NEAR(y[0], std::exp(-2.0) / s, 1e-15);
  EXPECT_NEAR(y[2], 1 / s, 1e-15);
  for (int c = 0; c < 3; ++c) {
    EXPECT_TRUE(std::isnan(y[3 + c])) << "NaN row";
    EXPECT_TRUE(std::isnan(y[6 + c])) << "all -inf row";
  }
  EXPECT_EQ(y[9], 0.0);
  EXPECT_NEAR(y[10], 0.5, 1e-15);
  std::vector<double> l = reference(x, "log_softmax");
  EXPECT_NEAR(l[2], -std::log(s), 1e-15);
  EXPECT_EQ(l[9], -inf);
}

TEST(Check, FindsUnwrittenWrongAndPaddingWrites) {
  Matrix x(DType::F32, 2, 4, 6);
  generate(x, Distribution::Normal, 7);
  std::vector<double> ref = reference(x, "softmax");
  Matrix y(DType::F32, 2, 4, 6);
  y.fill(kPoison);
  for (int r = 0; r < 2; ++r)
    for (int c = 0; c < 4; ++c)
      y.set(r, c, ref[r * 4 + c]);
  EXPECT_TRUE(check(y, ref, "softmax", kPoison).passed);

  Matrix missing = y;
  missing.set(1, 3, kPoison);
  CheckResult c = check(missing, ref, "softmax", kPoison);
  EXPECT_FALSE(c.passed);
  EXPECT_EQ(c.unwritten, 1);

  Matrix wrong = y;
  wrong.set(0, 0, ref[0] + 1e-3);
  c = check(wrong, ref, "softmax", kPoison);
  EXPECT_FALSE(c.passed);
  EXPECT_EQ(c.outOfTolerance, 1);
  EXPECT_EQ(c.badRowSums, 1);

  Matrix padding = y;
  padding.set(0, 5, 0.0); // between row 0 and row 1
  c = check(padding, ref, "softmax", kPoison);
  EXPECT_FALSE(c.passed);
  EXPECT_EQ(c.paddingTouched, 1);
}

TEST(Check, SlackWidensTheToleranceOfSums) {
  // A column sum off by 1e-3: out of f32's tolerance, within a slack of the
  // terms' magnitudes; off by more than the slack it fails again.
  std::vector<double> ref = {10.0, -4.0};
  Matrix y(DType::F32, 1, 2, 2);
  y.set(0, 0, 10.001);
  y.set(0, 1, -4.0);
  EXPECT_FALSE(check(y, ref, "column_sum", kPoison).passed);
  EXPECT_TRUE(check(y, ref, "column_sum", kPoison, {2e-3, 2e-3}).passed);
  y.set(0, 0, 10.01);
  CheckResult c = check(y, ref, "column_sum", kPoison, {2e-3, 2e-3});
  EXPECT_FALSE(c.passed);
  EXPECT_EQ(c.outOfTolerance, 1);
}

TEST(Check, NaNMustMatch) {
  Matrix x(DType::BF16, 1, 2, 2);
  x.set(0, 0, std::nan(""));
  x.set(0, 1, 1.0);
  std::vector<double> ref = reference(x, "softmax");
  Matrix y(DType::BF16, 1, 2, 2);
  y.set(0, 0, std::nan(""));
  y.set(0, 1, 0.5);
  CheckResult c = check(y, ref, "softmax", kPoison);
  EXPECT_EQ(c.nanMismatches, 1);
  EXPECT_FALSE(c.passed);
}

TEST(Generate, SpecialRowsAndSeeds) {
  Matrix a(DType::F32, 8, 16, 16), b(DType::F32, 8, 16, 16);
  generate(a, Distribution::Special, 3);
  generate(b, Distribution::Special, 3);
  EXPECT_EQ(a.bytes, b.bytes);
  EXPECT_TRUE(std::isnan(a.get(1, 8)));
  EXPECT_EQ(a.get(2, 5), -std::numeric_limits<double>::infinity());
  EXPECT_EQ(a.get(3, 0), -std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isfinite(a.get(3, 1)));
  generate(b, Distribution::Special, 4);
  EXPECT_NE(a.bytes, b.bytes);
}

TEST(Npy, RoundTripsEachType) {
  for (DType type : {DType::F32, DType::F16, DType::BF16}) {
    Matrix m(type, 3, 5, 7); // strided: only 5 of 7 columns are written
    generate(m, Distribution::Normal, 1);
    std::string path = ::testing::TempDir() + "/m.npy", error;
    ASSERT_TRUE(writeNpy(path, m, error)) << error;
    Matrix back;
    ASSERT_TRUE(readNpy(path, type, back, error)) << error;
    ASSERT_EQ(back.rows, 3);
    ASSERT_EQ(back.cols, 5);
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 5; ++c)
        EXPECT_EQ(back.get(r, c), m.get(r, c));
    std::remove(path.c_str());
  }
}

TEST(Npy, RejectsBadFiles) {
  std::string path = ::testing::TempDir() + "/bad.npy", error;
  FILE *f = std::fopen(path.c_str(), "wb");
  std::fputs("not numpy", f);
  std::fclose(f);
  Matrix m;
  EXPECT_FALSE(readNpy(path, DType::F32, m, error));
  EXPECT_NE(error.find("no NumPy magic"), std::string::npos) << error;
  EXPECT_FALSE(readNpy(path + ".missing", DType::F32, m, error));
  EXPECT_NE(error.find("cannot open"), std::string::npos) << error;
  std::remove(path.c_str());
}

/// A version-1 .npy of `descr` and `shape`, its header padded as NumPy pads
/// it (unless `header` replaces it whole), followed by `payload` bytes.
static std::string npyFile(const std::string &shape, size_t payload,
                           int version = 1, std::string header = "") {
  if (header.empty()) {
    header =
        "{'descr': '<f4', 'fortran_order': False, 'shape': " + shape + ", }";
    header.append(63 - (10 + header.size()) % 64, ' ');
    header += '\n';
  }
  std::string file = "\x93NUMPY";
  file += char(version);
  file += '\0';
  file += char(header.size() & 0xff);
  file += char(header.size() >> 8);
  return file + header + std::string(payload, '\0');
}

/// readNpy's error for `file`, or "" when it reads it.
static std::string npyError(const std::string &file) {
  std::string path = ::testing::TempDir() + "/crafted.npy", error;
  std::ofstream(path, std::ios::binary) << file;
  Matrix m;
  bool ok = readNpy(path, DType::F32, m, error);
  std::remove(path.c_str());
  return ok ? "" : error;
}

// Crafted headers: sizes that overflow, other ranks, bad versions, an
// unterminated header and trailing bytes are refused, never read past.
TEST(Npy, RejectsCraftedHeaders) {
  EXPECT_EQ(npyError(npyFile("(2, 3)", 24)), "");
  EXPECT_NE(
      npyError(npyFile("(288230376151711745, 16)", 128)).find("is too large"),
      std::string::npos);
  EXPECT_NE(
      npyError(npyFile("(4611686018427387904, 16)", 64)).find("is too large"),
      std::string::npos);
  EXPECT_NE(
      npyError(npyFile("(99999999999999999999, 2)", 8)).find("is not 2-D"),
      std::string::npos);
  EXPECT_NE(npyError(npyFile("(2, 3, 4)", 96)).find("is not 2-D"),
            std::string::npos);
  EXPECT_NE(npyError(npyFile("(6,)", 24)).find("is not 2-D"),
            std::string::npos);
  EXPECT_NE(npyError(npyFile("(2, 3)", 24, 9)).find("format version 9"),
            std::string::npos);
  EXPECT_NE(
      npyError(npyFile("(2, 3)", 24, 1, "{'descr': '<f4', 'shape': (2, 3)"))
          .find("unterminated header"),
      std::string::npos);
  EXPECT_NE(npyError(npyFile("(2, 3)", 23)).find("truncated data"),
            std::string::npos);
  EXPECT_NE(npyError(npyFile("(2, 3)", 25)).find("1 bytes after the data"),
            std::string::npos);
}

// Seen on an H200: an f16 softmax of one 262144-column row failed the plain
// 2e-3 relative-L2 limit although every element was the reference correctly
// rounded: the outputs (~4e-6) are f16 subnormals. The limit accounts for
// what the output type can represent.
TEST(Check, LongF16RowsAreJudgedAgainstRepresentableValues) {
  Matrix x(DType::F16, 1, 262144, 262144);
  generate(x, Distribution::Normal, 0);
  std::vector<double> ref = reference(x, "softmax");
  Matrix y(DType::F16, 1, 262144, 262144);
  for (int64_t c = 0; c < y.cols; ++c)
    y.set(0, c, ref[c]);
  CheckResult exact = check(y, ref, "softmax", kPoison);
  EXPECT_GT(exact.relL2, toleranceFor(DType::F16).relL2);
  EXPECT_TRUE(exact.passed);
  // A real error on top of the rounding still fails.
  for (int64_t c = 0; c < y.cols; c += 2)
    y.set(0, c, ref[c] * 1.01);
  EXPECT_FALSE(check(y, ref, "softmax", kPoison).passed);
}
