//===- HostData.cpp - Inputs, float64 reference and checks ----------------===//
//
// Part of the softmax kernel compiler.
//
//===----------------------------------------------------------------------===//

#include "HostData.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <optional>
#include <random>
#include <thread>

using namespace softmax_run;
using namespace rowred::runtime;

//===----------------------------------------------------------------------===//
// Conversions
//===----------------------------------------------------------------------===//

static uint32_t floatBits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
static float bitsFloat(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

uint16_t softmax_run::floatToBF16(float value) {
  uint32_t u = floatBits(value);
  if (std::isnan(value))
    return static_cast<uint16_t>((u >> 16) | 0x40);
  u += 0x7FFF + ((u >> 16) & 1);
  return static_cast<uint16_t>(u >> 16);
}

float softmax_run::bf16ToFloat(uint16_t bits) {
  return bitsFloat(static_cast<uint32_t>(bits) << 16);
}

uint16_t softmax_run::floatToHalf(float value) {
  uint32_t u = floatBits(value);
  uint32_t sign = (u >> 16) & 0x8000;
  uint32_t abs = u & 0x7FFFFFFF;
  if (abs > 0x7F800000) // NaN
    return static_cast<uint16_t>(sign | 0x7E00);
  if (abs >= 0x477FF000) // rounds to infinity (>= 65520)
    return static_cast<uint16_t>(sign | 0x7C00);
  if (abs < 0x38800000) { // subnormal or zero in half
    float f = bitsFloat(abs);
    // Scale so that the half subnormal unit (2^-24) becomes 1, round to even.
    float scaled = f * 16777216.0f;
    uint32_t m = static_cast<uint32_t>(std::nearbyint(scaled));
    return static_cast<uint16_t>(sign | m);
  }
  uint32_t mantissa = abs & 0x7FFFFF;
  int32_t exponent = static_cast<int32_t>(abs >> 23) - 127 + 15;
  uint32_t half = (static_cast<uint32_t>(exponent) << 10) | (mantissa >> 13);
  uint32_t rest = mantissa & 0x1FFF;
  if (rest > 0x1000 || (rest == 0x1000 && (half & 1)))
    ++half; // may carry into the exponent, which is correct
  return static_cast<uint16_t>(sign | half);
}

float softmax_run::halfToFloat(uint16_t bits) {
  uint32_t sign = static_cast<uint32_t>(bits & 0x8000) << 16;
  uint32_t exponent = (bits >> 10) & 0x1F;
  uint32_t mantissa = bits & 0x3FF;
  if (exponent == 0) {
    float f = std::ldexp(static_cast<float>(mantissa), -24);
    return sign ? -f : f;
  }
  if (exponent == 31)
    return bitsFloat(sign | 0x7F800000 | (mantissa << 13));
  return bitsFloat(sign | ((exponent - 15 + 127) << 23) | (mantissa << 13));
}

//===----------------------------------------------------------------------===//
// Matrix
//===----------------------------------------------------------------------===//

Matrix::Matrix(DType type, int64_t rows, int64_t cols, int64_t stride)
    : type(type), rows(rows), cols(cols), stride(stride) {
  size_t n = rows == 0 ? 0 : static_cast<size_t>((rows - 1) * stride + cols);
  bytes.assign(n * dtypeBytes(type), 0);
}

double Matrix::getFlat(size_t i) const {
  switch (type) {
  case DType::F32: {
    float f;
    std::memcpy(&f, bytes.data() + 4 * i, 4);
    return f;
  }
  case DType::F16:
  case DType::BF16: {
    uint16_t h;
    std::memcpy(&h, bytes.data() + 2 * i, 2);
    return type == DType::F16 ? halfToFloat(h) : bf16ToFloat(h);
  }
  case DType::I32: {
    int32_t v;
    std::memcpy(&v, bytes.data() + 4 * i, 4);
    return v;
  }
  case DType::I64: {
    int64_t v;
    std::memcpy(&v, bytes.data() + 8 * i, 8);
    return static_cast<double>(v);
  }
  }
  return 0;
}

double Matrix::get(int64_t r, int64_t c) const {
  return getFlat(static_cast<size_t>(r * stride + c));
}

void Matrix::set(int64_t r, int64_t c, double value) {
  size_t i = static_cast<size_t>(r * stride + c);
  if (type == DType::I32 || type == DType::I64) {
    int64_t v = static_cast<int64_t>(value);
    int32_t narrow = static_cast<int32_t>(v);
    std::memcpy(bytes.data() + dtypeBytes(type) * i,
                type == DType::I64 ? static_cast<void *>(&v) : &narrow,
                dtypeBytes(type));
    return;
  }
  float f = static_cast<float>(value);
  if (type == DType::F32) {
    std::memcpy(bytes.data() + 4 * i, &f, 4);
    return;
  }
  uint16_t h = type == DType::F16 ? floatToHalf(f) : floatToBF16(f);
  std::memcpy(bytes.data() + 2 * i, &h, 2);
}

void Matrix::fill(double value) {
  size_t n = elements();
  if (n == 0)
    return;
  set(0, 0, value);
  int size = dtypeBytes(type);
  for (size_t i = 1; i < n; ++i)
    std::memcpy(bytes.data() + size * i, bytes.data(), size);
}

//===----------------------------------------------------------------------===//
// Inputs and reference
//===----------------------------------------------------------------------===//

bool softmax_run::parseDistribution(const std::string &name,
                                    Distribution &out) {
  if (name == "normal")
    out = Distribution::Normal;
  else if (name == "uniform")
    out = Distribution::Uniform;
  else if (name == "large")
    out = Distribution::Large;
  else if (name == "special")
    out = Distribution::Special;
  else
    return false;
  return true;
}

void softmax_run::generate(Matrix &m, Distribution dist, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  const double inf = std::numeric_limits<double>::infinity();
  for (int64_t r = 0; r < m.rows; ++r) {
    for (int64_t c = 0; c < m.cols; ++c) {
      double v = dist == Distribution::Uniform ? uniform(rng) : normal(rng);
      if (dist == Distribution::Large)
        v *= 1000.0;
      m.set(r, c, v);
    }
    if (dist != Distribution::Special)
      continue;
    if (r % 4 == 1)
      m.set(r, m.cols / 2, std::nan(""));
    else if (r % 4 == 2)
      for (int64_t c = 0; c < m.cols; ++c)
        m.set(r, c, -inf);
    else if (r % 4 == 3)
      for (int64_t c = 0; c < m.cols; c += 2)
        m.set(r, c, -inf);
  }
}

std::vector<double> softmax_run::reference(const Matrix &x,
                                           const std::string &op) {
  std::vector<double> out(static_cast<size_t>(x.rows * x.cols));
  bool log = op == "log_softmax";
  parallelRows(x.rows, [&](int64_t begin, int64_t end) {
    std::vector<double> row(x.cols);
    for (int64_t r = begin; r < end; ++r) {
      double m = -std::numeric_limits<double>::infinity();
      bool nan = false;
      for (int64_t c = 0; c < x.cols; ++c) {
        row[c] = x.get(r, c);
        nan |= std::isnan(row[c]);
        m = std::max(m, row[c]);
      }
      if (nan)
        m = std::nan("");
      double s = 0;
      for (int64_t c = 0; c < x.cols; ++c)
        s += std::exp(row[c] - m);
      double *o = out.data() + r * x.cols;
      for (int64_t c = 0; c < x.cols; ++c)
        o[c] = log ? row[c] - m - std::log(s) : std::exp(row[c] - m) / s;
    }
  });
  return out;
}

Tolerance softmax_run::toleranceFor(DType type) {
  switch (type) {
  case DType::F32:
    return {2e-6, 2e-5, 1e-5, 1e-4};
  case DType::F16:
    return {1e-3, 2e-3, 2e-3, 2e-3};
  case DType::BF16:
    return {8e-3, 1.6e-2, 1.6e-2, 2e-2};
  case DType::I32:
  case DType::I64:
    break;
  }
  return {0, 0, 0, 0};
}

CheckResult softmax_run::check(const Matrix &y, const std::vector<double> &ref,
                               const std::string &op, double poison,
                               const std::vector<double> &slack) {
  CheckResult result;
  Tolerance tol = toleranceFor(y.type);
  // The poison as stored in the output type.
  Matrix probe(y.type, 1, 1, 1);
  probe.set(0, 0, poison);
  double stored = probe.get(0, 0);
  // The error of the reference merely rounded to the output type: no kernel
  // can do better (f16 softmax outputs of long rows are subnormal).
  double errNorm = 0, refNorm = 0, roundNorm = 0, slackNorm = 0;
  for (int64_t r = 0; r < y.rows; ++r) {
    const double *rr = ref.data() + r * y.cols;
    bool rowIsNaN = std::isnan(rr[0]);
    // A safe softmax's row of -inf is all zeros: no sum of 1 to check.
    bool rowIsZero =
        std::all_of(rr, rr + y.cols, [](double e) { return e == 0.0; });
    double sum = 0;
    for (int64_t c = 0; c < y.cols; ++c) {
      double o = y.get(r, c), e = rr[c];
      if (o == stored) {
        ++result.unwritten;
        continue;
      }
      if (std::isnan(e) || std::isnan(o)) {
        result.nanMismatches += std::isnan(e) != std::isnan(o);
        continue;
      }
      if (std::isinf(e) && o == e)
        continue;
      double err = std::fabs(o - e);
      double extra = slack.empty() ? 0.0 : slack[r * y.cols + c];
      result.maxAbsError = std::max(result.maxAbsError, err);
      if (!(err <= tol.atol + tol.rtol * std::fabs(e) + extra))
        ++result.outOfTolerance;
      if (std::isfinite(e)) {
        probe.set(0, 0, e);
        double rounding = probe.get(0, 0) - e;
        errNorm += err * err;
        refNorm += e * e;
        roundNorm += rounding * rounding;
        slackNorm += extra * extra;
      }
      sum += o;
    }
    if (op == "softmax" && !rowIsNaN && !rowIsZero) {
      double dev = std::fabs(sum - 1.0);
      result.maxRowSumError = std::max(result.maxRowSumError, dev);
      result.badRowSums += !(dev <= tol.rowSum);
    }
    for (int64_t c = y.cols; r + 1 < y.rows && c < y.stride; ++c)
      result.paddingTouched += y.get(r, c) != stored;
  }
  result.relL2 = refNorm > 0 ? std::sqrt(errNorm / refNorm) : 0;
  double roundingL2 = refNorm > 0 ? std::sqrt(roundNorm / refNorm) : 0;
  double slackL2 = refNorm > 0 ? std::sqrt(slackNorm / refNorm) : 0;
  double l2Limit = std::max({tol.relL2, 2 * roundingL2, slackL2});
  auto problem = [&](int64_t count, const std::string &what) {
    if (count)
      result.problems.push_back(std::to_string(count) + " " + what);
  };
  problem(result.unwritten, "elements not written");
  problem(result.paddingTouched, "padding elements between rows overwritten");
  problem(result.nanMismatches, "elements NaN in one of output and reference");
  problem(result.outOfTolerance, "elements out of tolerance");
  problem(result.badRowSums, "rows whose sum is not 1");
  if (result.relL2 > l2Limit)
    result.problems.push_back("relative L2 error " +
                              std::to_string(result.relL2) + " above " +
                              std::to_string(l2Limit));
  result.passed = result.problems.empty();
  return result;
}

//===----------------------------------------------------------------------===//
// .npy
//===----------------------------------------------------------------------===//

/// The dimensions of a .npy header's shape tuple, such as `(3, 4)` or
/// `(5,)`; nullopt unless it is a tuple of decimal integers that fit int64.
static std::optional<std::vector<int64_t>>
parseNpyShape(const std::string &text) {
  if (text.size() < 2 || text.front() != '(' || text.back() != ')')
    return std::nullopt;
  std::vector<int64_t> dims;
  size_t i = 1, end = text.size() - 1;
  auto skipSpaces = [&] {
    while (i < end && text[i] == ' ')
      ++i;
  };
  skipSpaces();
  while (i < end) {
    if (!std::isdigit(static_cast<unsigned char>(text[i])))
      return std::nullopt;
    int64_t v = 0;
    while (i < end && std::isdigit(static_cast<unsigned char>(text[i]))) {
      if (__builtin_mul_overflow(v, int64_t(10), &v) ||
          __builtin_add_overflow(v, int64_t(text[i] - '0'), &v))
        return std::nullopt;
      ++i;
    }
    dims.push_back(v);
    skipSpaces();
    if (i < end && text[i] != ',')
      return std::nullopt;
    if (i < end)
      ++i;
    skipSpaces();
  }
  return dims;
}

bool softmax_run::readNpy(const std::string &path, DType type, Matrix &m,
                          std::string &error) {
  std::string data;
  return readFile(path, data, error) && parseNpy(data, path, type, m, error);
}

bool softmax_run::parseNpy(const std::string &data, const std::string &path,
                           DType type, Matrix &m, std::string &error) {
  auto bad = [&](const std::string &why) {
    error = "'" + path + "' is not a usable .npy file: " + why;
    return false;
  };
  if (data.size() < 10 || data.compare(0, 6, "\x93NUMPY") != 0)
    return bad("no NumPy magic");
  int major = static_cast<unsigned char>(data[6]);
  if (major < 1 || major > 3)
    return bad("format version " + std::to_string(major) +
               " (versions 1 to 3 are known)");
  size_t headerLen, headerStart;
  if (major == 1) {
    headerLen = static_cast<unsigned char>(data[8]) |
                (static_cast<unsigned char>(data[9]) << 8);
    headerStart = 10;
  } else {
    if (data.size() < 12)
      return bad("truncated header");
    headerLen = 0;
    for (int i = 0; i < 4; ++i)
      headerLen |= static_cast<size_t>(static_cast<unsigned char>(data[8 + i]))
                   << (8 * i);
    headerStart = 12;
  }
  if (headerLen > data.size() - headerStart)
    return bad("truncated header");
  std::string header = data.substr(headerStart, headerLen);
  // A Python dict literal closed by '}', padded with spaces, ending in '\n'.
  size_t close = header.rfind('}');
  if (header.empty() || header[0] != '{' || header.back() != '\n' ||
      close == std::string::npos ||
      header.find_first_not_of(" \n", close + 1) != std::string::npos)
    return bad("unterminated header");
  auto field = [&](const std::string &key) -> std::string {
    size_t k = header.find("'" + key + "'");
    if (k == std::string::npos)
      return "";
    size_t colon = header.find(':', k);
    size_t start = header.find_first_not_of(" ", colon + 1);
    if (start == std::string::npos)
      return "";
    char open = header[start];
    char close = open == '(' ? ')' : open == '\'' ? '\'' : ',';
    size_t end = header.find(close, start + 1);
    return header.substr(start, end == std::string::npos ? std::string::npos
                                                         : end - start + 1);
  };
  std::string descr = field("descr"), order = field("fortran_order"),
              shape = field("shape");
  if (order.find("True") != std::string::npos)
    return bad("Fortran order is not supported");
  std::optional<std::vector<int64_t>> dims = parseNpyShape(shape);
  if (!dims || dims->size() != 2 || (*dims)[0] <= 0 || (*dims)[1] <= 0)
    return bad("shape " + shape + " is not 2-D and non-empty");
  int64_t rows = (*dims)[0], cols = (*dims)[1];
  int size;
  if (descr == "'<f4'")
    size = 4;
  else if (descr == "'<f8'")
    size = 8;
  else if (descr == "'<f2'")
    size = 2;
  else if (descr == "'<u2'" && type == DType::BF16)
    size = 2;
  else
    return bad("dtype " + descr +
               " (use <f4, <f2, <f8, or <u2 bfloat16 bits "
               "with --dtype bf16)");
  // The shape comes from the file: its size in bytes must not overflow, and
  // must be exactly what follows the header.
  int64_t elements, bytes;
  if (__builtin_mul_overflow(rows, cols, &elements) ||
      __builtin_mul_overflow(elements, int64_t(size), &bytes))
    return bad("shape " + shape + " is too large");
  size_t payload = headerStart + headerLen;
  if (data.size() - payload < static_cast<uint64_t>(bytes))
    return bad("truncated data");
  if (data.size() - payload > static_cast<uint64_t>(bytes))
    return bad(std::to_string(data.size() - payload - bytes) +
               " bytes after the data");
  m = Matrix(type, rows, cols, cols);
  const char *p = data.data() + payload;
  for (int64_t i = 0; i < rows * cols; ++i, p += size) {
    if (descr == "'<u2'") {
      std::memcpy(m.bytes.data() + 2 * i, p, 2);
      continue;
    }
    double v;
    if (size == 4) {
      float f;
      std::memcpy(&f, p, 4);
      v = f;
    } else if (size == 8) {
      std::memcpy(&v, p, 8);
    } else {
      uint16_t h;
      std::memcpy(&h, p, 2);
      v = halfToFloat(h);
    }
    m.set(i / cols, i % cols, v);
  }
  return true;
}

bool softmax_run::writeNpy(const std::string &path, const Matrix &m,
                           std::string &error) {
  const char *descr = m.type == DType::F32   ? "<f4"
                      : m.type == DType::F16 ? "<f2"
                                             : "<u2";
  std::string header = std::string("{'descr': '") + descr +
                       "', 'fortran_order': False, 'shape': (" +
                       std::to_string(m.rows) + ", " + std::to_string(m.cols) +
                       "), }";
  while ((10 + header.size() + 1) % 64)
    header += ' ';
  header += '\n';
  std::ofstream out(path, std::ios::binary);
  if (!out) {
    error = "cannot write '" + path + "': " + std::strerror(errno);
    return false;
  }
  out.write("\x93NUMPY\x01\x00", 8);
  uint16_t len = static_cast<uint16_t>(header.size());
  out.put(static_cast<char>(len & 0xFF));
  out.put(static_cast<char>(len >> 8));
  out << header;
  int size = dtypeBytes(m.type);
  for (int64_t r = 0; r < m.rows; ++r)
    out.write(reinterpret_cast<const char *>(m.bytes.data()) +
                  r * m.stride * size,
              m.cols * size);
  if (!out) {
    error = "cannot write '" + path + "'";
    return false;
  }
  return true;
}
