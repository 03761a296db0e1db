#!/usr/bin/env bash
# The GPU suite on a machine that has both the compiler and a GPU: generates
# the representative kernel set with softmax-opt and checks every variant on
# the GPU against float64 (test/GPU/check_kernels.py, then softmax-run --check
# and compute-sanitizer through test/GPU/runner_suite.py). Exits 77 (skipped),
# with a message, where there is no GPU or no CuPy.
#
# usage: scripts/gpu-suite.sh SOFTMAX_OPT WORK_DIR
# On a GPU machine without LLVM/MLIR, generate the kernels elsewhere with
# scripts/gen_kernels.py and run scripts/gpu-run.sh there instead.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
opt=$1
work=$2

if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
  echo "SKIP: no NVIDIA GPU or driver on this machine (nvidia-smi -L failed)"
  exit 77
fi
if ! python3 -c "import cupy" >/dev/null 2>&1; then
  echo "SKIP: python3 cannot import cupy, which the GPU suite launches kernels with"
  exit 77
fi
rm -rf "$work"
python3 "$root/scripts/gen_kernels.py" "$opt" "$work" || exit 1
python3 "$root/test/GPU/check_kernels.py" "$work" --json "$work/results.json"
rc=$?
runner=$(dirname "$opt")/softmax-run
if [ -x "$runner" ]; then
  python3 "$root/test/GPU/runner_suite.py" "$runner" "$work" \
    --json "$work/runner-results.json" || rc=1
fi
exit $rc
