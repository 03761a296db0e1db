#!/usr/bin/env python3
"""split_grid_exp.py ROUNDS BENCH_DIR TICKET_DIR DIR...: f32 1024 x 1048576,
row-split kernels of each DIR launched with one split group per row (grid
rows x S, plain launch, blockIdx order), against the bench kernel and the
prototype f-t256-e32-s32-bulk of ticket.cu (TICKET_DIR from
`ROUND=6 ticket_build.sh TICKET_DIR`). Each DIR holds the kernel
softmax_f32_auto_n1048576_kernel0 generated with `row-split=S` (section 2
of the nineteenth A/B file names the options)."""
import os, sys
import cupy as cp
import numpy as np
import torch
sys.path.insert(0, os.path.join(os.getcwd(), "test", "GPU"))
sys.path.insert(0, os.path.join(os.getcwd(), "bench"))
from rowred_kernel import Kernel  # noqa
import bench  # noqa
rounds, bench_dir, ticket_dir = int(sys.argv[1]), sys.argv[2], sys.argv[3]
M, N = 1024, 1048576
meta = "softmax_f32_auto_n1048576_kernel0.json"
x = torch.randn(M, N, device="cuda") * 3
ref = torch.softmax(x.double(), dim=-1)
runs = {}
def check(name, run, y):
    run(); torch.cuda.synchronize()
    err = (y.double() - ref).abs().max().item()
    print(f"{name}: max err {err:.2e} {'ok' if err < 1e-5 else 'WRONG'}", flush=True)
    if err < 1e-5:
        runs[name] = run
K0 = Kernel(bench_dir, meta); y0 = torch.empty_like(x)
check("bench", lambda: K0.launch(x.data_ptr(), y0.data_ptr(), M, N, N, N), y0)
for d in sys.argv[4:]:
    K = Kernel(d, meta)
    S = K.meta["row_split"]
    ws = cp.zeros(M * K.meta["workspace_bytes_per_group"], cp.uint8)
    y = torch.empty_like(x)
    args = (np.uint64(x.data_ptr()), np.uint64(y.data_ptr()), np.int64(M),
            np.int64(N), np.int64(N), np.int64(N), np.uint64(ws.data.ptr))
    def run(K=K, S=S, args=args, keep=(ws, y)):
        K.function((M * S,), (K.threads,), args, shared_mem=K.dynamic_shared)
    print(d, "regs", K.function.num_regs, "blocks/SM", K.per_sm, "S", S)
    check(os.path.basename(d), run, y)
f = cp.RawModule(path=os.path.join(ticket_dir, "f-t256-e32-s32-bulk.ptx")).get_function("ticket_softmax")
wt = cp.zeros(32 + M * (32 + 128), cp.uint32); yt = torch.empty_like(x)
argt = (np.uint64(x.data_ptr()), np.uint64(yt.data_ptr()), np.int64(M), np.int64(N), np.uint64(wt.data.ptr))
f.max_dynamic_shared_size_bytes = 32768
check("proto-e32-s32-bulk", lambda: f((M * 64,), (256,), argt, shared_mem=32768), yt)
yc = torch.empty_like(x)
runs["torch copy"] = lambda: yc.copy_(x)
samples, errors = bench.time_in_rounds(runs, rounds)
bench.print_rounds(samples, 2 * M * N * 4, 24)
