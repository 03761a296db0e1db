// The grid the kernel's metadata asks the launcher for (grid option): auto
// gives fused f32 blocks of a row, 16-bit blocks of 4096, 8192 and 16384 on
// 256 threads, and the 16-bit rows it stages whole (8193 to 57344
// elements) one block per row ("rows"); fused ones then fetch no next row. Everything else keeps the persistent grid, and so does every kernel
// before sm_90.
// RUN: softmax-opt %S/Inputs/dynamic.mlir --rowred-decompose --rowred-plan="cols=16384" --convert-rowred-to-gpu | FileCheck %s --check-prefix=F32-AUTO
// RUN: softmax-opt %S/Inputs/dynamic.mlir --test-rowred-plan-request="fields='grid = persistent'" --rowred-decompose --rowred-plan="cols=16384" --convert-rowred-to-gpu | FileCheck %s --check-prefix=F32-PERSISTENT
// RUN: softmax-opt %S/Inputs/dynamic.mlir --test-rowred-plan-request="fields='prefetch = stage'" --rowred-decompose --rowred-plan="cols=16384" --convert-rowred-to-gpu | FileCheck %s --check-prefix=F32-PERSISTENT
// RUN: softmax-opt %S/Inputs/dynamic.mlir --rowred-decompose --rowred-plan="cols=16384 chip=sm_80" --convert-rowred-to-gpu | FileCheck %s --check-prefix=F32-PERSISTENT
// RUN: softmax-opt %S/Inputs/dynamic.mlir --rowred-decompose --rowred-plan="cols=256" --convert-rowred-to-gpu | FileCheck %s --check-prefix=WARP-ROWS
// RUN: softmax-opt %S/Inputs/bf16.mlir --rowred-decompose --rowred-plan="cols=12287 strategy=fused" --convert-rowred-to-gpu | FileCheck %s --check-prefix=BF16-AUTO
// RUN: softmax-opt %S/Inputs/bf16.mlir --test-rowred-plan-request="fields='grid = rows'" --rowred-decompose --rowred-plan="cols=12287 strategy=fused" --convert-rowred-to-gpu | FileCheck %s --check-prefix=BF16-ROWS
// RUN: softmax-opt %S/Inputs/bf16.mlir --rowred-decompose --rowred-plan="cols=8192" --convert-rowred-to-gpu | FileCheck %s --check-prefix=BF8192
// RUN: softmax-opt %S/Inputs/bf16.mlir --test-rowred-plan-request="fields='grid = persistent'" --rowred-decompose --rowred-plan="cols=8192" --convert-rowred-to-gpu | FileCheck %s --check-prefix=BF8192-PERSISTENT
// RUN: softmax-opt %S/Inputs/bf16.mlir --rowred-decompose --rowred-plan="cols=16383 strategy=fused" --convert-rowred-to-gpu | FileCheck %s --check-prefix=BF16384
// RUN: softmax-opt %S/Inputs/bf16.mlir --test-rowred-plan-request="fields='grid = persistent'" --rowred-decompose --rowred-plan="cols=16384" --convert-rowred-to-gpu | FileCheck %s --check-prefix=BF16384-PERSISTENT
// RUN: softmax-opt %S/Inputs/bf16.mlir --rowred-decompose --rowred-plan="cols=32767 strategy=fused" --convert-rowred-to-gpu | FileCheck %s --check-prefix=BF16-STAGE
// RUN: softmax-opt %S/Inputs/bf16.mlir --rowred-decompose --rowred-plan="cols=32768" --convert-rowred-to-gpu | FileCheck %s --check-prefix=STAGED-ROW
// RUN: softmax-opt %S/Inputs/bf16.mlir --test-rowred-plan-request="fields='grid = persistent'" --rowred-decompose --rowred-plan="cols=32768" --convert-rowred-to-gpu | FileCheck %s --check-prefix=BF16-STAGE
// RUN: softmax-opt %S/Inputs/dynamic.mlir --test-rowred-plan-request="fields='grid = rows'" --rowred-decompose --rowred-plan="cols=1048576" --convert-rowred-to-gpu | FileCheck %s --check-prefix=ONLINE-ROWS
// RUN: not softmax-opt %S/Inputs/dynamic.mlir --test-rowred-plan-request="fields='grid = rows, prefetch = stage'" --rowred-decompose --rowred-plan="cols=16384" --convert-rowred-to-gpu 2>&1 | FileCheck %s --check-prefix=ROWS-STAGE

// F32-AUTO: dynamic_shared_bytes = 0 : i64
// F32-AUTO-SAME: grid = "rows"
// F32-AUTO-SAME: prefetch = "none"
// F32-AUTO-NOT: cp.async
// F32-AUTO-NOT: rowred_stage

// The persistent grid (asked for, or kept for the stage asked for, or before
// sm_90) brings back auto's stage for the next row.
// F32-PERSISTENT: dynamic_shared_bytes = 65536 : i64
// F32-PERSISTENT-SAME: grid = "persistent"
// F32-PERSISTENT-SAME: prefetch = "shared"

// Blocks of several rows keep the persistent grid.
// WARP-ROWS: grid = "persistent"
// WARP-ROWS-SAME: rows_per_block = 4 : i64

// Fused 16-bit blocks of 12288 (strategy=fused: auto stages such rows whole)
// load their next row into registers and stay persistent; asked for one
// block per row, they load nothing ahead.
// BF16-AUTO: grid = "persistent"
// BF16-AUTO-SAME: prefetch = "registers"
// BF16-ROWS: grid = "rows"
// BF16-ROWS-SAME: prefetch = "none"
// A 16-bit block of 8192 with one block per row runs 256 threads x 32; on the
// persistent grid, 512 x 16 with the next row in registers. One of 16384
// (asked for: auto stages such rows) runs 256 x 64, the one 16-bit block past
// the 32 elements per thread of derived warps.
// BF8192: block_threads = 256 : i64
// BF8192-SAME: elements_per_thread = 32 : i64
// BF8192-SAME: grid = "rows"
// BF8192-PERSISTENT: block_threads = 512 : i64
// BF8192-PERSISTENT-SAME: elements_per_thread = 16 : i64
// BF8192-PERSISTENT-SAME: grid = "persistent"
// BF8192-PERSISTENT-SAME: prefetch = "registers"
// BF16384: block_threads = 256 : i64
// BF16384-SAME: elements_per_thread = 64 : i64
// BF16384-SAME: grid = "rows"
// BF16384-PERSISTENT: block_threads = 512 : i64
// BF16384-PERSISTENT-SAME: elements_per_thread = 32 : i64
// BF16384-PERSISTENT-SAME: grid = "persistent"
// BF16384-PERSISTENT-SAME: prefetch = "shared"
// The fused 16-bit block of 32768 (1024 threads, alone on its SM) stages
// its next row and keeps the persistent grid: asked for by strategy, and
// where the persistent grid is asked for.
// BF16-STAGE: block_threads = 1024 : i64
// BF16-STAGE-SAME: grid = "persistent"
// BF16-STAGE-SAME: prefetch = "shared"
// BF16-STAGE-SAME: strategy = "fused"
// A staged row: the online kernel on one block per row, its row copied into
// the stage before the first pass.
// STAGED-ROW: block_threads = 512 : i64, chunk_elements = 0 : i64, cluster_blocks = 1 : i64, dynamic_shared_bytes = 65536 : i64
// STAGED-ROW-SAME: grid = "rows"
// STAGED-ROW-SAME: prefetch = "shared"
// STAGED-ROW-SAME: strategy = "online"

// The online kernel's registers hold its next tile, within the row: one
// cluster per row keeps them.
// ONLINE-ROWS: cluster_blocks = 16 : i64
// ONLINE-ROWS-SAME: grid = "rows"
// ONLINE-ROWS-SAME: prefetch = "registers"

// ROWS-STAGE: error: 'rowred.map' op prefetch = stage is not possible here: grid = rows gives every block one row group, so there is no next row to fetch
