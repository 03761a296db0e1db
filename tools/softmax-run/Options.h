//===- Options.h - softmax-run's command line -------------------*- C++ -*-===//
//
// Part of the softmax kernel compiler.
//
// The options of one run, parsed from the command line and, with --cases,
// from each line of a file of cases. The runner-only build
// (SOFTMAX_RUNNER_ONLY) needs no LLVM, so the flags are parsed here rather
// than with llvm::cl.
//
//===----------------------------------------------------------------------===//

#ifndef SOFTMAX_RUN_OPTIONS_H
#define SOFTMAX_RUN_OPTIONS_H

#include <cstdint>
#include <string>
#include <vector>

namespace softmax_run {

/// Command-line options.
struct Options {
  std::string kernel;
  int64_t rows = 0, cols = 0, xStride = 0, yStride = 0, offset = 0;
  uint64_t seed = 0;
  std::string dtype, strategy, dist = "normal", input, output, chip, ptxas;
  bool check = false, bench = false, explain = false, json = false;
  int iters = 100, warmup = 10;
  int64_t grid = 0;
  std::string compileCache;
  /// A file of cases, one line of data options each (docs/runner.md).
  std::string cases;
};

/// Prints `message` as a usage error and exits with status 2.
[[noreturn]] void usageError(const std::string &message);

/// Prints `message` as an error and exits with status 1.
[[noreturn]] void fatal(const std::string &message);

/// Names what later errors are about (the case of --cases being run), or
/// nothing when empty.
void setErrorContext(std::string context);

/// Parses the command line, exiting with a usage error on a bad option.
Options parseOptions(int argc, char **argv);

/// One line of --cases: `base` with the line's data options (--rows, --cols,
/// --x-stride, --y-stride, --offset, --seed, --dist, --grid) applied. Exits
/// with a usage error naming the option when the line has any other.
Options parseCaseLine(const Options &base, const std::string &line);

/// The cases of `path`: one per line that is neither empty nor a `#`
/// comment, each with the number of its line. Exits when it cannot be read.
std::vector<std::pair<int, std::string>> readCases(const std::string &path);

} // namespace softmax_run

#endif // SOFTMAX_RUN_OPTIONS_H
