"""The rowred::* op library and the path an eager call takes into it.

Each op is defined with torch.library's define and impl rather than
torch.library.custom_op, whose Python wrappers (aliasing checks, a dynamo
guard) cost the host more than the whole launch. The dispatcher still costs
the host a trip through Python layers per call (its autograd kernel, the
wrapper of register_autograd, a redispatch into the implementation), and as
much again in the backward: more than the launch itself. An eager call on
plain tensors, with nothing tracing it, does not need it: `Op` runs the
implementation directly there, through a torch.autograd.Function of the
same formula where an input requires grad, and through the dispatcher
everywhere else (torch.compile, fake tensors, tensor subclasses, dispatch
modes, torch.library.opcheck on the overload). Where the package's native
ops are built (rowred._native), the public functions of the norms,
softmax, log_softmax and cross-entropy take them first on such calls: the
same formula with its autograd in C++.
"""
import torch

LIB = torch.library.Library("rowred", "DEF")

_dispatch_modes = getattr(torch._C, "_len_torch_dispatch_stack",
                          lambda: 0)
_compiling = torch.compiler.is_compiling
# The current device's index (torch.cuda.current_device less its Python
# wrapper's lazy-init check: the ops run on CUDA tensors, so CUDA is up).
current_device = getattr(torch._C, "_cuda_getDevice", None) or \
    torch.cuda.current_device


# The tensor types a call may take without the dispatcher: a plain tensor,
# and a module's parameter (whose __torch_function__ is PyTorch's own;
# nn.Parameter of a tensor subclass has that subclass's type).
PLAIN = (torch.Tensor, torch.nn.Parameter)


def direct(args):
    """Whether a call with `args` may skip the dispatcher: eager, no
    dispatch mode active, every tensor argument a plain torch.Tensor or an
    nn.Parameter."""
    if _compiling() or _dispatch_modes():
        return False
    for a in args:
        if isinstance(a, torch.Tensor) and type(a) not in PLAIN:
            return False
    return True


def _needs_grad(args):
    if not torch.is_grad_enabled():
        return False
    for a in args:
        if isinstance(a, torch.Tensor) and a.requires_grad:
            return True
    return False


class Op:
    """The op rowred::<name>: its overload (`overload`, for opcheck and
    torch.compile) and a call that skips the dispatcher where it may."""

    def __init__(self, fn, fake, name):
        LIB.define(name + torch.library.infer_schema(fn, mutates_args=()))
        LIB.impl(name, fn, "CUDA")
        torch.library.register_fake(f"rowred::{name}", fake, lib=LIB)
        self.overload = getattr(torch.ops.rowred, name).default
        self.name = name
        self._impl = fn
        self._function = None

    def register_autograd(self, backward, setup_context):
        """The op's gradient formula, for the dispatcher and for direct
        calls alike."""
        torch.library.register_autograd(self.overload, backward,
                                        setup_context=setup_context, lib=LIB)
        impl = self._impl

        # The forward takes ctx: a Function with a setup_context of its own
        # binds its arguments to forward's signature on every call
        # (inspect.signature, 50 of 790 us per forward and backward of
        # rms_norm under cProfile on the H200 machine).
        def forward(ctx, *args):
            output = impl(*args)
            setup_context(ctx, args, output)
            return output

        self._function = type(
            f"{self.name}_function", (torch.autograd.Function,),
            {"forward": staticmethod(forward),
             "backward": staticmethod(backward)})

    def __call__(self, *args):
        if not direct(args):
            return self.overload(*args)
        if _needs_grad(args):
            if self._function is None:
                # No gradient formula: the dispatcher says so.
                return self.overload(*args)
            return self._function.apply(*args)
        return self._impl(*args)
