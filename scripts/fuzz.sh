#!/usr/bin/env bash
# Builds the libFuzzer targets (tools/fuzzers: the .npy reader, the kernel
# metadata reader, the compiler through rowred-to-ptx) with clang-22,
# AddressSanitizer and UndefinedBehaviorSanitizer into build-fuzz/ (or
# $FUZZ_BUILD_DIR) and runs each for SECONDS (default 60) from its seed
# corpus in test/fuzz/<target>/. A crash, a memory error, undefined
# behaviour or a timeout fails; the input is left in build-fuzz/artifacts/.
# The target plan-requests compiles random plan requests with the
# sanitized softmax-opt (build-sanitized/, brought up to date) and assembles
# what it accepts with ptxas (scripts/plan_fuzz.py): a crash, a memory
# error or PTX that ptxas rejects fails.
# Installs what it needs, as scripts/test.sh does. Long runs: docs/fuzzing.md.
#
# usage: scripts/fuzz.sh [SECONDS] [TARGET...]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${FUZZ_BUILD_DIR:-$root/build-fuzz}
seconds=${1:-60}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] ||
  targets=(npy-fuzzer kernel-metadata-fuzzer rowred-pipeline-fuzzer
    plan-requests)
libfuzzer=()
for target in "${targets[@]}"; do
  [ "$target" = plan-requests ] || libfuzzer+=("$target")
done

"$root/scripts/setup.sh" clang-22 libclang-rt-22-dev

cuda=${CUDA_PATH:-/usr/local/cuda}
cmake -S "$root" -B "$build" -G Ninja \
  -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
  -DROWRED_FUZZERS=ON -DSOFTMAX_SANITIZE=address,undefined \
  -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir \
  -DLLVM_EXTERNAL_LIT=/usr/lib/llvm-22/bin/lit \
  -DCMAKE_PREFIX_PATH="$cuda"
[ ${#libfuzzer[@]} -eq 0 ] || cmake --build "$build" --target "${libfuzzer[@]}"

# As in scripts/test-sanitized.sh: LLVM's allocators poison memory that the
# uninstrumented LLVM libraries then use.
export ASAN_OPTIONS=${ASAN_OPTIONS:-allow_user_poisoning=0:halt_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
mkdir -p "$build/artifacts"
for target in "${targets[@]}"; do
  if [ "$target" = plan-requests ]; then
    sanitized=${SANITIZED_BUILD_DIR:-$root/build-sanitized}
    BUILD_DIR=$sanitized SOFTMAX_SANITIZE=address,undefined \
      "$root/scripts/build.sh" softmax-opt
    echo "fuzz: $target for ${seconds}s"
    python3 "$root/scripts/plan_fuzz.py" "$sanitized/bin/softmax-opt" \
      "$build/artifacts/plan-requests" --seconds "$seconds" \
      --seed "${PLAN_FUZZ_SEED:-$RANDOM}" || {
      echo "fuzz: $target failed; inputs in $build/artifacts/plan-requests" >&2
      exit 1
    }
    continue
  fi
  # New inputs go to a scratch corpus; the seeds stay as committed.
  scratch=$(mktemp -d)
  echo "fuzz: $target for ${seconds}s"
  "$build/bin/$target" -max_total_time="$seconds" -timeout=60 \
    -rss_limit_mb=4096 -print_final_stats=1 \
    -artifact_prefix="$build/artifacts/$target-" \
    "$scratch" "$root/test/fuzz/$target" 2>&1 | tail -12
  status=${PIPESTATUS[0]}
  rm -rf "$scratch"
  if [ "$status" -ne 0 ]; then
    echo "fuzz: $target failed (exit $status); inputs in $build/artifacts" >&2
    exit 1
  fi
done
echo "fuzz: every target ran ${seconds}s without a finding"
