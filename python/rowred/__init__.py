"""rowred: row reductions compiled by the softmax kernel compiler, as
PyTorch ops.

    import rowred
    rowred.load_pack("packs/sm90")      # or ROWRED_PACKS=packs/sm90
    y = rowred.softmax(x)              # x: a CUDA tensor, rows last
    loss = rowred.cross_entropy(logits, labels)
    h = rowred.rms_norm(x, (x.size(-1),), weight, eps=1e-6)
    rowred.patch(model)                # a model's norms and loss, in place

Packs are built with `python3 -m rowred.packs build` (see rowred.packs).
The ops need PyTorch; building and reading packs does not.
"""
from ._runtime import RowredError
from .packs import Pack, PackError

__all__ = ["Pack", "PackError", "RowredError"]

try:
    import torch  # noqa: F401
except ImportError:  # Packs only: the ops need PyTorch.
    pass
else:
    from .norms import layer_norm, rms_norm  # noqa: F401
    from .ops import (cross_entropy, load_pack, log_softmax,  # noqa: F401
                      logsumexp, softmax)
    from .patching import patch, unpatch  # noqa: F401
    __all__ += ["cross_entropy", "layer_norm", "load_pack", "log_softmax",
                "logsumexp", "patch", "rms_norm", "softmax", "unpatch"]
