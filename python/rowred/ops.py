"""The PyTorch custom ops: rowred::softmax and rowred::log_softmax (and
their safe forms rowred::softmax_safe and rowred::log_softmax_safe, whose
rows of -inf give zeros), their gradients rowred::softmax_backward and
rowred::log_softmax_backward, and rowred::logsumexp and
rowred::cross_entropy (per-row results).

Each op takes a CUDA tensor whose rows (the last dimension) are contiguous
and evenly strided, finds its kernel in the loaded packs (else compiles it
into the cache where the compiler is at hand), and launches it
through the runtime library on the current stream, with any workspace from
PyTorch's caching allocator. The ops have fake implementations (for
torch.compile) and autograd formulas on the gradient ops, which run the
compiled kernel for the row length where a pack (or the compiler) has one
and PyTorch's fused backward kernel where none does (packs build these
kernels for exact row lengths only: packs.EXACT_OPS). logsumexp and
cross_entropy run on their compiled kernels likewise, for the exact length
or any length (PyTorch's where a pack has neither). logsumexp's gradient,
rowred::logsumexp_backward, is one kernel over the saved input and
logsumexp (packs' logsumexp_backward); cross-entropy of logits that
require grad runs rowred::cross_entropy_train (eager calls of contiguous
logits: rowred._native's op of that name, its autograd in C++), whose
kernel writes the gradient in the forward (over the logits for
inplace_backward=True).
"""
import os
import threading
from typing import Tuple

import torch

from . import _native, _runtime, _scale, packs
from ._oplib import LIB as _lib
from ._oplib import (PLAIN, Op, _compiling, _dispatch_modes, current_device,
                     direct)

_DTYPES = {torch.float32: "f32", torch.float16: "f16", torch.bfloat16: "bf16"}

_lock = threading.Lock()
_packs = []
# The kernels loaded, by (metadata path, device index), and by what a call
# looks up: (op, dtype, N, device index, eps, weight dtype).
_loaded = {}
_kernels = {}
# (op, dtype, N, device index, eps, weight dtype) of the exact-length ops
# that run on PyTorch's kernels.
_no_kernel = set()

# The current stream of a device, as Triton's launcher reads it (about 0.1
# us; torch.cuda.current_stream's object costs 3).
_raw_stream = getattr(torch._C, "_cuda_getCurrentRawStream", None) or (
    lambda device: torch.cuda.current_stream(device).cuda_stream)


def load_pack(path):
    """Adds the pack at `path` to those searched (every loaded pack; the
    first loaded wins among equal kernels, packs.ranked_kernels); returns
    it."""
    pack = packs.Pack(path)
    with _lock:
        _packs.append(pack)
        _forget_lookups()
    return pack


def _forget_lookups():
    """Empties what earlier calls found in the packs (kernels, fallbacks,
    native ops, repeated calls' keys, workspaces): the next call of each
    looks it up again and records it."""
    _kernels.clear()
    _no_kernel.clear()
    _native_kernels.clear()
    _native.fast_calls.clear()
    _workspaces.clear()


def _default_packs():
    """Loads the packs of $ROWRED_PACKS (colon-separated), then the
    package's own (rowred/pack, where `pip install` bundled one)."""
    for path in filter(None, os.environ.get("ROWRED_PACKS", "").split(":")):
        load_pack(path)
    bundled = os.path.join(os.path.dirname(os.path.abspath(__file__)), "pack")
    if os.path.isfile(os.path.join(bundled, "manifest.json")):
        load_pack(bundled)


def _kernel(op, x, cols, eps=None, weight_dtype=None):
    device = x.get_device()
    key = (op, x.dtype, cols, device, eps, weight_dtype)
    kernel = _kernels.get(key)
    if kernel is not None:
        return kernel
    dtype = _DTYPES[x.dtype]
    weight = _DTYPES[weight_dtype] if weight_dtype is not None else None
    major, minor = torch.cuda.get_device_capability(device)
    sm = major * 10 + minor
    try:
        paths = packs.ranked_kernels(_packs, op, dtype, cols, sm, eps, weight)
    except packs.PackError:
        compiler = packs.find_compiler()
        if compiler is None:
            raise
        paths = [packs.cached_kernel(compiler, op, dtype, cols, f"sm_{sm}",
                                     eps, weight)]
    refused = []
    for path in paths:
        with _lock:
            kernel = _loaded.get((path, device))
            if kernel is None:
                kernel = _runtime.Kernel(path, device)
                _loaded[(path, device)] = kernel
        # The first that launches rows of `cols` on this device (many
        # rows: the main kernel, not a variant for a few).
        try:
            kernel.grid(1 << 16, cols)
        except _runtime.RowredError as e:
            refused.append(str(e))
            continue
        with _lock:
            _kernels[key] = kernel
        return kernel
    raise packs.PackError(f"no rowred kernel for {op} of {dtype} rows of "
                          f"{cols} elements launches on device {device}: "
                          + "; ".join(refused))


def check_input(name, x, dim):
    """The ValueError a user gets for a tensor the ops cannot take."""
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"rowred.{name}: expected a torch.Tensor, got "
                        f"{type(x).__name__}")
    if not x.is_cuda:
        raise ValueError(f"rowred.{name}: expected a CUDA tensor, got one on "
                         f"{x.device}")
    if x.dtype not in _DTYPES:
        raise ValueError(f"rowred.{name}: expected float32, float16 or "
                         f"bfloat16, got {x.dtype}")
    if x.dim() == 0:
        raise ValueError(f"rowred.{name}: expected at least one dimension")
    if dim not in (-1, x.dim() - 1):
        raise ValueError(f"rowred.{name}: reduces the last dimension only "
                         f"(dim=-1), got dim={dim}; move the dimension last "
                         "(x.transpose(dim, -1))")
    if x.size(-1) > 1 and x.stride(-1) != 1:
        raise ValueError(f"rowred.{name}: the last dimension must be "
                         "contiguous (stride 1); pass x.contiguous()")


def _rows(x):
    """x as a 2-D view of evenly strided rows, or None."""
    n = x.size(-1)
    try:
        return x.view(-1, n) if x.dim() != 2 else x
    except RuntimeError:
        return None


def _launch(op, x):
    n = x.size(-1)
    # empty_like rather than torch.empty(x.shape, dtype=..., device=...):
    # 1.5 against 4 us of the host's time on the H200 machine.
    y = torch.empty_like(x, memory_format=torch.contiguous_format)
    if x.numel() == 0:
        return y
    x2 = _rows(x)
    if x2 is None:
        raise ValueError(f"rowred.{op}: the rows of a tensor of shape "
                         f"{tuple(x.shape)} and strides {x.stride()} are not "
                         "evenly strided; pass x.contiguous()")
    rows = x2.size(0)
    x_stride = x2.stride(0) if rows > 1 else n
    if x_stride < n:
        raise ValueError(f"rowred.{op}: rows of {n} elements {x_stride} "
                         "apart overlap; pass x.contiguous()")
    _launch_operands(_kernel(op, x, n), x.get_device(),
                     [x2.data_ptr(), y.data_ptr()], [x_stride, n], rows, n)
    return y


def _row_op(name):
    """The op rowred::<name> of one tensor, whose rows run through the
    kernel of pack op `name`."""
    def launch(x: torch.Tensor) -> torch.Tensor:
        return _launch(name, x)

    return Op(launch, lambda x: torch.empty_like(
        x, memory_format=torch.contiguous_format), name)


softmax_op = _row_op("softmax")
log_softmax_op = _row_op("log_softmax")
softmax_safe_op = _row_op("softmax_safe")
log_softmax_safe_op = _row_op("log_softmax_safe")


def _exact_kernel(op, x, n, eps=None, weight_dtype=None):
    """The kernel of `op` for rows of `n` elements of x's dtype (exactly
    `n` for packs.EXACT_OPS; with the epsilon `eps` for packs.EPS_OPS; for
    packs.WEIGHT_OPS, a weight of `weight_dtype`, None for x's), or
    None where none is found or compiled (no pack has one and there is no
    compiler): not tried again for the shape."""
    if weight_dtype == x.dtype:
        weight_dtype = None
    key = (op, x.dtype, n, x.get_device(), eps, weight_dtype)
    if key in _no_kernel:
        return None
    try:
        return _kernel(op, x, n, eps, weight_dtype)
    except packs.PackError:
        with _lock:
            _no_kernel.add(key)
        return None


# The runtime handles of a native op's kernels by (pack ops, dtype, N,
# device index, eps, weight dtype); None where a pack lacks one of them.
_native_kernels = {}


def native_call(name, kernel_ops, tensors, eps=None, args=(),
                fast_key=None, weight_dtype=None):
    """The native op `name` (rowred._native) of `tensors` and `args`, with
    the kernels of the pack ops `kernel_ops` (the forward's, then the
    backward's) for rows of tensors[0]'s dtype, length and device (and, for
    packs.WEIGHT_OPS, a weight of `weight_dtype`: None for the rows'), the
    forward's with the epsilon `eps` for packs.EPS_OPS; None where it does
    not apply: the native module absent, a call the dispatcher must see
    (_oplib.direct), or a kernel missing. Where it applies, `fast_key` (a
    fast_key_of) then maps to the op and its kernels in
    _native.fast_calls."""
    # direct() first: on a traced call (torch.compile) nothing here may
    # run, not even the module's first load under its lock, at which
    # dynamo would break the graph.
    if not direct(tensors):
        return None
    native = _native.op(name)
    if native is None:
        return None
    x = tensors[0]
    n = x.size(-1)
    key = (kernel_ops, x.dtype, n, x.get_device(), eps, weight_dtype)
    handles = _native_kernels.get(key, False)
    if handles is False:
        kernels = [_exact_kernel(op, x, n, eps if op in packs.EPS_OPS
                                 else None, weight_dtype) if n else None
                   for op in kernel_ops]
        handles = None if None in kernels else \
            tuple(k.handle for k in kernels)
        _native_kernels[key] = handles
    if handles is None:
        return None
    if fast_key is not None:
        _native.fast_calls[fast_key] = (native, (*args, *handles))
    return native(*tensors, *args, *handles)


def fast_key_of(name, x):
    """The key (rowred._native.fast_calls) of an eager call of the public
    function `name` on x: (name, dtype, device index, x.shape[-1:]), to
    which a caller adds the other arguments as they bear on the checks and
    the kernels; None where the call must take the whole path: traced,
    under a dispatch mode, a tensor subclass, or x not contiguous. A key
    found in fast_calls is a call whose checks passed and whose kernels the
    packs hold."""
    if _compiling() or type(x) not in PLAIN or _dispatch_modes() \
            or not x.is_contiguous():
        return None
    return (name, x.dtype, x.get_device(), x.shape[-1:])


def fast_call(key, *tensors):
    """The native op of `key` (fast_key_of) on `tensors`, or None where no
    earlier call of the key reached it."""
    # No dictionary read on a traced call (key None), which torch.compile
    # would guard on.
    if key is None:
        return None
    found = _native.fast_calls.get(key)
    if found is None:
        return None
    native, trailing = found
    return native(*tensors, *trailing)


# Zeroed workspaces by (kernel, device, stream). A launch that completes
# leaves its kernel's workspace as the kernel needs it next (docs/abi.md:
# zero; the column sums' partial rows are written before they are read),
# so one buffer serves a kernel's launches on a stream in turn instead of a
# zeroing per launch (a memset and an allocation: 55 us of the host's time
# per call on the H200 machine). A capture into a CUDA graph takes a buffer
# of its own.
_workspaces = {}


def _workspace(kernel, device, stream, nbytes):
    if torch.cuda.is_current_stream_capturing():
        return torch.zeros(nbytes, dtype=torch.uint8, device=device)
    key = (kernel, device, stream)
    workspace = _workspaces.get(key)
    if workspace is None or workspace.numel() < nbytes:
        workspace = torch.zeros(nbytes, dtype=torch.uint8, device=device)
        _workspaces[key] = workspace
    return workspace


def _launch_operands(kernel, device, pointers, strides, rows, n):
    """Launches `kernel` on the current stream of `device` (an index) with
    the device address of each operand (the kernel's order) and the row
    stride of each 2-D operand, with a zeroed workspace from PyTorch's
    caching allocator where the kernel takes one."""
    stream = _raw_stream(device)
    nbytes = kernel.workspace_bytes(rows, n)
    workspace = _workspace(kernel, device, stream, nbytes).data_ptr() \
        if nbytes else 0
    if device == current_device():
        kernel.launch_operands(stream, pointers, strides, rows, n, workspace)
        return
    # The runtime makes the kernel's context current: from another
    # device's, PyTorch's current device is set for the launch and back.
    with torch.cuda.device(device):
        kernel.launch_operands(stream, pointers, strides, rows, n, workspace)


def _launch_backward(op, y, dy):
    """dx of `op` (softmax_backward: y * (dy - sum(dy * y)); log_softmax_
    backward: dy - exp(y) * sum(dy)) from the forward's output y and the
    gradient dy, on the compiled kernel for rows of y's length, else on
    PyTorch's fused kernel."""
    n = y.size(-1)
    y, dy = y.contiguous(), dy.contiguous().to(y.dtype)
    dx = torch.empty_like(y)
    if y.numel() == 0:
        return dx
    kernel = _exact_kernel(op, y, n)
    if kernel is None:
        aten = (torch.ops.aten._softmax_backward_data
                if op == "softmax_backward"
                else torch.ops.aten._log_softmax_backward_data)
        return aten(dy, y, -1, y.dtype)
    _launch_operands(kernel, y.get_device(),
                     [y.data_ptr(), dy.data_ptr(), dx.data_ptr()], [n, n, n],
                     y.numel() // n, n)
    return dx


def _backward_op(name):
    """The op rowred::<name> (dx from the forward's output y and the
    gradient dy) on the kernel of pack op `name`."""
    def launch(y: torch.Tensor, dy: torch.Tensor) -> torch.Tensor:
        return _launch_backward(name, y, dy)

    return Op(launch, lambda y, dy: torch.empty_like(
        y, memory_format=torch.contiguous_format), name)


softmax_backward_op = _backward_op("softmax_backward")
log_softmax_backward_op = _backward_op("log_softmax_backward")


def _save_output(ctx, inputs, output):
    ctx.save_for_backward(output)


def _softmax_backward(ctx, grad):
    (y,) = ctx.saved_tensors
    return softmax_backward_op(y, grad)


def _log_softmax_backward(ctx, grad):
    (y,) = ctx.saved_tensors
    return log_softmax_backward_op(y, grad)


def _log_softmax_safe_backward(ctx, grad):
    # A row of -inf gave zeros, which do not depend on it: its gradient is
    # 0, where log_softmax's would be grad - sum(grad). Such a row is the
    # only one of N >= 2 elements whose log-probabilities are all 0 (a row
    # of one element has gradient 0 either way).
    (y,) = ctx.saved_tensors
    dx = log_softmax_backward_op(y, grad)
    return dx.masked_fill((y == 0).all(dim=-1, keepdim=True), 0)


softmax_op.register_autograd(_softmax_backward, _save_output)
log_softmax_op.register_autograd(_log_softmax_backward, _save_output)
# softmax's gradient y * (dy - sum(dy * y)) is already 0 on rows of zeros.
softmax_safe_op.register_autograd(_softmax_backward, _save_output)
log_softmax_safe_op.register_autograd(_log_softmax_safe_backward,
                                       _save_output)


def _row_results(op, x, labels=None):
    """The per-row results of `op` over the rows of x (2-D, rows last): the
    logsumexp, or cross-entropy's (loss, logsumexp), as f32 tensors of one
    element per row, on the compiled kernel; None where there is none for
    the row length (not tried again for the shape)."""
    n = x.size(-1)
    x = x.contiguous()
    rows = x.size(0)
    outs = [x.new_empty((rows,), dtype=torch.float32)
            for _ in range(2 if op == "cross_entropy" else 1)]
    if rows == 0 or n == 0:
        return outs if rows == 0 else None
    kernel = _exact_kernel(op, x, n)
    if kernel is None:
        return None
    pointers = [x.data_ptr()]
    if labels is not None:
        labels = labels.contiguous()
        pointers.append(labels.data_ptr())
    pointers += [o.data_ptr() for o in outs]
    _launch_operands(kernel, x.get_device(), pointers, [n], rows, n)
    return outs


def _logsumexp(x: torch.Tensor) -> torch.Tensor:
    outs = _row_results("logsumexp", x)
    if outs is None:
        return torch.logsumexp(x.float(), -1)
    return outs[0]


def _cross_entropy(x: torch.Tensor,
                   labels: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
    outs = _row_results("cross_entropy", x, labels)
    if outs is None:
        xf = x.float()
        return (torch.nn.functional.cross_entropy(
            xf, labels, ignore_index=packs.IGNORE_INDEX, reduction="none"),
            torch.logsumexp(xf, -1))
    return outs[0], outs[1]


logsumexp_op = Op(
    _logsumexp, lambda x: x.new_empty(x.shape[:-1], dtype=torch.float32),
    "logsumexp")
cross_entropy_op = Op(
    _cross_entropy,
    lambda x, labels: (x.new_empty(x.shape[:-1], dtype=torch.float32),
                       x.new_empty(x.shape[:-1], dtype=torch.float32)),
    "cross_entropy")


def _softmax_of(x, lse):
    """softmax(x) in f32 from the rows' logsumexp."""
    return torch.exp(x.float() - lse.unsqueeze(-1))


def _logsumexp_grad(x: torch.Tensor, lse: torch.Tensor,
                    grad: torch.Tensor) -> torch.Tensor:
    """dx = grad * exp(x - lse) for the rows of x (2-D, rows last), their
    logsumexp and its gradient (f32, one per row), in x's dtype: one read
    of x and one write on the compiled kernel (packs' logsumexp_backward),
    else a PyTorch expression."""
    rows, n = x.shape
    x = x.contiguous()
    dx = torch.empty_like(x)
    kernel = _exact_kernel("logsumexp_backward", x, n) if x.numel() else None
    if kernel is None:
        if x.numel():
            dx.copy_(_softmax_of(x, lse) * grad.unsqueeze(-1))
        return dx
    lse, grad = (t.to(torch.float32).contiguous() for t in (lse, grad))
    _launch_operands(kernel, x.get_device(),
                     [x.data_ptr(), dx.data_ptr(), lse.data_ptr(),
                      grad.data_ptr()], [n, n], rows, n)
    return dx


logsumexp_backward_op = Op(
    _logsumexp_grad,
    lambda x, lse, grad: torch.empty_like(
        x, memory_format=torch.contiguous_format), "logsumexp_backward")


def _save_logsumexp(ctx, inputs, output):
    ctx.save_for_backward(inputs[0], output)


def _logsumexp_backward(ctx, grad):
    x, lse = ctx.saved_tensors
    return logsumexp_backward_op(x, lse, grad)


def _save_cross_entropy(ctx, inputs, output):
    ctx.save_for_backward(inputs[0], inputs[1], output[1])


def _cross_entropy_backward(ctx, grad_loss, grad_lse):
    # d loss / dx = softmax - one_hot(label) (0 where ignored); d lse / dx =
    # softmax.
    x, labels, lse = ctx.saved_tensors
    p = _softmax_of(x, lse)
    kept = labels != packs.IGNORE_INDEX
    g = torch.where(kept, grad_loss, torch.zeros_like(grad_loss))
    dx = p * (g + grad_lse).unsqueeze(-1)
    rows = torch.arange(x.size(0), device=x.device)
    dx[rows[kept], labels[kept]] -= g[kept]
    return dx.to(x.dtype), None


logsumexp_op.register_autograd(_logsumexp_backward, _save_logsumexp)
cross_entropy_op.register_autograd(_cross_entropy_backward,
                                   _save_cross_entropy)


def logsumexp(x, dim=-1):
    """torch.logsumexp(x, dim) on the compiled kernels (dim: the last), in
    x's dtype."""
    check_input("logsumexp", x, dim)
    shape = x.shape[:-1]
    lse = logsumexp_op(x.reshape(-1, x.size(-1)))
    return lse.reshape(shape).to(x.dtype)


_REDUCTIONS = ("none", "mean", "sum")


def _loss_scale(labels, rows, reduction):
    """The per-row factor of the gradient the kernel writes (the reciprocal
    of the count of rows not ignored for a mean, 1 otherwise, in f32) and
    that count (None unless a mean), computed on the GPU."""
    if reduction == "mean":
        count = (labels != packs.IGNORE_INDEX).sum()
        # An int64 count's reciprocal is of the default float dtype; the
        # kernel reads f32 (a no-op conversion unless that was changed).
        return count.reciprocal().to(torch.float32).expand(
            rows).contiguous(), count
    return torch.ones(rows, dtype=torch.float32, device=labels.device), None


def _reduce_loss(loss, reduction, count):
    if reduction == "none":
        return loss
    return loss.sum() / count if reduction == "mean" else loss.sum()


def _launch_cross_entropy_grad(kernel, logits, labels, grad, reduction):
    """The loss of `reduction` over the rows of logits, whose gradient the
    kernel writes to `grad` (logits' shape; may be the logits themselves),
    scaled for the reduction."""
    rows, n = logits.shape
    scale, count = _loss_scale(labels, rows, reduction)
    loss = logits.new_empty((rows,), dtype=torch.float32)
    _launch_operands(kernel, logits.get_device(),
                     [logits.data_ptr(), grad.data_ptr(), labels.data_ptr(),
                      scale.data_ptr(), loss.data_ptr()],
                     [logits.stride(0) if rows > 1 else n,
                      grad.stride(0) if rows > 1 else n], rows, n)
    return _reduce_loss(loss, reduction, count)


def _scale_gradient(ctx, dx, reduction, grad):
    """The gradient of the logits, `dx` as the forward's kernel wrote it
    (a buffer of the op's own, or the logits), for the incoming gradient of
    the loss, applied to dx in place: per row for 'none'; for a mean or sum
    a 0-d factor, skipped on the GPU when it is 1 (the common
    loss.backward())."""
    if reduction == "none":
        grad = grad.unsqueeze(-1)
    if type(dx) is not torch.Tensor:
        # Traced (torch.compile's AOT autograd: a functional or fake
        # tensor), where a mutation of the forward's saved output is not
        # allowed: the product, which Inductor emits as one kernel.
        return dx * grad.to(dx.dtype)
    factor = _factor_since_earlier(ctx, grad)
    if reduction == "none":
        # Through .data, as the kernels write: what a kept graph saved (the
        # logits, or the buffer) stays at its saved version.
        dx.data.mul_(factor.to(dx.dtype))
    else:
        scale_rows_op(dx, factor)
    return dx


def _factor_since_earlier(ctx, grad):
    """The factor by which to scale in place a gradient that an earlier
    backward of the same kept graph (retain_graph) scaled by its own
    incoming gradient: the quotient of the two (in f32); on the first
    backward, `grad` itself."""
    earlier = getattr(ctx, "factor", None)
    ctx.factor = grad
    return grad if earlier is None else grad.float() / earlier.float()


def _scale_rows(x: torch.Tensor, factor: torch.Tensor) -> None:
    _scale.scale_rows_(x, factor)


# x *= factor in place (x 2-D, factor 0-d), as an op that torch.compile
# keeps in the graphs of the backward it traces.
_lib.define("scale_rows_(Tensor(a!) x, Tensor factor) -> ()")
_lib.impl("scale_rows_", _scale_rows, "CUDA")
torch.library.register_fake("rowred::scale_rows_", lambda x, factor: None,
                            lib=_lib)
scale_rows_op = torch.ops.rowred.scale_rows_.default


def _cross_entropy_train(logits: torch.Tensor, labels: torch.Tensor,
                         reduction: int) -> Tuple[torch.Tensor, torch.Tensor]:
    """The loss of the reduction _REDUCTIONS[reduction] (f32) and its
    gradient with respect to the logits (2-D, rows contiguous), from one
    kernel (packs' cross_entropy_grad) that reads the logits once and
    writes the gradient to a new buffer; where there is no such kernel,
    PyTorch's."""
    rows, n = logits.shape
    name = _REDUCTIONS[reduction]
    grad = logits.new_empty((rows, n))
    if logits.stride(0) < n and rows > 1:
        logits = logits.contiguous()
    kernel = _exact_kernel("cross_entropy_grad", logits, n) \
        if logits.numel() else None
    if kernel is None:
        with torch.enable_grad():
            x = logits.detach().float().requires_grad_()
            loss = torch.nn.functional.cross_entropy(
                x, labels, ignore_index=packs.IGNORE_INDEX, reduction=name)
            (dx,) = torch.autograd.grad(loss.sum(), x)
        grad.copy_(dx)
        return loss.detach(), grad
    return _launch_cross_entropy_grad(kernel, logits, labels, grad, name), \
        grad


def _cross_entropy_train_fake(logits, labels, reduction):
    rows = logits.shape[:1] if _REDUCTIONS[reduction] == "none" else ()
    return (logits.new_empty(rows, dtype=torch.float32),
            torch.empty_like(logits,
                             memory_format=torch.contiguous_format))


cross_entropy_train_op = Op(_cross_entropy_train, _cross_entropy_train_fake,
                            "cross_entropy_train")


def _save_train_gradient(ctx, inputs, output):
    # No zeros materialized for the gradient output's (absent) gradient: a
    # logits-sized buffer.
    ctx.set_materialize_grads(False)
    ctx.mark_non_differentiable(output[1])
    ctx.reduction = _REDUCTIONS[inputs[2]]
    ctx.save_for_backward(output[1])


def _cross_entropy_train_backward(ctx, grad, unused):
    (dx,) = ctx.saved_tensors
    return _scale_gradient(ctx, dx, ctx.reduction, grad), None, None


cross_entropy_train_op.register_autograd(_cross_entropy_train_backward,
                                         _save_train_gradient)


class _CrossEntropyInPlace(torch.autograd.Function):
    """Cross-entropy whose forward writes the gradient over the logits (one
    kernel: the loss and `scale * (softmax - one_hot)`, the scale `1 /
    count` of the rows not ignored for a mean, 1 otherwise), so that no
    second logits-sized buffer is ever held; the backward hands that buffer
    on, scaled by the incoming gradient when it is not 1."""

    @staticmethod
    def forward(ctx, logits, labels, reduction, kernel):
        loss = _launch_cross_entropy_grad(kernel, logits, labels, logits,
                                          reduction)
        ctx.reduction = reduction
        # The logits now hold the gradient; the kernel wrote them through
        # their address, so their version is unchanged.
        ctx.save_for_backward(logits)
        return loss

    @staticmethod
    def backward(ctx, grad):
        (dx,) = ctx.saved_tensors
        return _scale_gradient(ctx, dx, ctx.reduction, grad), None, None, \
            None


def cross_entropy(logits, labels, ignore_index=-100, label_smoothing=0.0,
                  reduction="mean", inplace_backward=False, loss_dtype=None,
                  check_labels=False):
    """F.cross_entropy(logits, labels, ...) for logits of shape (N, C) and
    int64 labels of shape (N,) on the compiled kernels; other ignore_index
    and label_smoothing values run on PyTorch's.

    For logits that require grad, the forward's kernel (packs.EXACT_OPS's
    cross_entropy_grad) writes the gradient as well, into a new buffer, and
    the backward only scales it by the incoming gradient (left out on the
    GPU when that is 1): the logits are read once in the whole step. With
    `inplace_backward`, it writes the gradient over the logits instead: the
    logits' values are gone after the call, and training at a large
    vocabulary holds no second logits-sized buffer. Where the pack has no
    such kernel for C, PyTorch's F.cross_entropy runs, forward and
    backward. The loss has the logits' dtype, as F.cross_entropy's, or
    `loss_dtype` (torch.float32: the kernels' f32 loss, not rounded to
    bf16, with no f32 copy of the logits). Without a gradient, the mean and
    the sum are summed over the rows in the kernel where the pack has
    cross_entropy_sum's (eager calls); elsewhere the per-row loss is
    reduced with PyTorch's calls.

    A label outside [0, C) other than `ignore_index` gives its row a NaN
    loss and gradient; with `check_labels`, a ValueError naming the row
    instead (which reads the labels back to the host: a synchronization)."""
    key = _loss_key(logits, labels, ignore_index, label_smoothing, reduction,
                    inplace_backward, loss_dtype, check_labels)
    loss = fast_call(key, logits, labels)
    if loss is not None:
        return loss if loss.dtype == key[-2] else loss.to(key[-2])
    check_input("cross_entropy", logits, -1)
    if logits.dim() != 2:
        raise ValueError("rowred.cross_entropy: expected logits of shape "
                         f"(N, C), got {tuple(logits.shape)}")
    error = _labels_error(logits, labels)
    if error:
        raise ValueError(error)
    if reduction not in _REDUCTIONS:
        raise ValueError("rowred.cross_entropy: reduction must be 'none', "
                         f"'mean' or 'sum', got '{reduction}'")
    if check_labels:
        _check_labels(labels, logits.size(1), ignore_index)
    loss_dtype = loss_dtype or logits.dtype
    if ignore_index != packs.IGNORE_INDEX or label_smoothing != 0.0:
        return torch.nn.functional.cross_entropy(
            logits, labels, ignore_index=ignore_index,
            label_smoothing=label_smoothing, reduction=reduction).to(
                loss_dtype)
    in_logits_dtype = loss_dtype == logits.dtype
    if logits.requires_grad and torch.is_grad_enabled():
        loss = _cross_entropy_training(logits, labels.contiguous(), reduction,
                                       inplace_backward, in_logits_dtype, key)
        return loss if loss.dtype == loss_dtype else loss.to(loss_dtype)
    loss = None
    if reduction != "none" and logits.numel() <= _TOTAL_MAX_ELEMENTS:
        # Summed over the rows in the kernel (packs' cross_entropy_sum).
        loss = native_call("cross_entropy_total", ("cross_entropy_sum",),
                           (logits, labels),
                           args=(reduction == "mean", in_logits_dtype),
                           fast_key=key)
    if loss is None:
        loss = native_call("cross_entropy_loss", ("cross_entropy",),
                           (logits, labels),
                           args=(_REDUCTIONS.index(reduction),
                                 in_logits_dtype),
                           fast_key=key)
    if loss is not None:
        return loss if loss.dtype == loss_dtype else loss.to(loss_dtype)
    loss, _ = cross_entropy_op(logits, labels)
    if reduction == "sum":
        loss = loss.sum()
    elif reduction == "mean":
        loss = loss.sum() / (labels != ignore_index).sum()
    return loss.to(loss_dtype)


# The most logits whose reduced loss the kernel summing it over the rows
# (cross_entropy_sum) takes. H200, bench/experiments/ce_total_ab.py, the
# mean against the per-row kernel and PyTorch's reduction: 19-41 against
# 50-73 us per eager call from 8 x 1024 to 1024 x 32000 (the host's time),
# level at 2048 x 32000; beyond, the per-row kernel's grid of one block
# per row led (bf16 4096 x 32000: 84 against 88 us eager, 77 against 88
# replayed in a CUDA graph) over the totals' persistent grid, which their
# grid barrier needs.
_TOTAL_MAX_ELEMENTS = 1 << 26


def _loss_key(logits, labels, ignore_index, label_smoothing, reduction,
              inplace_backward, loss_dtype, check_labels):
    """The fast_key_of cross_entropy's call on 2-D logits and int64 labels
    of one per row on their device (the arguments, whether the call
    computes a gradient, the loss's dtype and whether the kernel sums the
    rows in the key, the loss's dtype last but one); else None."""
    key = fast_key_of("cross_entropy", logits)  # First: None when traced.
    if key is None or check_labels or logits.dim() != 2 or \
            type(labels) not in PLAIN or _labels_error(logits, labels):
        return None
    training = logits.requires_grad and torch.is_grad_enabled()
    return key + (ignore_index, label_smoothing, reduction, training,
                  training and inplace_backward, loss_dtype or logits.dtype,
                  not training and reduction != "none" and
                  logits.numel() <= _TOTAL_MAX_ELEMENTS)


def _labels_error(logits, labels):
    """The ValueError's message for labels that are not int64, one per row
    of the 2-D logits, on the logits' device; else None."""
    if not isinstance(labels, torch.Tensor) or \
            labels.shape != logits.shape[:1] or labels.dtype != torch.int64:
        return ("rowred.cross_entropy: expected int64 labels of "
                f"shape ({logits.size(0)},), got "
                f"{getattr(labels, 'dtype', type(labels).__name__)}"
                f" {tuple(getattr(labels, 'shape', ()))}")
    if labels.get_device() != logits.get_device():
        return ("rowred.cross_entropy: labels on "
                f"{labels.device}, logits on {logits.device}")
    return None


def _check_labels(labels, classes, ignore_index):
    """ValueError for the first label outside [0, classes) other than
    ignore_index."""
    bad = ((labels < 0) | (labels >= classes)) & (labels != ignore_index)
    rows = bad.nonzero()
    if rows.numel():
        row = int(rows[0, 0])
        raise ValueError(f"rowred.cross_entropy: label {int(labels[row])} of "
                         f"row {row} is outside [0, {classes}) and is not "
                         f"the ignore_index {ignore_index} ({rows.size(0)} "
                         "such rows)")


def _cross_entropy_training(logits, labels, reduction, inplace,
                            in_logits_dtype, fast_key=None):
    """The loss of logits that require grad (f32 from the kernels; the
    native op's in the logits' dtype with `in_logits_dtype`), whose
    gradient the forward's kernel writes (over the logits with `inplace`),
    so that the backward only scales it. Eager calls of contiguous logits
    run on the native op (its autograd in C++; `fast_key` maps to it
    then); eager calls without the kernel run PyTorch's fused forward and
    backward; under torch.compile the op decides when it runs."""
    n = logits.size(1)
    if logits.is_contiguous():
        loss = native_call("cross_entropy_train", ("cross_entropy_grad",),
                           (logits, labels),
                           args=(_REDUCTIONS.index(reduction),
                                 in_logits_dtype, inplace),
                           fast_key=fast_key)
        if loss is not None:
            return loss
    if not torch.compiler.is_compiling():
        kernel = _exact_kernel("cross_entropy_grad", logits, n) \
            if logits.numel() else None
        if kernel is None:
            return torch.nn.functional.cross_entropy(logits, labels,
                                                     reduction=reduction)
        if inplace and logits.stride(0) >= n:
            return _CrossEntropyInPlace.apply(logits, labels, reduction,
                                              kernel)
    loss, _ = cross_entropy_train_op(logits, labels,
                                     _REDUCTIONS.index(reduction))
    return loss


def softmax(x, dim=-1, safe=False):
    """torch.softmax(x, dim) on the compiled kernels (dim: the last). With
    `safe`, a row that is entirely -inf (a fully masked attention row) gives
    zeros instead of NaN, as PyTorch's _safe_softmax."""
    name = "softmax_safe" if safe else "softmax"
    key = fast_key_of(name, x) if dim == -1 else None
    y = fast_call(key, x)
    if y is not None:
        return y
    check_input("softmax", x, dim)
    y = _native_softmax(name, "softmax_backward", x, key)
    if y is not None:
        return y
    if safe:
        return softmax_safe_op(x)
    return softmax_op(x)


def log_softmax(x, dim=-1, safe=False):
    """torch.log_softmax(x, dim) on the compiled kernels (dim: the last).
    With `safe`, a row that is entirely -inf gives zeros instead of NaN, and
    a zero gradient."""
    key = fast_key_of("log_softmax", x) if dim == -1 and not safe else None
    y = fast_call(key, x)
    if y is not None:
        return y
    check_input("log_softmax", x, dim)
    if safe:
        return log_softmax_safe_op(x)
    y = _native_softmax("log_softmax", "log_softmax_backward", x, key)
    if y is not None:
        return y
    return log_softmax_op(x)


def _native_softmax(forward, backward, x, fast_key=None):
    """y of the pack op `forward` with the gradient of `backward` on the
    native op, where it applies (native_call) and x's rows are contiguous
    or evenly strided 2-D rows that do not overlap; else None."""
    if not x.is_contiguous() and (
            x.dim() != 2 or (x.size(0) > 1 and x.stride(0) < x.size(1))):
        return None
    return native_call("softmax", (forward, backward), (x,),
                       fast_key=fast_key)


_default_packs()
