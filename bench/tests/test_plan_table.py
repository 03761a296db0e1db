"""CPU tests of bench/plan_table.py: the table of defaults regenerated from
a sweep's results (synthetic ones here; no GPU needed)."""
import json
import math
import os
import shutil
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import plan_table  # noqa: E402

BLOCKS = (1024, 2048, 4096, 8192, 16384, 32768)


def sweep(best):
    """Results of a sweep whose GB/s fall 5% per doubling of elements per
    thread away from best[(dtype, block)]."""
    results = []
    for (dtype, n), e_best in best.items():
        for warps in (1, 2, 4, 8, 16, 32):
            e = n // (warps * 32)
            if not 4 <= e <= 64:
                continue
            gbps = 3000 * (1 - 0.05 * abs(math.log2(e / e_best)))
            results.append({"kernel": f"softmax_{dtype}_fused_n{n}_w{warps}",
                            "dtype": dtype, "M": 4096, "N": n,
                            "strategy": "fused", "rows_per_block": 1,
                            "cluster": 1, "threads": warps * 32, "E": e,
                            "gbps": gbps})
    return results


class ProposeTest(unittest.TestCase):
    def test_every_type_within_the_spread_of_its_best(self):
        best = {(d, n): 16 if n <= 1024 else 32 for d in ("f32", "bf16")
                for n in BLOCKS}
        best[("f32", 8192)] = 64
        rows, shapes = plan_table.propose(sweep(best), {})
        # One run of 16 then 32: two rows, the last for every block.
        self.assertEqual([(r.get("max_block"), r["elements_per_thread"])
                          for r in rows], [(1024, 16), (None, 32)])
        # f32 8192 is 5% faster on 64 elements: a row of its own.
        self.assertEqual([(s["types"], s["block"], s["warps"])
                          for s in shapes], [("f32", 8192, 4)])

    def test_kept_rows_keep_their_conditions(self):
        best = {(d, n): 32 for d in ("f32", "bf16") for n in BLOCKS}
        best[("bf16", 16384)] = 64
        table = {"block_shapes": [{"strategy": "fused",
                                   "rows_per_block": "one",
                                   "types": "16-bit", "block": 16384,
                                   "warps": 8, "needs_row_grid": True,
                                   "note": "measured"}]}
        rows, shapes = plan_table.propose(sweep(best), table)
        self.assertEqual(rows[0]["elements_per_thread"], 32)
        self.assertEqual(shapes, table["block_shapes"])

    def test_within_the_spread_no_row(self):
        # 64 is best for bf16 at 4096, but by less than the spread over 32.
        results = sweep({(d, 4096): 32 for d in ("f32", "bf16")})
        for r in results:
            if r["dtype"] == "bf16" and r["E"] == 64:
                r["gbps"] = 3000 * 1.01
        _, shapes = plan_table.propose(results, {})
        self.assertEqual(shapes, [])


class WriteTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp()

    def tearDown(self):
        shutil.rmtree(self.dir)

    def test_write_rewrites_the_two_sections(self):
        table = os.path.join(self.dir, "PlanTable.json")
        shutil.copy(plan_table.TABLE, table)
        with open(table) as f:
            before = json.load(f)
        results = os.path.join(self.dir, "sweep.json")
        with open(results, "w") as f:
            json.dump(sweep({("f32", n): 32 for n in BLOCKS}), f)
        self.assertEqual(plan_table.main([results, "--table", table,
                                          "--write"]), 0)
        with open(table) as f:
            text = f.read()
        after = json.loads(text)
        self.assertEqual(text, plan_table.dump(after))
        self.assertEqual(after["elements_per_thread"][0]
                         ["elements_per_thread"], 32)
        self.assertEqual(after["block_shapes"], [])
        for key in ("row_grid", "prefetch", "rows_per_block"):
            self.assertEqual(after[key], before[key])

    def test_the_source_table_is_laid_out_as_written(self):
        with open(plan_table.TABLE) as f:
            text = f.read()
        self.assertEqual(text, plan_table.dump(json.loads(text)))

    def test_no_usable_results(self):
        results = os.path.join(self.dir, "empty.json")
        with open(results, "w") as f:
            json.dump([], f)
        self.assertEqual(plan_table.main([results]), 1)


if __name__ == "__main__":
    unittest.main()
