//===- Compile.cpp - In-process compilation of .mlir kernels --------------===//
//
// Part of the softmax kernel compiler.
//
//===----------------------------------------------------------------------===//

#include "Compile.h"

#include "rowred/Pipelines/Pipelines.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/xxhash.h"

using namespace mlir;

/// The directory compiled variants are kept in.
static std::string cacheRoot(const std::string &requested) {
  if (!requested.empty())
    return requested;
  SmallString<256> dir;
  if (const char *xdg = std::getenv("XDG_CACHE_HOME"))
    dir = xdg;
  else if (const char *home = std::getenv("HOME"))
    llvm::sys::path::append(dir, home, ".cache");
  else
    dir = "/tmp";
  llvm::sys::path::append(dir, "softmax-run");
  return std::string(dir);
}

/// Identifies the compiler built into this executable: its path, size and
/// modification time, so that a rebuilt or upgraded softmax-run does not
/// reuse kernels an older compiler wrote into the cache.
static std::string compilerIdentity() {
  static int anchor;
  std::string exe = llvm::sys::fs::getMainExecutable(nullptr, &anchor);
  llvm::sys::fs::file_status status;
  if (exe.empty() || llvm::sys::fs::status(exe, status))
    return "unknown";
  return llvm::formatv(
      "{0} {1} {2}", exe, status.getSize(),
      status.getLastModificationTime().time_since_epoch().count());
}

bool softmax_run::compileMlir(const CompileRequest &req, std::string &jsonPath,
                              std::string &error) {
  auto buffer = llvm::MemoryBuffer::getFile(req.mlirPath);
  if (!buffer) {
    error =
        "cannot open '" + req.mlirPath + "': " + buffer.getError().message();
    return false;
  }
  // The variant is identified by the source, every option and the compiler.
  std::string pipeline = llvm::formatv("cols={0} strategy={1} chip={2}",
                                       req.cols, req.strategy, req.chip);
  uint64_t key = llvm::xxh3_64bits((*buffer)->getBuffer().str() + "\n" +
                                   pipeline + "\n" + compilerIdentity());
  SmallString<256> dir(cacheRoot(req.cacheDir));
  llvm::sys::path::append(dir, llvm::utohexstr(key, /*LowerCase=*/true));
  SmallString<256> done(dir);
  llvm::sys::path::append(done, "kernel.path");

  auto readDone = [&]() {
    auto marker = llvm::MemoryBuffer::getFile(done);
    if (!marker)
      return false;
    jsonPath = (*marker)->getBuffer().trim().str();
    return llvm::sys::fs::exists(jsonPath);
  };
  if (readDone())
    return true;

  DialectRegistry registry;
  rowred::registerRowRedDialects(registry);
  MLIRContext context(registry);
  std::string diagnostics;
  llvm::raw_string_ostream diagStream(diagnostics);
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(*buffer), llvm::SMLoc());
  SourceMgrDiagnosticHandler handler(sourceMgr, &context, diagStream);

  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, &context);
  if (!module) {
    error = "cannot parse '" + req.mlirPath + "':\n" + diagnostics;
    return false;
  }
  if (std::error_code ec = llvm::sys::fs::create_directories(dir)) {
    error = "cannot create the cache directory '" + std::string(dir) +
            "': " + ec.message();
    return false;
  }
  rowred::RowRedToPTXOptions options;
  options.cols = req.cols;
  options.strategy = req.strategy;
  options.chip = req.chip;
  options.outputDir = std::string(dir);
  PassManager pm(&context);
  rowred::buildRowRedToPTXPipeline(pm, options);
  if (failed(pm.run(*module))) {
    error = "cannot compile '" + req.mlirPath + "' (" + pipeline + "):\n" +
            diagnostics;
    return false;
  }
  // The kernels of the file, less the variants one of them lists (its
  // kernel for a few rows), which the runtime loads with it.
  auto kernels = (*module)->getAttrOfType<DictionaryAttr>("rowred.kernels");
  llvm::StringSet<> variants;
  for (NamedAttribute kernel :
       kernels ? kernels.getValue() : ArrayRef<NamedAttribute>()) {
    auto metadata = dyn_cast<DictionaryAttr>(kernel.getValue());
    auto list = metadata ? metadata.getAs<ArrayAttr>("variants") : nullptr;
    for (Attribute variant : list ? list.getValue() : ArrayRef<Attribute>())
      if (auto name = cast<DictionaryAttr>(variant).getAs<StringAttr>("kernel"))
        variants.insert(name.getValue());
  }
  SmallVector<StringRef> runnable;
  for (NamedAttribute kernel :
       kernels ? kernels.getValue() : ArrayRef<NamedAttribute>())
    if (!variants.contains(kernel.getName().strref()))
      runnable.push_back(kernel.getName().strref());
  if (runnable.size() != 1) {
    error = "'" + req.mlirPath + "' holds " + std::to_string(runnable.size()) +
            " rowred kernels; softmax-run runs exactly one";
    return false;
  }
  SmallString<256> json(dir);
  llvm::sys::path::append(json, runnable.front() + ".json");
  jsonPath = std::string(json);
  std::error_code ec;
  llvm::raw_fd_ostream marker(done, ec);
  if (!ec)
    marker << jsonPath << "\n";
  return true;
}
