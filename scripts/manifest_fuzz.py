#!/usr/bin/env python3
"""Fuzzes the pack manifest reader (rowred.packs.Pack): for SECONDS, writes
manifests mutated from a valid one (fields dropped, replaced by values of
other kinds, huge or odd numbers, paths out of the pack, links) and reads
each. The reader must accept it or raise PackError, never another
exception; what it accepts must answer a lookup. A failing manifest is
kept in OUT_DIR.

usage: manifest_fuzz.py OUT_DIR [--seconds S] [--seed N]
"""
import argparse
import copy
import json
import math
import os
import random
import shutil
import sys
import tempfile
import time
import traceback

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "python"))
from rowred import packs  # noqa: E402

ODD = [None, True, False, 0, -1, 1.5, 2 ** 31, 2 ** 63, -2 ** 70, math.inf,
       -math.inf, math.nan, "", ".", "..", "/", "/etc/passwd", "../x.json",
       "link.json", "k.json", "x" * 5000, "sm_" + "9" * 5000, "sm_90",
       "sm_90a", "gfx90a", [], {}, [1], {"a": 1}, "rms_norm", "softmax",
       "bf16", 1e-5, "\u00e9", "a\x00b"]


def valid():
    return {"format": "rowred-pack", "version": packs.VERSION,
            "abi_version": packs.ABI_VERSION, "chip": "sm_90",
            "kernels": [{"op": "softmax", "dtype": "f32", "cols": 1024,
                         "min_cols": 1, "max_cols": 1024,
                         "metadata": "k.json"},
                        {"op": "rms_norm", "dtype": "bf16", "cols": 4096,
                         "min_cols": 1, "max_cols": 4096, "eps": 1e-5,
                         "weight_dtype": "f32", "metadata": "k.json"}]}


def mutate(rng, data):
    """One random change somewhere in `data` (a dict or list)."""
    target = data
    while isinstance(target, (dict, list)) and target and rng.random() < 0.6:
        keys = list(target.keys()) if isinstance(target, dict) \
            else list(range(len(target)))
        child = target[rng.choice(keys)]
        if not isinstance(child, (dict, list)):
            break
        target = child
    if isinstance(target, dict):
        key = rng.choice(list(target.keys()) + ["extra"])
        if rng.random() < 0.2:
            target.pop(key, None)
        else:
            target[key] = copy.deepcopy(rng.choice(ODD))
    elif isinstance(target, list):
        if target and rng.random() < 0.3:
            target.pop(rng.randrange(len(target)))
        else:
            target.append(copy.deepcopy(rng.choice(ODD + [valid()["kernels"][0]])))


def check(directory):
    """Reads the manifest in `directory`; None, or the unexpected error."""
    try:
        pack = packs.Pack(directory)
        for op, dtype, cols in (("softmax", "f32", 1000),
                                ("rms_norm", "bf16", 4096)):
            pack.find(op, dtype, cols, 1e-5)
        pack.find("rms_norm", "bf16", 4096, 1e-5, "f32")
    except packs.PackError:
        pass
    except Exception:  # noqa: BLE001 - what the fuzzer looks for
        return traceback.format_exc()
    return None


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out_dir")
    parser.add_argument("--seconds", type=float, default=30)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    directory = tempfile.mkdtemp(prefix="manifest-fuzz-")
    os.symlink("/etc/passwd", os.path.join(directory, "link.json"))
    with open(os.path.join(directory, "k.json"), "w") as f:
        f.write("{}")
    trials, refused = 0, 0
    end = time.monotonic() + args.seconds
    try:
        while time.monotonic() < end:
            data = valid()
            for _ in range(rng.randint(1, 4)):
                mutate(rng, data)
            text = json.dumps(data) if rng.random() < 0.95 else \
                json.dumps(data)[:rng.randint(0, 200)]
            with open(os.path.join(directory, "manifest.json"), "w") as f:
                f.write(text)
            trials += 1
            problem = check(directory)
            if problem:
                os.makedirs(args.out_dir, exist_ok=True)
                kept = os.path.join(args.out_dir, f"manifest-{trials}.json")
                shutil.copy(os.path.join(directory, "manifest.json"), kept)
                print(f"manifest fuzz: {kept} raised\n{problem}",
                      file=sys.stderr)
                return 1
            try:
                packs.Pack(directory)
            except packs.PackError:
                refused += 1
    finally:
        shutil.rmtree(directory)
    print(f"{trials} manifests (seed {args.seed}, {args.seconds:g} s): "
          f"{refused} refused, {trials - refused} accepted, 0 FAILED")
    return 0


if __name__ == "__main__":
    sys.exit(main())
