#!/usr/bin/env python3
"""Serving: a small Hugging Face causal LM decodes greedily as it is and
again after rowred.patch(model), from the same random weights and prompt
(built from its config, as patch_model.py's models: no download).

Each new token runs the model on one row per sequence: the norms are
decode-size calls (a few rows of the hidden size), where eager decoding is
bound by the host's launches. The script prints the time per new token
both ways and how many of the new tokens the two decodings share.

usage: python3 examples/torch/generate.py [--model llama] [--layers 16]
           [--batch 1] [--prompt 128] [--new 64] [--dtype bf16] [--compile]
           [--rounds 3] [--pack DIR]

--model: as patch_model.py's, with 16 layers (a 1B-class model's) unless
--layers says otherwise. --dtype f32 decodes in f32, where the two
decodings give the same tokens; in bf16 they part where two logits are
within bf16's rounding (the patched norms round once where the models' own
round twice). --compile decodes through torch.compile (its default mode)
with a static cache: one compiled graph a step, in which patch() leaves
the norms to the models' own code (Inductor fuses them), so both ways
decode alike. Each way decodes once to warm up, then --rounds times in
turns; the times are the medians. The pack (or $ROWRED_PACKS) needs the
norms' kernels for the model's hidden size (and head size, Qwen3 and
Gemma 3) in that dtype: the LLM preset has them.
"""
import argparse
import statistics
import time

import torch

import patch_model
import rowred

DTYPES = {"bf16": torch.bfloat16, "f32": torch.float32}
LAYERS = 16


def decode(model, prompt, new, compiled=False):
    """Greedy decoding of `new` tokens after `prompt` (batch x length):
    (the new tokens, each step's logits, seconds per new token)."""
    kwargs = dict(max_new_tokens=new, min_new_tokens=new, do_sample=False,
                  pad_token_id=0, output_logits=True,
                  return_dict_in_generate=True,
                  attention_mask=torch.ones_like(prompt))
    if compiled:
        kwargs["cache_implementation"] = "static"
    with torch.inference_mode():
        torch.cuda.synchronize()
        start = time.perf_counter()
        out = model.generate(prompt, **kwargs)
        torch.cuda.synchronize()
    seconds = (time.perf_counter() - start) / new
    return out.sequences[:, prompt.size(1):], out.logits, seconds


def compare(name, batch=1, prompt_len=128, new=64, dtype=torch.bfloat16,
            compiled=False, layers=LAYERS, rounds=3):
    """The model `name` decoding `new` tokens greedily as it is and
    patched, from the same weights, after a warm-up decoding (and
    compilation), taking turns `rounds` times: a dict of the new tokens
    both ways, how many lead steps they share (in every sequence), the
    first step's logits' relative difference and the median seconds per
    new token both ways."""
    torch.manual_seed(1)
    vocab = patch_model.MODELS[name][1]["vocab_size"]
    prompt = torch.randint(0, vocab, (batch, prompt_len), device="cuda")
    models = {}
    for patched in (False, True):
        model = patch_model.build(name, amp=dtype == torch.float32,
                                  layers=layers).eval()
        model.generation_config.eos_token_id = None
        if patched:
            rowred.patch(model)
        if compiled:
            model.forward = torch.compile(model.forward)
        models[patched] = model
    runs = {False: [], True: []}
    for _ in range(rounds + 1):  # the first a warm-up
        for patched, model in models.items():
            runs[patched].append(decode(model, prompt, new, compiled))
    (tokens0, logits0, _), (tokens1, logits1, _) = runs[False][-1], \
        runs[True][-1]
    same = (tokens0 == tokens1).all(dim=0).int()
    shared = int(same.cumprod(0).sum())
    first = (logits1[0].float() - logits0[0].float()).norm() \
        / logits0[0].float().norm()
    seconds = tuple(statistics.median(r[2] for r in runs[p][1:])
                    for p in (False, True))
    return {"tokens": (tokens0, tokens1), "shared": shared,
            "logits_rel_diff": first.item(), "token_s": seconds}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", choices=sorted(patch_model.MODELS),
                        default="llama")
    parser.add_argument("--layers", type=int, default=LAYERS)
    parser.add_argument("--batch", type=int, default=1)
    parser.add_argument("--prompt", type=int, default=128,
                        help="prompt tokens a sequence")
    parser.add_argument("--new", type=int, default=64,
                        help="new tokens a sequence")
    parser.add_argument("--dtype", choices=sorted(DTYPES), default="bf16")
    parser.add_argument("--compile", action="store_true",
                        help="torch.compile, static cache")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--pack", help="a rowred pack directory")
    args = parser.parse_args()
    if args.pack:
        rowred.load_pack(args.pack)
    limit = 2 * patch_model.SEQ
    if min(args.layers, args.batch, args.prompt, args.new, args.rounds) < 1 \
            or args.prompt + args.new > limit:
        parser.error("--layers, --batch, --prompt, --new and --rounds must "
                     f"be at least 1, --prompt + --new at most {limit}")
    r = compare(args.model, args.batch, args.prompt, args.new,
                DTYPES[args.dtype], args.compile, args.layers, args.rounds)
    mode = "torch.compile, static cache" if args.compile else "eager"
    print(f"{args.model}, {args.layers} layers: batch {args.batch}, "
          f"prompt {args.prompt}, "
          f"{args.new} new tokens, {args.dtype}, {mode}; the first logits "
          f"differ by {r['logits_rel_diff']:.2e} (relative)")
    print(f"the two decodings share their first {r['shared']} of "
          f"{args.new} new tokens")
    t0, t1 = r["token_s"]
    print(f"time per new token: {t0 * 1e3:.2f} ms as it is, "
          f"{t1 * 1e3:.2f} ms patched ({t0 / t1:.2f}x)")


if __name__ == "__main__":
    main()
