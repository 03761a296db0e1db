#!/usr/bin/env bash
# Runs the lit suite and the unit tests on the sanitized build
# (scripts/build-sanitized.sh: AddressSanitizer and UndefinedBehaviorSanitizer
# on the project's own code, into build-sanitized/ or $SANITIZED_BUILD_DIR):
# a memory error or undefined behaviour in the compiler or softmax-run fails
# a test. Installs what it needs, as scripts/test.sh does.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${SANITIZED_BUILD_DIR:-$root/build-sanitized}

"$root/scripts/build-sanitized.sh"
# allow_user_poisoning=0: LLVM's headers poison the memory of their
# allocators when compiled with ASan, which the uninstrumented LLVM libraries
# then use without unpoisoning it (false use-after-poison reports).
export ASAN_OPTIONS=${ASAN_OPTIONS:-allow_user_poisoning=0:halt_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
# The tests labelled kernel-sets (test/CMakeLists.txt) run in scripts/test.sh.
ctest --test-dir "$build" --output-on-failure -j "$(nproc)" -L 'lit|unit' \
  -LE kernel-sets "$@"
