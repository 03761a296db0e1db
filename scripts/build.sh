#!/usr/bin/env bash
# Configures and builds the project into build/ (or $BUILD_DIR) after making
# sure its dependencies are installed: every target, or those named.
# $SOFTMAX_SANITIZE (e.g. address,undefined) instruments the project's own
# code with those sanitizers (scripts/test-sanitized.sh).
#
# usage: scripts/build.sh [TARGET...]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}

"$root/scripts/setup.sh"

cuda=${CUDA_PATH:-/usr/local/cuda}
cmake -S "$root" -B "$build" -G Ninja \
  -DCMAKE_BUILD_TYPE=Release \
  -DSOFTMAX_SANITIZE="${SOFTMAX_SANITIZE:-}" \
  -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir \
  -DLLVM_EXTERNAL_LIT=/usr/lib/llvm-22/bin/lit \
  -DCMAKE_PREFIX_PATH="$cuda"
if [ $# -gt 0 ]; then
  cmake --build "$build" --target "$@"
else
  cmake --build "$build"
fi
