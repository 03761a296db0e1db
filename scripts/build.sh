#!/usr/bin/env bash
# Configures and builds the project into build/ (or $BUILD_DIR) after making
# sure its dependencies are installed: every target, or those named.
# Leading -D arguments go to CMake's configure step (scripts/build-sanitized.sh
# picks clang and the fuzzers this way).
# $SOFTMAX_SANITIZE (e.g. address,undefined) instruments the project's own
# code with those sanitizers (scripts/build-sanitized.sh).
#
# usage: scripts/build.sh [-DVAR=VALUE...] [TARGET...]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
defines=()
while [ $# -gt 0 ] && [[ $1 == -D* ]]; do
  defines+=("$1")
  shift
done

"$root/scripts/setup.sh"

cuda=${CUDA_PATH:-/usr/local/cuda}
cmake -S "$root" -B "$build" -G Ninja \
  -DCMAKE_BUILD_TYPE=Release \
  -DSOFTMAX_SANITIZE="${SOFTMAX_SANITIZE:-}" \
  -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir \
  -DLLVM_EXTERNAL_LIT=/usr/lib/llvm-22/bin/lit \
  -DCMAKE_PREFIX_PATH="$cuda" "${defines[@]}"
if [ $# -gt 0 ]; then
  cmake --build "$build" --target "$@"
else
  cmake --build "$build"
fi
