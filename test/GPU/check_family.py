#!/usr/bin/env python3
"""Runs the family's kernels on the GPU and checks them against float64.

Loads every kernel listed in KERNEL_DIR/manifest.json (scripts/gen_kernels.py
--set family: rms_norm (with its per-row statistics, of the sum of two
inputs), layer_norm (with its per-row statistics or without),
softmax_backward, log_softmax_backward, logsumexp, logsumexp_backward,
rms_norm_backward and layer_norm_backward (dx, and the weight's and bias's
gradients summed down the columns, the same bits on a second launch),
cross_entropy (with its gradient, in place too), safe softmax and
log_softmax), launches it through the runtime with one device
address per operand (docs/abi.md) and compares every output, of rows and per
row, with a float64 reference of the inputs as stored, semantics as
PyTorch's (F.rms_norm, F.layer_norm, _softmax_backward_data,
_log_softmax_backward_data, torch.logsumexp, F.cross_entropy with
reduction="none"). Every combination of row length, row count and layout is
one case. Cross-entropy's labels include its ignore_index (every seventh
row) and rows of -inf and +inf logits.

Checks per case: the output is poisoned before the launch, every element
must be written and the padding between rows left alone (but for the
`inplace` layout, where each output overwrites the input of its
position); a NaN in a row makes the row NaN; relative L2 error within the dtype's limit (1e-5 f32,
1e-2 16-bit, or twice the reference's own rounding to the output type) and
elementwise |out - ref| <= atol * max|ref| + rtol * |ref|. The layer_norm
inputs include rows of mean 1e4 and spread 1, which a one-pass variance
loses in f32.

usage: check_family.py KERNEL_DIR [--json OUT] [--match RE]
Exit status: 0 when every case passed, 1 otherwise, 77 when there is no GPU.
"""
import argparse
import json
import os
import sys

try:
    import cupy as cp
    from check_kernels import (POISON, decode, encode, to_device_dtype,
                               write_problems)
    from rowred_kernel import Kernel
except ImportError as e:  # pragma: no cover - depends on the machine
    print(f"SKIP: {e}; the GPU suite needs CuPy and a CUDA GPU")
    sys.exit(77)
from manifest import load_manifest  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "scripts"))
from gen_kernels import EPSILON  # noqa: E402

MS = [1, 7, 1823]
# Rows over 65536 elements (cluster kernels): fewer rows of them; rows over
# 2^20 (the kernels for any length, at 2^24): one or two.
LONG_MS = [1, 7, 129]
HUGE_MS = [1, 2]
LAYOUTS = ["contiguous", "strided", "misaligned"]
# (atol relative to max|ref|, rtol, relative L2) per output type.
TOLERANCES = {
    "f32": (1e-6, 2e-5, 1e-5),
    "f16": (1e-3, 4e-3, 1e-2),
    "bf16": (8e-3, 3.2e-2, 1e-2),
}


def softmax64(x):
    e = cp.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def logsumexp64(x, finite):
    """torch.logsumexp with `finite` (+inf with a +inf, -inf for rows of
    -inf), else as log_softmax computes it (NaN for both)."""
    m = x.max(axis=1, keepdims=True)
    shift = cp.where(cp.isinf(m), 0.0, m) if finite else m
    return (shift + cp.log(cp.exp(x - shift).sum(axis=1,
                                                 keepdims=True)))[:, 0]


def row_reference(meta, x, labels):
    """The per-row results of logsumexp, cross_entropy's (loss, lse): the
    loss from log_softmax's logsumexp (NaN for rows with +inf or of -inf),
    the lse as torch.logsumexp's; rms_norm's rstd, layer_norm's (mean,
    rstd)."""
    if meta["op"] == "logsumexp":
        return [logsumexp64(x, True)]
    if meta["op"] == "rms_norm":
        return [1 / cp.sqrt((x * x).mean(axis=1) + EPSILON)]
    if meta["op"] == "layer_norm":
        mean = x.mean(axis=1)
        var = ((x - mean[:, None]) ** 2).mean(axis=1)
        return [mean, 1 / cp.sqrt(var + EPSILON)]
    lse = logsumexp64(x, False)
    rows, cols = x.shape
    picked = x[cp.arange(rows), cp.clip(labels, 0, cols - 1)]
    loss = lse - picked
    smoothing = meta.get("label_smoothing", 0.0)
    if smoothing:
        loss = (1 - smoothing) * loss + smoothing * (lse - x.mean(axis=1))
    loss = cp.where(labels == meta["ignore_index"], 0.0, loss)
    return [loss, logsumexp64(x, True)]


def grad_reference(meta, x, labels, scale):
    """cross_entropy's gradient: scale * (softmax - smoothed one-hot), the
    scale 0 for ignored rows (NaN rows stay NaN, as PyTorch's)."""
    rows, cols = x.shape
    smoothing = meta.get("label_smoothing", 0.0)
    target = cp.full((rows, cols), smoothing / cols)
    hit = (labels >= 0) & (labels < cols)
    target[cp.arange(rows)[hit], labels[hit]] += 1 - smoothing
    g = cp.ones(rows) if scale is None else scale.astype(cp.float64)
    g = cp.where(labels == meta["ignore_index"], 0.0, g)
    return (softmax64(x) - target) * g[:, None]


def make_labels(meta, rng, rows, cols):
    """Classes in [0, cols), the ignore_index on every seventh row."""
    labels = rng.integers(0, cols, rows).astype(cp.int64)
    labels[3::7] = meta.get("ignore_index", -100)
    return labels


def make_inputs(op, rng, rows, cols):
    """float64 values of the op's inputs, then of its per-column operands."""
    def normal(*shape):
        return rng.standard_normal(shape, dtype=cp.float64)
    if op == "rms_norm":
        return [normal(rows, cols) * 3.0], [normal(cols)]
    if op == "rms_norm_residual":
        return [normal(rows, cols) * 3.0, normal(rows, cols)], [normal(cols)]
    if op in ("rms_norm_backward", "layer_norm_backward"):
        return [normal(rows, cols) * 3.0, normal(rows, cols)], [normal(cols)]
    if op == "rms_norm_residual_backward":
        # x (h), dy and the residual stream's own gradient of h.
        return [normal(rows, cols) * 3.0, normal(rows, cols),
                normal(rows, cols)], [normal(cols)]
    if op == "layer_norm":
        x = normal(rows, cols)
        x[1::2] += 1e4              # mean 1e4, spread 1
        return [x], [normal(cols), normal(cols)]
    logits = normal(rows, cols) * 3.0
    if op in ("logsumexp", "logsumexp_backward", "cross_entropy", "softmax",
              "log_softmax"):
        if rows >= 7:
            logits[5, :] = -cp.inf      # a masked row: lse -inf
            logits[6, cols // 3] = cp.inf
        return [logits], []
    y = softmax64(logits)
    if op == "log_softmax_backward":
        y = cp.log(y)
    return [y, normal(rows, cols)], []


def reference(op, inputs, columns, out_types, safe=False):
    """The references of the 2-D outputs (of `out_types`), in order."""
    if op == "rms_norm_residual":
        # h = x + r as its output stores it, and its rms_norm.
        (x, r), t = inputs, out_types[1]
        h = decode(encode(x + r, t), t)
        return reference("rms_norm", [h], columns, out_types[:1]) + [h]
    if op == "rms_norm":
        (x,), (w,) = inputs, columns
        return [x / cp.sqrt((x * x).mean(axis=1, keepdims=True) + EPSILON)
                * w]
    if op == "layer_norm":
        (x,), (w, b) = inputs, columns
        c = x - x.mean(axis=1, keepdims=True)
        var = (c * c).mean(axis=1, keepdims=True)
        return [c / cp.sqrt(var + EPSILON) * w + b]
    if op in ("softmax", "log_softmax"):
        (x,) = inputs
        y = softmax64(x)
        if op == "log_softmax":
            m = x.max(axis=1, keepdims=True)
            y = x - m - cp.log(cp.exp(x - m).sum(axis=1, keepdims=True))
        if safe:  # rows of -inf give zeros
            y[(x == -cp.inf).all(axis=1)] = 0.0
        return [y]
    y, dy = inputs
    if op == "softmax_backward":
        return [y * (dy - (dy * y).sum(axis=1, keepdims=True))]
    return [dy - cp.exp(y) * dy.sum(axis=1, keepdims=True)]


def norm_statistics(x, mean):
    """(mean, rstd) of the rows of x as the forward stores them, in f32:
    about `mean` (rms_norm's 0), or their own mean (None, layer_norm's)."""
    m = x.mean(axis=1) if mean is None else cp.full(x.shape[0], mean)
    rstd = 1 / cp.sqrt(((x - m[:, None]) ** 2).mean(axis=1) + EPSILON)
    return [v.astype(cp.float32).astype(cp.float64) for v in (m, rstd)]


def norm_backward_reference(inputs, columns, stats, centered):
    """A norm's gradients from its per-row statistics (mean and rstd; rstd
    alone for RMSNorm, whose rows are not `centered`): [dx], the magnitude
    of the terms dx cancels, and (sum, magnitude of its terms) per sum down
    the columns: dw, then (layer_norm) db. A third input (RMSNorm's
    grad_residual) is added to dx."""
    (x, dy), (w,) = inputs[:2], columns
    n = x.shape[1]
    rstd = stats[-1][:, None]
    x_hat = (x - stats[0][:, None] if centered else x) * rstd
    g = dy * w
    gx = (g * x_hat).sum(axis=1, keepdims=True) / n
    dx = g - x_hat * gx
    # dx cancels g against its mean and x_hat * mean(g x_hat): it rounds in
    # proportion to their magnitudes.
    scale = cp.abs(g) + cp.abs(x_hat) * cp.abs(g * x_hat).sum(
        axis=1, keepdims=True) / n
    if centered:
        dx -= g.sum(axis=1, keepdims=True) / n
        scale += cp.abs(g).sum(axis=1, keepdims=True) / n
    sums = [dy * x_hat] + ([dy] if centered else [])
    added = inputs[2] if len(inputs) > 2 else 0.0
    return ([rstd * dx + added], rstd * scale + cp.abs(added),
            [(t.sum(axis=0), cp.abs(t).sum(axis=0)) for t in sums])


def cancelled_magnitude(op, inputs):
    """The scale of the terms the backward ops' gradient cancels (dy and
    the row's sum, which are near each other where dx is near 0), against
    which its rounding is measured; None for the other ops. A sum rounds
    in proportion to the magnitudes of its terms, not to its value: a
    row of 2^24 dy of either sign sums to about 4e3 from terms whose
    magnitudes sum to 1.3e7."""
    if op == "softmax_backward":
        y, dy = inputs
        return cp.abs(y) * (cp.abs(dy)
                            + cp.abs(dy * y).sum(axis=1, keepdims=True))
    if op == "log_softmax_backward":
        y, dy = inputs
        return cp.abs(dy) + cp.exp(y) * cp.abs(dy).sum(axis=1, keepdims=True)
    return None


def stored(values, dtype, stride, off):
    """A device buffer holding `values` (rows x cols, or cols) of `dtype`
    with rows `stride` elements apart from element `off`, and the values as
    stored (float64)."""
    if values.ndim == 1:
        buf = cp.zeros(values.size + off, to_device_dtype(dtype))
        buf[off:] = encode(values, dtype)
        return buf, decode(buf[off:], dtype)
    rows, cols = values.shape
    buf = cp.zeros(rows * stride + off, to_device_dtype(dtype))
    view = buf[off:].reshape(rows, stride)[:, :cols]
    view[...] = encode(values, dtype)
    return buf, decode(view, dtype)


def compare(out, ref, out_type, magnitude=None):
    """Problems of `out` against the float64 `ref` (same shape): NaN
    placement, elementwise tolerance and relative L2 over the finite rows,
    relative to `magnitude` when given (the scale of the values a result
    cancels: a mean near 0 of values near 1); and the relative L2 error."""
    problems = []
    ref_nan = cp.isnan(ref)
    if bool((cp.isnan(out) != ref_nan).any()):
        problems.append("NaN mismatch in "
                        f"{int((cp.isnan(out) != ref_nan).sum())} elements")
    infinite = cp.isinf(ref)
    if bool((out[infinite] != ref[infinite]).any()):
        problems.append("infinity mismatch")
    finite = ~(ref_nan | infinite)
    if ref.ndim == 2:
        finite = ~(ref_nan | infinite).any(axis=1)
    r, o = ref[finite], out[finite]
    m = r if magnitude is None else magnitude[finite]
    l2 = 0.0
    if r.size:
        atol, rtol, l2tol = TOLERANCES[out_type]
        scale = float(cp.abs(m).max()) or 1.0
        err = cp.abs(o - r)
        bad = (err > atol * scale + rtol * cp.abs(m)) | cp.isnan(err)
        if bool(bad.any()):
            problems.append(f"{int(bad.sum())} elements out of tolerance "
                            f"(max abs err {float(err.max()):.3g})")
        den = float(cp.linalg.norm(m)) or 1.0
        l2 = float(cp.linalg.norm(o - r)) / den
        rounding = float(cp.linalg.norm(
            decode(encode(r, out_type), out_type) - r)) / den
        limit = max(l2tol, 2 * rounding)
        if l2 > limit:
            problems.append(f"relative L2 error {l2:.3g} > {limit:.3g}")
    return problems, l2


def vector_write_problems(label, buf, out_type, off, length):
    """Problems of the writes of a poisoned rank-1 output (per row or per
    column) of `length` elements from `off`: elements left unwritten, and
    the one past its end written."""
    poison = encode(cp.full((1,), POISON), out_type)[0]
    problems = [f"{label}: {p}" for p in write_problems(
        buf, buf[off:off + length].reshape(1, length), off, length, poison)]
    if buf[off + length] != poison:
        problems.append(f"{label}: wrote past its end")
    return problems


def run_case(kernel, rng, rows, cols, layout):
    """Runs one case; returns its problems and relative L2 error."""
    meta = kernel.meta
    op = meta["op"].removesuffix("_smoothed")
    operands = kernel.runtime.operands
    types = {role: [t for _, r, t in operands if r == role]
             for role in ("input", "output", "column", "row", "row_output",
                          "column_sum")}
    if op == "rms_norm" and len(types["input"]) == 2:
        op = "rms_norm_residual"
    if op == "rms_norm_backward" and len(types["input"]) == 3:
        op = "rms_norm_residual_backward"
    off = 1 if layout == "misaligned" else 0
    extra = {"strided": 5}.get(layout, 0)
    inputs, columns = make_inputs(op, rng, rows, cols)
    if rows >= 4:
        inputs[0][0, cols // 2] = cp.nan
    pointers, strides, values = [], [], []
    keep = []
    for k, (x, t) in enumerate(zip(inputs, types["input"])):
        stride = cols + extra + (k if extra else 0)
        # `skewed`: the second input alone one element off.
        o = 1 if layout == "skewed" and k == 1 else off
        buf, x64 = stored(x, t, stride, o)
        keep.append(buf)
        pointers.append(buf.data.ptr + o * buf.itemsize)
        strides.append(stride)
        values.append(x64)
    sy = cols + (3 if extra else 0)
    ys = []
    for k, t in enumerate(types["output"]):
        if layout == "inplace":  # over input k, of the same type and rows
            ys.append(keep[k])
        else:
            poison = encode(cp.full((1,), POISON), t)[0]
            ys.append(cp.full(rows * sy + off, poison, to_device_dtype(t)))
        pointers.append(ys[-1].data.ptr + off * ys[-1].itemsize)
        strides.append(sy)
    col_values = []
    for w, t in zip(columns, types["column"]):
        buf, w64 = stored(w, t, 0, off)
        keep.append(buf)
        pointers.append(buf.data.ptr + off * buf.itemsize)
        col_values.append(w64)
    # `given`: the per-row inputs the test computes from the rows as stored
    # (a logsumexp, a norm's statistics).
    labels, scale, given = None, None, None
    for k, t in enumerate(types["row"]):
        if op in ("rms_norm_backward", "rms_norm_residual_backward"):
            # The forward's rstd of the rows as stored, in f32.
            given = norm_statistics(values[0], 0.0)[1]
            values_t = given
        elif op == "layer_norm_backward":
            # The forward's mean, then its rstd, in f32.
            given = norm_statistics(values[0], None)
            values_t = given[k]
        elif op == "logsumexp_backward" and given is None:
            # The rows' logsumexp, as rowred.logsumexp stores it.
            given = logsumexp64(values[0], True).astype(cp.float32).astype(
                cp.float64)
            values_t = given
        elif t == "f32":  # the gradient's per-row scale
            scale = 1.0 / (cp.arange(rows) % 5 + 1)
            values_t = scale
        else:
            labels = make_labels(meta, rng, rows, cols)
            values_t = labels
        buf = cp.zeros(rows + off, {"i32": cp.int32, "i64": cp.int64,
                                    "f32": cp.float32}[t])
        buf[off:] = values_t
        keep.append(buf)
        pointers.append(buf.data.ptr + off * buf.itemsize)
    zs = []
    for t in types["row_output"]:
        zs.append(cp.full(rows + off + 1, encode(cp.full((1,), POISON), t)[0],
                          to_device_dtype(t)))
        pointers.append(zs[-1].data.ptr + off * zs[-1].itemsize)
    sums = []
    for t in types["column_sum"]:
        sums.append(cp.full(cols + off + 1,
                            encode(cp.full((1,), POISON), t)[0],
                            to_device_dtype(t)))
        pointers.append(sums[-1].data.ptr + off * sums[-1].itemsize)
    kernel.launch_operands(pointers, strides, rows, cols)
    cp.cuda.runtime.deviceSynchronize()
    # The sums down the columns: the same bits from a second launch (but
    # in place, where the first overwrote the inputs).
    first_sums = [s.copy() for s in sums]
    if sums and layout != "inplace":
        kernel.launch_operands(pointers, strides, rows, cols)
        cp.cuda.runtime.deviceSynchronize()

    problems, l2 = [], 0.0
    magnitude = cancelled_magnitude(op, values)
    if op == "cross_entropy":
        refs = [grad_reference(meta, values[0], labels, scale)] if ys else []
    elif op == "logsumexp_backward":
        refs = [scale[:, None] * cp.exp(values[0] - given[:, None])]
    elif op in ("rms_norm_backward", "rms_norm_residual_backward",
                "layer_norm_backward"):
        stats = given if op == "layer_norm_backward" else [given]
        refs, magnitude, sum_refs = norm_backward_reference(
            values, col_values, stats, op == "layer_norm_backward")
    else:
        refs = reference(op, values, col_values, types["output"],
                         meta.get("safe", False)) if ys else []
    for k, (ys_k, out_type, ref) in enumerate(zip(ys, types["output"], refs)):
        poison = encode(cp.full((1,), POISON), out_type)[0]
        y2 = ys_k[off:].reshape(rows, sy)
        label = f"output {k}: " if len(ys) > 1 else ""
        if layout != "inplace":
            problems += [label + p for p in
                         write_problems(ys_k, y2, off, cols, poison)]
        found, err = compare(decode(y2[:, :cols], out_type), ref, out_type,
                             magnitude)
        problems += [label + p for p in found]
        l2 = max(l2, err)
    for k, (s, t) in enumerate(zip(sums, types["column_sum"])):
        problems += vector_write_problems(f"column sum {k}", s, t, off, cols)
        # Bit for bit (a NaN column too).
        if not bool((s.view(cp.uint8) == first_sums[k].view(cp.uint8)).all()):
            problems.append(f"column sum {k}: differs between two launches")
        # A sum of rows of either sign rounds in proportion to the sum of
        # its terms' magnitudes.
        found, err = compare(decode(s[off:off + cols], t), sum_refs[k][0], t,
                             sum_refs[k][1])
        problems += [f"column sum {k}: {p}" for p in found]
        l2 = max(l2, err)
    if zs:
        refs = row_reference(dict(meta, op=op), values[0], labels)
        for k, (z, t, ref) in enumerate(zip(zs, types["row_output"], refs)):
            problems += vector_write_problems(f"per-row output {k}", z, t,
                                              off, rows)
            # layer_norm's mean cancels values of the rows' RMS, and
            # cross-entropy's loss (lse - the label's logit) the logsumexp:
            # a loss near 0 inherits the rounding of both.
            magnitude = None
            if op == "layer_norm" and k == 0:
                magnitude = cp.sqrt((values[0] ** 2).mean(axis=1))
            if op == "cross_entropy" and k == 0:
                magnitude = cp.abs(ref) + cp.abs(refs[1])
            found, err = compare(decode(z[off:off + rows], t), ref, t,
                                 magnitude)
            problems += [f"per-row output {k}: {p}" for p in found]
            l2 = max(l2, err)
    return problems, l2


def layouts(kernel):
    """LAYOUTS, `inplace` (each output over the input of its position,
    contiguous) where every output has its input's type, and `skewed` (the
    second input one element off, the rest contiguous: rows the peeled path
    must leave to the scalar one) where there are several inputs."""
    operands = kernel.runtime.operands
    ins = [t for _, r, t in operands if r == "input"]
    outs = [t for _, r, t in operands if r == "output"]
    fits = outs and len(outs) <= len(ins) and ins[:len(outs)] == outs
    return (LAYOUTS + (["inplace"] if fits else [])
            + (["skewed"] if len(ins) > 1 else []))


def lengths(kernel):
    """Row lengths to run: short, odd and the longest the kernel takes (a
    kernel without a limit, a chunks kernel: rows of several chunks, even
    and odd; the online kernel streaming rows of any length: 2^24 too)."""
    top = kernel.meta["max_cols"]
    if top == 0:
        huge = [1 << 24] if kernel.meta["strategy"] == "online" else []
        return [1, 31, 1000, 65537, 131072, 200003] + huge
    return sorted({n for n in (1, 3, 31, 256, 781, 1000, top - 1, top)
                   if 1 <= n <= top})


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("kernel_dir")
    parser.add_argument("--json")
    parser.add_argument("--match", help="only the kernels whose name matches")
    args = parser.parse_args()
    try:
        cp.cuda.runtime.getDeviceCount()
    except cp.cuda.runtime.CUDARuntimeError as e:
        print(f"SKIP: no CUDA GPU ({e})")
        return 77
    manifest = load_manifest(args.kernel_dir, args.match)
    results, failed, cases = [], 0, 0
    for entry in manifest:
        kernel = Kernel(args.kernel_dir, entry)
        # The same data alone (--match) as in the whole set.
        rng = kernel.rng()
        worst, kernel_failed = 0.0, 0
        for cols in lengths(kernel):
            for rows in (MS if cols <= 65536 else
                         LONG_MS if cols <= 1 << 20 else HUGE_MS):
                for layout in layouts(kernel):
                    problems, l2 = run_case(kernel, rng, rows, cols, layout)
                    cases += 1
                    worst = max(worst, l2)
                    if problems:
                        kernel_failed += 1
                        print(f"FAIL {kernel.name} {rows}x{cols} {layout}: "
                              + "; ".join(problems))
        failed += kernel_failed
        results.append({"kernel": kernel.name, "op": kernel.meta["op"],
                        "failed": kernel_failed, "max_rel_l2": worst})
        print(f"{kernel.name:48s} {kernel.meta['op']:22s} "
              f"max rel L2 {worst:.2e} {'FAIL' if kernel_failed else 'ok'}")
    print(f"family: {cases - failed}/{cases} cases passed")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"cases": cases, "failed": failed, "kernels": results},
                      f, indent=1)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
