//===- RowRedAttrs.td - Row-wise reduction dialect attrs ---*- tablegen -*-===//
//
// Part of the softmax kernel compiler.
//
//===----------------------------------------------------------------------===//

#ifndef ROWRED_ATTRS
#define ROWRED_ATTRS

include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

//===----------------------------------------------------------------------===//
// Plan enums
//===----------------------------------------------------------------------===//

def RowRed_StrategyAttr : I32EnumAttr<"Strategy",
    "how a kernel covers a row", [
      I32EnumAttrCase<"fused", 0>,
      I32EnumAttrCase<"cluster", 1>,
      I32EnumAttrCase<"online", 2>,
      I32EnumAttrCase<"chunks", 3>]> {
  let cppNamespace = "::mlir::rowred";
}

def RowRed_PrefetchAttr : I32EnumAttr<"Prefetch",
    "what a block fetches ahead of the row it works on", [
      I32EnumAttrCase<"none", 0>,
      I32EnumAttrCase<"stage", 1>,
      I32EnumAttrCase<"registers", 2>]> {
  let cppNamespace = "::mlir::rowred";
}

def RowRed_KeepAheadAttr : I32EnumAttr<"KeepAhead",
    "how the online kernel's kept tiles are filled", [
      I32EnumAttrCase<"none", 0>,
      I32EnumAttrCase<"tiles", 1>,
      I32EnumAttrCase<"bulk", 2>]> {
  let cppNamespace = "::mlir::rowred";
}

def RowRed_GridAttr : I32EnumAttr<"Grid",
    "the grid a launcher starts", [
      I32EnumAttrCase<"persistent", 0>,
      I32EnumAttrCase<"rows", 1>]> {
  let cppNamespace = "::mlir::rowred";
}

//===----------------------------------------------------------------------===//
// Plan attribute
//===----------------------------------------------------------------------===//

/// An enum field of the plan with a default, left out when it has it.
class RowRed_DefaultEnumParameter<EnumAttrInfo info, string value>
    : EnumParameter<info> {
  let defaultValue = info.cppNamespace # "::" # info.className # "::" # value;
}

def RowRed_PlanAttr : AttrDef<RowRed_Dialect, "Plan"> {
  let mnemonic = "plan";
  let summary = "Everything that shapes the kernel of one rowred.map group";
  let description = [{
    The plan of one kernel: the strategy that covers a row, the block shape,
    the vector width and the memory paths. `rowred-plan` attaches one to
    every `rowred.map` (as its `rowred.plan` attribute), choosing it from
    the element types, the row length and the chip;
    `convert-rowred-to-gpu` only follows it. A plan written by hand in the
    input is kept by `rowred-plan` and verified like a chosen one.

    Fields (those left out take the default in brackets):

    * `strategy`: `fused` (the row in one block's registers), `cluster` (the
      row over the blocks of a thread-block cluster, sm_90+), `online`
      (the row streamed in tiles: two reads with a running (max, sum), or
      with `reread` one per level of reduces and one for the map) or
      `chunks` (each row cut into chunks of a block each, meeting in a
      global workspace).
    * `chip` [`"sm_90"`]: the target; its features bound the other fields.
    * `block`: elements one block covers: the whole row (fused), the
      block's slice (cluster), one tile (online) or the chunk's part in
      registers (chunks).
    * `warps`: warps per block (1 to 32).
    * `rows_per_block` [1]: rows a fused block works on at once.
    * `cluster` [1]: blocks of a cluster sharing a row.
    * `vector` [1]: widest vector access in elements.
    * `reverse_second_pass` [true], `fast_exp` [true]: the online kernel's
      second pass from the last tile; `ex2.approx.ftz` and one reciprocal
      per row.
    * `reread` [false]: fused and cluster: the scalar path re-reads the row
      for each reduction. Online: no running (max, sum) pair; the row is
      streamed once per level of reduces and once for the map, so that any
      chain of reduces (the norms, the backward ops, per-row results) takes
      rows of any length.
    * `prefetch` [`none`]: the next row (or tile) fetched into the `stage`
      in shared memory or into `registers` while the current one is reduced.
      With `reread` (online), `stage` holds the block's share of the row
      itself, a slot of `stage_elements` per 2-D input, copied in before
      the first pass: every pass reads shared memory.
    * `pair_reduce` [false]: one (max, sum) exchange per row.
    * `max_cols` [0]: the longest row the kernel handles (0: any).
    * `stage_elements` [0], `kept_elements` [0]: elements of the prefetch
      stage, and of the online kernel's tiles kept between its passes.
    * `keep_ahead` [`none`]: kept tiles copied ahead per thread (`tiles`)
      or by one bulk copy (`bulk`).
    * `cache_hints` [false]: L2 eviction hints (online: the running pair's
      passes, or those that stream the row per level with `reread`; fused:
      the row's own loads, evict-last, so not with `prefetch`).
    * `chunk_stage` [0]: elements of each chunk bulk-copied into shared
      memory after its `block` in registers.
    * `grid` [`persistent`]: the blocks resident at once, each looping over
      rows, or one block per row group (`rows`).
    * `min_blocks_per_sm` [0]: the `.minnctapersm` ptxas is asked for.
    * `max_rows` [0]: the most rows of a launch that takes this kernel (0:
      any). Set on the plan of a second kernel for launches of a few rows
      (`rowred.few_rows_plan`: one plan, or an array of plans of increasing
      `max_rows` that a launch tries in order); any kernel computes every
      launch alike.
    * `hoist_map_loads` [false]: fused and cluster: the operands only the
      map reads (the norms' weight and bias) are loaded with the row, before
      its reductions, instead of where the map needs them: a row's last
      store waits for one memory latency fewer, at the cost of their
      registers through the reductions.
    * `sums_in_registers` [false]: fused and cluster kernels that sum down
      the columns (`column_sums`): each thread keeps its columns' sums in
      registers over its rows, instead of adding every element into a
      shared-memory accumulator, and stores them there after its last row
      (where its rows take the same columns: not on the scalar path that
      re-reads the row).

    Example (auto's f32 kernel for rows of 4096 on sm_90):

    ```mlir
    rowred.map ins(%x : memref<?x?xf32>) rows(%m, %s : memref<?xf32>, memref<?xf32>)
        outs(%y : memref<?x?xf32>) {
      ...
    } {rowred.plan = #rowred.plan<strategy = fused, block = 4096, warps = 4,
                                  vector = 4, max_cols = 4096,
                                  stage_elements = 4096, grid = rows>}
    ```
  }];
  let parameters = (ins
    EnumParameter<RowRed_StrategyAttr>:$strategy,
    StringRefParameter<"target chip", "\"sm_90\"">:$chip,
    "int64_t":$block,
    "int64_t":$warps,
    DefaultValuedParameter<"int64_t", "1">:$rows_per_block,
    DefaultValuedParameter<"int64_t", "1">:$cluster,
    DefaultValuedParameter<"int64_t", "1">:$vector,
    DefaultValuedParameter<"bool", "true">:$reverse_second_pass,
    DefaultValuedParameter<"bool", "true">:$fast_exp,
    DefaultValuedParameter<"bool", "false">:$reread,
    RowRed_DefaultEnumParameter<RowRed_PrefetchAttr, "none">:$prefetch,
    DefaultValuedParameter<"bool", "false">:$pair_reduce,
    DefaultValuedParameter<"int64_t", "0">:$max_cols,
    DefaultValuedParameter<"int64_t", "0">:$stage_elements,
    DefaultValuedParameter<"int64_t", "0">:$kept_elements,
    RowRed_DefaultEnumParameter<RowRed_KeepAheadAttr, "none">:$keep_ahead,
    DefaultValuedParameter<"bool", "false">:$cache_hints,
    DefaultValuedParameter<"int64_t", "0">:$chunk_stage,
    RowRed_DefaultEnumParameter<RowRed_GridAttr, "persistent">:$grid,
    DefaultValuedParameter<"int64_t", "0">:$min_blocks_per_sm,
    DefaultValuedParameter<"int64_t", "0">:$max_rows,
    DefaultValuedParameter<"bool", "false">:$hoist_map_loads,
    DefaultValuedParameter<"bool", "false">:$sums_in_registers
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

//===----------------------------------------------------------------------===//
// Plan request attribute
//===----------------------------------------------------------------------===//

/// A field of the plan request: absent unless written.
class RowRed_RequestParameter<string type, string desc>
    : OptionalParameter<"std::optional<" # type # ">", desc>;

/// A boolean field of the plan request, written `true` or `false`.
class RowRed_RequestBoolParameter<string desc>
    : RowRed_RequestParameter<"bool", desc> {
  let parser = "::mlir::rowred::parseRequestBool($_parser)";
  let printer = "$_printer << (*$_self ? \"true\" : \"false\")";
}

/// An enum field of the plan request, parsed and printed by its case name.
class RowRed_RequestEnumParameter<EnumAttrInfo info>
    : RowRed_RequestParameter<info.cppNamespace # "::" # info.className,
                              info.summary> {
  let parser = "::mlir::FailureOr<std::optional<" # info.cppNamespace # "::"
               # info.className # ">>(::mlir::FieldParser<"
               # info.cppNamespace # "::" # info.className
               # ">::parse($_parser))";
  let printer = "$_printer << " # info.cppNamespace # "::stringify"
                # info.className # "(*$_self)";
}

def RowRed_PlanRequestAttr : AttrDef<RowRed_Dialect, "PlanRequest"> {
  let mnemonic = "plan_request";
  let summary = "The fields of a kernel plan asked for; the rest is derived";
  let description = [{
    Some fields of a `#rowred.plan`, written in the input on a `rowred.map`
    or on the high-level op it comes from (`rowred-decompose` carries it to
    the map), as the `rowred.plan_request` attribute. `rowred-plan` derives
    every field left out the way `strategy=auto` would around the ones
    given, checks the combination, and replaces the request with the
    complete `#rowred.plan`. This is how a kernel is tuned by hand (the
    sweeps in `bench/` compile their variants this way): the pass itself
    takes only the strategy, the row length and the chip.

    The fields are those of `#rowred.plan`, with the same meaning: `strategy`,
    `block`, `warps`, `rows_per_block`, `cluster`, `vector`,
    `reverse_second_pass`, `fast_exp`, `reread`, `prefetch`, `pair_reduce`,
    `kept_elements`, `keep_ahead`, `cache_hints`, `grid`, `chunk_stage`,
    `hoist_map_loads` and `sums_in_registers`.
    A field written as its "off" value (`prefetch = none`, `kept_elements =
    0`, `pair_reduce = false`, ...) forbids what `auto` would otherwise
    choose. Fields that follow from the others (`max_cols`,
    `stage_elements`, `min_blocks_per_sm`) and the chip cannot be asked for.

    A block of more than 32 elements per thread in registers is derived only
    where `auto` measured it faster; with `warps` written, up to the plan's
    limit of 128 is accepted.

    Example: a fused block of 16384 elements on 16 warps that re-reads rows
    that do not allow vector accesses, everything else derived:

    ```mlir
    rowred.softmax dimension(1) ins(%x : memref<?x16384xf32>)
        outs(%y : memref<?x16384xf32>)
        {rowred.plan_request = #rowred.plan_request<strategy = fused,
                                                    warps = 16, reread = true>}
    ```
  }];
  let parameters = (ins
    RowRed_RequestEnumParameter<RowRed_StrategyAttr>:$strategy,
    RowRed_RequestParameter<"int64_t", "elements of a block">:$block,
    RowRed_RequestParameter<"int64_t", "warps per block">:$warps,
    RowRed_RequestParameter<"int64_t", "rows per fused block">:$rows_per_block,
    RowRed_RequestParameter<"int64_t", "blocks of a cluster">:$cluster,
    RowRed_RequestParameter<"int64_t", "elements per vector access">:$vector,
    RowRed_RequestBoolParameter<"online second pass reversed">
        :$reverse_second_pass,
    RowRed_RequestBoolParameter<"fast exp and log">:$fast_exp,
    RowRed_RequestBoolParameter<"scalar path re-reads the row">:$reread,
    RowRed_RequestEnumParameter<RowRed_PrefetchAttr>:$prefetch,
    RowRed_RequestBoolParameter<"one (max, sum) exchange">:$pair_reduce,
    RowRed_RequestParameter<"int64_t", "online tiles kept">:$kept_elements,
    RowRed_RequestEnumParameter<RowRed_KeepAheadAttr>:$keep_ahead,
    RowRed_RequestBoolParameter<"L2 eviction hints">:$cache_hints,
    RowRed_RequestEnumParameter<RowRed_GridAttr>:$grid,
    RowRed_RequestParameter<"int64_t", "chunk elements staged">:$chunk_stage,
    RowRed_RequestBoolParameter<"map's operands loaded with the row">
        :$hoist_map_loads,
    RowRed_RequestBoolParameter<"column sums in registers">
        :$sums_in_registers
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

#endif // ROWRED_ATTRS
