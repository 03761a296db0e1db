#!/usr/bin/env bash
# build.sh OUT_DIR: the prototypes of ring.cu (one directory per variant, PTX
# plus metadata in the ABI of the bench kernel of bf16 rows of 1048576, which
# must exist as BENCH_DIR/softmax_bf16_auto_n1048576_kernel0.json) and the
# copy kernels of copy.cu, compiled with nvcc for sm_90a. Needs the CUDA
# toolkit, not a GPU.
set -eu
out=$1
bench=${BENCH_DIR:-$out/bench}
here=$(cd "$(dirname "$0")" && pwd)
nvcc=${NVCC:-/usr/local/cuda/bin/nvcc}
name=softmax_bf16_auto_n1048576_kernel0
mkdir -p "$out"
variant() { # dir threads tile ring cluster [nvcc flags...]
  local d=$out/$1 th=$2 tile=$3 ring=$4 cl=$5
  shift 5
  mkdir -p "$d"
  "$nvcc" -arch=sm_90a -ptx "$here/ring.cu" -o "$d/$name.ptx" -DTHREADS="$th" \
    -DTILE="$tile" -DRING="$ring" -DCLUSTER="$cl" "$@"
  python3 - "$bench/$name.json" "$d/$name.json" "$th" $((tile * ring * 2)) "$cl" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
m["block_threads"] = int(sys.argv[3])
m["dynamic_shared_bytes"] = int(sys.argv[4])
m["cluster_blocks"] = int(sys.argv[5])
json.dump(m, open(sys.argv[2], "w"), indent=1)
PY
}
variant r7-1024 1024 16384 7 16
variant r7-512 512 16384 7 16
variant r14-1024 1024 8192 14 16
variant r14-512 512 8192 14 16
variant r28-512 512 4096 28 16
variant r7-512-k2k 512 16384 7 16 -DCHUNK=2048
variant copy-c16 1024 16384 7 16 -DCOPY_ONLY
variant copy-c16-plain 1024 16384 7 16 -DCOPY_ONLY -DSTORE_PLAIN
variant copy-c16-r5 1024 16384 5 16 -DCOPY_ONLY
variant copy-c16-k2k 1024 16384 7 16 -DCOPY_ONLY -DCHUNK=2048
variant copy-c1 1024 16384 7 1 -DCOPY_ONLY
for u in 1 2 4 8; do
  "$nvcc" -arch=sm_90a -ptx "$here/copy.cu" -DUNR=$u -o "$out/copy-u$u.ptx"
done
