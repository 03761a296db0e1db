#!/usr/bin/env python3
"""grid_exp.py DIR ROUNDS [DTYPES]: the bench kernels of DIR on the ABI's
persistent grid (occupancy) against one program per row group (every row its
own block or cluster, the scheduler's waves), next to the same-size copy.
Checked against float64 first, timed in alternating rounds."""
import os, statistics, sys
import torch
sys.path.insert(0, os.path.join(os.getcwd(), "test", "GPU"))
sys.path.insert(0, os.path.join(os.getcwd(), "bench"))
from rowred_kernel import Kernel  # noqa
import bench  # noqa

d, rounds = sys.argv[1], int(sys.argv[2])
dtypes = sys.argv[3].split(",") if len(sys.argv) > 3 else ["f32", "bf16"]
DT = {"f32": torch.float32, "bf16": torch.bfloat16}
print(f"{'shape':22} {'persist':>8} {'waves':>8} {'w/p':>6} {'copy':>6}  grids")
for tag in dtypes:
    for M, N in bench.SHAPES:
        K = Kernel(d, f"softmax_{tag}_auto_n{N}_kernel0.json")
        x = torch.randn(M, N, device="cuda", dtype=DT[tag])
        ref = torch.softmax(x.double(), dim=-1)
        groups = -(-M // K.rows_per_block)
        grids = {"persist": K.grid(M), "waves": K.cluster * groups}
        runs = {}
        for name, g in grids.items():
            y = torch.full_like(x, float("nan"))
            K.launch(x.data_ptr(), y.data_ptr(), M, N, N, N, grid=g)
            torch.cuda.synchronize()
            err = (y.double() - ref).abs().max().item()
            if not err <= (1e-5 if tag == "f32" else 1e-2):
                print(f"{tag} {M}x{N} {name}: WRONG {err}")
                continue
            runs[name] = (lambda g=g, y=y: K.launch(
                x.data_ptr(), y.data_ptr(), M, N, N, N, grid=g))
        yc = torch.empty_like(x)
        runs["copy"] = lambda: yc.copy_(x)
        samples, _ = bench.time_in_rounds(runs, rounds)
        gb = {k: 2 * M * N * x.element_size() / statistics.median(t) / 1e6
              for k, t in samples.items()}
        p, w = gb.get("persist", 0), gb.get("waves", 0)
        print(f"{tag} {M}x{N:<14} {p:8.0f} {w:8.0f} {w / p if p else 0:6.3f}"
              f" {gb['copy']:6.0f}  {grids['persist']} / {grids['waves']}",
              flush=True)
        del x, ref, yc, runs
        torch.cuda.empty_cache()
