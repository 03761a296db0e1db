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
source "$root/scripts/sanitizer-env.sh"
# The tests labelled kernel-sets (test/CMakeLists.txt) run in scripts/test.sh.
ctest --test-dir "$build" --output-on-failure -j "$(nproc)" -L 'lit|unit' \
  -LE kernel-sets "$@"
