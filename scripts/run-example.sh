#!/usr/bin/env bash
# The main job on the bundled example: builds the compiler if needed, compiles
# examples/softmax.mlir (an f32 softmax, here for rows of 1024 columns) down
# to PTX with softmax-opt, writes the PTX and its launch metadata to
# build/example/, shows the kernel's resource usage from ptxas, and runs it
# with softmax-run: checked and timed on a GPU, or its launch plan without one.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
out=$build/example
cols=${COLS:-1024}

"$root/scripts/build.sh" >/dev/null
rm -rf "$out"
mkdir -p "$out"

echo "== decomposed IR (softmax-opt --rowred-decompose)"
"$build/bin/softmax-opt" "$root/examples/softmax.mlir" --rowred-decompose

echo
echo "== PTX (softmax-opt --rowred-to-ptx=\"cols=$cols output-dir=$out\")"
"$build/bin/softmax-opt" "$root/examples/softmax.mlir" \
  --rowred-to-ptx="cols=$cols output-dir=$out" -o "$out/softmax.gpu.mlir"
for json in "$out"/*.json; do
  python3 - "$json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
print(f"kernel {m['kernel']}: {m['op']} {m['input_type']}, {m['strategy']}, "
      f"{m['block_threads']} threads x {m['elements_per_thread']} elements, "
      f"vector width {m['vector_width']}, {m['shared_bytes']} B shared, "
      f"N in [{m['min_cols']}, {m['max_cols'] or 'any'}]")
PY
done
ls -1 "$out"/*.ptx "$out"/*.json

echo
cuda=${CUDA_PATH:-/usr/local/cuda}
ptxas=$(command -v ptxas || echo "$cuda/bin/ptxas")
if [ -x "$ptxas" ]; then
  echo "== resource usage (ptxas -arch=sm_90 -v)"
  for ptx in "$out"/*.ptx; do
    "$ptxas" -arch=sm_90 -v "$ptx" -o "${ptx%.ptx}.cubin" 2>&1 | sed 's/^ptxas info *: //'
  done
else
  echo "ptxas not found (no CUDA toolkit at $cuda): resource usage not shown"
fi

echo
runner=$build/bin/softmax-run
if [ ! -x "$runner" ]; then
  echo "softmax-run was not built (no CUDA toolkit headers): nothing to launch"
elif command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
  echo "== on the GPU (softmax-run --explain --check --bench)"
  "$runner" "$out/softmax_kernel0.json" --rows 4096 --cols "$cols" --explain --check --bench
else
  echo "== launch plan (softmax-run --explain; no GPU here)"
  "$runner" "$out/softmax_kernel0.json" --rows 4096 --cols "$cols" --explain
fi
