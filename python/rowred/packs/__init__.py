"""Kernel packs: directories of compiled kernels with one manifest.

A pack is built on a machine with the compiler (`softmax-opt`) and used on
any machine with the runtime library:

    python3 -m rowred.packs build --softmax-opt build/bin/softmax-opt \\
        --out packs/sm90 --op softmax,log_softmax --dtype f32,bf16 \\
        --cols 1024,4096,32000

compiles one kernel per (op, dtype, N) for rows of exactly N elements
(`--cols` may include `any`, the default when no length is given: the
LADDER's lengths and the streamed kernel for rows of any length), into
`packs/sm90/` with `manifest.json`:

    {"format": "rowred-pack", "version": 2, "abi_version": 7,
     "chip": "sm_90",
     "kernels": [{"op": "softmax", "dtype": "f32", "cols": 4096,
                  "min_cols": 1, "max_cols": 4096,
                  "fast_min_cols": 2049, "fast_max_cols": 4096,
                  "metadata": "softmax_f32_n4096_kernel0.json"}, ...]}

`cols` 0 marks a kernel compiled for any row length. [min_cols, max_cols]
are the rows a kernel admits (max_cols 0: unbounded), [fast_min_cols,
fast_max_cols] those it runs well (fast_range: a kernel compiled for N
from N/2, its block at least half used, to N, or all it admits for a
kernel of chunks; an `any` kernel, all it admits). A lookup searches
every loaded pack (ranked_kernels): the kernel
compiled for exactly N wins, from whichever pack holds it; else the
kernel compiled for the length closest to N (by ratio) whose fast range
holds N (a kernel compiled for 8192 takes rows of 5000 with its block
padded and masked); else an `any` kernel; the package takes the first of
these that launches on its GPU. Never a kernel outside its
fast range: one compiled for rows of 2^20 admits rows of 8192 but would
run them on a long-row grid. The norms' entries also carry `eps`, the
epsilon compiled into the kernel (`--eps`), and a lookup matches it as an
f32; those whose weight (and bias) are f32 beside 16-bit rows
(`--weight-dtype f32`, mixed precision) carry `"weight_dtype": "f32"`
(absent: the rows' dtype).

Where the compiler is at hand (the full build, or $ROWRED_SOFTMAX_OPT), a
shape no pack covers is compiled once into an on-disk cache
(cached_kernel; $ROWRED_CACHE_DIR, else ~/.cache/rowred).
"""
import argparse
import hashlib
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
from typing import NamedTuple, Optional

from .._runtime import ABI_VERSION

# Version 2 added weight_dtype (version 1's manifests, which lack it, read
# as before); a reader of version 1 refuses version 2, whose kernels of an
# f32 weight it would take for those of the rows' dtype.
FORMAT, VERSION = "rowred-pack", 2
READ_VERSIONS = (1, 2)
OPS = ("softmax", "log_softmax", "softmax_safe", "log_softmax_safe",
       "softmax_backward", "log_softmax_backward", "logsumexp",
       "logsumexp_backward", "cross_entropy", "cross_entropy_grad",
       "cross_entropy_sum", "rms_norm", "rms_norm_backward", "rms_norm_residual",
       "rms_norm_residual_backward", "layer_norm", "layer_norm_backward")
# `_safe`: softmax and log_softmax whose rows of -inf give zeros instead of
# NaN (PyTorch's _safe_softmax, for fully masked attention rows).
# Kernels a pack builds for its exact lengths only, not for 'any': their
# kernels for rows of any length (the online kernel streaming the row once
# per reduce, then the map) measured slower than PyTorch's on the LLM shapes
# (H200: 0.23-0.98x the best peer, docs/performance.md), and the gradients'
# were not measured. Where a pack has no exact kernel they run PyTorch's.
# logsumexp's and cross-entropy's any-length kernels (the online kernel's
# running pair, one read) ran 1.33-2.85x the best peer and 2-10x eager
# PyTorch (H200): a pack builds them for 'any' too.
# The norms' backwards sum the weight's (and bias's) gradient down the
# columns in the kernel that holds each row (rowred.map's column_sums):
# exact lengths only, and only those whose rows (x and dy) fit one block's
# registers (16384 and shorter); a pack skips the others, which run
# PyTorch's backward (ROW_HELD_OPS). rms_norm_residual_backward is the
# residual form's: dx plus the gradient h itself got (grad_residual), the
# gradient of both of the form's inputs from one kernel.
# A pack with rms_norm_residual_backward also gets rms_norm_backward
# (COMPANION_OPS): the residual form's eager backward takes it where h got
# no gradient, and without it the form's eager calls run their autograd in
# Python.
# cross_entropy_sum is cross-entropy's loss summed over the rows in the
# kernel, with the count of rows not ignored (rowred.map's totals, for the
# mean and the sum without a gradient): likewise exact lengths (and the
# ladder's), and none for rows too long for a block or a cluster to hold.
COMPANION_OPS = {"rms_norm_residual_backward": ("rms_norm_backward",)}
EXACT_OPS = ("softmax_backward", "log_softmax_backward", "cross_entropy_grad",
             "cross_entropy_sum",
             "rms_norm", "rms_norm_backward", "rms_norm_residual",
             "rms_norm_residual_backward", "layer_norm",
             "layer_norm_backward")
# Kernels with an epsilon, compiled into the kernel: a pack has one per
# (op, dtype, N, eps) and a manifest entry records it ("eps", the f32 value
# the kernel adds). Both norms take a weight (and layer_norm a bias) of the
# input's dtype and write their per-row statistics in f32 (rms_norm: rstd;
# layer_norm: mean and rstd), which their gradients read. rms_norm_residual
# normalizes h = x + residual and writes h as well.
EPS_OPS = ("rms_norm", "rms_norm_residual", "layer_norm")
DEFAULT_EPS = (1e-5, 1e-6)
ROW_HELD_OPS = ("rms_norm_backward", "rms_norm_residual_backward",
                "layer_norm_backward", "cross_entropy_sum")
# The norms, whose per-column operands (the weight, layer_norm's bias and
# their gradients) may be of another dtype than the rows: f32 beside f16
# or bf16 rows (`--weight-dtype f32`), as mixed precision keeps a model's
# weights in f32 while its activations are 16-bit. The rows and y keep
# their dtype, as F.rms_norm's does (F.layer_norm refuses the mix).
WEIGHT_OPS = ("rms_norm", "rms_norm_residual", "rms_norm_backward",
              "rms_norm_residual_backward", "layer_norm",
              "layer_norm_backward")
# `--weight-dtype`: "rows" (the rows' own) and "f32".
WEIGHT_DTYPES = ("rows", "f32")
# Cross-entropy kernels are PyTorch's defaults: ignore_index -100, no label
# smoothing, int64 labels, the loss and the logsumexp in f32.
IGNORE_INDEX = -100
DTYPES = ("f32", "f16", "bf16")

# `--cols any`: kernels compiled for these lengths, and the streamed kernel
# for rows of any length where the op has one. The blocks of those to
# 131072 (the powers of two, and three quarters of those from 8192, as
# rowred-plan pads rows) leave no length in between more than half padded:
# through the lookup's fast ranges, a row of any length runs on the exact
# kernel of the next block up. Those for 262144 and 1048576 cut rows into
# chunks, whose number a launch takes from the row's length: they run
# every longer row whose chunks fit on the device at once. The others run
# rows up to their own length (fast_range), so the lengths go on doubling
# to 2^24. H200, bench/any_kernels.py: what the lookup takes from such a
# pack ran at 0.73-1.0 of the exact kernel's speed from 1 to 2^20 + 7
# elements (rows of 1, 8 and 4096), where the streamed kernel alone ran
# 0.02-1.0 (docs/performance.md).
LADDER = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 6144,
          8192, 12288, 16384, 24576, 32768, 65536, 131072, 262144, 524288,
          1 << 20, 1 << 21, 1 << 22, 1 << 23, 1 << 24)

# `--preset llm`: the row lengths of common open language models, per group
# of ops: the norms at the hidden sizes (2048-8192) and the head sizes that
# Qwen3's and Gemma's query/key norms normalize, the per-row results and
# the softmax family at the vocabularies (Llama 2, Phi-3, GPT-2, cl100k,
# Llama 3, Qwen2/3, Gemma) and any other length (`any`: LADDER, and the
# streamed kernel where the op has one), as attention's rows are.
HIDDEN_SIZES = (128, 256, 2048, 3072, 4096, 5120, 6144, 7168, 8192)
VOCABULARIES = (32000, 32001, 32064, 50257, 100277, 128256, 151936, 256000)
PRESETS = {
    "llm": (
        (("rms_norm", "rms_norm_residual", "rms_norm_backward",
          "rms_norm_residual_backward", "layer_norm", "layer_norm_backward"),
         HIDDEN_SIZES),
        (("cross_entropy", "cross_entropy_grad", "cross_entropy_sum",
          "logsumexp",
          "logsumexp_backward", "softmax", "log_softmax", "softmax_backward",
          "log_softmax_backward"), VOCABULARIES + LADDER + (0,)),
    ),
}


class PackError(ValueError):
    """A pack that cannot be read or built, or a shape no pack covers."""


def f32(value):
    """`value` rounded to the nearest f32, as a kernel holds its epsilon."""
    return struct.unpack("f", struct.pack("f", value))[0]


def _eps_tag(eps):
    """`eps` in a kernel name: 1e-05 -> 1p000em05."""
    return f"{eps:.3e}".replace(".", "p").replace("-", "m").replace("+", "")


def _chip_number(chip):
    """The compute capability of a chip's name (sm_90a -> 90). softmax-opt
    knows which chips it compiles for and names them where one is not."""
    match = re.fullmatch(r"sm_([0-9]{2,3})a?", chip)
    if not match:
        raise PackError(f"'{chip[:40]}' names no chip; expected sm_80, "
                        "sm_90, sm_90a, ...")
    return int(match.group(1))


class Pack:
    """A pack directory and its manifest."""

    def __init__(self, path):
        self.path = os.path.abspath(path)
        manifest = os.path.join(self.path, "manifest.json")
        try:
            with open(manifest) as f:
                data = json.load(f)
        except OSError as e:
            raise PackError(f"{manifest}: cannot read the pack's manifest "
                            f"({e.strerror})") from None
        except json.JSONDecodeError as e:
            raise PackError(f"{manifest}: not JSON ({e})") from None
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise PackError(f"{manifest}: not a rowred pack manifest")
        if data.get("version") not in READ_VERSIONS:
            raise PackError(f"{manifest}: pack format version "
                            f"{data.get('version')}, expected one of "
                            f"{', '.join(map(str, READ_VERSIONS))}")
        if data.get("abi_version") != ABI_VERSION:
            raise PackError(f"{manifest}: kernels of ABI "
                            f"{data.get('abi_version')}, this runtime "
                            f"launches ABI {ABI_VERSION}; rebuild the pack")
        self.chip = str(data.get("chip", ""))
        self.sm = _chip_number(self.chip)
        kernels = data.get("kernels")
        if not isinstance(kernels, list):
            raise PackError(f"{manifest}: 'kernels' must be a list")
        self.kernels = [self._entry(manifest, i, k)
                        for i, k in enumerate(kernels)]

    def _entry(self, manifest, i, k):
        """Kernel `i` of the manifest, checked: row lengths are integers
        with 0 <= min_cols <= max_cols (max_cols 0: unbounded), and the
        metadata a file inside the pack."""
        def length(key):
            value = k[key]
            if not isinstance(value, int) or isinstance(value, bool) or \
                    not 0 <= value < 2 ** 31:
                raise ValueError(key)
            return value
        try:
            entry = {"op": str(k["op"]), "dtype": str(k["dtype"]),
                     "cols": length("cols"), "min_cols": length("min_cols"),
                     "max_cols": length("max_cols"),
                     "metadata": str(k["metadata"])}
            first, last = fast_range(entry["cols"], entry["min_cols"],
                                     entry["max_cols"])
            entry["fast_min_cols"] = length("fast_min_cols") \
                if "fast_min_cols" in k else first
            entry["fast_max_cols"] = length("fast_max_cols") \
                if "fast_max_cols" in k else last
            if entry["op"] in EPS_OPS:
                entry["eps"] = f32(float(k["eps"]))
            entry["weight_dtype"] = str(k.get("weight_dtype",
                                              entry["dtype"]))
            if entry["weight_dtype"] not in DTYPES:
                raise ValueError("weight_dtype")
        except (KeyError, TypeError, ValueError, OverflowError):
            raise PackError(f"{manifest}: kernel {i} lacks op, dtype, "
                            "cols, min_cols, max_cols (integers from 0 to "
                            "2^31 - 1, as are fast_min_cols and "
                            "fast_max_cols where given), metadata or (for "
                            f"{', '.join(EPS_OPS)}) eps, or has a "
                            "weight_dtype that is none of "
                            f"{', '.join(DTYPES)}") from None
        if entry["max_cols"] and entry["min_cols"] > entry["max_cols"]:
            raise PackError(f"{manifest}: kernel {i} takes rows of "
                            f"{entry['min_cols']} to {entry['max_cols']} "
                            "elements, an empty range")
        if "\0" in entry["metadata"]:
            raise PackError(f"{manifest}: kernel {i}'s metadata names no "
                            "file (a NUL in the name)")
        # The file the name resolves to, links followed, must lie inside the
        # pack's directory.
        path = os.path.realpath(os.path.join(self.path, entry["metadata"]))
        inside = os.path.commonpath([path, os.path.realpath(self.path)]) == \
            os.path.realpath(self.path)
        if not entry["metadata"] or os.path.isabs(entry["metadata"]) or \
                not inside or path == os.path.realpath(self.path):
            raise PackError(f"{manifest}: kernel {i}'s metadata must be a "
                            "file inside the pack")
        entry["metadata"] = os.path.join(self.path, entry["metadata"])
        return entry

    def matching(self, op, dtype, eps=None, weight_dtype=None):
        """The entries of (op, dtype) and, for EPS_OPS, the epsilon `eps`
        as an f32, whose weight is of `weight_dtype` (None: `dtype`)."""
        weight_dtype = weight_dtype or dtype
        return [k for k in self.kernels if k["op"] == op and
                k["dtype"] == dtype and k["weight_dtype"] == weight_dtype and
                (op not in EPS_OPS or k["eps"] == f32(eps))]

    def find(self, op, dtype, cols, eps=None, weight_dtype=None):
        """The metadata path of this pack's best kernel for rows of `cols`
        (and, for EPS_OPS, the epsilon `eps` as an f32; a weight of
        `weight_dtype`), or None."""
        best = _best(self.matching(op, dtype, eps, weight_dtype), cols)
        return best["metadata"] if best else None


def fast_range(cols, min_cols, max_cols, chunks=False):
    """[first, last] row lengths a kernel compiled for rows of `cols` (0:
    any) runs well, within the [min_cols, max_cols] it admits (last 0:
    unbounded): from cols/2 on, where its block is at least half used, to
    cols, past which its block or cluster would loop over the row (H200:
    a cluster kernel for 65536 ran rows of 65537 at 0.43-0.76 of the
    exact kernel's speed); a kernel of `chunks` to all it admits, as a
    launch cuts the row into as many chunks as it needs."""
    if not cols:
        return min_cols, max_cols
    last = max_cols if chunks else min(max_cols or cols, cols)
    return max(min_cols, cols // 2 + 1), last


def _rank(kernel, cols):
    """Where `kernel` ranks for rows of `cols` (lowest first), or None
    where it should not run them."""
    first, last = kernel["fast_min_cols"], kernel["fast_max_cols"]
    if kernel["cols"] == cols:
        return (0, 0)
    if cols < first or (last and cols > last):
        return None
    # The closest compiled length (by ratio), then the tightest any-length
    # range.
    if kernel["cols"]:
        return (1, max(kernel["cols"], cols) / min(kernel["cols"], cols))
    return (2, last or float("inf"))


def _ranked(kernels, cols):
    """Those of `kernels` that may run rows of `cols`, best first (the
    first listed among equals)."""
    ranked = sorted((rank, i) for i, k in enumerate(kernels)
                    if (rank := _rank(k, cols)) is not None)
    return [kernels[i] for _, i in ranked]


def _best(kernels, cols):
    """The best-ranked of `kernels` for rows of `cols`, or None."""
    ranked = _ranked(kernels, cols)
    return ranked[0] if ranked else None


def ranked_kernels(packs, op, dtype, cols, device_sm, eps=None,
                   weight_dtype=None):
    """The metadata paths of every kernel for (op, dtype, cols, eps) with a
    weight of `weight_dtype` (None: `dtype`) in all
    of `packs` whose chip the device runs, best first (the exact kernel,
    then those compiled for the lengths closest to cols whose fast ranges
    hold them, then `any` kernels; the first loaded pack among equals):
    the caller takes the first that launches on its device (a kernel of
    chunks that wait for each other launches only where they all fit at
    once). PackError naming the shape and the command that builds a pack
    for it when there is none."""
    ranked = _ranked([k for pack in packs if pack.sm <= device_sm
                      for k in pack.matching(op, dtype, eps, weight_dtype)],
                     cols)
    if ranked:
        return [k["metadata"] for k in ranked]
    where = ", ".join(p.path for p in packs) or "no packs loaded"
    with_eps = f" with eps {eps:g}" if op in EPS_OPS else ""
    eps_flag = f" --eps {eps:g}" if op in EPS_OPS else ""
    mixed = weight_dtype not in (None, dtype)
    with_weight = f" and a weight of {weight_dtype}" if mixed else ""
    weight_flag = f" --weight-dtype {weight_dtype}" if mixed else ""
    raise PackError(
        f"no rowred kernel for {op} of {dtype} rows of {cols} elements"
        f"{with_eps}{with_weight} on sm_{device_sm} ({where}); build one "
        f"with: python3 -m "
        f"rowred.packs build --softmax-opt build/bin/softmax-opt --out DIR "
        f"--op {op} --dtype {dtype} --cols {cols}{eps_flag}{weight_flag} "
        f"--chip sm_{device_sm}, then rowred.load_pack(DIR) or set "
        "ROWRED_PACKS=DIR")


def find_kernel(packs, op, dtype, cols, device_sm, eps=None,
                weight_dtype=None):
    """The metadata path of the best kernel for (op, dtype, cols, eps,
    weight_dtype) (ranked_kernels' first); PackError where there is
    none."""
    return ranked_kernels(packs, op, dtype, cols, device_sm, eps,
                          weight_dtype)[0]


def find_compiler():
    """The softmax-opt to compile missing kernels with: $ROWRED_SOFTMAX_OPT,
    else the full build of this checkout, else None."""
    env = os.environ.get("ROWRED_SOFTMAX_OPT")
    if env:
        return env if os.access(env, os.X_OK) else None
    root = os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__))))
    built = os.path.join(root, "build", "bin", "softmax-opt")
    return built if os.access(built, os.X_OK) else None


def cache_dir():
    """Where compiled kernels are cached: $ROWRED_CACHE_DIR, else
    $XDG_CACHE_HOME/rowred, else ~/.cache/rowred."""
    env = os.environ.get("ROWRED_CACHE_DIR")
    if env:
        return env
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(
        os.path.expanduser("~"), ".cache")
    return os.path.join(base, "rowred")


def _compiler_version(softmax_opt):
    """Identifies the compiler build: its path, size and modification time,
    so that a rebuilt softmax-opt compiles anew."""
    st = os.stat(softmax_opt)
    text = f"{os.path.realpath(softmax_opt)}:{st.st_size}:{st.st_mtime_ns}"
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def cached_kernel(softmax_opt, op, dtype, cols, chip, eps=None,
                  weight_dtype=None):
    """The metadata path of the kernel for (op, dtype, cols, chip, eps,
    weight_dtype) compiled by `softmax_opt`, from the on-disk cache or
    compiled into it, keyed by (op, dtype, weight dtype, N, eps, chip,
    compiler version) as Triton's cache is."""
    tag = f"_eps{_eps_tag(f32(eps))}" if op in EPS_OPS else ""
    weight = _weight_tag(dtype, weight_dtype)
    key = (f"{op}_{dtype}{weight}_n{cols}{tag}_{chip}_"
           f"{_compiler_version(softmax_opt)}")
    path = os.path.join(cache_dir(), key)
    try:
        return Pack(path).find(op, dtype, cols, eps, weight_dtype)
    except PackError:
        pass
    # Compile into a fresh directory and move it in place, so that a reader
    # never sees half a pack.
    os.makedirs(cache_dir(), exist_ok=True)
    tmp = tempfile.mkdtemp(dir=cache_dir(), prefix=".build-")
    try:
        build(softmax_opt, tmp, [op], [dtype], [cols], chip,
              [eps] if op in EPS_OPS else DEFAULT_EPS,
              weight_dtypes=[weight_dtype or "rows"])
        try:
            os.rename(tmp, path)
        except OSError:  # Another process got there first.
            shutil.rmtree(tmp, ignore_errors=True)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return Pack(path).find(op, dtype, cols, eps, weight_dtype)


def _parse_list(text, allowed, what):
    items = [t for t in text.split(",") if t]
    for t in items:
        if t not in allowed:
            raise PackError(f"unknown {what} '{t}'; expected one of "
                            f"{', '.join(allowed)}")
    return items


def _parse_cols(text):
    cols = []
    for t in text.split(","):
        if t in ("any", "streamed"):
            cols.extend(n for n in (LADDER if t == "any" else ()) + (0,)
                        if n not in cols)
            continue
        try:
            n = int(t)
        except ValueError:
            raise PackError(f"--cols: '{t}' is not a row length") from None
        if not 1 <= n < 2 ** 31:
            raise PackError(f"--cols: rows of {n} elements; the kernels take "
                            "1 <= N < 2^31")
        cols.append(n)
    return cols


def _parse_eps(text):
    values = []
    for t in text.split(","):
        try:
            eps = float(t)
        except ValueError:
            raise PackError(f"--eps: '{t}' is not a number") from None
        if not eps >= 0 or eps == float("inf"):
            raise PackError(f"--eps: {t}; an epsilon is finite and >= 0")
        if eps != 0 and f32(eps) == 0:
            raise PackError(f"--eps: {t} is 0 in f32, as a kernel holds it; "
                            "pass 0 or an epsilon of at least 1.5e-45")
        values.append(eps)
    return values


def _quoted(path, flag="--out"):
    """`path` (the value of `flag`) as one value of a pass option: between
    the quotes it has none of."""
    for quote in ('"', "'"):
        if quote not in path:
            return quote + path + quote
    raise PackError(f"{flag} '{path}': a path named with both kinds of "
                    "quote cannot be passed to softmax-opt")


def _mlir_source(name, op, dtype, eps=None, weight_dtype=None):
    """A function of dynamic 2-D memrefs of `dtype` that applies `op` (with
    per-row results in f32 and labels in i64; the norms with a weight, and
    a bias, of `weight_dtype` (None: `dtype`) and their statistics)."""
    t, r = f"memref<?x?x{dtype}>", "memref<?xf32>"
    v = f"memref<?x{weight_dtype or dtype}>"
    if op == "rms_norm_residual":
        return (f"func.func @{name}(%x: {t}, %res: {t}, %w: {v}, %y: {t}, "
                f"%h: {t}, %rstd: {r}) {{\n  rowred.rms_norm "
                f"epsilon({eps:.9e}) ins(%x : {t}) residual(%res : {t}) "
                f"weight(%w : {v}) outs(%y : {t}) residual_out(%h : {t}) "
                f"rstd(%rstd : {r})\n  return\n}}\n")
    if op == "rms_norm":
        return (f"func.func @{name}(%x: {t}, %w: {v}, %y: {t}, %rstd: {r}) "
                f"{{\n  rowred.rms_norm epsilon({eps:.9e}) ins(%x : {t}) "
                f"weight(%w : {v}) outs(%y : {t}) rstd(%rstd : {r})\n"
                f"  return\n}}\n")
    if op == "layer_norm":
        return (f"func.func @{name}(%x: {t}, %w: {v}, %b: {v}, %y: {t}, "
                f"%mean: {r}, %rstd: {r}) {{\n  rowred.layer_norm "
                f"epsilon({eps:.9e}) ins(%x : {t}) weight(%w : {v}) "
                f"bias(%b : {v}) outs(%y : {t}) mean(%mean : {r}) "
                f"rstd(%rstd : {r})\n  return\n}}\n")
    if op == "logsumexp":
        return (f"func.func @{name}(%x: {t}, %lse: {r}) {{\n"
                f"  rowred.logsumexp ins(%x : {t}) outs(%lse : {r})\n"
                f"  return\n}}\n")
    if op == "rms_norm_backward":
        # dx, and the weight's gradient (of the weight's dtype), from x, the
        # forward's rstd, the weight and dy.
        return (f"func.func @{name}(%x: {t}, %dy: {t}, %rstd: {r}, %w: {v}, "
                f"%dx: {t}, %dw: {v}) {{\n  rowred.rms_norm_backward "
                f"ins(%x, %dy : {t}, {t}) rstd(%rstd : {r}) weight(%w : {v}) "
                f"outs(%dx : {t}) weight_grad(%dw : {v})\n"
                f"  return\n}}\n")
    if op == "rms_norm_residual_backward":
        # As rms_norm_backward, with the residual stream's own gradient of
        # h added to dx: the gradient of both x and the residual.
        return (f"func.func @{name}(%x: {t}, %dy: {t}, %rstd: {r}, %w: {v}, "
                f"%dh: {t}, %dx: {t}, %dw: {v}) {{\n  rowred.rms_norm_backward "
                f"ins(%x, %dy : {t}, {t}) rstd(%rstd : {r}) weight(%w : {v}) "
                f"grad_residual(%dh : {t}) outs(%dx : {t}) "
                f"weight_grad(%dw : {v})\n  return\n}}\n")
    if op == "layer_norm_backward":
        # dx, and the weight's and the bias's gradients, from x, the
        # forward's mean and rstd, the weight and dy.
        return (f"func.func @{name}(%x: {t}, %dy: {t}, %mean: {r}, "
                f"%rstd: {r}, %w: {v}, %dx: {t}, %dw: {v}, %db: {v}) {{\n"
                f"  rowred.layer_norm_backward ins(%x, %dy : {t}, {t}) "
                f"mean(%mean : {r}) rstd(%rstd : {r}) weight(%w : {v}) "
                f"outs(%dx : {t}) weight_grad(%dw : {v}) bias_grad(%db : {v})"
                f"\n  return\n}}\n")
    if op == "logsumexp_backward":
        # dx = g * exp(x - lse) from the forward's logsumexp and gradient.
        return (f"func.func @{name}(%x: {t}, %lse: {r}, %g: {r}, %dx: {t}) "
                f"{{\n  rowred.logsumexp_backward ins(%x : {t}) "
                f"lse(%lse : {r}) grad(%g : {r}) outs(%dx : {t})\n"
                f"  return\n}}\n")
    if op == "cross_entropy":
        return (f"func.func @{name}(%x: {t}, %l: memref<?xi64>, %loss: {r}, "
                f"%lse: {r}) {{\n"
                f"  rowred.cross_entropy ignore_index({IGNORE_INDEX}) "
                f"ins(%x : {t}) labels(%l : memref<?xi64>) "
                f"outs(%loss : {r}) lse(%lse : {r})\n"
                f"  return\n}}\n")
    if op == "cross_entropy_sum":
        # The loss summed over the rows, and the count of rows kept.
        return (f"func.func @{name}(%x: {t}, %l: memref<?xi64>, "
                f"%sum: memref<f32>, %n: memref<f32>) {{\n"
                f"  rowred.cross_entropy ignore_index({IGNORE_INDEX}) "
                f"ins(%x : {t}) labels(%l : memref<?xi64>) "
                f"outs(%sum : memref<f32>) count(%n : memref<f32>)\n"
                f"  return\n}}\n")
    if op == "cross_entropy_grad":
        # The loss, and the gradient scaled per row over the logits.
        return (f"func.func @{name}(%x: {t}, %l: memref<?xi64>, %g: {r}, "
                f"%loss: {r}) {{\n"
                f"  rowred.cross_entropy ignore_index({IGNORE_INDEX}) "
                f"ins(%x : {t}) labels(%l : memref<?xi64>) "
                f"grad_scale(%g : {r}) outs(%loss : {r}) grad(%x : {t})\n"
                f"  return\n}}\n")
    safe = ""
    if op.endswith("_backward"):
        args, ins = f"%x: {t}, %dy: {t}, %y: {t}", f"%x, %dy : {t}, {t}"
    else:
        args, ins = f"%x: {t}, %y: {t}", f"%x : {t}"
        if op.endswith("_safe"):
            op, safe = op.removesuffix("_safe"), " safe"
    return (f"func.func @{name}({args}) {{\n"
            f"  rowred.{op} dimension(1){safe} ins({ins}) outs(%y : {t})\n"
            f"  return\n}}\n")


class Variant(NamedTuple):
    """A kernel of a pack: its name, op, dtype, row length (0: any),
    epsilon (EPS_OPS) and weight dtype (WEIGHT_OPS beside 16-bit rows;
    None: the rows')."""
    name: str
    op: str
    dtype: str
    cols: int
    eps: Optional[float] = None
    weight_dtype: Optional[str] = None


def _weight_tag(dtype, weight_dtype):
    """A kernel name's mark of a weight of another dtype than the rows'."""
    return f"_w{weight_dtype}" if weight_dtype not in (None, dtype) else ""


def _weights(op, dtype, weight_dtypes):
    """The weight dtypes (WEIGHT_DTYPES) of `op`'s kernels over rows of
    `dtype`, None for the rows' own: one kernel where the op has no weight
    or the rows are f32."""
    if op not in WEIGHT_OPS or dtype == "f32":
        yield None
        return
    for weight in weight_dtypes:
        yield None if weight == "rows" else weight


def _variants(ops, dtypes, cols, eps_values, weight_dtypes=WEIGHT_DTYPES):
    """The Variant of each kernel of a pack."""
    for op in ops:
        for dtype in dtypes:
            for weight in _weights(op, dtype, weight_dtypes):
                for n in cols:
                    if op in EXACT_OPS and n == 0:
                        continue
                    name = (f"{op}_{dtype}{_weight_tag(dtype, weight)}_"
                            f"{'n%d' % n if n else 'any'}")
                    if op not in EPS_OPS:
                        yield Variant(name, op, dtype, n, None, weight)
                        continue
                    for eps in eps_values:
                        yield Variant(f"{name}_eps{_eps_tag(eps)}", op, dtype,
                                      n, eps, weight)


def preset_variants(preset, dtypes, eps_values=DEFAULT_EPS,
                    weight_dtypes=WEIGHT_DTYPES):
    """The variants (_variants) of the PRESETS entry `preset`."""
    if preset not in PRESETS:
        raise PackError(f"unknown preset '{preset}'; expected one of "
                        f"{', '.join(PRESETS)}")
    return [v for ops, cols in PRESETS[preset]
            for v in _variants(ops, dtypes, cols, eps_values, weight_dtypes)]


def build(softmax_opt, out, ops, dtypes, cols, chip="sm_90",
          eps_values=DEFAULT_EPS, variants=None, plan_table=None,
          weight_dtypes=WEIGHT_DTYPES):
    """Compiles a kernel per (op, dtype, N), per eps of `eps_values` for
    EPS_OPS and per weight dtype of `weight_dtypes` (of WEIGHT_DTYPES; all,
    as on the command line, by default) for WEIGHT_OPS over 16-bit rows,
    into `out` and writes its manifest;
    returns the manifest.
    The COMPANION_OPS of `ops` are built with them. EXACT_OPS get
    kernels for the exact lengths of `cols` only (0, any
    length, is skipped for them); ROW_HELD_OPS none for rows too long to
    hold, listed in the manifest's "skipped". `variants` (preset_variants)
    replaces what ops, dtypes, cols and eps_values give. `plan_table`: a
    plan table (JSON) the compiler plans by instead of its own."""
    _chip_number(chip)
    table = ""
    if plan_table is not None:
        if not os.path.isfile(plan_table):
            raise PackError(f"--plan-table '{plan_table}': no such file")
        table = " plan-table=" + _quoted(plan_table, "--plan-table")
    if variants is None:
        ops = list(ops)
        ops += [c for op in ops for c in COMPANION_OPS.get(op, ())
                if c not in ops]
        variants = list(_variants(ops, dtypes, cols, eps_values,
                                  weight_dtypes))
    if not variants:
        raise PackError(
            "nothing to build: no op, dtype or row length given, or only "
            f"the streamed kernel (0) for ops ({', '.join(EXACT_OPS)}) that "
            "have none")
    os.makedirs(out, exist_ok=True)
    entries, skipped = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for name, op, dtype, n, eps, weight in variants:
            src = os.path.join(tmp, name + ".mlir")
            with open(src, "w") as f:
                f.write(_mlir_source(name, op, dtype, eps, weight))
            # The directory quoted, as the pass options take any text
            # between quotes (a space, an '='): nothing of it is an option.
            pipeline = (f"cols={n} chip={chip} output-dir={_quoted(out)}"
                        + table)
            result = subprocess.run(
                [softmax_opt, src, f"--rowred-to-ptx={pipeline}",
                 "-o", os.devnull], capture_output=True, text=True)
            # The planner's refusal of a row no fused block holds.
            if result.returncode != 0 and op in ROW_HELD_OPS and \
                    "op a fused block of" in result.stderr:
                skipped.append(name)
                continue
            if result.returncode != 0:
                raise PackError(f"{name}: softmax-opt failed:\n"
                                f"{result.stderr}")
            metadata = name + "_kernel0.json"
            with open(os.path.join(out, metadata)) as f:
                meta = json.load(f)
            entry = {"op": op, "dtype": dtype, "cols": n,
                     "min_cols": meta.get("min_cols", 1),
                     "max_cols": meta.get("max_cols", 0)}
            entry["fast_min_cols"], entry["fast_max_cols"] = fast_range(
                n, entry["min_cols"], entry["max_cols"],
                meta.get("chunk_elements", 0) > 0)
            entry["metadata"] = metadata
            if eps is not None:
                entry["eps"] = meta["epsilon"]
            if weight not in (None, dtype):
                entry["weight_dtype"] = weight
            entries.append(entry)
    manifest = {"format": FORMAT, "version": VERSION,
                "abi_version": ABI_VERSION, "chip": chip, "kernels": entries}
    if skipped:
        # The kernels of ROW_HELD_OPS left out, by name (readers ignore it).
        manifest["skipped"] = skipped
    with open(os.path.join(out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
    return manifest


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="python3 -m rowred.packs",
        description="Build a pack of rowred kernels.")
    sub = parser.add_subparsers(dest="command", required=True)
    b = sub.add_parser("build", help="compile kernels and a manifest")
    b.add_argument("--softmax-opt", required=True,
                   help="the compiler driver (build/bin/softmax-opt)")
    b.add_argument("--out", required=True, help="the pack directory")
    b.add_argument("--preset", choices=sorted(PRESETS),
                   help="the ops and row lengths of a preset (llm: the "
                   "norms at common hidden sizes, cross-entropy and the "
                   "softmax family at common vocabularies, and 'any'), "
                   "instead of --op and --cols")
    b.add_argument("--op", help="ops, comma-separated (default: all); " +
                   ", ".join(EXACT_OPS) + " only for exact --cols")
    b.add_argument("--dtype", default="f32,f16,bf16")
    b.add_argument("--cols",
                   help="row lengths, comma-separated (default: any); 'any' "
                   "for kernels that take every length: those of lengths "
                   "from 1 to 2^24 that leave no length between more than "
                   "half padded (LADDER), and the streamed kernel where "
                   "the op has one; 'streamed' for that kernel alone")
    b.add_argument("--chip", default="sm_90")
    b.add_argument("--plan-table", metavar="JSON",
                   help="a plan table the compiler plans by instead of its "
                   "own (the format of lib/Conversion/RowRedToGPU/"
                   "PlanTable.json: rows measured on another GPU)")
    b.add_argument("--eps", default=",".join(map(str, DEFAULT_EPS)),
                   help="epsilons of the " + ", ".join(EPS_OPS) +
                   " kernels, comma-separated (a kernel each)")
    b.add_argument("--weight-dtype", default=",".join(WEIGHT_DTYPES),
                   help="dtypes of the norms' weight and bias over f16 and "
                   "bf16 rows, comma-separated (a kernel each): 'rows' "
                   "(the rows' own), 'f32' (mixed precision)")
    args = parser.parse_args(argv)
    if args.preset and (args.op is not None or args.cols is not None):
        parser.error("--preset gives the ops and row lengths: leave out "
                     "--op and --cols")
    # Their defaults, where the preset does not give them.
    args.op = ",".join(OPS) if args.op is None else args.op
    args.cols = "any" if args.cols is None else args.cols
    try:
        dtypes = _parse_list(args.dtype, DTYPES, "dtype")
        eps_values = _parse_eps(args.eps)
        weight_dtypes = _parse_list(args.weight_dtype, WEIGHT_DTYPES,
                                    "weight dtype")
        variants = preset_variants(args.preset, dtypes, eps_values,
                                   weight_dtypes) if args.preset else None
        manifest = build(args.softmax_opt, args.out,
                         _parse_list(args.op, OPS, "op"), dtypes,
                         _parse_cols(args.cols), args.chip, eps_values,
                         variants, args.plan_table, weight_dtypes)
    except (PackError, OSError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    print(f"wrote {len(manifest['kernels'])} kernels and manifest.json to "
          f"{args.out}")
    if manifest.get("skipped"):
        print(f"no kernel for {', '.join(manifest['skipped'])}: rows too "
              "long to hold in one block (or cluster); the package runs "
              "PyTorch's backward, or cross_entropy's per-row kernel, there")
    return 0

