#!/usr/bin/env python3
"""A transformer block and an LM head, trained one step at a time, written
once with PyTorch's softmax and log-softmax and once with rowred's.

The attention scores' softmax (rows of the sequence length) and the
cross-entropy over the vocabulary (log-softmax then the negative
log-likelihood, rows of 128256), forward and backward, run on the compiled
kernels in the rowred version; everything else (RMSNorm, the matmuls, the optimizer) is the same
PyTorch code in both. The script checks that both give the same loss and
gradients, then prints the time of a training step of each.

usage: PYTHONPATH=python python3 examples/torch/train_step.py [--pack DIR]

with a pack holding bf16 softmax kernels and their gradient kernels for
rows of --seq, and log-softmax ones for rows of --vocab:

    PYTHONPATH=python python3 -m rowred.packs build \\
        --softmax-opt build/bin/softmax-opt --out packs/sm90 \\
        --dtype bf16 --cols 1024,128256

(with the full build at hand, a missing kernel is compiled into the cache
instead).
"""
import argparse
import math
import sys

import torch
import torch.nn.functional as F

import rowred


class Block(torch.nn.Module):
    """Pre-norm causal self-attention and MLP, then the LM head."""

    def __init__(self, vocab, dim, heads):
        super().__init__()
        self.heads = heads
        self.embed = torch.nn.Embedding(vocab, dim)
        self.norm1 = torch.nn.RMSNorm(dim)
        self.qkv = torch.nn.Linear(dim, 3 * dim, bias=False)
        self.proj = torch.nn.Linear(dim, dim, bias=False)
        self.norm2 = torch.nn.RMSNorm(dim)
        self.up = torch.nn.Linear(dim, 4 * dim, bias=False)
        self.down = torch.nn.Linear(4 * dim, dim, bias=False)
        self.norm3 = torch.nn.RMSNorm(dim)
        self.head = torch.nn.Linear(dim, vocab, bias=False)

    def forward(self, tokens, targets, softmax, log_softmax):
        b, t = tokens.shape
        x = self.embed(tokens)
        q, k, v = self.qkv(self.norm1(x)).chunk(3, dim=-1)
        q, k, v = (z.view(b, t, self.heads, -1).transpose(1, 2)
                   for z in (q, k, v))
        scores = q @ k.transpose(-1, -2) / math.sqrt(q.size(-1))
        causal = torch.ones(t, t, dtype=torch.bool,
                            device=x.device).triu(1)
        scores = scores.masked_fill(causal, float("-inf"))
        att = softmax(scores) @ v
        x = x + self.proj(att.transpose(1, 2).reshape(b, t, -1))
        x = x + self.down(F.gelu(self.up(self.norm2(x))))
        logits = self.head(self.norm3(x))
        logp = log_softmax(logits.view(b * t, -1))
        return F.nll_loss(logp.float(), targets.view(-1))


def torch_softmax(x):
    return torch.softmax(x, dim=-1)


def torch_log_softmax(x):
    return torch.log_softmax(x, dim=-1)


def step(model, opt, tokens, targets, softmax, log_softmax):
    opt.zero_grad(set_to_none=True)
    loss = model(tokens, targets, softmax, log_softmax)
    loss.backward()
    opt.step()
    return loss


def time_steps(model, tokens, targets, softmax, log_softmax, steps):
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    for _ in range(3):
        step(model, opt, tokens, targets, softmax, log_softmax)
    torch.cuda.synchronize()
    times = []
    for _ in range(steps):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        step(model, opt, tokens, targets, softmax, log_softmax)
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    times.sort()
    return times[len(times) // 2]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pack", action="append", default=[])
    ap.add_argument("--batch", type=int, default=4)
    ap.add_argument("--seq", type=int, default=1024)
    ap.add_argument("--dim", type=int, default=1024)
    ap.add_argument("--heads", type=int, default=8)
    ap.add_argument("--vocab", type=int, default=128256)
    ap.add_argument("--steps", type=int, default=20)
    args = ap.parse_args()
    if not torch.cuda.is_available():
        sys.exit("this example needs a CUDA device")
    for pack in args.pack:
        rowred.load_pack(pack)

    torch.manual_seed(0)
    model = Block(args.vocab, args.dim, args.heads).cuda().bfloat16()
    tokens = torch.randint(args.vocab, (args.batch, args.seq), device="cuda")
    targets = torch.randint(args.vocab, (args.batch, args.seq),
                            device="cuda")

    # The same loss and gradients (bf16 weights, the same kernels elsewhere).
    losses, grads = [], []
    for softmax, log_softmax in ((torch_softmax, torch_log_softmax),
                                 (rowred.softmax, rowred.log_softmax)):
        model.zero_grad(set_to_none=True)
        loss = model(tokens, targets, softmax, log_softmax)
        loss.backward()
        losses.append(loss.item())
        grads.append({n: p.grad.float().clone()
                      for n, p in model.named_parameters()})
    print(f"loss: torch {losses[0]:.6f}, rowred {losses[1]:.6f}")
    worst = 0.0
    for name, g in grads[0].items():
        diff = (grads[1][name] - g).norm() / g.norm().clamp_min(1e-30)
        worst = max(worst, diff.item())
    print(f"gradients: largest relative L2 difference {worst:.2e}")
    ok = abs(losses[0] - losses[1]) <= 2e-3 * abs(losses[0]) and worst < 2e-2

    state = {k: v.clone() for k, v in model.state_dict().items()}
    ms = {}
    for name, fns in (("torch", (torch_softmax, torch_log_softmax)),
                      ("rowred", (rowred.softmax, rowred.log_softmax))):
        model.load_state_dict(state)
        ms[name] = time_steps(model, tokens, targets, *fns, args.steps)
    print(f"training step (median of {args.steps}, {torch.cuda.get_device_name()}"
          f", batch {args.batch} x seq {args.seq}, dim {args.dim}, vocab "
          f"{args.vocab}, bf16): torch {ms['torch']:.2f} ms, rowred "
          f"{ms['rowred']:.2f} ms ({ms['torch'] / ms['rowred']:.3f}x)")
    if not ok:
        print("FAIL: the losses or gradients differ")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
