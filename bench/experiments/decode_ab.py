#!/usr/bin/env python3
"""Decode-size A/B: the kernels of several plans (DIR/<variant>/, from
gen_plan_variants.py decode or vocab, or packs of rowred.packs build
from two compilers: every <op>_<dtype>_n<N>[_eps1p000em05] kernel of
DIR/auto, rms_norm (eps 1e-5), its residual form (rms_norm_residual),
layer_norm (eps 1e-5), softmax, log_softmax, logsumexp or cross_entropy,
f32, f16 or bf16) at 1, 4, 16 and 64 rows (--rows), beside torch's op,
Liger-Kernel's (where importable; the norms and softmax) and a copy of
the tensor. Each call is timed alone between CUDA events after an L2
flush (a 256 MiB memset, which also gives the host time to queue the
call); variants take turns in 5 rounds of 15 calls; the median of the
rounds' medians. Every output is checked against float64 first (relative
L2 printed as maxerr). Each variant times the kernel the package
launches at these rows: of a shape's kernels (<name>.json and the
few-rows <name>_rows<K>.json, max_rows = K), the one of the fewest
max_rows that admits them. A plan request states the one kernel it asks
for (rowred-plan plans the few-rows kernels beside auto's plans only): a
variant that times its many-row kernel where auto has a few-rows one is
labelled with a "*"; to compare a field at decode sizes, request the
few-rows plan's fields with it.

Caveat: a provider whose host path takes longer than the flush (Liger's
Python launch, 20-100 us on the H200 machine) is timed with the GPU idle
waiting for it: its times here are the host's, not its kernel's. Compare
the variants with each other and with torch's op; time Liger by CUDA graph
replay.

usage: decode_ab.py DIR [--rows 1,4,16,64] [--match RE]
  (--match: only the kernels whose <op>_<dtype>_n<N> name matches RE)
"""
import argparse
import json
import math
import os
import re
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "python"))
from rowred import _runtime, ops  # noqa: E402

from flushed import flushed_medians  # noqa: E402


OPS = ("rms_norm", "rms_norm_residual", "layer_norm", "softmax",
       "log_softmax", "logsumexp", "cross_entropy")


def reference_and_peers(op, args, n, liger):
    """(float64 reference of the first result, {peer: call}) of `op` on
    `args` (x, then the weight and bias of the norms or the labels)."""
    x = args[0]
    d = [a.double() if a.is_floating_point() else a for a in args]
    if op == "rms_norm_residual":
        r, w = args[1:]
        ref = F.rms_norm(d[0] + d[1], (n,), d[2], 1e-5)
        peer = {"torch": lambda: F.rms_norm(x + r, (n,), w, 1e-5)}
    elif op == "rms_norm":
        w = args[1]
        ref = F.rms_norm(d[0], (n,), d[1], 1e-5)
        peer = {"torch": lambda: F.rms_norm(x, (n,), w, 1e-5)}
        if liger:
            peer["liger"] = lambda: liger["rms_norm"].apply(
                x, w, 1e-5, 0.0, "llama", False)
    elif op == "layer_norm":
        w, b = args[1:]
        ref = F.layer_norm(d[0], (n,), d[1], d[2], 1e-5)
        peer = {"torch": lambda: F.layer_norm(x, (n,), w, b, 1e-5)}
        if liger:
            peer["liger"] = lambda: liger["layer_norm"].apply(x, w, b, 1e-5)
    elif op == "logsumexp":
        ref = torch.logsumexp(d[0], -1)
        peer = {"torch": lambda: torch.logsumexp(x, -1)}
    elif op == "cross_entropy":
        labels = args[1]
        ref = F.cross_entropy(d[0], labels, reduction="none")
        peer = {"torch": lambda: F.cross_entropy(x, labels,
                                                 reduction="none")}
    elif op == "log_softmax":
        ref = torch.log_softmax(d[0], -1)
        peer = {"torch": lambda: torch.log_softmax(x, -1)}
    else:
        ref = torch.softmax(d[0], -1)
        peer = {"torch": lambda: torch.softmax(x, -1)}
        if liger:
            peer["liger"] = lambda: liger["softmax"].apply(x)
    return ref, peer


def arguments(op, m, n, dt):
    x = torch.randn(m, n, device="cuda", dtype=dt) * 2 + 0.5
    if op == "cross_entropy":
        return [x, torch.randint(0, n, (m,), device="cuda")]
    if op in ("logsumexp", "softmax", "log_softmax"):
        return [x]
    w = torch.rand(n, device="cuda", dtype=dt) + 0.5
    if op == "rms_norm_residual":
        return [x, torch.randn(m, n, device="cuda", dtype=dt), w]
    return [x, w] + ([torch.randn(n, device="cuda", dtype=dt)]
                     if op == "layer_norm" else [])


def launcher(kernel, args, m, n):
    """A call of `kernel` on args (x, then the residual form's r, then
    per-column operands or labels, in the kernel's order) into fresh
    outputs; returns (call, the first result: the rows written, else the
    first per-row result)."""
    x = args[0]
    inputs = [a for a in args if a.shape == x.shape]
    rest = [a for a in args if a.shape != x.shape]
    # A row stride for each input and output of rows.
    strides = [n] * len(inputs)
    rows, per_row, operands = [], [], []
    for _, role, _ in kernel.operands:
        if role == "input":
            operands.append(inputs.pop(0))
        elif role == "output":
            rows.append(torch.empty_like(x))
            operands.append(rows[-1])
        elif role == "row_output":
            per_row.append(torch.empty(m, device="cuda"))
            operands.append(per_row[-1])
        else:
            operands.append(rest.pop(0))
    ptrs = [t.data_ptr() for t in operands]
    strides += [n] * len(rows)

    def go():
        ops._launch_operands(kernel, 0, ptrs, strides, m, n)
    return go, (rows + per_row)[0]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dir")
    parser.add_argument("--rows", default="1,4,16,64")
    parser.add_argument("--match", help="only the shapes whose kernel name "
                        "(<op>_<dtype>_n<N>) matches this regular expression")
    args = parser.parse_args()
    root = args.dir
    variants = sorted(os.listdir(root), key=lambda v: (v != "auto", v))
    try:
        from liger_kernel.ops.layer_norm import LigerLayerNormFunction
        from liger_kernel.ops.rms_norm import LigerRMSNormFunction
        from liger_kernel.ops.softmax import LigerSoftmaxFunction
        liger = {"rms_norm": LigerRMSNormFunction,
                 "layer_norm": LigerLayerNormFunction,
                 "softmax": LigerSoftmaxFunction}
    except ImportError as e:
        print("liger not importable:", e)
        liger = None
    flush = torch.empty(256 * 2**20, dtype=torch.int8, device="cuda")
    dtypes = {"f32": torch.float32, "f16": torch.float16,
              "bf16": torch.bfloat16}
    shapes = sorted(
        (m["op"], m["dtype"], int(m["n"]), m["eps"] or "") for m in (
            re.match(r"(?P<op>[a-z_]+)_(?P<dtype>f32|f16|bf16)_n(?P<n>\d+)"
                     r"(?P<eps>_eps1p000em05)?_kernel0\.json$", f)
            for f in os.listdir(os.path.join(root, "auto")))
        if m and m["op"] in OPS and (
            not args.match or re.search(
                args.match, f"{m['op']}_{m['dtype']}_n{m['n']}")))

    torch.set_grad_enabled(False)
    for op, dname, n, eps in shapes:
        stem = f"{op}_{dname}_n{n}{eps}_kernel0"
        # Each variant's kernels of this shape: the main one and the
        # few-rows ones (<stem>_rows<K>.json, max_rows = K) rowred-plan
        # adds to auto's plans.
        kernels = {}
        for v in variants:
            found = []
            for f in sorted(os.listdir(f"{root}/{v}")):
                if re.fullmatch(re.escape(stem) + r"(_rows\d+)?\.json", f):
                    path = f"{root}/{v}/{f}"
                    with open(path) as meta:
                        rows = json.load(meta).get("max_rows") or math.inf
                    found.append((rows, _runtime.Kernel(path, 0)))
            if found:
                kernels[v] = sorted(found, key=lambda e: e[0])
        for m in map(int, args.rows.split(",")):
            # What the runtime launches at m rows: the kernel of the fewest
            # max_rows that admits them. A variant's plan request states its
            # one kernel (rowred-plan plans the few-rows kernels beside
            # auto's plans only): where auto takes a few-rows kernel and
            # the variant has none, its label gets a "*".
            ks = {}
            auto_few = kernels["auto"][0][0] < math.inf and \
                kernels["auto"][0][0] >= m
            for v, found in kernels.items():
                rows, k = next(e for e in found if e[0] >= m)
                ks[v + ("*" if auto_few and rows == math.inf else "")] = k
            operands = arguments(op, m, n, dtypes[dname])
            ref, peer = reference_and_peers(op, operands, n, liger)
            fns, errs = {}, {}
            for v, k in ks.items():
                fns[v], out = launcher(k, operands, m, n)
                fns[v]()
                torch.cuda.synchronize()
                errs[v] = float((out.double() - ref).norm() / ref.norm())
            y2 = torch.empty_like(operands[0])
            fns.update(peer)
            fns["copy"] = lambda: y2.copy_(operands[0])
            for name, f in list(peer.items()):
                try:
                    errs[name] = float((f().double() - ref).norm()
                                       / ref.norm())
                except RuntimeError:  # Liger's softmax refuses long rows.
                    del peer[name], fns[name]
            t = flushed_medians(fns, flush, reps=15)
            best = min(ks, key=lambda v: t[v])
            best_peer = min(peer, key=lambda k: t[k])
            print(f"{op:13s} {dname:4s} {m:>2d}x{n:<6d} " +
                  " ".join(f"{v}:{t[v]:5.1f}" for v in ks) + " | " +
                  " ".join(f"{k}:{t[k]:5.1f}" for k in list(peer) + ["copy"])
                  + f" | auto/best-peer {t[best_peer] / t['auto']:.2f}"
                  f" best={best} {t[best_peer] / t[best]:.2f}"
                  f" maxerr {max(errs.values()):.1e}", flush=True)


if __name__ == "__main__":
    main()
