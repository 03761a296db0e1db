"""Times each call alone between CUDA events after an L2 flush, for the
plan A/B scripts (decode_ab.py, backward_ab.py)."""
import statistics

import torch


def flushed_medians(fns, flush, rounds=5, reps=10):
    """{name: us} for each callable of `fns`: `reps` calls each after
    zeroing `flush` (a buffer larger than L2, whose memset also gives the
    host time to queue the call), the callables taking turns in `rounds`
    rounds; the median of the rounds' medians."""
    times = {k: [] for k in fns}
    for _ in range(rounds):
        for name, fn in fns.items():
            samples = []
            for _ in range(reps):
                flush.zero_()
                start = torch.cuda.Event(enable_timing=True)
                end = torch.cuda.Event(enable_timing=True)
                start.record()
                fn()
                end.record()
                end.synchronize()
                samples.append(start.elapsed_time(end) * 1e3)
            times[name].append(statistics.median(samples))
    return {k: statistics.median(v) for k, v in times.items()}
