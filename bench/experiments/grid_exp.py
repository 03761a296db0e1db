#!/usr/bin/env python3
"""grid_exp.py ROUNDS DTYPES NS DIR...: bench shapes with N in NS (comma
lists), each DIR's kernel on the persistent grid (p) and one program per row
group (w), next to the same-size copy; checked against float64, timed in
alternating rounds. GB/s per column."""
import os, statistics, sys
import torch
sys.path.insert(0, os.path.join(os.getcwd(), "test", "GPU"))
sys.path.insert(0, os.path.join(os.getcwd(), "bench"))
from rowred_kernel import Kernel  # noqa
import bench  # noqa

rounds = int(sys.argv[1])
dtypes = sys.argv[2].split(",")
ns = {int(n) for n in sys.argv[3].split(",")}
dirs = sys.argv[4:]
DT = {"f32": torch.float32, "bf16": torch.bfloat16}
cols = [f"{os.path.basename(d)}:{g}" for d in dirs for g in "pw"]
print(f"{'shape':20}" + "".join(f"{c:>14}" for c in cols) + f"{'copy':>7}")
for tag in dtypes:
    for M, N in bench.SHAPES:
        if N not in ns:
            continue
        x = torch.randn(M, N, device="cuda", dtype=DT[tag])
        ref = torch.softmax(x.double(), dim=-1)
        runs = {}
        for d in dirs:
            K = Kernel(d, f"softmax_{tag}_auto_n{N}_kernel0.json")
            groups = -(-M // K.rows_per_block)
            # The persistent grid, whatever the metadata asks for.
            persistent = K.cluster * max(1, min(groups, K.resident // K.cluster))
            for g, grid in (("p", persistent), ("w", K.cluster * groups)):
                y = torch.full_like(x, float("nan"))
                K.launch(x.data_ptr(), y.data_ptr(), M, N, N, N, grid=grid)
                torch.cuda.synchronize()
                err = (y.double() - ref).abs().max().item()
                if not err <= (1e-5 if tag == "f32" else 1e-2):
                    print(f"{tag} {M}x{N} {d}:{g}: WRONG {err}")
                    continue
                runs[f"{os.path.basename(d)}:{g}"] = (
                    lambda K=K, grid=grid, y=y: K.launch(
                        x.data_ptr(), y.data_ptr(), M, N, N, N, grid=grid))
        yc = torch.empty_like(x)
        runs["copy"] = lambda: yc.copy_(x)
        samples, _ = bench.time_in_rounds(runs, rounds)
        gb = {k: 2 * M * N * x.element_size() / statistics.median(t) / 1e6
              for k, t in samples.items()}
        print(f"{tag} {M}x{N:<12}" + "".join(f"{gb.get(c, 0):14.0f}" for c in cols)
              + f"{gb['copy']:7.0f}", flush=True)
        del x, ref, yc, runs
        torch.cuda.empty_cache()
