#!/usr/bin/env bash
# The whole GPU check in one call, on a GPU machine (no LLVM needed there):
# builds softmax-run and the runtime library without the compiler, runs the
# GPU suites over
# pre-generated kernels (CuPy harness, then softmax-run --check with
# compute-sanitizer), optionally the benchmark, and prints the short tables
# last. Kernels come from scripts/gen_kernels.py on a machine with the
# compiler.
#
# usage: scripts/gpu-run.sh SUITE_KERNEL_DIR [BENCH_KERNEL_DIR] [RESULTS_DIR]
#
# RUNNER_MATCH=RE limits softmax-run --check to the kernels matching RE, in
# the suite and in the family. The checks run in two phases, the steps of
# each side by side under a time limit; times.txt in RESULTS_DIR has how
# long each took.
# TORCH_PACK=DIR also runs the PyTorch package's GPU tests
# (test/GPU/torch_ops.py) over the pack in DIR; PATCH_PACK=DIR (an LLM
# preset pack) the patched Hugging Face models (test/GPU/patch_models.py,
# skipped without transformers); FAMILY=DIR checks the
# family's kernels in DIR (gen_kernels.py --set family) with
# test/GPU/check_family.py and softmax-run --check.
# PHASE=harness runs only the first phase below (the CuPy harnesses and
# the package's tests), PHASE=runner only the second (softmax-run --check
# and compute-sanitizer, each step with up to 540 s): with FAMILY, the
# whole suite takes about the ten minutes one device call may run, so it
# goes in two calls. RUNNER_LIMIT=S sets the second phase's limit per step.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
suite=$1
bench=${2:-}
results=${3:-${OUT:-/tmp}}
runner_build=${RUNNER_BUILD:-/tmp/softmax-runner}
mkdir -p "$results"
phase=${PHASE:-all}
case $phase in
  all|harness|runner) ;;
  *) echo "PHASE must be all, harness or runner, not '$phase'"; exit 2 ;;
esac
runner_limit=300
[ "$phase" = runner ] && runner_limit=540
runner_limit=${RUNNER_LIMIT:-$runner_limit}
export PYTHONUNBUFFERED=1

nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || true
echo "== building softmax-run (SOFTMAX_RUNNER_ONLY)"
# The package's launch module for the python3 that runs the harnesses.
if ! { cmake -S "$root" -B "$runner_build" -G Ninja -DSOFTMAX_RUNNER_ONLY=ON \
         -DCMAKE_BUILD_TYPE=Release \
         -DPython3_EXECUTABLE="$(command -v python3)" \
         >"$results/runner-build.txt" 2>&1 &&
       cmake --build "$runner_build" >>"$results/runner-build.txt" 2>&1; }; then
  tail -30 "$results/runner-build.txt"
  echo "softmax-run failed to build"
  exit 1
fi
runner=$runner_build/bin/softmax-run
# Every harness launches through the runtime library built with it.
export ROWRED_RUNTIME_LIBRARY=${ROWRED_RUNTIME_LIBRARY:-$runner_build/lib/librowred_runtime.so}

# Two phases, the steps of each side by side under their own time limits:
# the CuPy harnesses and the PyTorch package's tests, then softmax-run
# --check and compute-sanitizer (many processes; run beside the harnesses
# they slowed them past their limits). Each step's time goes to times.txt.
declare -A pids
start_step() {  # NAME LIMIT_S COMMAND... (output to $results/NAME.txt)
  local name=$1 limit=$2
  shift 2
  ( t0=$(date +%s)
    timeout -s KILL "$limit" "$@" >"$results/$name.txt" 2>&1
    rc=$?
    echo "$name: $(( $(date +%s) - t0 )) s, exit status $rc" >>"$results/times.txt"
    exit $rc ) &
  pids[$name]=$!
}
status() { [ -z "${pids[$1]:-}" ] && return 0; wait "${pids[$1]}"; }
rm -f "$results/times.txt"
if [ "$phase" != runner ]; then
  # The CuPy suite took 263 s beside the family's 81 kernels and was
  # stopped at 330 s after its last case beside 84: 450 leaves the call's
  # runner build within the device's ten minutes.
  start_step suite 450 python3 "$root/test/GPU/check_kernels.py" "$suite" \
    --json "$results/suite.json"
  [ -n "${FAMILY:-}" ] &&
    start_step family 300 python3 "$root/test/GPU/check_family.py" \
      "$FAMILY" --json "$results/family.json"
  [ -n "${TORCH_PACK:-}" ] &&
    start_step torch-ops 300 python3 "$root/test/GPU/torch_ops.py" \
      "$TORCH_PACK"
fi
status suite; suite_rc=$?
family_rc=0
status family || family_rc=1
status torch-ops; torch_rc=$?

if [ "$phase" != harness ]; then
  start_step runner-suite "$runner_limit" python3 \
    "$root/test/GPU/runner_suite.py" "$runner" "$suite" \
    ${RUNNER_MATCH:+--match "$RUNNER_MATCH"} \
    --json "$results/runner-suite.json"
  # The family's kernels through softmax-run --check too (its own operands
  # and reference) and compute-sanitizer.
  [ -n "${FAMILY:-}" ] &&
    start_step runner-family "$runner_limit" python3 \
      "$root/test/GPU/runner_suite.py" "$runner" "$FAMILY" \
      ${RUNNER_MATCH:+--match "$RUNNER_MATCH"} \
      --json "$results/runner-family.json"
fi
status runner-suite; runner_rc=$?
status runner-family || family_rc=1
# The patched models alone: they fill the GPU.
patch_rc=0
if [ -n "${PATCH_PACK:-}" ]; then
  timeout -s KILL 300 python3 "$root/test/GPU/patch_models.py" "$PATCH_PACK" \
    >"$results/patch-models.txt" 2>&1
  rc=$?
  [ "$rc" -eq 0 ] || [ "$rc" -eq 77 ] || patch_rc=1
fi
# --explain on the suite's fused f32 4096 kernel, or its first kernel.
explain=$suite/softmax_f32_fused_b4096_kernel0.json
[ -f "$explain" ] || explain=$(ls "$suite"/*_kernel0.json | head -1)
"$runner" "$explain" --explain --rows 4096 >"$results/explain.txt" 2>&1
if [ -n "$bench" ]; then
  timeout 420 python3 "$root/bench/bench.py" "$bench" --json "$results/bench.json" \
    --png "$results/bench.png" >"$results/bench.txt" 2>&1
  for n in 4096 65536; do
    "$runner" "$bench/softmax_f32_auto_n${n}_kernel0.json" --rows 4096 --cols $n \
      --bench --iters 50 >>"$results/runner-bench.txt" 2>&1
  done
fi

cat "$results/explain.txt" "$results/times.txt"
[ -n "$bench" ] && { grep -v '^  {' "$results/bench.txt"; cat "$results/runner-bench.txt"; }
# A phase left out wrote no output of its own.
tail -22 "$results/suite.txt" 2>/dev/null
tail -30 "$results/runner-suite.txt" 2>/dev/null
[ -n "${TORCH_PACK:-}" ] && tail -40 "$results/torch-ops.txt" 2>/dev/null
[ -n "${PATCH_PACK:-}" ] && tail -12 "$results/patch-models.txt"
[ -n "${FAMILY:-}" ] && { tail -40 "$results/family.txt";
  tail -12 "$results/runner-family.txt"; } 2>/dev/null
echo "GPU suite exit status: CuPy harness $suite_rc, softmax-run $runner_rc," \
  "PyTorch package $torch_rc, family $family_rc, patched models $patch_rc"
[ "$suite_rc" -eq 0 ] && [ "$runner_rc" -eq 0 ] && [ "$torch_rc" -eq 0 ] &&
  [ "$family_rc" -eq 0 ] && [ "$patch_rc" -eq 0 ]
