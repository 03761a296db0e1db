#!/usr/bin/env python3
"""ticket_exp.py ROUNDS PTX_DIR BENCH_DIR [M:N ...]: the prototypes of
ticket.cu (PTX_DIR/variants.json, written by ticket_build.sh) on f32 and bf16
rows (default 1024 x 1048576), each checked against float64 (copies: y == x)
and timed in alternating rounds with the bench kernel of the same shape
(BENCH_DIR) and torch's same-size copy. Ratios to the bench kernel."""
import json, os, sys
import cupy as cp
import numpy as np
import torch
sys.path.insert(0, os.path.join(os.getcwd(), "test", "GPU"))
sys.path.insert(0, os.path.join(os.getcwd(), "bench"))
from rowred_kernel import Kernel  # noqa
import bench  # noqa

rounds, ptx_dir, bench_dir = int(sys.argv[1]), sys.argv[2], sys.argv[3]
shapes = [tuple(map(int, a.split(":"))) for a in sys.argv[4:]] or [(1024, 1048576)]
variants = json.load(open(os.path.join(ptx_dir, "variants.json")))
sms = cp.cuda.Device().attributes["MultiProcessorCount"]
for M, N in shapes:
    for dt, tdt in (("f32", torch.float32), ("bf16", torch.bfloat16)):
        x = torch.randn(M, N, device="cuda", dtype=tdt) * 3
        ref = torch.softmax(x.double(), dim=-1)
        size = x.element_size()
        runs = {}
        meta = f"softmax_{dt}_auto_n{N}_kernel0.json"
        if os.path.exists(os.path.join(bench_dir, meta)):
            K0 = Kernel(bench_dir, meta)
            y0 = torch.empty_like(x)
            runs["bench"] = lambda K0=K0, y0=y0: K0.launch(
                x.data_ptr(), y0.data_ptr(), M, N, N, N)
        for v in variants:
            if v["dtype"] != dt:
                continue
            chunk = v["threads"] * (v["ept"] + v.get("sept", 0))
            shared = v["threads"] * v.get("sept", 0) * x.element_size()
            if N % chunk:
                continue
            K = N // chunk
            f = cp.RawModule(path=os.path.join(ptx_dir, v["name"] + ".ptx")
                             ).get_function("ticket_softmax")
            if shared:
                f.max_dynamic_shared_size_bytes = shared
            per_sm = cp.cuda.driver.occupancyMaxActiveBlocksPerMultiprocessor(
                f.kernel.ptr, v["threads"], shared)
            if K > per_sm * sms:
                print(f"{v['name']}: {K} chunks per row > {per_sm * sms}"
                      " resident blocks, skipped")
                continue
            ws = cp.zeros(32 + M * (32 + 2 * K), cp.uint32)
            y = torch.full_like(x, float("nan"))
            args = (np.uint64(x.data_ptr()), np.uint64(y.data_ptr()),
                    np.int64(M), np.int64(N), np.uint64(ws.data.ptr))
            def run(f=f, K=K, v=v, args=args, shared=shared, keep=(ws, y)):
                f((M * K,), (v["threads"],), args, shared_mem=shared)
            run()
            torch.cuda.synchronize()
            if v["copy"]:
                err = 0.0 if torch.equal(x, y) else float("inf")
            else:
                err = (y.double() - ref).abs().max().item()
            # The ticket and the rows' counters (not the pairs) must be zero.
            counters = ws[32:].reshape(M, 32 + 2 * K)[:, 0]
            left = int(cp.count_nonzero(counters)) + int(ws[0] != 0)
            ok = err <= 1e-2 and left == 0
            print(f"{dt} {M}x{N} {v['name']}: {K} chunks/row, {per_sm}"
                  f" blocks/SM, regs {f.num_regs}, max err {err:.2e},"
                  f" counters left {left} {'ok' if ok else 'WRONG'}",
                  flush=True)
            if ok:
                runs[v["name"]] = run
        yc = torch.empty_like(x)
        runs["torch copy"] = lambda yc=yc, x=x: yc.copy_(x)
        samples, errors = bench.time_in_rounds(runs, rounds)
        if errors:
            print("errors", errors)
        bench.print_rounds(samples, 2 * M * N * size, 24, f"{dt} {M}x{N} ")
        del x, ref
        torch.cuda.empty_cache()
