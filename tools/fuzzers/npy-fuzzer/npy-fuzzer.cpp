//===- npy-fuzzer.cpp - libFuzzer target of softmax-run's .npy reader -----===//
//
// Part of the softmax kernel compiler.
//
//===----------------------------------------------------------------------===//
//
// Reads each input as the contents of a .npy file, as every element type
// softmax-run asks for: the reader must refuse what it cannot read with a
// message, never read past the data or overflow a size.
//
//===----------------------------------------------------------------------===//

#include "HostData.h"

#include <cstddef>
#include <cstdint>
#include <string>

using namespace softmax_run;
using rowred::runtime::DType;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string contents(reinterpret_cast<const char *>(data), size);
  for (DType type : {DType::F32, DType::F16, DType::BF16}) {
    Matrix m(type, 1, 1, 1);
    std::string error;
    if (parseNpy(contents, "input.npy", type, m, error)) {
      // A matrix read must hold every element the header promised.
      volatile double sink = 0;
      for (int64_t r = 0; r < m.rows; ++r)
        for (int64_t c = 0; c < m.cols; ++c)
          sink = sink + m.get(r, c);
    } else if (error.empty()) {
      __builtin_trap(); // a refusal must say why
    }
  }
  return 0;
}
