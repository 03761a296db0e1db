#!/usr/bin/env python3
"""A transformer block and an LM head, trained one step at a time, written
once with PyTorch's row reductions and once with rowred's.

The row reductions are the attention scores' softmax (rows of the sequence
length), the RMSNorms before attention and the MLP and the final LayerNorm
(rows of the model's width), and the cross-entropy over the vocabulary
(rows of 128256; PyTorch's on f32 logits, as Hugging Face's loss casts
them; rowred's reads the bf16 logits and writes their gradient in its
forward). Everything else (the matmuls, GELU, the optimizer) is the same
PyTorch code in both. The script checks that both give the same loss and
gradients, then prints the time and the peak memory of a training step of
each.

usage: PYTHONPATH=python python3 examples/torch/train_step.py [--pack DIR]

with a pack holding the bf16 kernels for rows of --seq (softmax), --dim
(the norms, eps 1e-5) and --vocab (cross-entropy), and their gradients':

    PYTHONPATH=python python3 -m rowred.packs build \\
        --softmax-opt build/bin/softmax-opt --out packs/step \\
        --dtype bf16 --cols 1024,128256 --eps 1e-5 \\
        --op softmax,softmax_backward,rms_norm,rms_norm_backward,layer_norm,layer_norm_backward,cross_entropy,cross_entropy_grad

(with the full build at hand, a missing kernel is compiled into the cache
instead; a shape without a kernel runs PyTorch's op).
"""
import argparse
import math
import sys

import torch
import torch.nn.functional as F

import rowred


EPS = 1e-5


class TorchOps:
    """PyTorch's row reductions, as a model calls them."""

    @staticmethod
    def softmax(x):
        return torch.softmax(x, dim=-1)

    @staticmethod
    def norm(module, x):
        return module(x)

    @staticmethod
    def loss(logits, targets):
        return F.cross_entropy(logits.float(), targets)


class RowredOps:
    """rowred's, on the modules' own weights."""

    @staticmethod
    def softmax(x):
        return rowred.softmax(x)

    @staticmethod
    def norm(module, x):
        if isinstance(module, torch.nn.LayerNorm):
            return rowred.layer_norm(x, module.normalized_shape,
                                     module.weight, module.bias, module.eps)
        return rowred.rms_norm(x, module.normalized_shape, module.weight,
                               module.eps)

    @staticmethod
    def loss(logits, targets):
        return rowred.cross_entropy(logits, targets,
                                    loss_dtype=torch.float32)


class Block(torch.nn.Module):
    """Pre-norm causal self-attention and MLP, then the LM head."""

    def __init__(self, vocab, dim, heads):
        super().__init__()
        self.heads = heads
        self.embed = torch.nn.Embedding(vocab, dim)
        self.norm1 = torch.nn.RMSNorm(dim, eps=EPS)
        self.qkv = torch.nn.Linear(dim, 3 * dim, bias=False)
        self.proj = torch.nn.Linear(dim, dim, bias=False)
        self.norm2 = torch.nn.RMSNorm(dim, eps=EPS)
        self.up = torch.nn.Linear(dim, 4 * dim, bias=False)
        self.down = torch.nn.Linear(4 * dim, dim, bias=False)
        self.norm3 = torch.nn.LayerNorm(dim, eps=EPS)
        self.head = torch.nn.Linear(dim, vocab, bias=False)

    def forward(self, tokens, targets, ops):
        b, t = tokens.shape
        x = self.embed(tokens)
        q, k, v = self.qkv(ops.norm(self.norm1, x)).chunk(3, dim=-1)
        q, k, v = (z.view(b, t, self.heads, -1).transpose(1, 2)
                   for z in (q, k, v))
        scores = q @ k.transpose(-1, -2) / math.sqrt(q.size(-1))
        causal = torch.ones(t, t, dtype=torch.bool,
                            device=x.device).triu(1)
        scores = scores.masked_fill(causal, float("-inf"))
        att = ops.softmax(scores) @ v
        x = x + self.proj(att.transpose(1, 2).reshape(b, t, -1))
        x = x + self.down(F.gelu(self.up(ops.norm(self.norm2, x))))
        logits = self.head(ops.norm(self.norm3, x))
        return ops.loss(logits.view(b * t, -1), targets.view(-1))


def step(model, opt, tokens, targets, ops):
    opt.zero_grad(set_to_none=True)
    loss = model(tokens, targets, ops)
    loss.backward()
    opt.step()
    return loss


def time_steps(model, tokens, targets, ops, steps):
    """The median step time (ms) and the peak memory allocated during the
    steps above what was allocated before them (MiB)."""
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    for _ in range(3):
        step(model, opt, tokens, targets, ops)
    torch.cuda.synchronize()
    base = torch.cuda.memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    times = []
    for _ in range(steps):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        step(model, opt, tokens, targets, ops)
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    times.sort()
    peak = (torch.cuda.max_memory_allocated() - base) / 2 ** 20
    return times[len(times) // 2], peak


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
    for ops in (TorchOps, RowredOps):
        model.zero_grad(set_to_none=True)
        loss = model(tokens, targets, ops)
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
    ms, mib = {}, {}
    for name, ops in (("torch", TorchOps), ("rowred", RowredOps)):
        model.load_state_dict(state)
        ms[name], mib[name] = time_steps(model, tokens, targets, ops,
                                         args.steps)
    print(f"training step (median of {args.steps}, {torch.cuda.get_device_name()}"
          f", batch {args.batch} x seq {args.seq}, dim {args.dim}, vocab "
          f"{args.vocab}, bf16): torch {ms['torch']:.2f} ms, rowred "
          f"{ms['rowred']:.2f} ms ({ms['torch'] / ms['rowred']:.3f}x)")
    print(f"peak memory of a step: torch {mib['torch']:.0f} MiB, rowred "
          f"{mib['rowred']:.0f} MiB")
    if not ok:
        print("FAIL: the losses or gradients differ")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
