#!/usr/bin/env bash
# ticket_build.sh OUT_DIR: the variants of ticket.cu, PTX for sm_90a, and
# OUT_DIR/variants.json naming each one's type, threads and elements per
# thread, for ticket_exp.py. Needs the CUDA toolkit, not a GPU.
set -eu
out=$1
here=$(cd "$(dirname "$0")" && pwd)
nvcc=${NVCC:-/usr/local/cuda/bin/nvcc}
mkdir -p "$out"
list=()
variant() { # name dtype threads ept sept copy [nvcc flags...]
  local name=$1 dt=$2 th=$3 ept=$4 sept=$5 copy=$6
  shift 6
  local d=0
  [ "$dt" = bf16 ] && d=1
  "$nvcc" -arch=sm_90a -ptx "$here/ticket.cu" -o "$out/$name.ptx" -DDT=$d \
    -DTHREADS="$th" -DEPT="$ept" -DSEPT="$sept" -w "$@"
  list+=("{\"name\": \"$name\", \"dtype\": \"$dt\", \"threads\": $th, \"ept\": $ept, \"sept\": $sept, \"copy\": $copy}")
}
# The first round (kept for the record: ticket-only, registers only).
case ${ROUND:-7} in
1)
variant f-t256-e32 f32 256 32 0 false
variant f-t256-e16 f32 256 16 0 false
variant f-t128-e32 f32 128 32 0 false
variant f-t128-e16 f32 128 16 0 false
variant f-t512-e32 f32 512 32 0 false
variant f-t256-e32-ldcs f32 256 32 0 false -DLDHINT=1
variant f-t256-e32-st f32 256 32 0 false -DSTHINT=0
variant f-t256-e32-blk f32 256 32 0 false -DNO_TICKET
variant f-copy-t256-e32 f32 256 32 0 true -DCOPY_ONLY
variant f-copy-t128-e16 f32 128 16 0 true -DCOPY_ONLY
variant b-t256-e32 bf16 256 32 0 false
variant b-t128-e32 bf16 128 32 0 false
variant b-t256-e64 bf16 256 64 0 false
variant b-t512-e32 bf16 512 32 0 false
variant b-t128-e64 bf16 128 64 0 false
variant b-t256-e16 bf16 256 16 0 false
variant b-copy-t256-e32 bf16 256 32 0 true -DCOPY_ONLY
;;
2)
# Second round: part of each chunk staged in shared memory as well.
variant f-t256-e32 f32 256 32 0 false -DSTHINT=0
variant f-t256-e32-s32 f32 256 32 32 false -DSTHINT=0
variant f-t128-e32-s32 f32 128 32 32 false -DSTHINT=0
variant f-t128-e32-s96 f32 128 32 96 false -DSTHINT=0
variant f-t256-e16-s48 f32 256 16 48 false -DSTHINT=0
variant f-t256-e32-s96 f32 256 32 96 false -DSTHINT=0
variant f-copy-t256-e32-s32 f32 256 32 32 true -DCOPY_ONLY
variant b-t128-e64 bf16 128 64 0 false
variant b-t128-e64-rc bf16 128 64 0 false -DRECOMP
variant b-t256-e32-s32-rc bf16 256 32 32 false -DRECOMP
variant b-t256-e32-s96-rc bf16 256 32 96 false -DRECOMP
variant b-t128-e64-s64-rc bf16 128 64 64 false -DRECOMP
variant b-t128-e64-s192-rc bf16 128 64 192 false -DRECOMP
variant b-t256-e64-rc bf16 256 64 0 false -DRECOMP
variant b-copy-t128-e64-s64 bf16 128 64 64 true -DCOPY_ONLY
;;
3)
# Third round: the stage's pass, its copy and the polling.
variant f-t256-e32-s32 f32 256 32 32 false -DSTHINT=0
variant f-t256-e32-s32-on f32 256 32 32 false -DSTHINT=0 -DSONLINE
variant f-t256-e32-s32-bulk f32 256 32 32 false -DSTHINT=0 -DBULK
variant f-t256-e32-s32-bulk-on f32 256 32 32 false -DSTHINT=0 -DBULK -DSONLINE
variant f-t256-e32-s32-sl0 f32 256 32 32 false -DSTHINT=0 -DSLEEP=0
variant f-t512-e32-s32 f32 512 32 32 false -DSTHINT=0
variant f-t128-e64-s64 f32 128 64 64 false -DSTHINT=0
variant f-copy-t256-e32-s32-bulk f32 256 32 32 true -DCOPY_ONLY -DBULK
variant b-t128-e64-s64-rc bf16 128 64 64 false -DRECOMP
variant b-t128-e64-s64-rc-bulk-on bf16 128 64 64 false -DRECOMP -DBULK -DSONLINE
variant b-t256-e32-s32 bf16 256 32 32 false
variant b-t256-e32-s32-on bf16 256 32 32 false -DSONLINE
variant b-t256-e32-s32-bulk-on bf16 256 32 32 false -DBULK -DSONLINE
variant b-t128-e64-s64 bf16 128 64 64 false
variant b-t256-e64-s64-rc bf16 256 64 64 false -DRECOMP
variant b-copy-t128-e64-s64-bulk bf16 128 64 64 true -DCOPY_ONLY -DBULK
;;
4)
# Fourth round: the bulk copy with other shapes.
variant f-t256-e32-s32-bulk f32 256 32 32 false -DSTHINT=0 -DBULK
variant f-t128-e64-s64-bulk f32 128 64 64 false -DSTHINT=0 -DBULK
variant f-t128-e32-s32-bulk f32 128 32 32 false -DSTHINT=0 -DBULK
variant f-t256-e16-s48-bulk f32 256 16 48 false -DSTHINT=0 -DBULK
variant f-t256-e32-s32-bulk-sl256 f32 256 32 32 false -DSTHINT=0 -DBULK -DSLEEP=256
variant f-t256-e32-s32-bulk-sl16 f32 256 32 32 false -DSTHINT=0 -DBULK -DSLEEP=16
variant b-t128-e64-s64-rc-bulk bf16 128 64 64 false -DRECOMP -DBULK
variant b-t256-e32-s96-rc-bulk bf16 256 32 96 false -DRECOMP -DBULK
variant b-t128-e32-s96-rc-bulk bf16 128 32 96 false -DRECOMP -DBULK
variant b-t256-e64-s64-rc-bulk bf16 256 64 64 false -DRECOMP -DBULK
;;
5)
# Fifth round: more of each chunk staged.
variant f-t128-e64-s64-bulk f32 128 64 64 false -DSTHINT=0 -DBULK
variant f-t128-e32-s96-bulk f32 128 32 96 false -DSTHINT=0 -DBULK
variant f-t64-e64-s192-bulk f32 64 64 192 false -DSTHINT=0 -DBULK
variant f-t128-e48-s80-bulk f32 128 48 80 false -DSTHINT=0 -DBULK
variant f-t128-e64-s64-bulk-sl16 f32 128 64 64 false -DSTHINT=0 -DBULK -DSLEEP=16
variant b-t128-e32-s96-rc-bulk bf16 128 32 96 false -DRECOMP -DBULK
variant b-t128-e16-s112-rc-bulk bf16 128 16 112 false -DRECOMP -DBULK
variant b-t64-e64-s192-rc-bulk bf16 64 64 192 false -DRECOMP -DBULK
variant b-t128-e32-s224-rc-bulk bf16 128 32 224 false -DRECOMP -DBULK
variant b-t128-e32-s96-bulk bf16 128 32 96 false -DBULK
variant b-t128-e32-s96-rc-bulk-sl16 bf16 128 32 96 false -DRECOMP -DBULK -DSLEEP=16
;;
6)
# Sixth round: the best layouts on the other shapes of 64 MiB and more.
variant f-t128-e64-s64-bulk f32 128 64 64 false -DSTHINT=0 -DBULK
variant f-t256-e32-s32-bulk f32 256 32 32 false -DSTHINT=0 -DBULK
variant b-t128-e32-s96-bulk bf16 128 32 96 false -DBULK
variant b-t128-e32-s96-rc-bulk bf16 128 32 96 false -DRECOMP -DBULK
;;
*)
# Seventh round: bf16 layouts of 1048576.
variant b-t128-e32-s96-bulk bf16 128 32 96 false -DBULK
variant b-t128-e32-s96-bulk-st bf16 128 32 96 false -DBULK -DSTHINT=0
variant b-t128-e32-s96-bulk-on bf16 128 32 96 false -DBULK -DSONLINE
variant b-t64-e32-s96-bulk bf16 64 32 96 false -DBULK
variant b-t64-e64-s64-bulk bf16 64 64 64 false -DBULK
variant b-t128-e64-s64-bulk bf16 128 64 64 false -DBULK
variant b-t128-e32-s32-bulk bf16 128 32 32 false -DBULK
;;
esac
(IFS=,; echo "[${list[*]}]") > "$out/variants.json"
