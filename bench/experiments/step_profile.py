#!/usr/bin/env python3
"""What each provider's call puts on the GPU and costs the host: the CUDA
kernels (and memsets) of one training step (train.make_step) or of one
decode-size forward, with each kernel's device time from the profiler, and
the host's wall time per call with nothing else in the loop; with
--host-events, the host's events of the most self time under the profiler
(aten ops, autograd nodes, CUDA runtime and driver calls).

For a step or call that bench/train.py or bench/decode.py finds slower
than a peer, this tells whether the difference is the kernels themselves
(their device time), more of them (an extra cast, copy or fill), or the
host (time per call well above the kernels' sum).

usage: step_profile.py PACK_DIR [--mode train|decode] [--ops rms_norm,...]
                       [--shapes MxN,...] [--dtypes f32,bf16] [--calls C]
                       [--host-events K]
"""
import argparse
import collections
import os
import sys

import torch
from torch.profiler import ProfilerActivity, profile

_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(_HERE, ".."))
import decode  # noqa: E402
from host_overhead import per_call_us  # noqa: E402
import train  # noqa: E402


def calls(mode, op, m, n, dtype):
    """provider -> a callable running one step (train) or one forward
    (decode)."""
    if mode == "train":
        leaves, extra, dy = train.inputs(op, m, n, dtype)
        return train.make_steps(op, train.forwards(op), leaves, extra,
                                dy)
    fns, _ = decode.providers(op)
    args = decode.arguments(op, m, n, dtype)
    return {k: (lambda fn=fn: fn(*args)) for k, fn in fns.items()}


def profiled(fn, reps):
    """([(kernel name, launches per call, device us per call)],
    [(host event name, calls per call, self us per call)]) of `fn`."""
    with profile(activities=[ProfilerActivity.CPU,
                             ProfilerActivity.CUDA]) as prof:
        for _ in range(reps):
            fn()
        torch.cuda.synchronize()
    device = collections.defaultdict(lambda: [0, 0.0])
    host = collections.defaultdict(lambda: [0, 0.0])
    for e in prof.events():
        if e.device_type == torch.autograd.DeviceType.CUDA:
            device[e.name][0] += 1
            device[e.name][1] += e.device_time
        else:
            host[e.name][0] += 1
            host[e.name][1] += e.self_cpu_time_total

    def per_call(totals):
        return [(name, c / reps, us / reps)
                for name, (c, us) in sorted(totals.items(),
                                            key=lambda kv: -kv[1][1])]
    return per_call(device), per_call(host)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("pack")
    p.add_argument("--mode", choices=("train", "decode"), default="train")
    p.add_argument("--ops", default="softmax,log_softmax,rms_norm")
    p.add_argument("--shapes", default="4096x4096")
    p.add_argument("--dtypes", default="f32,bf16")
    p.add_argument("--calls", type=int, default=200)
    p.add_argument("--host-events", type=int, default=0,
                   help="also print this many host events of the most "
                   "self time per call (under the profiler)")
    args = p.parse_args()
    train.start_package_run(args.pack, 1)
    for op in args.ops.split(","):
        for shape in args.shapes.split(","):
            m, n = (int(v) for v in shape.split("x"))
            for dname in args.dtypes.split(","):
                print(f"== {args.mode} {op} {dname} {m}x{n}")
                for k, fn in calls(args.mode, op, m, n,
                                   train.DTYPES[dname]).items():
                    for _ in range(3):
                        fn()
                    ks, hs = profiled(fn, 20)
                    gpu = sum(us for _, _, us in ks)
                    host = per_call_us(fn, args.calls)
                    print(f"  {k:15s} host {host:8.1f} us per call; kernels "
                          f"{sum(c for _, c, _ in ks):.0f}"
                          f", device {gpu:7.1f} us")
                    for name, c, us in ks:
                        print(f"      {c:4.1f} x {us:7.2f} us  {name[:90]}")
                    for name, c, us in hs[:args.host_events]:
                        print(f"      host {c:4.1f} x {us:7.2f} us self  "
                              f"{name[:80]}")


if __name__ == "__main__":
    main()
