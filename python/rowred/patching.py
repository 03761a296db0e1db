"""rowred.patch(model): a model's norms and loss on rowred's kernels.

    import rowred
    model = AutoModelForCausalLM.from_pretrained(...)
    rowred.patch(model)        # in place; returns the model
    ...
    rowred.unpatch(model)      # the model's own forwards again

patch() walks the model's modules and rebinds, on each instance, the
forward of the norms that compute what rowred's kernels do to
rowred.rms_norm or rowred.layer_norm, and sets a Hugging Face causal LM's
loss_function to rowred.cross_entropy (whose kernel writes the gradient in
the forward, and which reads the bf16 logits as they are instead of an f32
copy). torch.nn.LayerNorm and torch.nn.RMSNorm are taken by type; another
class named ...RMSNorm or ...LayerNorm (transformers has some 200: Llama's,
Gemma's 1 + weight, T5's LayerNorm that is an RMSNorm, Cohere's without a
bias, ...) by what its own forward computes on a probe (_probe). The
modules themselves, their parameters and state_dict keys stay: optimizers,
checkpoints and torch.compile see the same model. Mixed precision (f32
weights, 16-bit activations under torch.autocast) runs on the kernels of
an f32 weight; where a module's own forward then returns f32 (Llama's
`weight * x.to(dtype)`, found on a probe) so does the patched one. A call
whose tensors the kernels do not take (a CPU tensor, an input of another
dtype than f32, f16 and bf16, a weight of another dtype than the input but
f32, more arguments than the input) runs the module's own forward, and so
does a call torch.compile traces (Inductor fuses the norms itself; the
loss stays on rowred's kernel). The norms patch() leaves alone (another
formula, over channels, a gate, no weight) and a loss it does not know it
names in one warning.
"""
import warnings

import torch

from .norms import layer_norm, rms_norm
from .ops import _DTYPES, cross_entropy

# Relative error per probe row within which a module's forward computes an
# RMSNorm's or a LayerNorm's formula (_close): bf16's rounding (2^-8, a few
# times) passes; the other offset (below weights of about 50), another eps
# or the other formula misses by 20% or more.
_PROBE_TOLERANCE = 2e-2
# The loss functions of transformers.loss.loss_utils that patch() replaces.
CAUSAL_LM_LOSS = "ForCausalLMLoss"
_PATCHED = "_rowred_patched"


def _takes(module, x, mixed=True):
    """Whether the kernels take this call: an eager one (not traced by
    torch.compile) on a CUDA input of f32, f16 or bf16 whose dtype the
    weight and bias (where the module has them) share, or are f32 beside
    16-bit rows where `mixed`. Traced, the module's own forward goes into
    the graph for Inductor to fuse: a custom op a compiled graph calls
    costs the host more than Inductor's kernel (a compiled Llama decoded
    0.81x, Gemma 3 0.57x as fast with the norms on rowred's ops)."""
    if torch.compiler.is_compiling() or not x.is_cuda or \
            x.dtype not in _DTYPES:
        return False
    dtypes = {p.dtype for p in (getattr(module, "weight", None),
                                getattr(module, "bias", None))
              if p is not None}
    return not dtypes or dtypes == {x.dtype} or \
        (mixed and dtypes == {torch.float32})


def _as_module(self, x, y, promotes):
    """The patched forward's y as the module's own forward returns it:
    promoted to the f32 weight's dtype where that forward promotes (an f32
    weight beside 16-bit rows)."""
    if promotes and self.weight.dtype != x.dtype:
        return y.to(self.weight.dtype)
    return y


def _rms_norm_forward(self, x, *args, **kwargs):
    offset, eps, promotes = self.__dict__[_PATCHED]
    # More arguments (a gate, a residual) than the probe passed: the
    # module's own code, which knows them.
    if args or kwargs or not _takes(self, x, promotes is not None):
        return type(self).forward(self, x, *args, **kwargs)
    weight = self.weight + offset if offset else self.weight
    return _as_module(self, x, rms_norm(x, (x.size(-1),), weight, eps),
                      promotes)


def _layer_norm_forward(self, x):
    promotes = self.__dict__[_PATCHED]
    if not _takes(self, x, promotes is not None):
        return type(self).forward(self, x)
    y = layer_norm(x, self.normalized_shape, self.weight, self.bias,
                   self.eps)
    return _as_module(self, x, y, promotes)


def _probed_layer_norm_forward(self, x, *args, **kwargs):
    eps, promotes = self.__dict__[_PATCHED]
    if args or kwargs or not _takes(self, x, promotes is not None):
        return type(self).forward(self, x, *args, **kwargs)
    y = layer_norm(x, (x.size(-1),), self.weight,
                   getattr(self, "bias", None), eps)
    return _as_module(self, x, y, promotes)


def _torch_rms_norm_forward(self, x):
    promotes = self.__dict__[_PATCHED]
    if not _takes(self, x, promotes is not None):
        return type(self).forward(self, x)
    y = rms_norm(x, self.normalized_shape, self.weight, self.eps)
    return _as_module(self, x, y, promotes)


def causal_lm_loss(logits, labels, vocab_size, num_items_in_batch=None,
                   ignore_index=-100, shift_labels=None, **kwargs):
    """transformers' ForCausalLMLoss on rowred.cross_entropy: labels shifted
    left by one, the mean over the tokens not ignored (or the sum divided by
    num_items_in_batch), in f32."""
    if shift_labels is None:
        labels = torch.nn.functional.pad(labels.to(logits.device), (0, 1),
                                         value=ignore_index)
        shift_labels = labels[..., 1:]
    logits = logits.reshape(-1, vocab_size)
    shift_labels = shift_labels.reshape(-1).to(logits.device)
    reduction = "sum" if num_items_in_batch is not None else "mean"
    loss = cross_entropy(logits, shift_labels, ignore_index=ignore_index,
                         reduction=reduction, loss_dtype=torch.float32)
    if num_items_in_batch is not None:
        if torch.is_tensor(num_items_in_batch):
            num_items_in_batch = num_items_in_batch.to(loss.device)
        loss = loss / num_items_in_batch
    return loss


def _probe(module, eps, check):
    """check(x, y) on a probe over the last dimension of `module`'s weight,
    x, and its own forward's result on it, y, both in f64; None where the
    forward cannot run on it (the meta device, a sharded weight, a forward
    that needs more arguments), gives something of another shape, or the
    check cannot run. The rows have a mean far from zero (an RMSNorm and a
    LayerNorm differ there), and some a mean square of eps (another eps
    differs there); the weight is the module's as it is, in f32 or its own
    dtype."""
    weight = module.weight.detach()
    generator = torch.Generator().manual_seed(0)
    x = torch.randn(2, 2, weight.numel(), generator=generator) + 1.0
    if eps > 0:
        x[1] *= eps ** 0.5 / x[1].pow(2).mean(-1, keepdim=True).sqrt()
    try:
        x = x.to(weight.device)
        with torch.no_grad():
            y = type(module).forward(module, x)
        if not isinstance(y, torch.Tensor) or y.shape != x.shape:
            return None
        return check(x.double(), y.double())
    except Exception:  # noqa: BLE001 - a module the probe cannot run
        return None


def _close(y, want, normed):
    """Whether `y` is `want` within _PROBE_TOLERANCE on every row, against
    the rows' scale with or without the weight (`normed`: the rows
    normalized), so that Gemma's offset of 1 shows at any weight."""
    error = (y - want).norm(dim=-1) / (want.norm(dim=-1) +
                                       normed.norm(dim=-1))
    return bool((error <= _PROBE_TOLERANCE).all())


def _rms_offset(module, eps):
    """The offset (0.0, or 1.0 for Gemma's 1 + weight) with which the
    module's own forward computes x * rsqrt(mean(x^2) + eps) * (offset +
    weight) over the last dimension on a probe (_probe), or None."""
    def check(x, y):
        w = module.weight.detach().double()
        normed = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps)
        for offset in (0.0, 1.0):
            if _close(y, normed * (offset + w), normed):
                return offset
        return None
    return _probe(module, eps, check)


def _computes_layer_norm(module, eps):
    """Whether the module's own forward computes F.layer_norm over the last
    dimension with its weight, its bias (where it has one) and eps on a
    probe (_probe)."""
    def check(x, y):
        centered = x - x.mean(-1, keepdim=True)
        normed = centered * torch.rsqrt(
            centered.pow(2).mean(-1, keepdim=True) + eps)
        want = normed * module.weight.detach().double()
        bias = getattr(module, "bias", None)
        if bias is not None:
            want = want + bias.detach().double()
        return _close(y, want, normed)
    return bool(_probe(module, eps, check))


def _promotes(module):
    """Whether the module's own forward returns f32 for bf16 rows where its
    parameters are f32 (Llama's `weight * x.to(dtype)`), rather than the
    rows' dtype (Gemma's `type_as(x)`, F.rms_norm's): probed on a copy of
    its parameters in f32, with and without autocast. None where the probe
    cannot run or the two differ (a forward that calls F.layer_norm, which
    refuses the mix, or an op autocast runs in f32): the patched forward
    then leaves such calls to the module's own."""
    if not isinstance(getattr(module, "weight", None), torch.Tensor):
        return None
    params = {name: p.detach().float()
              for name, p in module.named_parameters(recurse=False)}
    device = module.weight.device
    x = torch.randn(2, module.weight.numel(), dtype=torch.bfloat16,
                    generator=torch.Generator().manual_seed(0)).to(device)
    found = set()
    for autocast in (False, True):
        # PyTorch warns of the mix (F.rms_norm's unfused path): the probe's
        # own, not the user's.
        try:
            with torch.no_grad(), warnings.catch_warnings(), \
                    torch.autocast(device.type, torch.bfloat16,
                                   enabled=autocast):
                warnings.simplefilter("ignore")
                y = torch.func.functional_call(module, params, (x,))
        except Exception:  # noqa: BLE001 - a module the probe cannot run
            return None
        found.add(y.dtype if isinstance(y, torch.Tensor) else None)
    if found == {torch.float32}:
        return True
    return False if found == {torch.bfloat16} else None


def _norm_patch(module):
    """(forward, what the forward reads) for a norm patch() replaces, or
    None."""
    if type(module) in (torch.nn.LayerNorm, torch.nn.RMSNorm):
        if len(module.normalized_shape) != 1:
            return None
        if type(module) is torch.nn.LayerNorm:
            return _layer_norm_forward, _promotes(module)
        return _torch_rms_norm_forward, _promotes(module)
    name = type(module).__name__
    if not name.endswith(("RMSNorm", "LayerNorm")):
        return None
    weight = getattr(module, "weight", None)
    bias = getattr(module, "bias", None)
    eps = getattr(module, "variance_epsilon", getattr(module, "eps", None))
    if not isinstance(weight, torch.Tensor) or weight.dim() != 1 or \
            weight.numel() == 0 or type(eps) not in (float, int) or eps < 0:
        return None
    if bias is not None and (not isinstance(bias, torch.Tensor) or
                             bias.shape != weight.shape):
        return None
    eps = float(eps)
    # T5's RMSNorm is named LayerNorm: without a bias, either formula.
    if bias is None:
        offset = _rms_offset(module, eps)
        if offset is not None:
            return _rms_norm_forward, (offset, eps, _promotes(module))
    if name.endswith("LayerNorm") and _computes_layer_norm(module, eps):
        return _probed_layer_norm_forward, (eps, _promotes(module))
    return None


def _loss_setter(model):
    """Whether `model` has a loss_function that can be set (transformers'
    PreTrainedModel)."""
    prop = getattr(type(model), "loss_function", None)
    return isinstance(prop, property) and prop.fset is not None


def patch(model):
    """Puts `model`'s norms and causal-LM loss on rowred's kernels, in place
    (see the module's docstring); returns `model`. Patching twice is
    harmless."""
    if not isinstance(model, torch.nn.Module):
        raise TypeError("rowred.patch: expected a torch.nn.Module, got "
                        f"{type(model).__name__}")
    left = set()
    for module in model.modules():
        if _PATCHED in module.__dict__:
            continue
        found = _norm_patch(module)
        if found is None:
            name = type(module).__name__
            if name.endswith(("RMSNorm", "LayerNorm")):
                left.add(name)
            continue
        forward, state = found
        module.__dict__[_PATCHED] = state
        module.forward = forward.__get__(module)
    loss = getattr(model, "loss_function", None) \
        if hasattr(type(model), "loss_function") else None
    if loss is not None and _PATCHED not in model.__dict__:
        if getattr(loss, "__name__", "") == CAUSAL_LM_LOSS and \
                _loss_setter(model):
            # The loss function set on the instance before, if any.
            model.__dict__[_PATCHED] = model.__dict__.get("_loss_function")
            model.loss_function = causal_lm_loss
        elif getattr(loss, "__name__", "") != causal_lm_loss.__name__:
            left.add(f"loss {getattr(loss, '__name__', type(loss).__name__)}")
    if left:
        warnings.warn("rowred.patch: left on their own code (not a norm "
                      "or loss rowred computes): " + ", ".join(sorted(left)),
                      stacklevel=2)
    return model


def unpatch(model):
    """Undoes patch(model): every module's own forward and the model's own
    loss function again; returns `model`."""
    for module in model.modules():
        if _PATCHED not in module.__dict__:
            continue
        if module is model and _loss_setter(model):
            previous = module.__dict__.pop(_PATCHED)
            if previous is None:
                del module._loss_function
            else:
                module.loss_function = previous
            continue
        del module.__dict__[_PATCHED]
        module.__dict__.pop("forward", None)
    return model
