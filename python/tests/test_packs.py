"""CPU tests of kernel packs: building one with softmax-opt, the manifest,
lookups and the errors a user sees. No GPU and no PyTorch needed."""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

PYTHON_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
# The checkout's package, unless the tests run against an installed copy
# (scripts/test-install.sh).
if not os.environ.get("ROWRED_TEST_INSTALLED"):
    sys.path.insert(0, PYTHON_DIR)
from rowred import packs  # noqa: E402

SOFTMAX_OPT = os.environ.get("ROWRED_SOFTMAX_OPT") or os.path.join(
    os.path.dirname(__file__), "..", "..", "build", "bin", "softmax-opt")


@unittest.skipUnless(os.access(SOFTMAX_OPT, os.X_OK),
                     "softmax-opt not built (set ROWRED_SOFTMAX_OPT)")
class BuildTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp()
        cls.manifest = packs.build(SOFTMAX_OPT, cls.dir, ["softmax"],
                                   ["f32", "bf16"], [1024, 0])

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir)

    def test_manifest_lists_every_kernel(self):
        kernels = self.manifest["kernels"]
        self.assertEqual(len(kernels), 4)
        self.assertEqual(self.manifest["abi_version"], packs.ABI_VERSION)
        exact = [k for k in kernels if k["cols"] == 1024]
        self.assertTrue(all(k["max_cols"] == 1024 for k in exact))
        anyn = [k for k in kernels if k["cols"] == 0]
        self.assertTrue(all(k["max_cols"] == 0 for k in anyn))
        for k in kernels:
            path = os.path.join(self.dir, k["metadata"])
            with open(path) as f:
                self.assertEqual(json.load(f)["op"], "softmax")
            self.assertTrue(os.path.exists(path[:-5] + ".ptx"))

    def test_lookup_prefers_the_exact_kernel(self):
        pack = packs.Pack(self.dir)
        self.assertTrue(pack.find("softmax", "f32", 1024).endswith(
            "softmax_f32_n1024_kernel0.json"))
        self.assertTrue(pack.find("softmax", "bf16", 5000).endswith(
            "softmax_bf16_any_kernel0.json"))
        self.assertIsNone(pack.find("log_softmax", "f32", 1024))
        self.assertIsNone(pack.find("softmax", "f16", 1024))

    def test_missing_shape_names_the_command(self):
        pack = packs.Pack(self.dir)
        with self.assertRaises(packs.PackError) as e:
            packs.find_kernel([pack], "log_softmax", "f16", 32001, 90)
        self.assertIn("log_softmax of f16 rows of 32001 elements on sm_90",
                      str(e.exception))
        self.assertIn("python3 -m rowred.packs build", str(e.exception))
        self.assertIn("--cols 32001", str(e.exception))

    def test_pack_for_a_newer_chip_is_skipped(self):
        pack = packs.Pack(self.dir)
        with self.assertRaises(packs.PackError):
            packs.find_kernel([pack], "softmax", "f32", 1024, 80)
        self.assertIsNotNone(
            packs.find_kernel([pack], "softmax", "f32", 1024, 90))

    def test_cache_compiles_once(self):
        cache = os.path.join(self.dir, "cache")
        os.environ["ROWRED_CACHE_DIR"] = cache
        try:
            first = packs.cached_kernel(SOFTMAX_OPT, "log_softmax", "bf16",
                                        5000, "sm_90")
            self.assertTrue(first.startswith(cache))
            with open(first) as f:
                meta = json.load(f)
            self.assertEqual(meta["op"], "log_softmax")
            self.assertGreaterEqual(meta["max_cols"], 5000)
            stamp = os.stat(first).st_mtime_ns
            again = packs.cached_kernel(SOFTMAX_OPT, "log_softmax", "bf16",
                                        5000, "sm_90")
            self.assertEqual(again, first)
            self.assertEqual(os.stat(again).st_mtime_ns, stamp)
            self.assertEqual(len([d for d in os.listdir(cache)
                                  if not d.startswith(".")]), 1)
        finally:
            del os.environ["ROWRED_CACHE_DIR"]

    def test_command_line(self):
        out = os.path.join(self.dir, "cli")
        self.assertEqual(packs.main(["build", "--softmax-opt", SOFTMAX_OPT,
                                     "--out", out, "--op", "log_softmax",
                                     "--dtype", "f16", "--cols", "256"]), 0)
        self.assertIsNotNone(packs.Pack(out).find("log_softmax", "f16", 256))
        self.assertEqual(packs.main(["build", "--softmax-opt", SOFTMAX_OPT,
                                     "--out", out, "--op", "norm"]), 1)
        self.assertEqual(packs.main(["build", "--softmax-opt", SOFTMAX_OPT,
                                     "--out", out, "--cols", "0"]), 1)

    def test_module_command(self):
        """`python3 -m rowred.packs build`, as the README gives it: the
        result on stdout and nothing on stderr (no warning of the module
        run twice)."""
        out = os.path.join(self.dir, "module")
        env = dict(os.environ)
        if not os.environ.get("ROWRED_TEST_INSTALLED"):
            env["PYTHONPATH"] = PYTHON_DIR
        result = subprocess.run(
            [sys.executable, "-m", "rowred.packs", "build", "--softmax-opt",
             SOFTMAX_OPT, "--out", out, "--op", "softmax", "--dtype", "f32",
             "--cols", "512"], capture_output=True, text=True, env=env)
        self.assertEqual((result.returncode, result.stderr), (0, ""))
        self.assertIn("wrote 1 kernels", result.stdout)
        result = subprocess.run(
            [sys.executable, "-m", "rowred.packs", "build", "--softmax-opt",
             SOFTMAX_OPT, "--out", out, "--dtype", "f64"],
            capture_output=True, text=True, env=env)
        self.assertEqual(result.returncode, 1)
        self.assertEqual(result.stderr.splitlines(),
                         ["error: unknown dtype 'f64'; expected one of "
                          "f32, f16, bf16"])


    def test_safe_kernels(self):
        out = os.path.join(self.dir, "safe")
        manifest = packs.build(SOFTMAX_OPT, out, ["log_softmax_safe"],
                               ["f32"], [4096, 0])
        self.assertEqual(len(manifest["kernels"]), 2)
        pack = packs.Pack(out)
        for cols in (4096, 5000):
            with open(pack.find("log_softmax_safe", "f32", cols)) as f:
                meta = json.load(f)
            self.assertEqual(meta["op"], "log_softmax")
            self.assertIs(meta.get("safe"), True)
        # The safe kernels are not the plain ones.
        self.assertIsNone(pack.find("log_softmax", "f32", 4096))

    def test_residual_norm_kernels(self):
        out = os.path.join(self.dir, "residual")
        manifest = packs.build(SOFTMAX_OPT, out, ["rms_norm_residual"],
                               ["bf16"], [4096, 0], eps_values=[1e-5],
                               weight_dtypes=["rows"])
        self.assertEqual([k["cols"] for k in manifest["kernels"]], [4096])
        path = packs.Pack(out).find("rms_norm_residual", "bf16", 4096, 1e-5)
        with open(path) as f:
            meta = json.load(f)
        # x and the residual in, y and h = x + residual out, the weight,
        # rstd per row.
        self.assertEqual([o["role"] for o in meta["operands"]],
                         ["input", "input", "output", "output", "column",
                          "row_output"])

    def test_residual_backward_brings_the_plain_backward(self):
        # The residual form's eager backward takes rms_norm_backward where
        # h got no gradient: a pack of the residual backward has both.
        out = os.path.join(self.dir, "residual-backward")
        manifest = packs.build(SOFTMAX_OPT, out,
                               ["rms_norm_residual_backward"], ["bf16"],
                               [2048], weight_dtypes=["rows"])
        self.assertEqual(sorted(k["op"] for k in manifest["kernels"]),
                         ["rms_norm_backward", "rms_norm_residual_backward"])
        self.assertIsNotNone(
            packs.Pack(out).find("rms_norm_backward", "bf16", 2048))

    def test_gradient_kernels_for_exact_lengths(self):
        out = os.path.join(self.dir, "backward")
        manifest = packs.build(SOFTMAX_OPT, out, ["log_softmax_backward"],
                               ["bf16"], [4096, 0])
        # No kernel for 'any': the gradients' streamed kernels were not
        # measured (packs.EXACT_OPS).
        self.assertEqual([k["cols"] for k in manifest["kernels"]], [4096])
        path = packs.Pack(out).find("log_softmax_backward", "bf16", 4096)
        with open(path) as f:
            meta = json.load(f)
        self.assertEqual(meta["op"], "log_softmax_backward")
        self.assertEqual([o["role"] for o in meta["operands"]],
                         ["input", "input", "output"])
        self.assertEqual(meta["max_cols"], 4096)

    def test_per_row_result_kernels(self):
        out = os.path.join(self.dir, "per-row")
        manifest = packs.build(SOFTMAX_OPT, out, ["cross_entropy"], ["bf16"],
                               [32000, 0])
        # One for rows of any length too: the online kernel streaming the
        # row, which the lookup takes for rows the 32000 kernel's block
        # (32768) does not hold.
        self.assertEqual([k["cols"] for k in manifest["kernels"]], [32000, 0])
        pack = packs.Pack(out)
        with open(pack.find("cross_entropy", "bf16", 100000)) as f:
            self.assertEqual(json.load(f)["strategy"], "online")
        with open(pack.find("cross_entropy", "bf16", 32000)) as f:
            meta = json.load(f)
        self.assertEqual(meta["ignore_index"], packs.IGNORE_INDEX)
        self.assertEqual([(o["role"], o["type"]) for o in meta["operands"]],
                         [("input", "bf16"), ("row", "i64"),
                          ("row_output", "f32"), ("row_output", "f32")])

    def test_cross_entropy_gradient_kernels(self):
        out = os.path.join(self.dir, "grad")
        packs.build(SOFTMAX_OPT, out, ["cross_entropy_grad"], ["bf16"],
                    [50257])
        path = packs.Pack(out).find("cross_entropy_grad", "bf16", 50257)
        with open(path) as f:
            meta = json.load(f)
        # The gradient over the logits: the labels, then the scale per row.
        self.assertEqual([(o["role"], o["type"]) for o in meta["operands"]],
                         [("input", "bf16"), ("output", "bf16"),
                          ("row", "i64"), ("row", "f32"),
                          ("row_output", "f32")])

    def test_cross_entropy_sum_kernels(self):
        # The loss summed over the rows and the count of rows kept: totals,
        # on the per-row loss's plan (online at 128256) on the persistent
        # grid; 2^20 (chunks for the per-row loss) is skipped.
        out = os.path.join(self.dir, "sum")
        manifest = packs.build(SOFTMAX_OPT, out, ["cross_entropy_sum"],
                               ["bf16"], [1000, 128256, 1 << 20])
        self.assertEqual([(k["op"], k["cols"]) for k in manifest["kernels"]],
                         [("cross_entropy_sum", 1000),
                          ("cross_entropy_sum", 128256)])
        self.assertEqual(manifest["skipped"],
                         ["cross_entropy_sum_bf16_n1048576"])
        path = packs.Pack(out).find("cross_entropy_sum", "bf16", 128256)
        with open(path) as f:
            meta = json.load(f)
        self.assertEqual([(o["role"], o["type"]) for o in meta["operands"]],
                         [("input", "bf16"), ("row", "i64"),
                          ("total", "f32"), ("total", "f32")])
        self.assertEqual(meta["strategy"], "online")
        self.assertEqual(meta["grid"], "persistent")

    def test_command_line_gradients(self):
        out = os.path.join(self.dir, "cli-backward")
        self.assertEqual(packs.main(["build", "--softmax-opt", SOFTMAX_OPT,
                                     "--out", out, "--dtype", "f32",
                                     "--cols", "512"]), 0)
        ops = sorted((k["op"], k["cols"])
                     for k in packs.Pack(out).kernels)
        # Every op at 512 (the norms at both default epsilons).
        self.assertEqual(ops, sorted(
            [(op, 512) for op in packs.OPS] +
            [(op, 512) for op in packs.EPS_OPS]))

    def test_streamed_kernels_of_the_ops_that_have_one(self):
        # Rows of any length (0) get a streamed kernel of the ops that are
        # not EXACT_OPS only.
        streamed = sorted(v.op for v in packs._variants(
            packs.OPS, ["f32"], [0], [1e-5]) if v.cols == 0)
        self.assertEqual(streamed, [
            "cross_entropy", "log_softmax", "log_softmax_safe", "logsumexp",
            "logsumexp_backward", "softmax", "softmax_safe"])

    def test_row_held_ops_skip_long_rows(self):
        # rms_norm_backward holds x and dy of a row in one block: 32000
        # elements do not fit, and the pack says so instead of failing.
        out = os.path.join(self.dir, "backward")
        manifest = packs.build(SOFTMAX_OPT, out,
                               ["rms_norm_backward",
                                "rms_norm_residual_backward"],
                               ["f32"], [1000, 32000])
        self.assertEqual([(k["op"], k["cols"]) for k in manifest["kernels"]],
                         [("rms_norm_backward", 1000),
                          ("rms_norm_residual_backward", 1000)])
        self.assertEqual(manifest["skipped"],
                         ["rms_norm_backward_f32_n32000",
                          "rms_norm_residual_backward_f32_n32000"])
        pack = packs.Pack(out)
        self.assertIsNotNone(pack.find("rms_norm_backward", "f32", 1000))
        self.assertIsNone(pack.find("rms_norm_backward", "f32", 32000))
        with open(os.path.join(out, "rms_norm_backward_f32_n1000_kernel0.json")) as f:
            meta = json.load(f)
        self.assertEqual([o["role"] for o in meta["operands"]],
                         ["input", "input", "output", "column", "row",
                          "column_sum"])
        # The residual form's: the gradient of h a third input of rows.
        with open(os.path.join(
                out, "rms_norm_residual_backward_f32_n1000_kernel0.json")) as f:
            meta = json.load(f)
        self.assertEqual([o["role"] for o in meta["operands"]],
                         ["input", "input", "input", "output", "column",
                          "row", "column_sum"])

    def test_norm_kernels_per_epsilon(self):
        out = os.path.join(self.dir, "norms")
        manifest = packs.build(SOFTMAX_OPT, out, ["rms_norm", "layer_norm"],
                               ["bf16"], [4096, 0], eps_values=[1e-5, 0.0],
                               weight_dtypes=["rows"])
        # A kernel per epsilon, none for 'any'.
        self.assertEqual(sorted((k["op"], k["eps"])
                                for k in manifest["kernels"]),
                         [("layer_norm", 0), ("layer_norm", packs.f32(1e-5)),
                          ("rms_norm", 0), ("rms_norm", packs.f32(1e-5))])
        pack = packs.Pack(out)
        roles = {"rms_norm": ["input", "output", "column", "row_output"],
                 "layer_norm": ["input", "output", "column", "column",
                                "row_output", "row_output"]}
        for op, want in roles.items():
            for eps in (1e-5, 0.0):
                with open(pack.find(op, "bf16", 4096, eps)) as f:
                    meta = json.load(f)
                self.assertEqual(meta["op"], op)
                self.assertEqual(meta["epsilon"], packs.f32(eps))
                self.assertEqual([o["role"] for o in meta["operands"]], want)
            self.assertIsNone(pack.find(op, "bf16", 4096, 1e-6))
        with self.assertRaises(packs.PackError) as e:
            packs.find_kernel([pack], "rms_norm", "bf16", 4096, 90, 1e-6)
        self.assertIn("with eps 1e-06 on sm_90", str(e.exception))
        self.assertIn("--cols 4096 --eps 1e-06", str(e.exception))

    def test_norm_kernels_of_an_f32_weight(self):
        # Mixed precision: 16-bit rows with an f32 weight (and bias), a
        # kernel beside the one whose weight is of the rows' dtype; f32 rows
        # get one kernel either way.
        out = os.path.join(self.dir, "mixed")
        manifest = packs.build(
            SOFTMAX_OPT, out, ["rms_norm", "layer_norm_backward"],
            ["f32", "bf16"], [1024], eps_values=[1e-6])
        self.assertEqual(sorted((k["op"], k["dtype"],
                                 k.get("weight_dtype", k["dtype"]))
                                for k in manifest["kernels"]),
                         [("layer_norm_backward", "bf16", "bf16"),
                          ("layer_norm_backward", "bf16", "f32"),
                          ("layer_norm_backward", "f32", "f32"),
                          ("rms_norm", "bf16", "bf16"),
                          ("rms_norm", "bf16", "f32"),
                          ("rms_norm", "f32", "f32")])
        pack = packs.Pack(out)
        for op, eps, columns in (("rms_norm", 1e-6, ["w"]),
                                 ("layer_norm_backward", None,
                                  ["w", "s", "s1"])):
            for weight in ("bf16", "f32"):
                with open(pack.find(op, "bf16", 1024, eps, weight)) as f:
                    meta = json.load(f)
                types = {o["name"]: o["type"] for o in meta["operands"]}
                self.assertEqual([types[c] for c in columns],
                                 [weight] * len(columns))
                self.assertEqual(types["x"], "bf16")
            self.assertEqual(pack.find(op, "bf16", 1024, eps),
                             pack.find(op, "bf16", 1024, eps, "bf16"))
            self.assertEqual(pack.find(op, "f32", 1024, eps),
                             pack.find(op, "f32", 1024, eps, "f32"))
        self.assertIsNone(pack.find("rms_norm", "bf16", 1024, 1e-6, "f16"))
        with self.assertRaises(packs.PackError) as e:
            packs.find_kernel([pack], "rms_norm", "f16", 1024, 90, 1e-6,
                              "f32")
        self.assertIn("and a weight of f32 on sm_90", str(e.exception))
        self.assertIn("--eps 1e-06 --weight-dtype f32", str(e.exception))
        # Only the rows' own weight where asked.
        manifest = packs.build(SOFTMAX_OPT, out, ["rms_norm"], ["bf16"],
                               [1024], eps_values=[1e-6],
                               weight_dtypes=["rows"])
        self.assertEqual([k.get("weight_dtype") for k in
                          manifest["kernels"]], [None])

    def test_user_text_never_reaches_the_pipeline(self):
        # A directory whose name holds a space and an option, made by the
        # builder with the kernels inside it; a chip with an option after it
        # is refused before softmax-opt runs.
        out = os.path.join(self.dir, "with space output-dir=" + self.dir,
                           "x")
        self.assertEqual(packs.main(["build", "--softmax-opt", SOFTMAX_OPT,
                                     "--out", out, "--op", "softmax",
                                     "--dtype", "f32", "--cols", "64"]), 0)
        self.assertIsNotNone(packs.Pack(out).find("softmax", "f32", 64))
        self.assertFalse(os.path.exists(os.path.join(
            self.dir, "softmax_f32_n64_kernel0.json")))
        with self.assertRaises(packs.PackError) as e:
            packs.build(SOFTMAX_OPT, out, ["softmax"], ["f32"], [64],
                        chip="sm_90 ptxas=/bin/false")
        self.assertIn("names no chip", str(e.exception))

    def test_plan_table(self):
        # The compiler's own table with a first few_rows row for f32 softmax
        # rows of 32000 (a fused block of 8 warps to 8 rows), at a path with
        # a space and an option in it: the kernel's variants are that
        # table's (the compiled-in one gives a cluster of 8 to 1024 rows).
        with open(os.path.join(PYTHON_DIR, "..", "lib", "Conversion",
                               "RowRedToGPU", "PlanTable.json")) as f:
            table = json.load(f)
        table["few_rows"].insert(0, {
            "strategy": "fused", "warps": 8, "types": "f32",
            "writes_rows": True, "min_cols": 32000, "max_cols": 32000,
            "max_rows": 8})
        path = os.path.join(self.dir, "a table ptxas=none.json")
        with open(path, "w") as f:
            json.dump(table, f)

        def variants(out, **kwargs):
            packs.build(SOFTMAX_OPT, out, ["softmax"], ["f32"], [32000],
                        **kwargs)
            with open(os.path.join(out, "softmax_f32_n32000_kernel0.json")) \
                    as f:
                return [v["max_rows"] for v in json.load(f)["variants"]]
        self.assertEqual(variants(os.path.join(self.dir, "table"),
                                  plan_table=path), [8])
        self.assertEqual(variants(os.path.join(self.dir, "builtin")), [1024])
        out = os.path.join(self.dir, "none")
        with self.assertRaisesRegex(packs.PackError, "no such file"):
            packs.build(SOFTMAX_OPT, out, ["softmax"], ["f32"], [64],
                        plan_table=path + ".missing")
        self.assertEqual(packs.main(["build", "--softmax-opt", SOFTMAX_OPT,
                                     "--out", out, "--op", "softmax",
                                     "--dtype", "f32", "--cols", "64",
                                     "--plan-table", SOFTMAX_OPT]), 1)

    def test_unsupported_chip_is_softmax_opts_diagnostic(self):
        with self.assertRaises(packs.PackError) as e:
            packs.build(SOFTMAX_OPT, self.dir, ["softmax"], ["f32"], [64],
                        chip="sm_121")
        self.assertIn("'sm_121' is not a supported chip; expected one of",
                      str(e.exception))

    def test_nothing_to_build(self):
        for args in (["--op", ""], ["--dtype", ""],
                     ["--op", "rms_norm", "--cols", ""]):
            self.assertEqual(packs.main(["build", "--softmax-opt",
                                         SOFTMAX_OPT, "--out", self.dir]
                                        + args), 1, args)

    def test_command_line_bad_epsilon(self):
        for eps in ("small", "-1e-5", "inf", "1e-50"):
            self.assertEqual(packs.main(["build", "--softmax-opt",
                                         SOFTMAX_OPT, "--out", self.dir,
                                         "--op", "rms_norm", "--cols", "64",
                                         f"--eps={eps}"]), 1)


class PresetTest(unittest.TestCase):
    def test_llm_preset(self):
        variants = packs.preset_variants("llm", ["bf16"], [1e-6])
        shapes = {(v.op, v.cols) for v in variants}
        for op in ("rms_norm", "rms_norm_backward",
                   "rms_norm_residual_backward", "layer_norm_backward"):
            self.assertLessEqual({(op, n) for n in (128, 4096, 8192)},
                                 shapes)
            self.assertNotIn((op, 128256), shapes)
        for n in (32000, 128256, 151936, 256000):
            self.assertIn(("cross_entropy_grad", n), shapes)
            self.assertIn(("cross_entropy_sum", n), shapes)
        self.assertIn(("cross_entropy", 0), shapes)
        self.assertIn(("softmax", 0), shapes)
        self.assertNotIn(("cross_entropy_grad", 0), shapes)
        self.assertNotIn(("cross_entropy_sum", 0), shapes)
        # The norms also with an f32 weight (mixed precision), the rest
        # once.
        kernels = {(v.op, v.cols, v.weight_dtype) for v in variants}
        self.assertEqual(len(kernels), len(variants))
        for op in packs.WEIGHT_OPS:
            self.assertIn((op, 4096, "f32"), kernels)
        self.assertEqual({v.weight_dtype for v in variants
                          if v.op not in packs.WEIGHT_OPS}, {None})

    def test_unknown_preset(self):
        with self.assertRaisesRegex(packs.PackError, "unknown preset 'gpt'"):
            packs.preset_variants("gpt", ["f32"])

    def test_preset_with_op_is_refused(self):
        with self.assertRaises(SystemExit) as e:
            packs.main(["build", "--softmax-opt", "x", "--out", "y",
                        "--preset", "llm", "--cols=1024"])
        self.assertEqual(e.exception.code, 2)


class LadderTest(unittest.TestCase):
    def test_any_expands_once(self):
        cols = packs._parse_cols("4096,any")
        self.assertEqual(cols[0], 4096)
        self.assertEqual(cols[-1], 0)
        self.assertEqual(sorted(cols[1:-1] + [4096]), list(packs.LADDER))
        self.assertEqual(packs._parse_cols("streamed,64"), [0, 64])

    def test_every_length_runs_within_a_fast_range(self):
        # A block of a power of two P, or 3P/4 from P = 8192, as the
        # planner pads rows: every length from 1 to 2^24 falls in the fast
        # range of a ladder kernel (no kernel of chunks among them) at
        # most twice its length, and the lookup takes the closest.
        def block(n):
            p = 1 << (n - 1).bit_length()
            return 3 * p // 4 if p >= 8192 and n <= 3 * p // 4 else p
        kernels = []
        for n in packs.LADDER:
            first, last = packs.fast_range(n, 1, block(n))
            kernels.append({"cols": n, "fast_min_cols": first,
                            "fast_max_cols": last, "metadata": n})
        for n in list(range(1, 5000)) + [6000, 6145, 12289, 100000, 131072,
                                         131073, 400000, (1 << 20) + 7,
                                         (1 << 23) + 1, 1 << 24]:
            best = packs._best(kernels, n)
            self.assertIsNotNone(best, n)
            self.assertTrue(n <= block(best["cols"]) < 2 * n + 2, n)


class ManifestErrorTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp()

    def tearDown(self):
        shutil.rmtree(self.dir)

    def write(self, data):
        with open(os.path.join(self.dir, "manifest.json"), "w") as f:
            f.write(data if isinstance(data, str) else json.dumps(data))

    def error(self):
        with self.assertRaises(packs.PackError) as e:
            packs.Pack(self.dir)
        return str(e.exception)

    def valid(self, **changes):
        data = {"format": "rowred-pack", "version": 2, "abi_version": 7,
                "chip": "sm_90",
                "kernels": [{"op": "softmax", "dtype": "f32", "cols": 0,
                             "min_cols": 1, "max_cols": 0,
                             "metadata": "k.json"}]}
        data.update(changes)
        return data

    def test_missing_manifest(self):
        self.assertIn("cannot read the pack's manifest", self.error())

    def test_not_json(self):
        self.write("{")
        self.assertIn("not JSON", self.error())

    def test_not_a_pack(self):
        self.write({"kernels": []})
        self.assertIn("not a rowred pack manifest", self.error())

    def test_other_abi(self):
        self.write(self.valid(abi_version=4))
        self.assertIn("kernels of ABI 4", self.error())

    def test_bad_chip(self):
        self.write(self.valid(chip="gfx90a"))
        self.assertIn("'gfx90a' names no chip", self.error())

    def test_row_lengths_are_integers_in_range(self):
        for cols in (float("inf"), 1.5, True, -1, 2 ** 40, "64"):
            bad = self.valid()
            bad["kernels"][0]["cols"] = cols
            self.write(json.dumps(bad).replace('"Infinity"', "Infinity"))
            self.assertIn("kernel 0 lacks", self.error(), cols)
        bad = self.valid()
        bad["kernels"][0].update(min_cols=5, max_cols=4)
        self.write(bad)
        self.assertIn("rows of 5 to 4 elements, an empty range", self.error())

    def test_metadata_that_names_no_file_inside_the_pack(self):
        os.symlink("/etc/passwd", os.path.join(self.dir, "link.json"))
        for name in ("", ".", "../k.json", "/etc/passwd", "link.json"):
            bad = self.valid()
            bad["kernels"][0]["metadata"] = name
            self.write(bad)
            self.assertIn("must be a file inside the pack", self.error(),
                          name)
        bad = self.valid()
        bad["kernels"][0]["metadata"] = "k\u0000.json"
        self.write(bad)
        self.assertIn("names no file (a NUL in the name)", self.error())

    def test_chip_of_many_digits(self):
        self.write(self.valid(chip="sm_" + "9" * 5000))
        self.assertIn("names no chip", self.error())

    def test_incomplete_kernel(self):
        self.write(self.valid(kernels=[{"op": "softmax"}]))
        self.assertIn("kernel 0 lacks", self.error())

    def test_norm_without_epsilon(self):
        bad = self.valid()
        bad["kernels"][0]["op"] = "rms_norm"
        self.write(bad)
        self.assertIn("(for rms_norm, rms_norm_residual, layer_norm) eps",
                      self.error())

    def test_format_versions(self):
        # Version 1 (before weight_dtype) reads; an unknown one does not.
        self.write(self.valid(version=1))
        self.assertEqual(packs.Pack(self.dir).kernels[0]["weight_dtype"],
                         "f32")
        self.write(self.valid(version=3))
        self.assertIn("pack format version 3, expected one of 1, 2",
                      self.error())

    def test_weight_of_no_dtype(self):
        bad = self.valid()
        bad["kernels"][0]["weight_dtype"] = "f64"
        self.write(bad)
        self.assertIn("has a weight_dtype that is none of f32, f16, bf16",
                      self.error())

    def test_metadata_outside_the_pack(self):
        bad = self.valid()
        bad["kernels"][0]["metadata"] = "../../etc/k.json"
        self.write(bad)
        self.assertIn("must be a file inside the pack", self.error())

    def test_valid(self):
        self.write(self.valid())
        pack = packs.Pack(self.dir)
        self.assertEqual(pack.find("softmax", "f32", 123456),
                         os.path.join(self.dir, "k.json"))

    def test_lookup_takes_the_tightest_range(self):
        def kernel(cols, name):
            return {"op": "softmax", "dtype": "f32", "cols": cols,
                    "min_cols": 1, "max_cols": cols, "metadata": name}
        self.write(self.valid(kernels=[
            self.valid()["kernels"][0], kernel(16384, "n16384.json"),
            kernel(8192, "n8192.json"), kernel(4096, "n4096.json")]))
        pack = packs.Pack(self.dir)
        found = {cols: os.path.basename(pack.find("softmax", "f32", cols))
                 for cols in (4096, 5000, 8192, 10000, 20000)}
        self.assertEqual(found, {4096: "n4096.json", 5000: "n8192.json",
                                 8192: "n8192.json", 10000: "n16384.json",
                                 20000: "k.json"})


class LookupAcrossPacksTest(unittest.TestCase):
    """Which kernel a lookup takes from several packs (manifests only)."""

    def setUp(self):
        self.dir = tempfile.mkdtemp()

    def tearDown(self):
        shutil.rmtree(self.dir)

    def pack(self, name, kernels):
        path = os.path.join(self.dir, name)
        os.makedirs(path)
        # Kernels of chunks (third field true) run every length they
        # admit, as the builder's manifest records.
        entries = [{"op": "softmax", "dtype": "f32", "cols": cols,
                    "min_cols": 1, "max_cols": max_cols,
                    "metadata": f"{'n%d' % cols if cols else 'any'}.json"}
                   for cols, max_cols, *chunks in kernels]
        for entry, (cols, max_cols, *chunks) in zip(entries, kernels):
            first, last = packs.fast_range(cols, 1, max_cols, any(chunks))
            entry["fast_min_cols"], entry["fast_max_cols"] = first, last
        with open(os.path.join(path, "manifest.json"), "w") as f:
            json.dump({"format": "rowred-pack", "version": 1,
                       "abi_version": 7, "chip": "sm_90",
                       "kernels": entries}, f)
        return packs.Pack(path)

    def test_exact_kernel_of_a_later_pack_wins(self):
        # A pack of long-row kernels (chunks for 262144 and 2^20, admitting
        # any length; a cluster for 2^20 + 7 admitting rows up to
        # 1,310,720, which it runs well up to its own length) loaded before
        # one of exact kernels for 8192 and 32000.
        long_rows = self.pack("long", [(4096, 4096), (262144, 0, True),
                                       (1 << 20, 0, True),
                                       ((1 << 20) + 7, 1310720), (0, 0)])
        exact = self.pack("exact", [(8192, 8192), (32000, 32768)])
        found = {cols: os.path.relpath(
            packs.find_kernel([long_rows, exact], "softmax", "f32", cols, 90),
            self.dir)
            for cols in (1000, 4096, 5000, 8192, 20000, 32000, 100000,
                         200000, 600000, (1 << 20) + 7, 1300000, 2000000)}
        self.assertEqual(found, {
            1000: "long/any.json", 4096: "long/n4096.json",
            5000: "exact/n8192.json", 8192: "exact/n8192.json",
            20000: "exact/n32000.json", 32000: "exact/n32000.json",
            100000: "long/any.json", 200000: "long/n262144.json",
            600000: "long/n1048576.json",
            (1 << 20) + 7: "long/n1048583.json",
            1300000: "long/n1048576.json",
            2000000: "long/n1048576.json"})

    def test_no_long_row_kernel_for_short_rows(self):
        long_rows = self.pack("long", [((1 << 20) + 7, 1310720)])
        self.assertIsNone(long_rows.find("softmax", "f32", 8192))
        with self.assertRaises(packs.PackError):
            packs.find_kernel([long_rows], "softmax", "f32", 8192, 90)

    def test_fast_range_from_the_manifest(self):
        # A measured range written into the manifest overrides the derived
        # one.
        path = os.path.join(self.dir, "measured")
        os.makedirs(path)
        with open(os.path.join(path, "manifest.json"), "w") as f:
            json.dump({"format": "rowred-pack", "version": 1,
                       "abi_version": 7, "chip": "sm_90", "kernels": [
                           {"op": "softmax", "dtype": "f32", "cols": 8192,
                            "min_cols": 1, "max_cols": 8192,
                            "fast_min_cols": 1000, "fast_max_cols": 8192,
                            "metadata": "n8192.json"}]}, f)
        pack = packs.Pack(path)
        self.assertIsNotNone(pack.find("softmax", "f32", 1000))
        self.assertIsNone(pack.find("softmax", "f32", 999))


if __name__ == "__main__":
    unittest.main()
