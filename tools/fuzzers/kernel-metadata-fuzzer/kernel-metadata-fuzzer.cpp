//===- kernel-metadata-fuzzer.cpp - libFuzzer target of the metadata ------===//
//
// Part of the softmax kernel compiler.
//
//===----------------------------------------------------------------------===//
//
// Reads each input as a kernel's launch metadata (docs/abi.md) with the
// runtime's reader: it must refuse what it cannot use with a message, and
// what it accepts must describe itself and plan its launches without
// undefined behaviour.
//
//===----------------------------------------------------------------------===//

#include "rowred/Runtime/KernelSpec.h"

#include <cstddef>
#include <cstdint>
#include <string>

using rowred::runtime::KernelSpec;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string text(reinterpret_cast<const char *>(data), size);
  std::string error;
  std::optional<KernelSpec> spec = KernelSpec::parse(text, "k.json", error);
  if (!spec) {
    if (error.empty())
      __builtin_trap(); // a refusal must say why
    return 0;
  }
  (void)spec->describe();
  for (int64_t cols : {1, 781, 4096, 131072})
    (void)spec->describeAccess(cols, cols, cols, 1);
  (void)KernelSpec::definesEntry(text, spec->kernel);
  return 0;
}
