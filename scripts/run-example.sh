#!/usr/bin/env bash
# The main job on the bundled example: builds the compiler if needed and runs
# softmax-opt on examples/softmax.mlir, printing the decomposed IR.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}

"$root/scripts/build.sh" >/dev/null
"$build/bin/softmax-opt" "$root/examples/softmax.mlir" --rowred-decompose
