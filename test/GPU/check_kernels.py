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

Kernels whose blocks wait for each other (a row's chunks) must never hang
nor lose the context: for each, in a child process, the launcher must
refuse rows with more chunks than the device holds blocks
and a cooperative grid larger than that, and a launch while a
kernel on another stream holds all but BUSY_FREE_SMS SMs for BUSY_SECONDS
must complete, correct, within BUSY_TIMEOUT seconds.

usage: check_kernels.py KERNEL_DIR [--quick] [--json OUT] [--match RE]

Each kernel's data comes from a generator seeded by its name, so that a
kernel checked alone (--match) sees the data it sees in the whole set.
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
    from manifest import load_manifest
except ImportError as e:  # pragma: no cover - depends on the machine
    print(f"SKIP: {e}; the GPU suite needs CuPy and a CUDA GPU")
    sys.exit(77)

NS = [1, 2, 3, 31, 32, 33, 255, 256, 257, 781, 1000, 1024, 1025, 4096, 8191,
      12288, 16384, 32768, 50257, 65536, 131072, 151936, 262144]
MS = [1, 7, 1823, 4096]
POISON = 12345.0
# The busy-device check: SMs left free, seconds the other kernel holds the
# rest, and seconds the child may take in all.
BUSY_FREE_SMS = 4
BUSY_SECONDS = 6
BUSY_TIMEOUT = 60
# A kernel that sleeps for `ns` nanoseconds; launched with all the shared
# memory a block may have, one block per SM.
HOG_SOURCE = r"""
extern "C" __global__ void hog(unsigned long long ns) {
  unsigned long long start, now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do {
    __nanosleep(100000);
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  } while (now - start < ns);
}
"""
# (atol, rtol, relative L2, |row sum - 1|) per element type.
TOLERANCES = {
    "f32": (2e-6, 2e-5, 1e-5, 1e-4),
    "f16": (1e-3, 2e-3, 2e-3, 2e-3),
    "bf16": (8e-3, 1.6e-2, 1.6e-2, 2e-2),
}


def write_problems(ys, y2, off, cols, poison):
    """Where a launch wrote what it should not or left elements unwritten:
    `ys` is the poisoned output buffer, `y2` its rows (`off` elements in,
    rows of y2.shape[1] >= cols elements)."""
    problems = []
    if off and ys[0] != poison:
        problems.append("wrote before the output")
    if y2.shape[1] > cols and bool((y2[:, cols:] != poison).any()):
        problems.append("wrote into the padding between rows")
    if bool((y2[:, :cols] == poison).any()):
        problems.append(f"{int((y2[:, :cols] == poison).sum())} elements "
                        "not written")
    return problems


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


def run_case(kernel, rng, rows, cols, layout, grid_kind, on_launched=None):
    """Runs one case; returns its problems, relative L2 and largest absolute
    errors, and grid. `on_launched` is called once the launch is queued."""
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
    if on_launched:
        on_launched()
    cp.cuda.runtime.deviceSynchronize()

    y2 = ys[off:off + rows * sy].reshape(rows, sy)
    out = decode(y2[:, :cols], out_t)
    problems = []
    # Chunks kernels leave their workspace as they found it.
    if kernel.workspace is not None and bool(kernel.workspace.any()):
        problems.append("left the workspace nonzero")
    problems += write_problems(ys, y2, off, cols, poison)
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


def busy_device_launches(kernel):
    """The launches of a kernel whose blocks wait for each other, in this
    (child) process: refused when they cannot be resident together, and
    complete while another stream's kernel holds most SMs. Returns the
    problems."""
    problems = []
    try:
        kernel.grid(1, cols=(kernel.resident + 1) * kernel.chunk)
        problems.append("the launcher accepted rows with more chunks than "
                        "resident blocks")
    except RuntimeError:
        pass
    dtype = to_device_dtype(kernel.meta["input_type"])
    cols = kernel.chunk * 16
    # More rows than any variant takes, so that the kernel itself launches.
    rows = 1 + max((max_rows for max_rows, _ in kernel.variants), default=0)
    x = cp.zeros((rows * cols,), dtype=dtype)
    y = cp.zeros((rows * cols,),
                 dtype=to_device_dtype(kernel.meta["output_type"]))
    try:
        kernel.launch(x.data.ptr, y.data.ptr, rows, cols, cols, cols,
                      grid=kernel.resident + 1)
        cp.cuda.runtime.deviceSynchronize()
        problems.append(f"the runtime launched {kernel.resident + 1} blocks "
                        f"cooperatively, more than the {kernel.resident} "
                        "resident")
    except RuntimeError as e:
        print(f"{kernel.name}: a cooperative grid of {kernel.resident + 1} "
              f"refused before launch ({e})")
    # A first run fills CuPy's memory pool, so that the run below allocates
    # nothing (an allocation may wait for the device).
    rng = cp.random.default_rng(7)
    problems += run_case(kernel, rng, 64, cols, "contiguous", "occupancy")[0]
    # All but BUSY_FREE_SMS SMs held: one block each, with all the shared
    # memory a block may take, on a stream that does not wait for ours.
    hog = cp.RawKernel(HOG_SOURCE, "hog")
    device = cp.cuda.Device()
    hog.max_dynamic_shared_size_bytes = device.attributes[
        "MaxSharedMemoryPerBlockOptin"]
    stream = cp.cuda.Stream(non_blocking=True)
    with stream:
        hog((kernel.sms - BUSY_FREE_SMS,), (32,),
            (np.uint64(BUSY_SECONDS * 10**9),),
            shared_mem=hog.max_dynamic_shared_size_bytes)
    time.sleep(0.5)
    start = time.time()
    queued = []
    found, _, _, grid = run_case(
        kernel, rng, 64, cols, "contiguous", "occupancy",
        on_launched=lambda: queued.append((not stream.done,
                                           time.time() - start)))
    busy, queued_after = queued[0]
    print(f"{kernel.name}: 64 x {cols} on {grid} blocks, launched while "
          f"{kernel.sms - BUSY_FREE_SMS} SMs were {'busy' if busy else 'free'}"
          f" (queued after {queued_after:.2f} s), done in "
          f"{time.time() - start:.1f} s"
          + (f": {'; '.join(found)}" if found else ""))
    problems += found
    if not busy:
        problems.append("the other stream's kernel had ended before the "
                        "launch was queued")
    stream.synchronize()
    # The context is still usable.
    problems += run_case(kernel, rng, 7, cols, "strided", "small")[0]
    return problems


def check_busy_device(kernel_dir, meta_file):
    """Runs busy_device_launches in a child; returns the problems."""
    start = time.time()
    try:
        child = subprocess.run(
            [sys.executable, os.path.abspath(__file__), kernel_dir,
             "--busy", meta_file], capture_output=True, text=True,
            timeout=BUSY_TIMEOUT)
    except subprocess.TimeoutExpired:
        return [f"the busy-device launches did not end within "
                f"{BUSY_TIMEOUT} s"]
    print(child.stdout.strip(), f"({time.time() - start:.0f} s)")
    if child.returncode != 0:
        return [f"the busy-device launches ended with status "
                f"{child.returncode}: "
                f"{(child.stdout + child.stderr).strip()[-300:]}"]
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


def softmax_kernels(kernel_dir, match=None):
    """The metadata files of KERNEL_DIR/manifest.json (those whose name
    matches `match`) that this harness checks (softmax and log_softmax, not
    safe), and the names of the others."""
    ours, others = [], []
    for meta_file in load_manifest(kernel_dir, match):
        with open(os.path.join(kernel_dir, meta_file)) as f:
            meta = json.load(f)
        if meta["op"] in ("softmax", "log_softmax") and not meta.get("safe"):
            ours.append(meta_file)
        else:
            others.append(meta["kernel"])
    return ours, others


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("kernel_dir")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--json", help="write per-case results here")
    parser.add_argument("--match", help="only the kernels whose name matches")
    parser.add_argument("--busy", metavar="KERNEL_JSON",
                        help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.busy:
        problems = busy_device_launches(Kernel(args.kernel_dir, args.busy))
        for problem in problems:
            print(f"FAIL {args.busy}: {problem}")
        return 1 if problems else 0
    try:
        count = cp.cuda.runtime.getDeviceCount()
    except cp.cuda.runtime.CUDARuntimeError as e:
        count = 0
        reason = str(e)
    if count == 0:
        print(f"SKIP: no CUDA GPU ({reason if 'reason' in dir() else 'none found'})")
        return 77
    manifest, others = softmax_kernels(args.kernel_dir, args.match)
    if others:
        print(f"skipped {len(others)} kernels of other ops or of the safe "
              "softmax (test/GPU/check_family.py checks them): "
              + ", ".join(others))
    if not manifest:
        print(f"error: no softmax or log_softmax kernel in {args.kernel_dir}",
              file=sys.stderr)
        return 2
    results, summary = [], []
    start = time.time()
    kernels = []
    for meta_file in manifest:
        kernel = Kernel(args.kernel_dir, meta_file)
        kernels.append(kernel)
        rng = kernel.rng()
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
    # Kernels whose blocks wait for each other, on a busy device.
    waiting = [k for k in kernels if k.waits()]
    busy_failed = 0
    for kernel in waiting:
        problems = check_busy_device(args.kernel_dir, kernel.meta_file)
        busy_failed += bool(problems)
        for problem in problems:
            print(f"FAIL {kernel.meta_file}: {problem}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    total_fail = sum(s[5] for s in summary) + busy_failed
    total = sum(s[4] + s[5] for s in summary) + len(waiting)
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
