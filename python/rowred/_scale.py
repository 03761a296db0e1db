"""Scaling a gradient in place by a factor that stays on the GPU.

cross_entropy(..., inplace_backward=True) writes the gradient of the logits
in its forward; its backward must still multiply it by the incoming
gradient, which is 1 in the common `loss.backward()` and anything else under
a loss scaler or gradient accumulation. Deciding that on the host means
reading the factor (`.item()`): a synchronisation that stalls the host
until the forward has run, after which the GPU idles while the host
catches up (170-240 us a step at 8192 rows on an H100). `scale_rows_`
decides on the GPU instead: a Triton kernel on a grid of a few programs per
SM whose programs return at once when the factor is 1 (about 16 us) and
otherwise stream the rows at the copy's bandwidth. Where Triton is not
installed (PyTorch ships it with its CUDA builds), it falls back to reading
the factor.
"""
import contextlib

import torch

from ._oplib import current_device

try:
    import triton
    import triton.language as tl
except ImportError:  # pragma: no cover - depends on the installation
    triton = None

_BLOCK = 4096
_PROGRAMS_PER_SM = 4
# The SMs of each device by index.
_sms = {}

if triton is not None:

    @triton.jit
    def _scale_rows_kernel(x_ptr, factor_ptr, rows, cols, row_stride,
                           BLOCK: tl.constexpr):
        factor = tl.load(factor_ptr).to(tl.float32)
        if factor != 1.0:
            for row in range(tl.program_id(0), rows, tl.num_programs(0)):
                base = x_ptr + row.to(tl.int64) * row_stride
                for start in range(0, cols, BLOCK):
                    offsets = start + tl.arange(0, BLOCK)
                    mask = offsets < cols
                    v = tl.load(base + offsets, mask=mask)
                    tl.store(base + offsets,
                             (v.to(tl.float32) * factor).to(v.dtype),
                             mask=mask)


def scale_rows_(x, factor):
    """x *= factor in place, for x of shape (M, N) with contiguous, evenly
    strided rows and `factor` a 0-d tensor on x's device; the product is
    taken in f32 and rounded once to x's dtype (in x's dtype without
    Triton). Leaves x untouched, without reading the factor on the host,
    when it is 1."""
    rows, cols = x.shape
    if rows == 0 or cols == 0:
        return x
    if triton is None:
        if factor.item() != 1.0:
            x.mul_(factor.to(x.dtype))
        return x
    # The kernel reads the factor in its own dtype (a 0-d tensor is
    # contiguous) and takes the product in f32.
    device = x.get_device()
    sms = _sms.get(device)
    if sms is None:
        sms = _sms.setdefault(device, torch.cuda.get_device_properties(
            device).multi_processor_count)
    grid = (min(rows, sms * _PROGRAMS_PER_SM),)
    with contextlib.nullcontext() if device == current_device() else \
            torch.cuda.device(device):
        _scale_rows_kernel[grid](x, factor, rows, cols, x.stride(0),
                                 BLOCK=_BLOCK, num_warps=8)
    return x
