#!/usr/bin/env bash
# On a GPU machine: runs the GPU suite over pre-generated kernels and then the
# benchmark, printing the short tables last. Needs python3 with CuPy (and
# torch + triton for the benchmark). Kernels come from scripts/gen_kernels.py
# on a machine with the compiler.
#
# usage: scripts/gpu-run.sh SUITE_KERNEL_DIR [BENCH_KERNEL_DIR] [RESULTS_DIR]
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
suite=$1
bench=${2:-}
results=${3:-${OUT:-/tmp}}
mkdir -p "$results"
export PYTHONUNBUFFERED=1

nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || true
python3 "$root/test/GPU/check_kernels.py" "$suite" --json "$results/suite.json" \
  2>&1 | tee "$results/suite.txt"
suite_rc=${PIPESTATUS[0]}
if [ -n "$bench" ]; then
  timeout 420 python3 "$root/bench/bench.py" "$bench" --json "$results/bench.json" \
    --png "$results/bench.png" 2>&1 | tee "$results/bench.txt"
fi
echo "GPU suite exit status: $suite_rc"
exit "$suite_rc"
