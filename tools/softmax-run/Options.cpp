//===- Options.cpp - softmax-run's command line ---------------------------===//
//
// Part of the softmax kernel compiler.
//
//===----------------------------------------------------------------------===//

#include "Options.h"

#include "rowred/Runtime/KernelSpec.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>

using namespace softmax_run;

namespace {

const char *kUsage = R"(usage: softmax-run [options] KERNEL

KERNEL is a kernel's launch metadata (<kernel>.json next to its .ptx, as
written by softmax-opt --rowred-to-ptx="output-dir=DIR")%s. Kernels of
several operands (the gradients, rms_norm, layer_norm: docs/abi.md) get x
from --input or --dist and their other operands generated: the gradients'
y is softmax(x) or log_softmax(x), dy follows --dist, weights and biases
are normal; --check compares the first output with the op's float64
reference.

Data:
  --rows=M               rows (default 4096, or the .npy input's)
  --cols=N               columns (default: the kernel's max_cols for fused
                         kernels, else 4096, or the .npy input's)
  --dtype=f32|f16|bf16   element type; must match the kernel's
  --strategy=S           fused|online|auto: must match a .json kernel; picks
                         the strategy when compiling a .mlir (default auto)
  --x-stride=S --y-stride=S
                         row strides in elements (default N)
  --offset=K             start both buffers K elements past an aligned address
  --seed=S               random seed (default 0)
  --dist=D               normal|uniform|large|special (rows with NaN / -inf)
  --input=FILE.npy       x: this 2-D array (<f4, <f2, <f8; <u2 bf16 bits)
  --output=FILE.npy      write the (first) output (<f4, <f2, <u2 bf16 bits)
Actions (default: --check):
  --check                poison the output, launch, compare with float64
  --bench                time with CUDA events, L2 flushed before each launch
  --explain              show the occupancy derivation and the grid; works
                         without a GPU from --chip and ptxas' report
  --iters=K --warmup=K   timed and warm-up launches (default 100, 10)
  --grid=G               launch G blocks instead of the occupancy grid
  --json                 --check and --bench results as one JSON object (not
                         with --explain, which prints text)
  --cases=FILE           run one case per line of FILE, each line holding
                         data options (--rows --cols --x-stride --y-stride
                         --offset --seed --dist --grid) over the command
                         line's, on one CUDA context: every line is checked
                         before the GPU is touched; with --json one object
                         per case, in order
Device description for --explain without a GPU:
  --chip=sm_80|sm_90     built-in description (default: the kernel's chip)
  --ptxas=PATH           ptxas for the resource report (default: PATH or
                         /usr/local/cuda/bin/ptxas)
)";

/// What errors are about: set while --cases runs a case.
std::string errorContext;

/// Parses a whole decimal integer in [lo, hi], or exits with a usage error.
int64_t parseInt(const std::string &flag, const std::string &text, int64_t lo,
                 int64_t hi) {
  char *end = nullptr;
  errno = 0;
  long long v = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end || errno == ERANGE || v < lo || v > hi)
    usageError("--" + flag + " expects an integer in [" + std::to_string(lo) +
               ", " + std::to_string(hi) + "], got '" + text + "'");
  return v;
}

/// The options of `o` that take a value, by name, each with its parser.
using Setter = std::function<void(const std::string &)>;
std::map<std::string, Setter> valuedOptions(Options &o) {
  const int64_t kMax = int64_t(1) << 40;
  return {
      {"rows", [&](auto &v) { o.rows = parseInt("rows", v, 1, kMax); }},
      {"cols", [&](auto &v) { o.cols = parseInt("cols", v, 1, INT32_MAX); }},
      {"x-stride",
       [&](auto &v) { o.xStride = parseInt("x-stride", v, 1, kMax); }},
      {"y-stride",
       [&](auto &v) { o.yStride = parseInt("y-stride", v, 1, kMax); }},
      {"offset", [&](auto &v) { o.offset = parseInt("offset", v, 0, 1024); }},
      {"seed", [&](auto &v) { o.seed = parseInt("seed", v, 0, INT64_MAX); }},
      {"iters", [&](auto &v) { o.iters = parseInt("iters", v, 1, 100000); }},
      {"warmup", [&](auto &v) { o.warmup = parseInt("warmup", v, 0, 100000); }},
      {"grid", [&](auto &v) { o.grid = parseInt("grid", v, 1, INT32_MAX); }},
      {"dtype", [&](auto &v) { o.dtype = v; }},
      {"strategy", [&](auto &v) { o.strategy = v; }},
      {"dist", [&](auto &v) { o.dist = v; }},
      {"input", [&](auto &v) { o.input = v; }},
      {"output", [&](auto &v) { o.output = v; }},
      {"chip", [&](auto &v) { o.chip = v; }},
      {"ptxas", [&](auto &v) { o.ptxas = v; }},
      {"cache", [&](auto &v) { o.compileCache = v; }},
      {"cases", [&](auto &v) { o.cases = v; }},
  };
}

/// The options a line of --cases may set.
const char *const kCaseOptions[] = {"rows",   "cols", "x-stride", "y-stride",
                                    "offset", "seed", "dist",     "grid"};

bool isCaseOption(const std::string &name) {
  for (const char *option : kCaseOptions)
    if (name == option)
      return true;
  return false;
}

/// Applies `args` (options, and the kernel unless `caseLine`) to `o`.
void applyArgs(Options &o, const std::vector<std::string> &args,
               bool caseLine) {
  std::map<std::string, Setter> valued = valuedOptions(o);
  std::map<std::string, bool *> flags = {{"check", &o.check},
                                         {"bench", &o.bench},
                                         {"explain", &o.explain},
                                         {"json", &o.json}};
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string &arg = args[i];
    if (arg.rfind("--", 0) != 0) {
      if (caseLine)
        usageError("a case takes options only, not '" + arg + "'");
      if (!o.kernel.empty())
        usageError("more than one kernel given: '" + o.kernel + "' and '" +
                   arg + "'");
      o.kernel = arg;
      continue;
    }
    std::string name = arg.substr(2), value;
    size_t eq = name.find('=');
    bool hasValue = eq != std::string::npos;
    if (hasValue) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
    }
    if (caseLine && (valued.count(name) || flags.count(name)) &&
        !isCaseOption(name))
      usageError("--" + name +
                 " applies to every case: give it on the command line");
    if (auto f = flags.find(name); f != flags.end()) {
      if (hasValue)
        usageError("--" + name + " takes no value");
      *f->second = true;
      continue;
    }
    auto v = valued.find(name);
    if (v == valued.end())
      usageError("unknown option '--" + name + "'");
    if (!hasValue) {
      if (i + 1 >= args.size())
        usageError("--" + name + " expects a value");
      value = args[++i];
    }
    v->second(value);
  }
}

} // namespace

void softmax_run::usageError(const std::string &message) {
  std::fprintf(stderr, "softmax-run: error: %s%s\n", errorContext.c_str(),
               message.c_str());
  std::fprintf(stderr, "run 'softmax-run --help' for the options\n");
  std::exit(2);
}

void softmax_run::fatal(const std::string &message) {
  std::fprintf(stderr, "softmax-run: error: %s%s\n", errorContext.c_str(),
               message.c_str());
  std::exit(1);
}

void softmax_run::setErrorContext(std::string context) {
  errorContext = std::move(context);
}

Options softmax_run::parseOptions(int argc, char **argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  for (const std::string &arg : args) {
    if (arg == "-h" || arg == "--help") {
#ifdef SOFTMAX_RUN_WITH_COMPILER
      const char *mlir = ", or a .mlir file holding one rowred softmax, "
                         "compiled in-process\n(cached in --cache=DIR, "
                         "default $XDG_CACHE_HOME/softmax-run)";
#else
      const char *mlir = "";
#endif
      std::printf(kUsage, mlir);
      std::exit(0);
    }
  }
  Options o;
  applyArgs(o, args, /*caseLine=*/false);
  if (o.kernel.empty())
    usageError("no kernel given (a .json kernel description"
#ifdef SOFTMAX_RUN_WITH_COMPILER
               " or a .mlir file"
#endif
               ")");
  if (!o.check && !o.bench && !o.explain)
    o.check = true;
  if (!o.cases.empty()) {
    if (o.explain)
      usageError("--cases runs cases; --explain one launch, give one of them");
    if (!o.input.empty() || !o.output.empty())
      usageError("--cases generates each case's data: no --input or --output");
  }
  return o;
}

Options softmax_run::parseCaseLine(const Options &base,
                                   const std::string &line) {
  std::istringstream words(line);
  std::vector<std::string> args;
  for (std::string word; words >> word;)
    args.push_back(word);
  Options o = base;
  applyArgs(o, args, /*caseLine=*/true);
  return o;
}

std::vector<std::pair<int, std::string>>
softmax_run::readCases(const std::string &path) {
  std::ifstream in(path);
  if (!in)
    fatal("cannot open --cases file '" + path + "'");
  if (std::string error; !rowred::runtime::isRegularFile(path, error))
    fatal("--cases file: " + error);
  std::vector<std::pair<int, std::string>> cases;
  int number = 0;
  for (std::string line; std::getline(in, line);) {
    ++number;
    size_t first = line.find_first_not_of(" \t\r");
    if (first != std::string::npos && line[first] != '#')
      cases.emplace_back(number, line);
  }
  if (cases.empty())
    fatal("--cases file '" + path + "' holds no case");
  return cases;
}
