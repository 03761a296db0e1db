#!/usr/bin/env python3
"""Runs generated softmax kernels on the GPU and checks them against float64.

Loads every kernel listed in KERNEL_DIR/manifest.json (PTX + JSON metadata
written by `softmax-opt --rowred-to-ptx=output-dir=...`), launches it through
the documented ABI (docs/abi.md) with CuPy on a persistent grid sized by
occupancy, and compares the output with a float64 reference computed on the
GPU. Every combination of row length, row count, layout and grid is one case.

Checks per case: the output buffer is poisoned before the launch, every
element must be written and padding between rows must stay untouched;
relative L2 error (within the dtype's limit or twice the error of the
reference rounded to the output type) and elementwise
|out - ref| <= atol + rtol * |ref| per dtype; softmax rows sum to 1; rows holding NaN or only -inf are NaN and
partly -inf rows are finite, as torch.softmax does.

A chunks kernel launched on rows with more chunks than the device holds
blocks (which the ABI forbids, and launchers refuse) must fail, not hang:
the suite launches the chunks kernel of the smallest chunk that way in a
child process and expects a launch failure within OVERFULL_TIMEOUT seconds.

usage: check_kernels.py KERNEL_DIR [--quick] [--json OUT]
Exit status: 0 when every case passed, 1 otherwise, 77 when there is no GPU.
"""
import argparse
import json
import os
import subprocess
import sys
import time

try:
    import cupy as cp
    import numpy as np
    from rowred_kernel import Kernel
except ImportError as e:  # pragma: no cover - depends on the machine
    print(f"SKIP: {e}; the GPU suite needs CuPy and a CUDA GPU")
    sys.exit(77)

NS = [1, 2, 3, 31, 32, 33, 255, 256, 257, 781, 1000, 1024, 1025, 4096, 8191,
      12288, 16384, 32768, 50257, 65536, 131072, 151936, 262144]
MS = [1, 7, 1823, 4096]
POISON = 12345.0
# Seconds an overfull chunks launch may take to fail (the kernel traps after
# 4 s of waiting for a row's chunks).
OVERFULL_TIMEOUT = 60
# Exit status of the child process whose overfull launch failed, as it must.
OVERFULL_FAILED = 3
# (atol, rtol, relative L2, |row sum - 1|) per element type.
TOLERANCES = {
    "f32": (2e-6, 2e-5, 1e-5, 1e-4),
    "f16": (1e-3, 2e-3, 2e-3, 2e-3),
    "bf16": (8e-3, 1.6e-2, 1.6e-2, 2e-2),
}


def to_device_dtype(dtype):
    return {"f32": cp.float32, "f16": cp.float16, "bf16": cp.uint16}[dtype]


def encode(x64, dtype):
    """float64 CuPy array -> storage of `dtype` (bf16 as uint16, RNE)."""
    if dtype != "bf16":
        return x64.astype(to_device_dtype(dtype))
    bits = x64.astype(cp.float32).view(cp.uint32)
    nan = cp.isnan(x64)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
    return cp.where(nan, cp.uint32(0x7FC0), rounded).astype(cp.uint16)


def decode(a, dtype):
    """storage of `dtype` -> float64."""
    if dtype != "bf16":
        return a.astype(cp.float64)
    return (a.astype(cp.uint32) << 16).view(cp.float32).astype(cp.float64)


def reference(x64, op):
    m = x64.max(axis=1, keepdims=True)
    # NaN anywhere in a row makes the row NaN (max propagates NaN).
    m = cp.where(cp.isnan(x64).any(axis=1, keepdims=True), cp.nan, m)
    with np.errstate(invalid="ignore"):
        shifted = x64 - m
        e = cp.exp(shifted)
        s = e.sum(axis=1, keepdims=True)
        if op == "softmax":
            return e / s
        return shifted - cp.log(s)


def make_input(rng, rows, cols, specials):
    x = rng.standard_normal((rows, cols), dtype=cp.float64) * 3.0
    if specials and rows >= 4:
        x[0, cols // 2] = cp.nan                  # NaN row -> NaN
        x[1, :] = -cp.inf                         # all -inf -> NaN
        if cols > 1:
            x[2, ::2] = -cp.inf                   # some -inf -> finite
        x[3, :] = x[3, :] * 1000.0                # large magnitudes
    return x


def run_case(kernel, rng, rows, cols, layout, grid_kind):
    meta = kernel.meta
    in_t, out_t = meta["input_type"], meta["output_type"]
    op = meta["op"]
    # Row strides and base offsets (in elements) for each layout.
    sx = sy = cols
    off = 0
    if layout == "strided":            # odd stride: no vector path
        sx, sy = cols + 5, cols + 3
    elif layout == "aligned-stride":   # padded to 16 bytes: vector path
        sx = sy = (cols + 8 + 7) // 8 * 8
    elif layout == "misaligned":       # base pointer off by one element
        off = 1
    x64 = make_input(rng, rows, cols, specials=True)
    xs = cp.full((rows * sx + off,), 0, dtype=to_device_dtype(in_t))
    xs[off:off + rows * sx].reshape(rows, sx)[:, :cols] = encode(x64, in_t)
    x64 = decode(xs[off:off + rows * sx].reshape(rows, sx)[:, :cols], in_t)
    poison = encode(cp.full((1,), POISON), out_t)[0]
    ys = cp.full((rows * sy + off,), poison, dtype=to_device_dtype(out_t))
    grid = (kernel.grid(rows, cols=cols) if grid_kind == "occupancy"
            else kernel.small_grid(rows, cols=cols))
    itemsize = xs.itemsize
    kernel.launch(xs.data.ptr + off * itemsize,
                  ys.data.ptr + off * ys.itemsize, rows, cols, sx, sy, grid)
    cp.cuda.runtime.deviceSynchronize()

    y2 = ys[off:off + rows * sy].reshape(rows, sy)
    out = decode(y2[:, :cols], out_t)
    problems = []
    # Row-split and chunks kernels leave their workspace as they found it.
    if kernel.workspace is not None and bool(kernel.workspace.any()):
        problems.append("left the workspace nonzero")
    if off and ys[0] != poison:
        problems.append("wrote before the output")
    if sy > cols and bool((y2[:, cols:] != poison).any()):
        problems.append("wrote into the padding between rows")
    if bool((y2[:, :cols] == poison).any()):
        problems.append(f"{int((y2[:, :cols] == poison).sum())} elements "
                        "not written")
    ref = reference(x64, op)
    atol, rtol, l2tol, sumtol = TOLERANCES[out_t]
    ref_nan = cp.isnan(ref)
    if bool((cp.isnan(out) != ref_nan).any()):
        problems.append(f"NaN mismatch in {int((cp.isnan(out) != ref_nan).sum())}"
                        " elements")
    finite_rows = ~ref_nan.any(axis=1)
    r, o = ref[finite_rows], out[finite_rows]
    l2 = max_err = 0.0
    if r.size:
        both_inf = cp.isinf(r) & (r == o)
        err = cp.where(both_inf, 0.0, cp.abs(o - r))
        max_err = float(cp.nan_to_num(err, nan=cp.inf).max())
        bad = err > atol + rtol * cp.abs(cp.where(cp.isinf(r), 0.0, r))
        bad |= cp.isnan(err)
        if bool(bad.any()):
            problems.append(f"{int(bad.sum())} elements out of tolerance "
                            f"(max abs err {max_err:.3g})")
        fin = cp.isfinite(r)
        num = float(cp.linalg.norm(cp.where(fin, o - r, 0.0)))
        den = float(cp.linalg.norm(cp.where(fin, r, 0.0))) or 1.0
        l2 = num / den
        # No kernel beats the reference rounded to the output type (f16
        # softmax outputs of long rows are subnormal): allow twice that.
        rounded = decode(encode(cp.where(fin, r, 0.0), out_t), out_t)
        limit = max(l2tol, 2 * float(cp.linalg.norm(
            cp.where(fin, rounded - r, 0.0))) / den)
        if l2 > limit:
            problems.append(f"relative L2 error {l2:.3g} > {limit:.3g}")
        if op == "softmax":
            sums = o.sum(axis=1)
            dev = float(cp.abs(sums - 1.0).max())
            if dev > sumtol:
                problems.append(f"row sums off by {dev:.3g}")
    return problems, l2, max_err, grid


def overfull_chunks_launch(kernel):
    """Launches chunks kernel `kernel` on one row of one chunk more than the
    device holds blocks, bypassing Kernel.grid's refusal. Returns
    OVERFULL_FAILED if the launch fails (the kernel's wait traps), 0 if it
    completes. Runs in a child process: a trap ends the CUDA context."""
    chunks = kernel.resident + 1
    cols = chunks * kernel.chunk
    dtype = to_device_dtype(kernel.meta["input_type"])
    x = cp.zeros((cols,), dtype=dtype)
    y = cp.zeros((cols,), dtype=to_device_dtype(kernel.meta["output_type"]))
    args = kernel.args(x.data.ptr, y.data.ptr, 1, cols, cols, cols)
    try:
        kernel.function((chunks,), (kernel.threads,), args,
                        shared_mem=kernel.dynamic_shared)
        cp.cuda.runtime.deviceSynchronize()
    except (cp.cuda.runtime.CUDARuntimeError,
            cp.cuda.driver.CUDADriverError) as e:
        print(f"{kernel.name}: {chunks} chunks of {kernel.chunk} on "
              f"{kernel.resident} resident blocks: {e}")
        return OVERFULL_FAILED
    print(f"{kernel.name}: an overfull launch of {chunks} chunks completed")
    return 0


def check_overfull(kernel_dir, meta_file):
    """Runs overfull_chunks_launch in a child; returns the problems."""
    start = time.time()
    try:
        child = subprocess.run(
            [sys.executable, os.path.abspath(__file__), kernel_dir,
             "--overfull", meta_file], capture_output=True, text=True,
            timeout=OVERFULL_TIMEOUT)
    except subprocess.TimeoutExpired:
        return [f"an overfull launch did not fail within {OVERFULL_TIMEOUT} s"]
    print(child.stdout.strip(), f"({time.time() - start:.0f} s)")
    if child.returncode != OVERFULL_FAILED:
        return [f"an overfull launch ended with status {child.returncode}, "
                f"not a launch failure: {child.stderr.strip()[-300:]}"]
    return []


def cases_for(meta, quick):
    max_cols = meta["max_cols"] or NS[-1]
    ns = [n for n in NS if n <= max_cols]
    if meta["max_cols"]:
        # Fused: the interesting lengths are near the block size and tiny.
        ns = [n for n in ns if n * 4 > max_cols or n <= 33 or n in (781, 1000)]
    if quick:
        ns = ns[-3:]
    for n in ns:
        for m in MS:
            if m * n > 64 * 1024 * 1024 or (m == 4096 and n not in (1024, 4096)):
                continue
            for layout in ("contiguous", "strided", "aligned-stride",
                           "misaligned"):
                for grid in ("occupancy", "small"):
                    if grid == "small" and m < 7:
                        continue
                    yield n, m, layout, grid


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("kernel_dir")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--json", help="write per-case results here")
    parser.add_argument("--overfull", metavar="KERNEL_JSON",
                        help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.overfull:
        return overfull_chunks_launch(Kernel(args.kernel_dir, args.overfull))
    try:
        count = cp.cuda.runtime.getDeviceCount()
    except cp.cuda.runtime.CUDARuntimeError as e:
        count = 0
        reason = str(e)
    if count == 0:
        print(f"SKIP: no CUDA GPU ({reason if 'reason' in dir() else 'none found'})")
        return 77
    with open(os.path.join(args.kernel_dir, "manifest.json")) as f:
        manifest = json.load(f)
    rng = cp.random.default_rng(1234)
    results, summary = [], []
    start = time.time()
    for meta_file in manifest:
        kernel = Kernel(args.kernel_dir, meta_file)
        passed = failed = 0
        worst_l2 = worst_abs = 0.0
        for n, m, layout, grid in cases_for(kernel.meta, args.quick):
            problems, l2, max_err, g = run_case(kernel, rng, m, n, layout, grid)
            results.append({"kernel": kernel.name, "rows": m, "cols": n,
                            "layout": layout, "grid": g, "rel_l2": l2,
                            "max_abs_err": max_err, "problems": problems})
            if problems:
                failed += 1
                if failed <= 5:
                    print(f"FAIL {kernel.name} M={m} N={n} {layout} grid={g}: "
                          + "; ".join(problems))
            else:
                passed += 1
            worst_l2 = max(worst_l2, l2)
            worst_abs = max(worst_abs, max_err)
        summary.append((kernel.name, kernel.meta["strategy"], kernel.threads,
                        kernel.per_sm, passed, failed, worst_l2, worst_abs))
    # The overfull launch of the chunks kernel with the smallest chunk.
    chunked = []
    for meta_file in manifest:
        with open(os.path.join(args.kernel_dir, meta_file)) as f:
            chunk = json.load(f).get("chunk_elements", 0)
        if chunk:
            chunked.append((chunk, meta_file))
    overfull = []
    if chunked:
        overfull = check_overfull(args.kernel_dir, min(chunked)[1])
        for problem in overfull:
            print(f"FAIL {min(chunked)[1]}: {problem}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    total_fail = sum(s[5] for s in summary) + len(overfull)
    total = sum(s[4] + s[5] for s in summary) + bool(chunked)
    print(f"\nGPU suite: {total - total_fail}/{total} cases passed on "
          f"{cp.cuda.runtime.getDeviceProperties(0)['name'].decode()} "
          f"in {time.time() - start:.0f} s")
    print(f"{'kernel':46} {'strategy':8} {'thr':>4} {'blk/SM':>6} "
          f"{'pass':>5} {'fail':>4} {'max relL2':>9} {'max abs':>9}")
    for name, strategy, threads, per_sm, p, fl, l2, ab in summary:
        print(f"{name:46} {strategy:8} {threads:4} {per_sm:6} {p:5} {fl:4} "
              f"{l2:9.2e} {ab:9.2e}")
    return 1 if total_fail else 0


if __name__ == "__main__":
    sys.exit(main())
