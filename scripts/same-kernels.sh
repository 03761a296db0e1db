#!/usr/bin/env bash
# Checks that two builds of softmax-opt (say g++'s and clang's) write the
# same kernels: compiles kernel sets of scripts/gen_kernels.py with each
# (no ptxas) and compares every .ptx and .json byte for byte. The emitters
# create each op in a statement of its own because C++ leaves the order of
# a call's arguments unspecified (lib/Conversion/RowRedToGPU/
# KernelEmitter.h); an op created inside another call's arguments shows up
# here as a difference. Exits 1 on any difference, naming the files.
# A sanitized softmax-opt (scripts/build-sanitized.sh) runs with
# scripts/sanitizer-env.sh's options.
#
# usage: scripts/same-kernels.sh SOFTMAX_OPT_A SOFTMAX_OPT_B [SET...]
#        (sets of gen_kernels.py; default: suite family)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
[ $# -ge 2 ] || { echo "usage: $0 SOFTMAX_OPT_A SOFTMAX_OPT_B [SET...]" >&2; exit 2; }
a=$1 b=$2
shift 2
sets=("$@")
[ ${#sets[@]} -gt 0 ] || sets=(suite family)
source "$root/scripts/sanitizer-env.sh"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
status=0
# Both builds at once (gen_kernels.py compiles one kernel at a time).
gen() {
  python3 "$root/scripts/gen_kernels.py" "$2" "$work/$1/$3" --set "$3" \
    --ptxas none >"$work/$1-$3.log" 2>&1 ||
    { tail -20 "$work/$1-$3.log"; echo "$2 failed on --set $3"; return 1; }
}
for set in "${sets[@]}"; do
  gen a "$a" "$set" & pid=$!
  gen b "$b" "$set" || status=1
  wait $pid || status=1
  [ $status -eq 0 ] || exit 1
  count=$(find "$work/a/$set" -name '*.ptx' | wc -l)
  if diff -rq "$work/a/$set" "$work/b/$set" >"$work/diff-$set.txt"; then
    echo "--set $set: the same $count kernels"
  else
    echo "--set $set: kernels differ between $a and $b:"
    cat "$work/diff-$set.txt"
    status=1
  fi
done
exit $status
