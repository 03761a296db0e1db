#!/usr/bin/env bash
# Runs the libFuzzer targets (tools/fuzzers: the .npy reader, the kernel
# metadata reader, the compiler through rowred-to-ptx) of the sanitized build
# (scripts/build-sanitized.sh: clang-22, AddressSanitizer and
# UndefinedBehaviorSanitizer, into build-sanitized/ or $SANITIZED_BUILD_DIR),
# each for SECONDS (default 60) from its seed corpus in test/fuzz/<target>/.
# A crash, a memory error, undefined behaviour or a timeout fails; the input
# is left in build-sanitized/artifacts/.
# The target plan-requests compiles random plan requests with the same
# build's softmax-opt and assembles what it accepts with ptxas
# (scripts/plan_fuzz.py): a crash, a memory error or PTX that ptxas rejects
# fails. The target manifests reads mutated pack manifests with the Python
# package's reader (scripts/manifest_fuzz.py): any error but PackError
# fails.
# Installs what it needs, as scripts/test.sh does. Long runs: docs/fuzzing.md.
#
# usage: scripts/fuzz.sh [SECONDS] [TARGET...]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${SANITIZED_BUILD_DIR:-$root/build-sanitized}
seconds=${1:-60}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] ||
  targets=(npy-fuzzer kernel-metadata-fuzzer rowred-pipeline-fuzzer
    plan-requests manifests)
tools=()
for target in "${targets[@]}"; do
  if [ "$target" = plan-requests ]; then
    tools+=(softmax-opt)
  elif [ "$target" = manifests ]; then
    continue
  else
    tools+=("$target")
  fi
done
"$root/scripts/build-sanitized.sh" "${tools[@]}"

source "$root/scripts/sanitizer-env.sh"
mkdir -p "$build/artifacts"
for target in "${targets[@]}"; do
  if [ "$target" = manifests ]; then
    echo "fuzz: $target for ${seconds}s"
    python3 "$root/scripts/manifest_fuzz.py" "$build/artifacts/manifests" \
      --seconds "$seconds" --seed "${MANIFEST_FUZZ_SEED:-$RANDOM}" || {
      echo "fuzz: $target failed; inputs in $build/artifacts/manifests" >&2
      exit 1
    }
    continue
  fi
  if [ "$target" = plan-requests ]; then
    echo "fuzz: $target for ${seconds}s"
    python3 "$root/scripts/plan_fuzz.py" "$build/bin/softmax-opt" \
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
