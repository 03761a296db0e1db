#!/usr/bin/env python3
"""Regenerates the block shapes of rowred-plan's table of defaults
(lib/Conversion/RowRedToGPU/PlanTable.json) from a sweep of warps.

    python3 scripts/gen_kernels.py --set sweep build/bin/softmax-opt /tmp/sweep
    python3 bench/sweep.py /tmp/sweep --json /tmp/sweep.json        # on the GPU
    python3 bench/plan_table.py /tmp/sweep.json --write             # here

From the fused kernels of one row per block, not re-reading, at row lengths
that are powers of two, it takes for each block and element type the
elements per thread of the fastest warps. The table's `elements_per_thread`
(derived warps, for every type) gets, per block, the choice whose worst
loss over the types is least; where a type's own best beats that choice
by 2% or more (the run-to-run spread), `block_shapes` gets a row for the
type and block with its warps. Rows already in the table with the same
type, block and warps keep their conditions (needs_row_grid,
needs_free_registers) and notes. Prints the proposal; --write rewrites the
two sections of --table in place (a rebuild compiles it in; the lit plan
tests then show every plan that changed).

usage: plan_table.py SWEEP_JSON [--table PATH] [--write]
"""
import argparse
import json
import os
import sys

TABLE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                     "lib", "Conversion", "RowRedToGPU", "PlanTable.json")
# A type's own best must beat the shared choice by this much to get a row.
SPREAD = 0.02
TYPES = {"f32": "f32", "f16": "16-bit", "bf16": "16-bit"}


def best_shapes(results):
    """{block: {dtype: {elements per thread: (GB/s, warps)}}} of the fused
    one-row, vector-path kernels at power-of-two row lengths."""
    shapes = {}
    for r in results:
        n = r["N"]
        if (r["strategy"] != "fused" or r["rows_per_block"] != 1 or
                r.get("cluster", 1) != 1 or "_reread1" in r["kernel"] or
                not r["gbps"] or n & (n - 1)):
            continue
        per_type = shapes.setdefault(n, {}).setdefault(r["dtype"], {})
        old = per_type.get(r["E"])
        if old is None or r["gbps"] > old[0]:
            per_type[r["E"]] = (r["gbps"], r["threads"] // 32)
    return shapes


def propose(results, table):
    """The table's elements_per_thread and block_shapes from `results`."""
    derived, shapes = [], []
    kept = {(row.get("types"), row.get("block"), row["warps"]): row
            for row in table.get("block_shapes", [])}
    for block, per_type in sorted(best_shapes(results).items()):
        common = set.intersection(*(set(t) for t in per_type.values()))
        if not common:
            continue

        def worst_loss(e):
            return max(1 - t[e][0] / max(g for g, _ in t.values())
                       for t in per_type.values())
        choice = min(sorted(common), key=worst_loss)
        derived.append((block, choice))
        for dtype, t in sorted(per_type.items()):
            e, (gbps, warps) = max(t.items(), key=lambda kv: kv[1][0])
            if e == choice or gbps < t[choice][0] * (1 + SPREAD):
                continue
            types = TYPES[dtype]
            if any(s["types"] == types and s["block"] == block
                   for s in shapes):
                continue
            row = kept.get((types, block, warps)) or {
                "strategy": "fused", "rows_per_block": "one", "types": types,
                "block": block, "warps": warps,
                "note": f"bench/sweep.py ({dtype}, M = "
                        f"{results[0]['M']}): {gbps:.0f} GB/s against "
                        f"{t[choice][0]:.0f} on {choice} elements per "
                        "thread"}
            shapes.append(row)
    # Runs of blocks with the same choice become one row; the last row
    # takes every longer block.
    rows = []
    for block, e in derived:
        if rows and rows[-1]["elements_per_thread"] == e:
            rows[-1]["max_block"] = block
        else:
            rows.append({"max_block": block, "elements_per_thread": e})
    if rows:
        del rows[-1]["max_block"]
        rows[0]["note"] = ("bench/plan_table.py from bench/sweep.py (M = "
                           f"{results[0]['M']}): per block, the elements per "
                           "thread whose worst loss over the types is least")
    return rows, shapes


def dump(table):
    """The table as PlanTable.json lays it out: a row per line."""
    lines = []
    for key, value in table.items():
        if isinstance(value, list):
            body = ",\n".join("    " + json.dumps(row) for row in value)
            lines.append(f'  "{key}": [\n{body}\n  ]')
        else:
            lines.append(f'  "{key}": {json.dumps(value)}')
    return "{\n" + ",\n".join(lines) + "\n}\n"


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("sweep_json")
    p.add_argument("--table", default=TABLE)
    p.add_argument("--write", action="store_true")
    args = p.parse_args(argv)
    with open(args.sweep_json) as f:
        results = json.load(f)
    with open(args.table) as f:
        table = json.load(f)
    rows, shapes = propose(results, table)
    if not rows:
        print("error: no fused one-row kernels at power-of-two lengths in "
              f"{args.sweep_json} (gen_kernels.py --set sweep)",
              file=sys.stderr)
        return 1
    for row in rows:
        print("elements_per_thread:", json.dumps(row))
    for row in shapes:
        print("block_shapes:", json.dumps(row))
    if args.write:
        table["elements_per_thread"] = rows
        table["block_shapes"] = shapes
        with open(args.table, "w") as f:
            f.write(dump(table))
        print(f"wrote {args.table}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
