"""The normalizations as PyTorch custom ops: rowred::rms_norm (and its
residual form rowred::rms_norm_residual, which normalizes h = x + residual
and returns h as well) and rowred::layer_norm, and rowred.rms_norm /
rowred.layer_norm, which take F.rms_norm's and F.layer_norm's arguments.

The forward runs the pack's kernel for the exact row length and epsilon
(packs.EPS_OPS), which writes the normalized rows and the per-row
statistics in f32 (rms_norm: rstd; layer_norm: mean and rstd); where there
is none, PyTorch computes both. rms_norm's gradient is
rowred::rms_norm_backward: the pack's kernel for the exact row length
(one read of x and dy; the weight's gradient summed down the columns in
the same kernel, in a fixed order), else PyTorch's fused backward; the
residual form's adds the gradient h itself got to dx in that kernel
(packs' rms_norm_residual_backward), the gradient of both its inputs;
layer_norm's, rowred::layer_norm_backward, likewise (dw and db down the
columns; else native_layer_norm_backward). None holds an f32 copy of the
rows. The weight (and bias) are of x's dtype, or f32 beside f16 or bf16
rows (mixed precision: the packs' kernels of an f32 weight, whose
gradients they sum in f32); y is of x's dtype, as F.rms_norm's is
(F.layer_norm refuses that mix).
"""
from typing import Optional, Tuple

import torch

from ._oplib import PLAIN, Op
from .ops import (_exact_kernel, _launch_operands, check_input, fast_call,
                  fast_key_of, native_call)


def _run_norm(op, inputs, columns, eps, statistics):
    """The outputs (one per input, each of its shape) and the f32
    statistics of `op` over the rows of `inputs` (2-D, contiguous: x, and
    the residual) with the per-column operands `columns` (of one dtype,
    length N) on the compiled kernel; None where there is none."""
    x = inputs[0]
    rows, n = x.shape
    outputs = [torch.empty_like(x) for _ in inputs]
    stats = [x.new_empty((rows,), dtype=torch.float32)
             for _ in range(statistics)]
    if rows == 0:
        return outputs, stats
    kernel = _exact_kernel(op, x, n, eps, columns[0].dtype) if n else None
    if kernel is None:
        return None
    # docs/abi.md: the inputs, the outputs, the columns, the per-row
    # outputs; a row stride per input and output.
    operands = inputs + outputs + columns + stats
    _launch_operands(kernel, x.get_device(),
                     [t.data_ptr() for t in operands],
                     [n] * (2 * len(inputs)), rows, n)
    return outputs, stats


def _rms_norm_torch(x, weight, eps):
    """(y, rstd) as the kernel computes them, in PyTorch."""
    xf = x.float()
    rstd = torch.rsqrt(xf.square().mean(-1) + eps)
    return (xf * rstd.unsqueeze(-1) * weight.float()).to(x.dtype), rstd


def _rms_norm(x: torch.Tensor, weight: torch.Tensor,
              eps: float) -> Tuple[torch.Tensor, torch.Tensor]:
    """(y, rstd) of the rows of x (2-D, contiguous): y = x * rstd * weight,
    rstd = 1 / sqrt(mean(x^2) + eps) in f32."""
    done = _run_norm("rms_norm", [x], [weight], eps, 1)
    if done is not None:
        return done[0][0], done[1][0]
    return _rms_norm_torch(x, weight, eps)


def _rms_norm_residual(
        x: torch.Tensor, residual: torch.Tensor, weight: torch.Tensor,
        eps: float) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(y, h, rstd) of the rows of x and the residual (2-D, contiguous, of
    one dtype): h = x + residual in that dtype, and y, rstd = rms_norm(h)
    as rowred::rms_norm's."""
    done = _run_norm("rms_norm_residual", [x, residual], [weight], eps, 1)
    if done is not None:
        return done[0][0], done[0][1], done[1][0]
    h = x + residual
    y, rstd = _rms_norm_torch(h, weight, eps)
    return y, h, rstd


def _layer_norm(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor,
                eps: float) -> Tuple[torch.Tensor, torch.Tensor,
                                     torch.Tensor]:
    """(y, mean, rstd) of the rows of x (2-D, contiguous): y = (x - mean) *
    rstd * weight + bias, rstd = 1 / sqrt(var + eps), the statistics in
    f32."""
    done = _run_norm("layer_norm", [x], [weight, bias], eps, 2)
    if done is not None:
        return done[0][0], done[1][0], done[1][1]
    xf = x.float()
    var, mean = torch.var_mean(xf, -1, correction=0)
    rstd = torch.rsqrt(var + eps)
    y = (xf - mean.unsqueeze(-1)) * rstd.unsqueeze(-1) * weight.float() + \
        bias.float()
    return y.to(x.dtype), mean, rstd


def _rows_stat(x):
    return x.new_empty(x.shape[:1], dtype=torch.float32)


rms_norm_op = Op(
    _rms_norm, lambda x, weight, eps: (torch.empty_like(x), _rows_stat(x)),
    "rms_norm")
rms_norm_residual_op = Op(
    _rms_norm_residual,
    lambda x, residual, weight, eps: (torch.empty_like(x),
                                      torch.empty_like(x), _rows_stat(x)),
    "rms_norm_residual")
layer_norm_op = Op(
    _layer_norm,
    lambda x, weight, bias, eps: (torch.empty_like(x), _rows_stat(x),
                                  _rows_stat(x)),
    "layer_norm")


def _save_norm(ctx, inputs, output):
    # x, the weight (and layer_norm's bias) and the statistics, whose
    # absent gradients stay None rather than zeros.
    ctx.set_materialize_grads(False)
    ctx.mark_non_differentiable(*output[1:])
    ctx.save_for_backward(*inputs[:-1], *output[1:])


# PyTorch's fused CUDA backwards of its own norms, which take the per-row
# statistics the kernels saved: dx in one pass over x and dy, dw and db as
# reductions down the columns. Where a PyTorch build lacks one (the fused
# RMSNorm came with 2.9), the gradient is an expression of the same values.
_aten = torch.ops.aten
_RMS_NORM_BACKWARD = getattr(_aten, "_fused_rms_norm_backward", None)


def _rms_norm_backward_impl(
        x: torch.Tensor, grad: torch.Tensor, weight: torch.Tensor,
        rstd: torch.Tensor, grad_residual: Optional[torch.Tensor] = None
) -> Tuple[torch.Tensor, torch.Tensor]:
    """(dx, dw) of y = rms_norm(x) (x 2-D, contiguous) for the gradient
    `grad` of y, dx of x's dtype, dw of the weight's, plus `grad_residual`
    (of x's shape) added to dx where given (the residual form: x is h,
    which the residual stream reads too): on the compiled kernel (packs'
    rms_norm_backward and rms_norm_residual_backward: one read of x and dy,
    dw summed down the columns in the same kernel, in a fixed order), else
    PyTorch's fused backward."""
    rows, n = x.shape
    op = "rms_norm_backward" if grad_residual is None \
        else "rms_norm_residual_backward"
    kernel = _exact_kernel(op, x, n, weight_dtype=weight.dtype) \
        if x.numel() else None
    if kernel is None and grad_residual is not None:
        dx, dw = _rms_norm_backward_impl(x, grad, weight, rstd)
        return dx + grad_residual, dw
    if kernel is not None:
        rows_in = [x, grad.contiguous().to(x.dtype)]
        if grad_residual is not None:
            rows_in.append(grad_residual.contiguous().to(x.dtype))
        dx = torch.empty_like(x)
        dw = torch.empty_like(weight)
        _launch_operands(kernel, x.get_device(),
                         [t.data_ptr() for t in rows_in + [dx]] +
                         [weight.data_ptr(), rstd.data_ptr(), dw.data_ptr()],
                         [n] * (len(rows_in) + 1), rows, n)
        return dx, dw
    if _RMS_NORM_BACKWARD is not None and weight.dtype == x.dtype:
        return _RMS_NORM_BACKWARD(grad.contiguous(), x, [n],
                                  rstd.unsqueeze(-1), weight, [True, True])
    # x_hat = x * rstd, g = dy * w: dx = rstd * (g - x_hat * mean(g x_hat)),
    # dw = sum over rows of dy * x_hat.
    r = rstd.unsqueeze(-1)
    x_hat = x.float() * r
    dy = grad.float()
    g = dy * weight.float()
    dx = r * (g - x_hat * (g * x_hat).mean(-1, keepdim=True))
    return dx.to(x.dtype), (dy * x_hat).sum(0).to(weight.dtype)


rms_norm_backward_op = Op(
    _rms_norm_backward_impl,
    lambda x, grad, weight, rstd, grad_residual=None: (
        torch.empty_like(x, memory_format=torch.contiguous_format),
        torch.empty_like(weight)),
    "rms_norm_backward")


def _rms_norm_grads(x, weight, rstd, grad, weight_grad, grad_residual=None):
    """(dx, dw or None) of y = rms_norm(x) for the gradient `grad` of y,
    dx plus `grad_residual` where given."""
    dx, dw = rms_norm_backward_op(x, grad, weight, rstd, grad_residual)
    return dx, dw if weight_grad else None


def _rms_norm_backward(ctx, grad, *unused):
    x, weight, rstd = ctx.saved_tensors
    dx, dw = _rms_norm_grads(x, weight, rstd, grad, ctx.needs_input_grad[1])
    return dx, dw, None


def _save_residual_norm(ctx, inputs, output):
    # An absent gradient of h stays None rather than an x-sized zeros.
    ctx.set_materialize_grads(False)
    ctx.mark_non_differentiable(output[2])
    ctx.save_for_backward(output[1], inputs[2], output[2])


def _rms_norm_residual_backward(ctx, grad_y, grad_h, unused):
    # x and the residual reach y through h and h itself: both get dh.
    h, weight, rstd = ctx.saved_tensors
    if grad_y is None:
        return grad_h, grad_h, None, None
    # The gradient h itself got is added to dh in the backward's kernel.
    dh, dw = _rms_norm_grads(h, weight, rstd, grad_y,
                             ctx.needs_input_grad[2], grad_h)
    return dh, dh, dw, None


def _layer_norm_backward_impl(
        x: torch.Tensor, grad: torch.Tensor, weight: torch.Tensor,
        bias: torch.Tensor, mean: torch.Tensor, rstd: torch.Tensor
) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(dx, dw, db) of y = layer_norm(x) (x 2-D, contiguous) for the
    gradient `grad` of y: on the compiled kernel (packs'
    layer_norm_backward: one read of x and dy, dw and db summed down the
    columns in the same kernel, in a fixed order), else PyTorch's
    native_layer_norm_backward."""
    rows, n = x.shape
    kernel = _exact_kernel("layer_norm_backward", x, n,
                           weight_dtype=weight.dtype) if x.numel() else None
    if kernel is None and weight.dtype == x.dtype:
        return _aten.native_layer_norm_backward(
            grad.contiguous(), x, [n], mean.unsqueeze(-1), rstd.unsqueeze(-1),
            weight, bias, [True, True, True])
    if kernel is None:
        # An f32 weight beside 16-bit rows, which PyTorch's refuses: x_hat =
        # (x - mean) * rstd, g = dy * w; dx = rstd * (g - mean(g) - x_hat *
        # mean(g x_hat)), dw = sum of dy * x_hat, db = sum of dy.
        r = rstd.unsqueeze(-1)
        x_hat = (x.float() - mean.unsqueeze(-1)) * r
        dy = grad.float()
        g = dy * weight
        dx = r * (g - g.mean(-1, keepdim=True) -
                  x_hat * (g * x_hat).mean(-1, keepdim=True))
        return dx.to(x.dtype), (dy * x_hat).sum(0), dy.sum(0)
    dy = grad.contiguous().to(x.dtype)
    dx = torch.empty_like(x)
    dw, db = torch.empty_like(weight), torch.empty_like(bias)
    _launch_operands(kernel, x.get_device(),
                     [x.data_ptr(), dy.data_ptr(), dx.data_ptr(),
                      weight.data_ptr(), mean.data_ptr(), rstd.data_ptr(),
                      dw.data_ptr(), db.data_ptr()], [n, n, n], rows, n)
    return dx, dw, db


layer_norm_backward_op = Op(
    _layer_norm_backward_impl,
    lambda x, grad, weight, bias, mean, rstd: (
        torch.empty_like(x, memory_format=torch.contiguous_format),
        torch.empty_like(weight), torch.empty_like(bias)),
    "layer_norm_backward")


def _layer_norm_backward(ctx, grad, *unused):
    x, weight, bias, mean, rstd = ctx.saved_tensors
    needs = ctx.needs_input_grad
    dx, dw, db = layer_norm_backward_op(x, grad, weight, bias, mean, rstd)
    return dx, dw if needs[1] else None, db if needs[2] else None, None


rms_norm_op.register_autograd(_rms_norm_backward, _save_norm)
rms_norm_residual_op.register_autograd(_rms_norm_residual_backward,
                                       _save_residual_norm)
layer_norm_op.register_autograd(_layer_norm_backward, _save_norm)


# The pack ops of each norm's native op (rowred._native): the forward's,
# then the backward's (the residual form's, then the plain one it takes
# where h got no gradient of its own).
_RMS_NORM_KERNELS = ("rms_norm", "rms_norm_backward")
_RESIDUAL_KERNELS = ("rms_norm_residual", "rms_norm_residual_backward",
                     "rms_norm_backward")
_LAYER_NORM_KERNELS = ("layer_norm", "layer_norm_backward")


def _columns_dtype(x, columns):
    """The dtype of the per-column operands `columns` (those not None) where
    the kernels take them: x's, or f32 beside f16 or bf16 rows (mixed
    precision); None for any other mix, which PyTorch's ops run."""
    dtypes = {c.dtype for c in columns if c is not None} or {x.dtype}
    if len(dtypes) != 1:
        return None
    dtype = dtypes.pop()
    return dtype if dtype in (x.dtype, torch.float32) else None


def _check_norm(name, x, normalized_shape, columns):
    """(x's row length, the dtype of the per-column operands) after the
    checks a user's arguments get; None where the arguments ask for what
    the kernels do not compute (a weight and a bias of two dtypes, or of
    one that is neither x's nor f32), which PyTorch then runs."""
    check_input(name, x, -1)
    n = x.size(-1)
    shape = (normalized_shape,) if isinstance(normalized_shape, int) \
        else tuple(normalized_shape)
    if shape != (n,):
        raise ValueError(f"rowred.{name}: normalizes the last dimension "
                         f"only: normalized_shape must be ({n},), got "
                         f"{shape}")
    for what, c in columns.items():
        if c is None:
            continue
        if not isinstance(c, torch.Tensor) or c.shape != (n,):
            raise ValueError(f"rowred.{name}: expected a {what} of shape "
                             f"({n},), got "
                             f"{tuple(getattr(c, 'shape', ())) or type(c)}")
        if c.get_device() != x.get_device():
            raise ValueError(f"rowred.{name}: {what} on {c.device}, input "
                             f"on {x.device}")
    dtype = _columns_dtype(x, columns.values())
    return None if dtype is None else (n, dtype)


def _norm_key(name, x, normalized_shape, columns, eps):
    """The fast_key_of a norm's call whose per-column operands `columns` are
    contiguous tensors and whose normalized_shape names x's last dimension
    (their dtypes, devices and shapes, and eps, in the key); else None."""
    key = fast_key_of(name, x)  # First: None on a traced call.
    if key is None or (eps is not None and type(eps) is not float and
                       type(eps) is not int):
        return None
    if type(normalized_shape) is int:
        normalized_shape = (normalized_shape,)
    if normalized_shape != key[3]:
        return None
    for c in columns:
        if type(c) not in PLAIN or not c.is_contiguous():
            return None
        key += (c.dtype, c.get_device(), c.shape)
    return key + (eps,)


def _residual_key(x, residual, normalized_shape, weight, eps):
    """The _norm_key of the residual form's call, None unless the residual
    is a contiguous tensor of x's shape, dtype and device (a key holds x's
    row length alone)."""
    key = _norm_key("rms_norm_residual", x, normalized_shape, (weight,), eps)
    if key is None or type(residual) not in PLAIN or \
            not residual.is_contiguous() or _residual_error(x, residual):
        return None
    return key


def _as_rows(x, n):
    """x as contiguous rows of n (x itself where it already is: a reshape
    and a contiguous() cost the host more than the checks)."""
    if x.dim() == 2 and x.is_contiguous():
        return x
    return x.reshape(-1, n).contiguous()


def _rows_in_place(tensors, n):
    """The row inputs as the native ops take them: as they are where all are
    contiguous (any leading dimensions: no reshape, whose view would add an
    autograd node to the forward and to the backward), else as 2-D rows."""
    if all(t.is_contiguous() for t in tensors):
        return tensors
    return tuple(_as_rows(t, n) for t in tensors)


def _shaped(y, x):
    """The rows y in x's shape."""
    return y if y.dim() == x.dim() else y.view(x.shape)


def _column(c, x, fill, dtype):
    """The per-column operand c, contiguous; `fill` in `dtype` where c is
    None."""
    if c is None:
        return torch.full((x.size(-1),), fill, dtype=dtype, device=x.device)
    return c.contiguous()


def rms_norm(x, normalized_shape, weight=None, eps=None, residual=None):
    """F.rms_norm(x, normalized_shape, weight, eps) over the last dimension
    (normalized_shape: (N,)) on the compiled kernels; eps None is
    PyTorch's default, the f32 machine epsilon. The weight is of x's dtype
    or f32 (beside f16 or bf16 x: mixed precision), y of x's; a weight of
    another dtype runs on PyTorch's. With `residual` (x's shape, dtype and
    device), the row normalized is h = x + residual, a transformer block's
    residual stream, computed in the same kernel: returns (y, h)."""
    if residual is None:
        key = _norm_key("rms_norm", x, normalized_shape, (weight,), eps)
        y = fast_call(key, x, weight)
    else:
        key = _residual_key(x, residual, normalized_shape, weight, eps)
        y = fast_call(key, x, residual, weight)
    if y is not None:
        return y
    checked = _check_norm("rms_norm", x, normalized_shape,
                          {"weight": weight})
    if residual is not None:
        _check_residual(x, residual)
    if checked is None:
        h = x if residual is None else x + residual
        y = torch.nn.functional.rms_norm(h, normalized_shape, weight, eps)
        return y if residual is None else (y, h)
    n, dtype = checked
    eps = torch.finfo(torch.float32).eps if eps is None else float(eps)
    w = _column(weight, x, 1.0, dtype)
    if residual is None:
        (rows,) = _rows_in_place((x,), n)
        y = native_call("rms_norm", _RMS_NORM_KERNELS, (rows, w), eps,
                        fast_key=key, weight_dtype=dtype)
        if y is None:
            y, _ = rms_norm_op(_as_rows(rows, n), w, eps)
        return _shaped(y, x)
    rows = _rows_in_place((x, residual), n)
    out = native_call("rms_norm_residual", _RESIDUAL_KERNELS, (*rows, w), eps,
                      fast_key=key, weight_dtype=dtype)
    if out is None:
        out = rms_norm_residual_op(*(_as_rows(t, n) for t in rows), w, eps)
    y, h = out[:2]
    return _shaped(y, x), _shaped(h, x)


def _residual_error(x, residual):
    """The ValueError's message for a residual that is not a tensor of x's
    shape, dtype and device; else None."""
    if isinstance(residual, torch.Tensor) and residual.shape == x.shape \
            and residual.dtype == x.dtype and \
            residual.get_device() == x.get_device():
        return None
    return ("rowred.rms_norm: expected a residual of the input's shape "
            f"{tuple(x.shape)}, dtype {x.dtype} and device {x.device}, got "
            + (f"{tuple(residual.shape)}, {residual.dtype}, "
               f"{residual.device}" if isinstance(residual, torch.Tensor)
               else type(residual).__name__))


def _check_residual(x, residual):
    error = _residual_error(x, residual)
    if error:
        raise ValueError(error)


def layer_norm(x, normalized_shape, weight=None, bias=None, eps=1e-5):
    """F.layer_norm(x, normalized_shape, weight, bias, eps) over the last
    dimension (normalized_shape: (N,)) on the compiled kernels. The weight
    and bias are of x's dtype or both f32 (beside f16 or bf16 x: mixed
    precision), y of x's; other dtypes run on PyTorch's."""
    key = _norm_key("layer_norm", x, normalized_shape, (weight, bias), eps)
    y = fast_call(key, x, weight, bias)
    if y is not None:
        return y
    checked = _check_norm("layer_norm", x, normalized_shape,
                          {"weight": weight, "bias": bias})
    if checked is None:
        return torch.nn.functional.layer_norm(x, normalized_shape, weight,
                                              bias, eps)
    n, dtype = checked
    eps = float(eps)
    (rows,) = _rows_in_place((x,), n)
    columns = (_column(weight, x, 1.0, dtype), _column(bias, x, 0.0, dtype))
    y = native_call("layer_norm", _LAYER_NORM_KERNELS, (rows, *columns), eps,
                    fast_key=key, weight_dtype=dtype)
    if y is None:
        y, _, _ = layer_norm_op(_as_rows(rows, n), *columns, eps)
    return _shaped(y, x)
