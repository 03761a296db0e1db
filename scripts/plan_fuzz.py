#!/usr/bin/env python3
"""Compiles random plan requests and assembles what the compiler accepts.

Each trial is one op of the family over dynamic memrefs of one element type
(scripts/gen_kernels.py writes the function), a random #rowred.plan_request
(any subset of its fields, values drawn around the legal ones and beyond),
a random row length and chip, compiled with softmax-opt's rowred-to-ptx
pipeline. A trial ends in one of:

  refused    softmax-opt exits 1 with an `error:` diagnostic (a plan it
             cannot build is refused: that is correct behaviour);
  accepted   exit 0, and ptxas assembles every kernel for the chip;
  spilled    accepted, ptxas assembles it but reports spills: the
             pipeline's rowred-fit-registers, with the same ptxas, changes
             or refuses a plan that spills, so this is a failure too;
  FAILED     anything else: a crash, an LLVM fatal error, a sanitizer's
             report (with a sanitized softmax-opt), an exit without a
             diagnostic, or PTX that ptxas rejects.

Without ptxas (no CUDA toolkit), accepted PTX is not assembled.

FAILED and spilled trials are kept in OUTPUT_DIR (the .mlir and the command)
for a regression test. The run exits 1 if a trial FAILED or spilled.

usage: plan_fuzz.py SOFTMAX_OPT OUTPUT_DIR [--trials N | --seconds S]
                    [--seed N] [--ptxas PATH]
"""
import argparse
import os
import random
import re
import shlex
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gen_kernels import mlir_source  # noqa: E402

OPS = ["softmax", "log_softmax", "softmax_safe", "log_softmax_safe",
       "softmax_backward", "log_softmax_backward", "rms_norm",
       "rms_norm_stats", "rms_norm_residual", "layer_norm",
       "layer_norm_stats", "logsumexp", "cross_entropy",
       "cross_entropy_smoothed", "cross_entropy_grad",
       # Sums down the columns, and a 2-D input only the map reads.
       "rms_norm_backward", "rms_norm_residual_backward",
       "layer_norm_backward", "logsumexp_backward"]
DTYPES = ["f32", "f16", "bf16"]
CHIPS = ["sm_80", "sm_89", "sm_90", "sm_100", "sm_120"]
STRATEGIES = ["fused", "cluster", "online", "chunks", "auto"]
# The ops that online and chunks kernels take (a max, then a sum of exps).
EXP_OPS = ["softmax", "log_softmax", "softmax_safe", "log_softmax_safe",
           "logsumexp", "cross_entropy", "cross_entropy_smoothed",
           "cross_entropy_grad"]


def power_or_near(rng, low, high):
    """Mostly powers of two in [2^low, 2^high], sometimes 3 * 2^k or an odd
    neighbour, sometimes out of range."""
    k = rng.randint(low, high)
    value = 1 << k
    roll = rng.random()
    if roll < 0.15:
        value = 3 << max(k - 2, 0)
    elif roll < 0.25:
        value += rng.choice([-1, 1])
    elif roll < 0.28:
        value = rng.choice([0, -1, 1 << 31, (1 << 40) + 1])
    return value


def random_fields(rng):
    """A random subset of the plan request's fields."""
    draws = {
        "block": lambda: power_or_near(rng, 5, 21),
        "warps": lambda: rng.choice([1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 33,
                                     0, 64]),
        "rows_per_block": lambda: power_or_near(rng, 0, 6),
        "cluster": lambda: rng.choice([1, 2, 3, 4, 8, 16, 32, 0]),
        "vector": lambda: rng.choice([1, 2, 4, 8, 16, 3, 0]),
        "reverse_second_pass": lambda: rng.choice(["true", "false"]),
        "fast_exp": lambda: rng.choice(["true", "false"]),
        "reread": lambda: rng.choice(["true", "false"]),
        "prefetch": lambda: rng.choice(["none", "stage", "registers"]),
        "pair_reduce": lambda: rng.choice(["true", "false"]),
        "kept_elements": lambda: rng.choice(
            [0, power_or_near(rng, 9, 17)]),
        "keep_ahead": lambda: rng.choice(["none", "tiles", "bulk"]),
        "cache_hints": lambda: rng.choice(["true", "false"]),
        "grid": lambda: rng.choice(["persistent", "rows"]),
        "chunk_stage": lambda: rng.choice([0, power_or_near(rng, 9, 16)]),
        "hoist_map_loads": lambda: rng.choice(["true", "false"]),
        "sums_in_registers": lambda: rng.choice(["true", "false"]),
    }
    names = sorted(draws)
    chosen = rng.sample(names, rng.choice([0, 1, 1, 2, 2, 3, 4, 6]))
    return [(name, draws[name]()) for name in sorted(chosen)]


def random_cols(rng):
    roll = rng.random()
    if roll < 0.1:
        return 0
    if roll < 0.6:
        return power_or_near(rng, 5, 21)
    return rng.choice([781, 1000, 5000, 32001, 50257, 100277, 1048573,
                       rng.randint(1, 1 << 21)])


def run_trial(args, rng, workdir, index):
    """Compiles and assembles one random trial; returns (outcome, detail,
    source, command)."""
    strategy, chip = rng.choice(STRATEGIES), rng.choice(CHIPS)
    # Mostly ops the strategy takes, so that most trials reach ptxas.
    ops = EXP_OPS if strategy in ("online", "chunks") and \
        rng.random() < 0.9 else OPS
    op, dtype = rng.choice(ops), rng.choice(DTYPES)
    fields, cols = random_fields(rng), random_cols(rng)
    source = mlir_source("k", op, dtype, fields)
    out = os.path.join(workdir, f"t{index}")
    src = os.path.join(workdir, f"t{index}.mlir")
    with open(src, "w") as f:
        f.write(source)
    pipeline = (f"strategy={strategy} chip={chip} cols={cols} "
                f"output-dir={out} ptxas={args.ptxas or 'none'}")
    cmd = [args.softmax_opt, src, f"--rowred-to-ptx={pipeline}", "-o",
           os.devnull]
    result = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    internal = re.search(r"LLVM ERROR|Sanitizer|runtime error: ",
                         result.stderr)
    if result.returncode == 1 and re.search(r"error: ", result.stderr) and \
            not internal:
        return "refused", "", source, cmd
    if result.returncode != 0 or internal:
        return "FAILED", (f"softmax-opt exit {result.returncode}:\n"
                          + result.stderr[-2000:]), source, cmd
    spills = []
    if not args.ptxas:
        return "accepted", "", source, cmd
    for name in sorted(os.listdir(out)):
        if not name.endswith(".ptx"):
            continue
        asm = subprocess.run([args.ptxas, f"-arch={chip}", "-v",
                              os.path.join(out, name), "-o", os.devnull],
                             capture_output=True, text=True, timeout=300)
        if asm.returncode != 0:
            return "FAILED", f"ptxas rejects {name}:\n{asm.stderr[-2000:]}", \
                source, cmd
        spills += re.findall(r"[1-9][0-9]* bytes spill stores", asm.stderr)
    if spills:
        return "spilled", ", ".join(spills), source, cmd
    return "accepted", "", source, cmd


def keep(output_dir, outcome, index, source, cmd, detail):
    path = os.path.join(output_dir, f"{outcome.lower()}-{index}")
    with open(path + ".mlir", "w") as f:
        f.write(source)
    with open(path + ".txt", "w") as f:
        f.write(shlex.join(cmd) + "\n" + detail + "\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("softmax_opt")
    parser.add_argument("output_dir")
    parser.add_argument("--trials", type=int, default=0)
    parser.add_argument("--seconds", type=float, default=0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--ptxas", default=os.path.join(
        os.environ.get("CUDA_PATH", "/usr/local/cuda"), "bin", "ptxas"))
    args = parser.parse_args()
    if not args.trials and not args.seconds:
        args.trials = 100
    if not os.access(args.ptxas, os.X_OK):
        print(f"plan_fuzz: no ptxas at {args.ptxas}: accepted PTX is not "
              "assembled")
        args.ptxas = None
    rng = random.Random(args.seed)
    os.makedirs(args.output_dir, exist_ok=True)
    counts = {"refused": 0, "accepted": 0, "spilled": 0, "FAILED": 0}
    start = time.monotonic()
    index = 0
    with tempfile.TemporaryDirectory() as workdir:
        while (args.trials and index < args.trials) or \
                (args.seconds and time.monotonic() - start < args.seconds):
            outcome, detail, source, cmd = run_trial(args, rng, workdir,
                                                     index)
            counts[outcome] += 1
            if outcome in ("FAILED", "spilled"):
                keep(args.output_dir, outcome, index, source, cmd, detail)
                print(f"trial {index}: {outcome}: {detail.splitlines()[0]}",
                      flush=True)
            index += 1
    print(f"{index} trials (seed {args.seed}, "
          f"{time.monotonic() - start:.0f} s): "
          + ", ".join(f"{n} {k}" for k, n in counts.items()))
    return 1 if counts["FAILED"] or counts["spilled"] else 0


if __name__ == "__main__":
    sys.exit(main())
