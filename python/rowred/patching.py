"""rowred.patch(model): a model's norms and loss on rowred's kernels.

    import rowred
    model = AutoModelForCausalLM.from_pretrained(...)
    rowred.patch(model)        # in place; returns the model
    ...
    rowred.unpatch(model)      # the model's own forwards again

patch() walks the model's modules and rebinds, on each instance, the
forward of the norms it knows to rowred.rms_norm or rowred.layer_norm, and
sets a Hugging Face causal LM's loss_function to rowred.cross_entropy
(whose kernel writes the gradient in the forward, and which reads the
bf16 logits as they are instead of an f32 copy). The modules themselves,
their parameters and state_dict keys stay: optimizers, checkpoints and
torch.compile see the same model. A call whose tensors the kernels do not
take (a CPU tensor, a weight of another dtype than the input) runs the
module's own forward. What patch() does not know (another RMSNorm class,
another loss) it leaves alone and names in one warning.
"""
import warnings

import torch

from .norms import layer_norm, rms_norm
from .ops import cross_entropy

# Hugging Face transformers' RMSNorm classes, by name, that compute
# x * rsqrt(mean(x^2) + eps) * (offset + weight) over the last dimension:
# the offset is 1 for Gemma's, whose weight starts at zero.
RMS_NORMS = {
    "LlamaRMSNorm": 0.0, "MistralRMSNorm": 0.0, "MixtralRMSNorm": 0.0,
    "Qwen2RMSNorm": 0.0, "Qwen3RMSNorm": 0.0, "Qwen3MoeRMSNorm": 0.0,
    "Phi3RMSNorm": 0.0, "GemmaRMSNorm": 1.0, "Gemma2RMSNorm": 1.0,
    "Gemma3RMSNorm": 1.0,
}
# The loss functions of transformers.loss.loss_utils that patch() replaces.
CAUSAL_LM_LOSS = "ForCausalLMLoss"
_PATCHED = "_rowred_patched"


def _takes(module, x):
    """Whether the kernels take this call: a CUDA input of the weight's
    dtype (or no weight)."""
    weight = getattr(module, "weight", None)
    return x.is_cuda and (weight is None or weight.dtype == x.dtype)


def _rms_norm_forward(self, x):
    if not _takes(self, x):
        return type(self).forward(self, x)
    offset, eps = self.__dict__[_PATCHED]
    weight = self.weight + offset if offset else self.weight
    return rms_norm(x, (x.size(-1),), weight, eps)


def _layer_norm_forward(self, x):
    if not _takes(self, x):
        return type(self).forward(self, x)
    return layer_norm(x, self.normalized_shape, self.weight, self.bias,
                      self.eps)


def _torch_rms_norm_forward(self, x):
    if not _takes(self, x):
        return type(self).forward(self, x)
    return rms_norm(x, self.normalized_shape, self.weight, self.eps)


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


def _norm_patch(module):
    """(forward, what the forward reads) for a norm patch() replaces, or
    None."""
    name = type(module).__name__
    if name in RMS_NORMS and isinstance(
            getattr(module, "weight", None), torch.Tensor):
        eps = getattr(module, "variance_epsilon", getattr(module, "eps", None))
        if isinstance(eps, float) and module.weight.dim() == 1:
            return _rms_norm_forward, (RMS_NORMS[name], eps)
    elif type(module) is torch.nn.LayerNorm:
        if len(module.normalized_shape) == 1:
            return _layer_norm_forward, True
    elif type(module) is torch.nn.RMSNorm:
        if len(module.normalized_shape) == 1:
            return _torch_rms_norm_forward, True
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
        warnings.warn("rowred.patch: left on their own code (rowred does "
                      "not know them): " + ", ".join(sorted(left)),
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
