//===- Ptxas.cpp - Assemble PTX and read ptxas' report --------------------===//
//
// Part of the softmax kernel compiler.
//
//===----------------------------------------------------------------------===//

#include "rowred/Target/Ptxas.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/Regex.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::rowred;

std::string mlir::rowred::findPtxas(StringRef explicitPath,
                                    StringRef cudaPath) {
  if (!explicitPath.empty())
    return explicitPath.str();
  if (!cudaPath.empty()) {
    SmallString<128> path(cudaPath);
    llvm::sys::path::append(path, "bin", "ptxas");
    if (llvm::sys::fs::can_execute(path))
      return path.str().str();
  }
  llvm::ErrorOr<std::string> onPath = llvm::sys::findProgramByName("ptxas");
  return onPath ? *onPath : std::string();
}

/// The first number `pattern`'s group 1 matches in `text`, or -1.
static int64_t findNumber(StringRef text, StringRef pattern) {
  SmallVector<StringRef, 2> groups;
  int64_t value;
  if (!llvm::Regex(pattern).match(text, &groups) ||
      groups[1].getAsInteger(10, value))
    return -1;
  return value;
}

FailureOr<PtxasReport> mlir::rowred::assemblePtx(StringRef ptxas,
                                                 StringRef chip, StringRef ptx,
                                                 std::string &error) {
  SmallString<128> input, log;
  if (std::error_code ec =
          llvm::sys::fs::createTemporaryFile("rowred", "ptx", input)) {
    error = "cannot create a temporary file: " + ec.message();
    return failure();
  }
  llvm::FileRemover removeInput(input);
  if (std::error_code ec =
          llvm::sys::fs::createTemporaryFile("rowred-ptxas", "log", log)) {
    error = "cannot create a temporary file: " + ec.message();
    return failure();
  }
  llvm::FileRemover removeLog(log);
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(input, ec);
    if (ec) {
      error = "cannot write '" + input.str().str() + "': " + ec.message();
      return failure();
    }
    os << ptx;
  }

  std::string arch = ("-arch=" + chip).str();
  SmallVector<StringRef> args = {ptxas, arch, "-v", input, "-o", "/dev/null"};
  std::optional<StringRef> redirects[] = {std::nullopt, StringRef(log),
                                          StringRef(log)};
  std::string message;
  int status = llvm::sys::ExecuteAndWait(ptxas, args, std::nullopt, redirects,
                                         /*SecondsToWait=*/0,
                                         /*MemoryLimit=*/0, &message);
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> output =
      llvm::MemoryBuffer::getFile(log);
  StringRef text = output ? (*output)->getBuffer() : StringRef();
  if (status != 0) {
    // The PTX stays for the reader, named instead of printed (tens of KB).
    removeInput.releaseFile();
    error = ("ptxas ('" + ptxas + "') failed" +
             (message.empty() ? "" : ": " + message) + " on '" + input +
             "' (kept)\n" + text.take_front(4096))
                .str();
    return failure();
  }
  PtxasReport report;
  report.registers = findNumber(text, "Used ([0-9]+) registers");
  report.spillStoreBytes = findNumber(text, "([0-9]+) bytes spill stores");
  report.spillLoadBytes = findNumber(text, "([0-9]+) bytes spill loads");
  if (report.registers < 0 || report.spillStoreBytes < 0 ||
      report.spillLoadBytes < 0) {
    error =
        ("cannot read the resource report of ptxas ('" + ptxas + "'):\n" + text)
            .str();
    return failure();
  }
  return report;
}
