//===- kernel-metadata-fuzzer.cpp - libFuzzer target of the metadata ------===//
//
// Part of the softmax kernel compiler.
//
//===----------------------------------------------------------------------===//
//
// Reads each input as a kernel's launch metadata (docs/abi.md) with the
// runtime's reader: it must refuse what it cannot use with a message, and
// what it accepts must describe itself and plan its launches without
// undefined behaviour. Past a line "//ptx" an input carries the kernel's
// PTX, whose entry is checked against the metadata as KernelSpec::load
// checks it.
//
//===----------------------------------------------------------------------===//

#include "rowred/Runtime/KernelSpec.h"

#include <cstddef>
#include <cstdint>
#include <string>

using rowred::runtime::KernelSpec;

/// The line after which an input carries the kernel's PTX.
static const char kPtxMark[] = "\n//ptx\n";

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string text(reinterpret_cast<const char *>(data), size);
  // The metadata, then, past kPtxMark, the PTX whose entry load checks
  // against it.
  size_t mark = text.find(kPtxMark);
  std::string json = text.substr(0, mark);
  std::string error;
  std::optional<KernelSpec> spec = KernelSpec::parse(json, "k.json", error);
  if (!spec) {
    if (error.empty())
      __builtin_trap(); // a refusal must say why
    return 0;
  }
  (void)spec->describe();
  for (int64_t cols : {1, 781, 4096, 131072})
    (void)spec->describeAccess(cols, cols, cols, 1);
  (void)KernelSpec::definesEntry(text, spec->kernel);
  if (mark != std::string::npos) {
    spec->ptx = text.substr(mark + sizeof(kPtxMark) - 1);
    if (KernelSpec::definesEntry(spec->ptx, spec->kernel))
      (void)spec->entryProblem();
  }
  return 0;
}
