#!/usr/bin/env python3
"""ring_exp.py ROUNDS DIR...: bf16 1024 x 1048576, each directory's kernel
(rowred ABI) checked (softmax against float64; copy-* dirs: y == x) and timed
in alternating rounds with torch's same-size copy. Ratios to the first dir."""
import os, sys
import torch
sys.path.insert(0, os.path.join(os.getcwd(), "test", "GPU"))
sys.path.insert(0, os.path.join(os.getcwd(), "bench"))
from rowred_kernel import Kernel  # noqa
import bench  # noqa

rounds = int(sys.argv[1])
M, N = 1024, 1048576
x = torch.randn(M, N, device="cuda", dtype=torch.bfloat16)
ref = torch.softmax(x.double(), dim=-1)
runs = {}
for d in sys.argv[2:]:
    try:
        K = Kernel(d, "softmax_bf16_auto_n1048576_kernel0.json")
    except Exception as e:
        print(f"{d}: load failed {e}")
        continue
    y = torch.full_like(x, float("nan"))
    K.launch(x.data_ptr(), y.data_ptr(), M, N, N, N)
    torch.cuda.synchronize()
    copy = os.path.basename(d.rstrip("/")).startswith("copy")
    err = (y.double() - (x.double() if copy else ref)).abs().max().item()
    ok = err <= (0 if copy else 1e-2)
    print(f"{d}: grid {K.grid(M, cols=N)} threads {K.threads} max err {err:.2e}"
          f" {'ok' if ok else 'WRONG'}", flush=True)
    if ok:
        def run(K=K, y=y):
            K.launch(x.data_ptr(), y.data_ptr(), M, N, N, N)
        runs[d] = run
yc = torch.empty_like(x)
runs["torch copy"] = lambda: yc.copy_(x)
samples, errors = bench.time_in_rounds(runs, rounds)
print("errors", errors)
bench.print_rounds(samples, 2 * M * N * 2, 28)
