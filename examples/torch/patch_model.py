#!/usr/bin/env python3
"""A small Hugging Face causal LM, trained a few steps as it is and again
after rowred.patch(model), from the same random weights (built from its
config: no download).

patch() puts the model's RMSNorm (or GPT-2's LayerNorm) modules and its
loss on rowred's kernels. The script prints both loss curves, the time of
a training step (forward, backward and AdamW) and the peak memory of each.

usage: python3 examples/torch/patch_model.py [--model llama] [--steps 10]
           [--batch 8] [--seq 1024] [--amp] [--compile] [--pack DIR]

--model: llama, mistral, qwen2, qwen3, gemma, gemma3, olmo2, granite or
gpt2. The model is in bf16; with --amp its weights are f32 and each step
runs under torch.autocast to bf16 (mixed precision, as transformers'
Trainer with bf16=True): the norms then see the f32 residual stream (f32
kernels) or bf16 activations (bf16 kernels of an f32 weight: the heads
that Qwen3's query/key norms normalize, OLMo 2's and Gemma 3's norms after
attention and the MLP), and the loss the bf16 logits. The pack (or
$ROWRED_PACKS) needs those kernels for the model's hidden size and
vocabulary, and for its head size where the model normalizes heads (Qwen3,
Gemma 3); the LLM preset has them all:

    python3 -m rowred.packs build --softmax-opt build/bin/softmax-opt \\
        --out packs/llm --preset llm --dtype f32,bf16

With --compile both models run through torch.compile (the kernels are
custom ops Inductor calls as they are, fusing around them). A norm or
loss with no kernel in the pack runs on PyTorch's.
"""
import argparse
import time

import torch
import transformers

import rowred

# Two layers of a 1B-class model (Llama 3.2 1B's and Qwen's hidden size,
# head size 128), a batch of 8 sequences of 1024 tokens.
HIDDEN, HEADS, LAYERS, BATCH, SEQ = 2048, 16, 2, 8, 1024
# The transformers config of each model, at HIDDEN and its real vocabulary.
DECODER = dict(hidden_size=HIDDEN, intermediate_size=5632,
               num_hidden_layers=LAYERS, num_attention_heads=HEADS,
               num_key_value_heads=HEADS, head_dim=HIDDEN // HEADS,
               max_position_embeddings=2 * SEQ)
MODELS = {
    "llama": ("LlamaConfig", dict(DECODER, vocab_size=32000)),
    "mistral": ("MistralConfig", dict(DECODER, vocab_size=32000)),
    "qwen2": ("Qwen2Config", dict(DECODER, vocab_size=151936)),
    "qwen3": ("Qwen3Config", dict(DECODER, vocab_size=151936)),
    "gemma": ("GemmaConfig", dict(DECODER, vocab_size=256000)),
    "gemma3": ("Gemma3TextConfig", dict(DECODER, vocab_size=256000)),
    "olmo2": ("Olmo2Config", dict(DECODER, vocab_size=32000)),
    "granite": ("GraniteConfig", dict(DECODER, vocab_size=32000)),
    "gpt2": ("GPT2Config", dict(n_embd=HIDDEN, n_layer=LAYERS, n_head=HEADS,
                                n_positions=2 * SEQ, vocab_size=50257)),
}


def build(name, seed=0, amp=False, layers=LAYERS):
    """The model `name` of `layers` layers on the GPU, its weights drawn
    from `seed`: in bf16, or in f32 for mixed precision (`amp`)."""
    config_class, fields = MODELS[name]
    depth = "n_layer" if "n_layer" in fields else "num_hidden_layers"
    config = getattr(transformers, config_class)(**{**fields, depth: layers})
    torch.manual_seed(seed)
    with torch.device("cuda"):
        return transformers.AutoModelForCausalLM.from_config(
            config, dtype=torch.float32 if amp else torch.bfloat16,
            attn_implementation="sdpa")


def autocast(amp):
    """The context of a step: bf16 autocast with `amp`, else none."""
    return torch.autocast("cuda", dtype=torch.bfloat16, enabled=amp)


def train(model, tokens, steps, amp=False):
    """Trains `model` on `tokens` (labels: the tokens) for `steps` AdamW
    steps, each forward under bf16 autocast with `amp`: (losses, seconds
    per step after the first two, peak bytes above the memory held
    before)."""
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)
    torch.cuda.synchronize()
    base = torch.cuda.memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    losses, start = [], None
    for step in range(steps):
        if step == 2:
            torch.cuda.synchronize()
            start = time.perf_counter()
        with autocast(amp):
            loss = model(input_ids=tokens, labels=tokens).loss
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        losses.append(loss.detach())
    torch.cuda.synchronize()
    seconds = (time.perf_counter() - start) / (steps - 2)
    return ([x.item() for x in losses], seconds,
            torch.cuda.max_memory_allocated() - base)


def compare(name, steps=10, batch=BATCH, seq=SEQ, amp=False,
            compiled=False):
    """The model `name` trained as it is and patched, from the same weights
    and `batch` sequences of `seq` tokens, in bf16 or mixed precision
    (`amp`), through torch.compile where `compiled`: a dict of the logits'
    relative difference at the start (of the first sequence), both loss
    curves, step times and peak memories."""
    torch.manual_seed(1)
    tokens = torch.randint(0, MODELS[name][1]["vocab_size"], (batch, seq),
                           device="cuda")
    results = {}
    logits = {}
    for patched in (False, True):
        model = build(name, amp=amp)
        if patched:
            rowred.patch(model)
        if compiled:
            model = torch.compile(model, dynamic=False)
        with torch.no_grad(), autocast(amp):
            logits[patched] = model(input_ids=tokens[:1]).logits.float()
        results[patched] = train(model, tokens, steps, amp)
        del model
        torch.cuda.empty_cache()
    diff = (logits[True] - logits[False]).norm() / logits[False].norm()
    return {"logits_rel_diff": diff.item(),
            "losses": (results[False][0], results[True][0]),
            "step_s": (results[False][1], results[True][1]),
            "peak_bytes": (results[False][2], results[True][2])}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", choices=sorted(MODELS), default="llama")
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--batch", type=int, default=BATCH)
    parser.add_argument("--seq", type=int, default=SEQ,
                        help=f"tokens a sequence, at most {2 * SEQ}")
    parser.add_argument("--amp", action="store_true",
                        help="f32 weights, steps under bf16 autocast")
    parser.add_argument("--compile", action="store_true",
                        help="both models through torch.compile")
    parser.add_argument("--pack", help="a rowred pack directory")
    args = parser.parse_args()
    if args.pack:
        rowred.load_pack(args.pack)
    if not 0 < args.seq <= 2 * SEQ or args.batch < 1:
        parser.error(f"--seq must be 1 to {2 * SEQ} and --batch at least 1")
    if args.compile:
        # The logits' call and the training steps: two graphs per model.
        torch._dynamo.config.cache_size_limit = 64
    r = compare(args.model, max(args.steps, 3), args.batch, args.seq,
                args.amp, args.compile)
    precision = "f32 under bf16 autocast" if args.amp else "bf16"
    if args.compile:
        precision += ", torch.compile"
    print(f"{args.model}: batch {args.batch} x {args.seq} tokens, "
          f"{precision}, AdamW; logits differ by "
          f"{r['logits_rel_diff']:.2e} (relative)")
    print("step  loss (PyTorch)  loss (rowred)")
    for i, (a, b) in enumerate(zip(*r["losses"])):
        print(f"{i:4d}  {a:14.4f}  {b:13.4f}")
    (t0, t1), (m0, m1) = r["step_s"], r["peak_bytes"]
    print(f"step time: {t0 * 1e3:.2f} ms as it is, {t1 * 1e3:.2f} ms "
          f"patched ({t0 / t1:.2f}x)")
    print(f"peak memory: {m0 / 2**20:.0f} MiB as it is, {m1 / 2**20:.0f} "
          f"MiB patched")


if __name__ == "__main__":
    main()
