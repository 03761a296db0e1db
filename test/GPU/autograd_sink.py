"""The training context that cross-entropy's in-place gradient is measured
in, shared by its GPU test (torch_ops.py) and its benchmark
(bench/train.py): logits that are an intermediate, whose
gradient the layer below consumes, and the memory a loss's forward and
backward hold beyond them."""
import torch


class Sink(torch.autograd.Function):
    """Passes `x` on as an intermediate whose gradient is dropped, as a
    layer's output whose backward has consumed it."""

    @staticmethod
    def forward(ctx, x):
        return x.view_as(x)

    @staticmethod
    def backward(ctx, grad):
        return None


def extra_memory(loss_fn, logits):
    """Bytes that `loss_fn(Sink(logits)).backward()` holds at its peak
    beyond what is allocated before (the logits)."""
    torch.cuda.synchronize()
    base = torch.cuda.memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    loss_fn(Sink.apply(logits)).backward()
    torch.cuda.synchronize()
    return torch.cuda.max_memory_allocated() - base
