#!/usr/bin/env bash
# The one sanitized build of the project, shared by scripts/test-sanitized.sh
# and scripts/fuzz.sh: clang-22, AddressSanitizer and
# UndefinedBehaviorSanitizer at -O1 on the project's own code (LLVM and MLIR
# stay as installed), libFuzzer's coverage and the libFuzzer targets of
# tools/fuzzers, into build-sanitized/ (or $SANITIZED_BUILD_DIR). Builds
# every target, or those named. Installs what it needs, as scripts/build.sh
# does.
#
# usage: scripts/build-sanitized.sh [TARGET...]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)

"$root/scripts/setup.sh" clang-22 libclang-rt-22-dev
BUILD_DIR=${SANITIZED_BUILD_DIR:-$root/build-sanitized} \
  SOFTMAX_SANITIZE=address,undefined "$root/scripts/build.sh" \
  -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
  -DROWRED_FUZZERS=ON "$@"
