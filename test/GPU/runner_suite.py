#!/usr/bin/env python3
"""Runs `softmax-run --check` over every kernel variant and shape.

For each kernel of KERNEL_DIR/manifest.json: N in the suite's list (within the
kernel's range), M in {1, 7, 1823, 4096 (N <= 4096)} up to 8M elements per case, contiguous or
strided rows with a misaligned base, normal data or special rows (NaN / -inf). Then
compute-sanitizer memcheck and racecheck on a small subset. Prints a summary
table last; exits 1 on any failure.

usage: runner_suite.py SOFTMAX_RUN KERNEL_DIR [--json OUT] [--match RE]
                       [--sanitize-only | --check-only]

Each kernel's cases run in one softmax-run (--cases), the kernels in
parallel. --match keeps the kernels whose name matches RE.
"""
import argparse
import concurrent.futures
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

from manifest import load_manifest

NS = [1, 2, 3, 31, 32, 33, 255, 256, 257, 781, 1000, 1024, 1025, 4096, 8191,
      12288, 16384, 32768, 50257, 65536, 131072, 262144]


# compute-sanitizer runs on these kernels of scripts/gen_kernels.py's sets,
# small shapes. The suite's: fused multi-warp, single-warp, several-rows,
# cluster and online kernels (also with kept tiles in shared memory), rows
# staged whole on a block per row (also of odd length), the clusters that
# launches of a few rows of a block per row take, rows cut into chunks.
SANITIZED_SUITE = (
    "softmax_f32_fused_b1024_kernel0.json",
    "softmax_f32_fused_b4096_kernel0.json",
    "softmax_bf16_fused_b1024_kernel0.json",
    "softmax_f32_online_kernel0.json",
    "softmax_f32_online_rev1_kernel0.json",
    "softmax_f32_fused_b256_r8_kernel0.json",
    "softmax_f32_cluster_b65536_kernel0.json",
    "softmax_bf16_cluster_b49152_kernel0.json",
    "softmax_bf16_cluster_n524288_kernel0.json",
    "softmax_f32_fused_b32768_kernel0.json",
    "softmax_f32_online_c16_kernel0.json",
    "softmax_bf16_online_c16_kernel0.json",
    "softmax_f32_fused_b8192_pfregisters_kernel0.json",
    "softmax_bf16_fused_b512_kernel0.json",
    "softmax_bf16_fused_b8192_kernel0.json",
    "softmax_bf16_online_c8_kept32768_pfnone_kernel0.json",
    "log_softmax_f32_online_kept32768_kernel0.json",
    "log_softmax_f32_online_kept16384_pfnone_kernel0.json",
    "softmax_f32_online_n262144_c4_kept32768_katiles_kernel0.json",
    "softmax_f32_online_n262144_c4_kept16384_kabulk_kernel0.json",
    "softmax_bf16_online_n131072_c1_w16_kept32768_kabulk_kernel0.json",
    "softmax_bf16_auto_n32768_kernel0.json",
    "softmax_bf16_auto_n57344_kernel0.json",
    "log_softmax_bf16_auto_n12288_kernel0.json",
    "softmax_bf16_auto_n20011_kernel0.json",
    "log_softmax_f32_auto_n32000_kernel0.json",
    "softmax_f32_auto_n20480_kernel0.json",
    "softmax_f32_chunks_kernel0.json",
    "softmax_bf16_chunks_kernel0.json",
    "log_softmax_f32_chunks_b1024_cs1024_kernel0.json",
    "softmax_f16_chunks_w1_b256_cs0_kernel0.json",
)
# The family's (--set family): each op's strategies, the per-column and
# per-row operands (weights, biases, labels, second inputs, per-row
# results), generic chunks of one and two exchanges, the online kernel of
# rows only reduced (logsumexp and the cross-entropy loss, exact and any
# length), and the sums down the columns (their shared accumulators and
# grid barrier; the next rows of x and dy loaded ahead).
SANITIZED_FAMILY = (
    "rms_norm_backward_f32_auto_n1000_kernel0.json",
    "rms_norm_residual_backward_f32_auto_n1000_kernel0.json",
    "rms_norm_residual_backward_f32_auto_n4096_kernel0.json",
    "rms_norm_residual_backward_bf16_auto_n4096_kernel0.json",
    "rms_norm_residual_backward_f32_auto_n16384_kernel0.json",
    "layer_norm_backward_bf16_auto_n16384_kernel0.json",
    "layer_norm_backward_bf16_auto_n781_kernel0.json",
    "layer_norm_backward_bf16_auto_n5120_kernel0.json",
    "rms_norm_backward_f16_auto_n2048_kernel0.json",
    "rms_norm_backward_f32_auto_n12288_kernel0.json",
    "cross_entropy_bf16_auto_n32000_kernel0.json",
    "cross_entropy_f32_auto_n50257_kernel0.json",
    "logsumexp_bf16_auto_kernel0.json",
    "cross_entropy_grad_bf16_auto_n50257_kernel0.json",
    "cross_entropy_grad_smoothed_f32_chunks_n9001_b1024_kernel0.json",
    "cross_entropy_grad_f32_online_kernel0.json",
    "layer_norm_bf16_chunks_n20000_b1024_cs4096_kernel0.json",
    "layer_norm_bf16_auto_n131072_kernel0.json",
    "layer_norm_stats_f32_chunks_n30011_b1024_kernel0.json",
    "layer_norm_f32_auto_n4096_kernel0.json",
    "rms_norm_residual_f32_auto_n32768_kernel0.json",
    "rms_norm_bf16_chunks_n30011_b2048_kernel0.json",
    "rms_norm_f32_auto_kernel0.json",
    "softmax_backward_bf16_auto_n262144_kernel0.json",
    "softmax_backward_bf16_auto_n32768_kernel0.json",
    "softmax_backward_bf16_auto_n10000_kernel0.json",
    "rms_norm_bf16_online_n20480_reread1_pfstage_w8_kernel0.json",
    "log_softmax_backward_f32_online_kernel0.json",
    "softmax_safe_f32_auto_n4096_kernel0.json",
)
SANITIZED = SANITIZED_SUITE + SANITIZED_FAMILY


# (M, layout, data) per N: the CuPy suite covers the kernels' arithmetic on
# every layout; here every row count and layout goes through softmax-run's
# own argument handling, grid derivation and reference once per N.
SHAPES = [(1, "contiguous", "normal"), (7, "strided", "special"),
          (1823, "strided", "normal"), (4096, "contiguous", "normal")]


def cases(meta):
    max_cols = meta["max_cols"] or NS[-1]
    for n in NS:
        if n > max_cols:
            continue
        for m, layout, dist in SHAPES:
            # The float64 reference runs on the CPU: keep each case under
            # 8M elements (the first full run took 506 s on 16 cores).
            if m * n > 8 * 1024 * 1024 or (m == 4096 and n > 4096):
                continue
            yield n, m, layout, dist


def run(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def check_batches(softmax_run, kernel_dir, manifest, casedir):
    """(cases, command) per kernel: one softmax-run runs all of a kernel's
    cases (--cases) on one CUDA context. A context per case cost about 0.2
    s of serialized driver time, most of the whole suite's time."""
    batches = []
    for meta_file in manifest:
        path = os.path.join(kernel_dir, meta_file)
        with open(path) as f:
            meta = json.load(f)
        batch = []
        for n, m, layout, dist in cases(meta):
            line = [f"--rows={m}", f"--cols={n}", f"--dist={dist}",
                    f"--seed={n * 31 + m}"]
            if layout == "strided":
                line += [f"--x-stride={n + 3}", f"--y-stride={n + 5}",
                         "--offset=1"]
            batch.append((meta["kernel"], n, m, layout, dist, " ".join(line)))
        if batch:
            cases_file = os.path.join(casedir, meta_file + ".cases")
            with open(cases_file, "w") as f:
                f.write("".join(b[5] + "\n" for b in batch))
            batches.append((batch, [softmax_run, path, "--check", "--json",
                                    f"--cases={cases_file}"]))
    return batches


def run_checks(batches):
    """One record per case of `batches`, the kernels in parallel."""
    results = []
    with concurrent.futures.ThreadPoolExecutor(
            max_workers=os.cpu_count() or 8) as pool:
        for (batch, _), (rc, out, err) in zip(
                batches, pool.map(lambda b: run(b[1]), batches)):
            # One JSON object per case run, in order; the cases after one
            # that stopped the process failed with its message.
            lines = [l for l in out.splitlines() if l.startswith("{")]
            for i, (kernel, n, m, layout, dist, _) in enumerate(batch):
                record = {"kernel": kernel, "cols": n, "rows": m,
                          "layout": layout, "dist": dist}
                if i < len(lines):
                    record.update(json.loads(lines[i]))
                    record["rc"] = 0 if record.get("check_passed") else 1
                else:
                    record["rc"] = rc or 1
                    record["stderr"] = err.strip()
                results.append(record)
    return results


def print_checks(results, elapsed):
    """Prints the checks' table; returns the number of failed cases."""
    by_kernel = {}
    for r in results:
        s = by_kernel.setdefault(r["kernel"], [0, 0, 0.0, None])
        ok = r["rc"] == 0 and r.get("check_passed")
        s[0 if ok else 1] += 1
        s[2] = max(s[2], r.get("rel_l2") or 0.0)
        if not ok and s[3] is None:
            s[3] = (r["cols"], r["rows"], r["layout"], r["dist"],
                    r.get("problems") or r.get("stderr"))
    failed = sum(s[1] for s in by_kernel.values())
    print(f"softmax-run --check: {len(results) - failed}/{len(results)} "
          f"cases passed in {elapsed:.0f} s")
    print(f"{'kernel':44} {'pass':>5} {'fail':>5} {'max relL2':>10}")
    for k, (p, fl, l2, first) in by_kernel.items():
        print(f"{k:44} {p:5} {fl:5} {l2:10.2e}" +
              (f"  first failure: {first}" if first else ""))
    return failed


def sanitizer_layouts(meta):
    """The row layouts compute-sanitizer checks a kernel on: name -> the
    softmax-run options that make it."""
    max_cols = meta["max_cols"] or 1000
    n = min(1000, max_cols)
    # Rows misaligned differently (scalar path), then rows of odd length
    # misaligned alike (the peeled vector path of fused kernels).
    layouts = {"strided": [f"--cols={n}", f"--x-stride={n + 3}",
                           "--offset=1"],
               "odd": [f"--cols={min(999, max_cols - 1) or 1}",
                       "--offset=1"]}
    # Kept tiles copied in ahead (keep_ahead) live on the aligned vector
    # path: shares of three tiles, two of them kept (one with keep_ahead =
    # bulk), on two clusters, so that each refills its stage (both
    # buffers) for later rows.
    if meta.get("keep_ahead"):
        clusters = meta["cluster_blocks"]
        layouts["aligned"] = [
            f"--cols={3 * meta['block_elements'] * clusters}",
            f"--grid={2 * clusters}"]
    # Online kernels for rows of any length stream several tiles (shares,
    # over a cluster) and a partial one: two and a part of an odd length.
    if meta["strategy"] == "online" and not meta["max_cols"]:
        tile = meta["block_elements"] * meta["cluster_blocks"]
        layouts["long"] = [f"--cols={2 * tile + 513}"]
    # Chunks kernels bulk-copy their stage on the aligned and the peeled
    # vector paths: two whole chunks and a partial one per row, of an even
    # and of an odd length.
    if meta.get("grid") == "chunks":
        cols = 2 * meta['chunk_elements'] + 512
        layouts["aligned"] = [f"--cols={cols}"]
        layouts["odd"] = [f"--cols={cols + 1}", "--offset=1"]
    return layouts


def run_sanitizer(sanitizer, softmax_run, kernel_dir, manifest):
    """compute-sanitizer memcheck and racecheck on the kernels of SANITIZED
    in `manifest`, M = 37 and special values on each of their layouts:
    (kernel, tool/layout, exit status, the tool's summary line) per run."""
    jobs = []
    for k in (k for k in manifest if k in SANITIZED):
        with open(os.path.join(kernel_dir, k)) as f:
            meta = json.load(f)
        for layout, shape in sanitizer_layouts(meta).items():
            for tool in ("memcheck", "racecheck"):
                cmd = [sanitizer, f"--tool={tool}", "--error-exitcode=3",
                       softmax_run, os.path.join(kernel_dir, k), "--check",
                       "--rows=37", *shape, "--dist=special"]
                jobs.append((k.replace("_kernel0.json", ""),
                             f"{tool}/{layout}", cmd))
    # Several runs at once. The tools' instrumented launches, not their
    # start, take the time: a kernel's layouts in one run per tool
    # (--cases) took as long, 206 s for the suite's kernels on the H200.
    rows = []
    with concurrent.futures.ThreadPoolExecutor(
            max_workers=min(8, os.cpu_count() or 8)) as pool:
        for (k, what, _), (rc, out, err) in zip(
                jobs, pool.map(lambda j: run(j[2]), jobs)):
            summary = [l for l in (out + err).splitlines()
                       if "ERROR SUMMARY" in l or "RACECHECK SUMMARY" in l]
            rows.append((k, what, rc, summary[-1].strip() if summary else "?"))
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("softmax_run")
    ap.add_argument("kernel_dir")
    ap.add_argument("--json")
    ap.add_argument("--match", help="only the kernels whose name matches")
    only = ap.add_mutually_exclusive_group()
    only.add_argument("--sanitize-only", action="store_true",
                      help="only the compute-sanitizer runs, not the checks")
    only.add_argument("--check-only", action="store_true",
                      help="only the checks, not the compute-sanitizer runs")
    args = ap.parse_args()
    manifest = load_manifest(args.kernel_dir, args.match)
    results, failed = [], 0
    if not args.sanitize_only:
        # The checks first: printed before the sanitizer runs.
        casedir = tempfile.mkdtemp(prefix="runner-suite-")
        start = time.time()
        results = run_checks(check_batches(args.softmax_run, args.kernel_dir,
                                           manifest, casedir))
        shutil.rmtree(casedir, ignore_errors=True)
        failed = print_checks(results, time.time() - start)

    sanitizer = shutil.which("compute-sanitizer")
    san_rows = []
    if sanitizer and not args.check_only:
        start = time.time()
        san_rows = run_sanitizer(sanitizer, args.softmax_run, args.kernel_dir,
                                 manifest)
        san_elapsed = time.time() - start
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"cases": results, "sanitizer": san_rows}, f, indent=1)

    if san_rows:
        print(f"compute-sanitizer: {len(san_rows)} runs in {san_elapsed:.0f} s")
        print("compute-sanitizer (M=37, misaligned by one element, special "
              "values; strided: N=min(1000, max_cols) with an x stride of "
              "N+3; odd: N=min(999, max_cols-1), contiguous, for chunks "
              "kernels 2 chunks + 513; long: online kernels of any length, "
              "2 tiles + 513):")
        for k, tool, rc, line in san_rows:
            print(f"  {k:36} {tool:17} rc={rc} {line}")
    elif not sanitizer and not args.check_only:
        print("compute-sanitizer not found: memcheck/racecheck not run")
    bad_san = any(rc != 0 for _, _, rc, _ in san_rows)
    return 1 if failed or bad_san else 0


if __name__ == "__main__":
    sys.exit(main())
