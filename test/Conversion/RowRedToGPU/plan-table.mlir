// The plan-table option: auto plans by the rules of a table from a file
// instead of the one compiled in. Here the compiled-in table with one more
// few_rows row first (a fused block of 8 warps for launches of at most 8
// f32 softmax rows of 24577-32768: the first row that matches starts the
// ladder, in place of the cluster of 8 to 1024 rows), then the same table
// with its few_rows left out; and a file that cannot be read or is not a
// table.
// REQUIRES: ptxas
// RUN: %python -c "import json; t = json.load(open('%src_root/lib/Conversion/RowRedToGPU/PlanTable.json')); t['few_rows'].insert(0, {'strategy': 'fused', 'warps': 8, 'types': 'f32', 'writes_rows': True, 'min_cols': 24577, 'max_cols': 32768, 'max_rows': 8}); json.dump(t, open('%t.rung.json', 'w')); t['few_rows'] = []; json.dump(t, open('%t.none.json', 'w'))"
// RUN: softmax-opt %s --rowred-decompose --rowred-plan="cols=32000" | FileCheck %s --check-prefix=BUILTIN
// RUN: softmax-opt %s --rowred-decompose --rowred-plan="cols=32000 plan-table=%src_root/lib/Conversion/RowRedToGPU/PlanTable.json" | FileCheck %s --check-prefix=BUILTIN
// RUN: softmax-opt %s --rowred-decompose --rowred-plan="cols=32000 plan-table=%t.rung.json" | FileCheck %s --check-prefix=RUNG
// RUN: softmax-opt %s --rowred-decompose --rowred-plan="cols=32000 plan-table=%t.none.json" | FileCheck %s --check-prefix=NONE
// The pipeline passes the table to the planner, with ptxas's check too.
// RUN: softmax-opt %s --rowred-to-ptx="cols=32000 plan-table=%t.rung.json ptxas=none" | FileCheck %s --check-prefix=KERNELS
// RUN: softmax-opt %s --rowred-to-ptx="cols=32000 plan-table=%t.rung.json ptxas=%ptxas" | FileCheck %s --check-prefix=KERNELS
// RUN: not softmax-opt %s --rowred-decompose --rowred-plan="plan-table=%t.missing.json" 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: not softmax-opt %s --rowred-to-ptx="plan-table=%t.missing.json" 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: echo '{"few_rows": []}' > %t.bad.json
// RUN: not softmax-opt %s --rowred-decompose --rowred-plan="plan-table=%t.bad.json" 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: echo 'few_rows' > %t.text.json
// RUN: not softmax-opt %s --rowred-decompose --rowred-plan="plan-table=%t.text.json" 2>&1 | FileCheck %s --check-prefix=TEXT

// BUILTIN: rowred.few_rows_plan = #rowred.plan<strategy = cluster, block = 4096, warps = 4, cluster = 8, {{.*}}max_rows = 1024>
// BUILTIN-SAME: rowred.plan = #rowred.plan<strategy = fused, block = 32768, warps = 32,

// RUNG: rowred.few_rows_plan = #rowred.plan<strategy = fused, block = 32768, warps = 8, {{.*}}max_rows = 8>
// RUNG-SAME: rowred.plan = #rowred.plan<strategy = fused, block = 32768, warps = 32,

// NONE-NOT: rowred.few_rows_plan
// NONE: rowred.plan = #rowred.plan<strategy = fused, block = 32768, warps = 32,
// NONE-NOT: rowred.few_rows_plan

// KERNELS: sm_kernel0 = {
// KERNELS-NOT: sm_kernel0_rows1024
// KERNELS-SAME: sm_kernel0_rows8 = {

// MISSING: error: cannot read the plan table '{{.*}}.missing.json'
// BAD: error: '{{.*}}.bad.json' is not a plan table: missing value at plan table.three_quarter_blocks_from
// TEXT: error: '{{.*}}.text.json' is not a plan table: [1:2, byte=2]: Invalid JSON value

func.func @sm(%x: memref<?x32000xf32>, %y: memref<?x32000xf32>) {
  rowred.softmax dimension(1) ins(%x : memref<?x32000xf32>) outs(%y : memref<?x32000xf32>)
  return
}
