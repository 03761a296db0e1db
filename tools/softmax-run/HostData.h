//===- HostData.h - Inputs, float64 reference and checks --------*- C++ -*-===//
//
// Part of the softmax kernel compiler.
//
//===----------------------------------------------------------------------===//

#ifndef SOFTMAX_RUN_HOSTDATA_H
#define SOFTMAX_RUN_HOSTDATA_H

#include "rowred/Runtime/KernelSpec.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

namespace softmax_run {
using namespace rowred::runtime;

/// IEEE binary16 and bfloat16 conversions (round to nearest even; NaN stays
/// NaN).
uint16_t floatToHalf(float value);
float halfToFloat(uint16_t bits);
uint16_t floatToBF16(float value);
float bf16ToFloat(uint16_t bits);

/// A 2-D matrix stored as `type` with a row stride, in host memory.
struct Matrix {
  DType type = DType::F32;
  int64_t rows = 0, cols = 0, stride = 0;
  std::vector<uint8_t> bytes; ///< (rows - 1) * stride + cols elements.

  Matrix() = default;
  Matrix(DType type, int64_t rows, int64_t cols, int64_t stride);
  double get(int64_t r, int64_t c) const;
  void set(int64_t r, int64_t c, double value);
  /// Sets every element, padding between rows included.
  void fill(double value);
  size_t elements() const { return bytes.size() / dtypeBytes(type); }
  double getFlat(size_t i) const;
};

/// Input distributions (`--dist`).
enum class Distribution { Normal, Uniform, Large, Special };
bool parseDistribution(const std::string &name, Distribution &out);

/// Fills `m` from `dist` with a seeded generator. `Special` puts a NaN in
/// every 4th row (from row 1), makes every 4th row (from row 2) all -inf and
/// every 4th row (from row 3) half -inf; the rest are normal.
void generate(Matrix &m, Distribution dist, uint64_t seed);

/// Runs `fn(begin, end)` over row ranges on every hardware thread.
template <typename Fn> void parallelRows(int64_t rows, Fn fn) {
  int64_t workers = std::max(1u, std::thread::hardware_concurrency());
  workers = std::min(workers, std::max<int64_t>(rows, 1));
  std::vector<std::thread> threads;
  int64_t per = (rows + workers - 1) / workers;
  for (int64_t w = 0; w < workers; ++w) {
    int64_t begin = w * per, end = std::min(rows, begin + per);
    if (begin < end)
      threads.emplace_back(fn, begin, end);
  }
  for (std::thread &t : threads)
    t.join();
}

/// softmax / log_softmax of every row of `x` in float64.
std::vector<double> reference(const Matrix &x, const std::string &op);

/// Per-type acceptance thresholds (documented in README.md / docs).
struct Tolerance {
  double atol, rtol, relL2, rowSum;
};
Tolerance toleranceFor(DType type);

/// The outcome of comparing an output with the reference.
struct CheckResult {
  bool passed = true;
  double relL2 = 0, maxAbsError = 0, maxRowSumError = 0;
  int64_t unwritten = 0, paddingTouched = 0, nanMismatches = 0,
          outOfTolerance = 0, badRowSums = 0;
  std::vector<std::string> problems;
};

/// Compares `y` (poisoned with `poison` before the launch) with `ref`:
/// every element within atol + rtol * |ref| (+ slack[i], where given: the
/// error a sum of many terms may carry), softmax rows summing to 1, NaN
/// exactly where the reference has NaN, and a relative L2 error within the
/// type's limit, twice the error of the reference rounded to the output
/// type, or the slack's, whichever is largest (f16 outputs of long rows
/// are subnormal).
CheckResult check(const Matrix &y, const std::vector<double> &ref,
                  const std::string &op, double poison,
                  const std::vector<double> &slack = {});

/// The value outputs are poisoned with: no softmax or log-softmax result.
constexpr double kPoison = 12345.0;

/// .npy files: reads 2-D C-order '<f4', '<f2', '<f8' (converted to `type`)
/// or '<u2' (bfloat16 bits, when `type` is bf16); writes `m` as '<f4',
/// '<f2' or '<u2' (NumPy has no bfloat16).
bool readNpy(const std::string &path, DType type, Matrix &m,
             std::string &error);
/// The same reading of the contents `data` of the file `path` (named in
/// `error`).
bool parseNpy(const std::string &data, const std::string &path, DType type,
              Matrix &m, std::string &error);
bool writeNpy(const std::string &path, const Matrix &m, std::string &error);

} // namespace softmax_run

#endif // SOFTMAX_RUN_HOSTDATA_H
