//===- TorchOps.cpp - The package's eager ops with C++ autograd -----------===//
//
// Part of the softmax kernel compiler.
//
//===----------------------------------------------------------------------===//
//
// The extension module rowred._native_ops: softmax, rms_norm,
// rms_norm_residual and layer_norm, the rowred package's
// eager path where its kernels cover an op's forward and backward. Each is
// a torch::autograd::Function whose forward allocates the outputs and
// launches the forward kernel, and whose backward node launches the
// backward kernel, in C++: an eager step calls one op from Python for the
// forward and none for the backward, where a torch.autograd.Function costs
// the host a trip through Python layers each way (docs/performance.md, The
// host's time per call). cross_entropy_train is cross-entropy of logits
// that require grad: its forward's kernel writes the gradient, its backward
// scales it (through the package's Triton kernel for a mean or a sum,
// which leaves it alone on the GPU when the factor is 1).
// cross_entropy_total is cross-entropy's reduced
// loss without a gradient from a kernel that sums it over the rows (a
// pack's cross_entropy_sum); cross_entropy_loss reduces the per-row loss of
// the cross_entropy kernel with PyTorch's calls, where a pack has no such
// kernel. The functions are bound with pybind11 (as
// PyTorch's own extensions are), not registered as torch.ops: the package
// calls them in eager mode only, and a torch.ops call costs the host more
// than the rest of a launch (its arguments parsed against the schema).
//
// The package looks the kernels up in its packs, keeps them loaded and
// passes their rowred_runtime handles; the launches go through the
// runtime's C API on PyTorch's current stream. The package keeps the
// checks of a user's arguments, the fallbacks to PyTorch's ops, and the
// dispatcher path (torch.compile, fake tensors, subclasses).
//
//===----------------------------------------------------------------------===//

#include "rowred_runtime.h"

#include <ATen/ATen.h>
#include <c10/cuda/CUDAGraphsC10Utils.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <torch/csrc/autograd/custom_function.h>
#include <torch/csrc/utils/pybind.h>

#include <map>
#include <mutex>
#include <tuple>
#include <vector>

using at::Tensor;
using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

namespace {

/// The kernel whose rowred_runtime handle the package passed as `handle`.
const rowred_kernel *kernelOf(int64_t handle) {
  return reinterpret_cast<const rowred_kernel *>(static_cast<intptr_t>(handle));
}

/// Raises the runtime's last failure, in `what`, as a RuntimeError.
[[noreturn]] void fail(const char *what) {
  TORCH_CHECK(false, "rowred: ", what, ": ", rowred_last_error());
}

/// Zeroed workspaces by (kernel, device, stream). A launch that completes
/// leaves its kernel's workspace as the kernel needs it next (docs/abi.md),
/// so one buffer serves a kernel's launches on a stream in turn; a launch
/// captured into a CUDA graph gets a zeroed buffer of its own (a cached one
/// could be replaced while the graph still reads it). The package's Python
/// launches keep buffers of their own.
class Workspaces {
public:
  /// The workspace of a launch of `kernel` over rows x cols on `stream`, the
  /// current stream of `device` (the current device), or an undefined
  /// tensor where the kernel takes none.
  Tensor get(const rowred_kernel *kernel, int64_t rows, int64_t cols,
             c10::Device device, cudaStream_t stream) {
    uint64_t bytes = 0;
    if (rowred_kernel_workspace_bytes(kernel, rows, cols, &bytes))
      fail("workspace");
    if (!bytes)
      return Tensor();
    // PyTorch's query makes the device's context current first: an autograd
    // thread has none before its first CUDA call, and the driver's query
    // (rowred_stream_capturing) needs one.
    bool capturing = c10::cuda::currentStreamCaptureStatusMayInitCtx() !=
                     c10::cuda::CaptureStatus::None;
    auto zeros = [&] {
      return at::zeros({static_cast<int64_t>(bytes)},
                       at::TensorOptions().dtype(at::kByte).device(device));
    };
    if (capturing)
      return zeros();
    std::lock_guard<std::mutex> lock(mutex);
    Tensor &cached = buffers[{kernel, device.index(), stream}];
    if (!cached.defined() || static_cast<uint64_t>(cached.numel()) < bytes)
      cached = zeros();
    return cached;
  }

private:
  std::mutex mutex;
  std::map<std::tuple<const rowred_kernel *, int, cudaStream_t>, Tensor>
      buffers;
};

Workspaces &workspaces() {
  static auto *instance = new Workspaces; // Outlives PyTorch's allocator use.
  return *instance;
}

/// Launches kernel `handle` over `rows` rows of `cols` elements on the
/// current stream of `like`'s device, with the device addresses of its
/// operands, `pointers` (the kernel's order, docs/abi.md), and the row
/// stride of each input and output, `rowStrides`.
void launchAt(int64_t handle, const Tensor &like, int64_t rows, int64_t cols,
              c10::ArrayRef<uint64_t> pointers,
              c10::ArrayRef<int64_t> rowStrides) {
  if (rows == 0)
    return;
  const rowred_kernel *kernel = kernelOf(handle);
  c10::Device device = like.device();
  // The runtime makes the kernel's context current: PyTorch's current
  // device is set for the launch and back.
  c10::cuda::CUDAGuard guard(device);
  cudaStream_t stream = c10::cuda::getCurrentCUDAStream(device.index());
  Tensor workspace = workspaces().get(kernel, rows, cols, device, stream);
  uint64_t workspaceAddress =
      workspace.defined() ? reinterpret_cast<uintptr_t>(workspace.data_ptr())
                          : 0;
  if (rowred_kernel_launch_operands(
          kernel, stream, pointers.data(), static_cast<int>(pointers.size()),
          rowStrides.data(), static_cast<int>(rowStrides.size()), rows, cols,
          workspaceAddress, /*grid=*/0))
    fail("launch");
}

/// launchAt with the device address of each of `operands`.
void launch(int64_t handle, const Tensor &like, int64_t rows, int64_t cols,
            c10::ArrayRef<const Tensor *> operands,
            c10::ArrayRef<int64_t> rowStrides) {
  c10::SmallVector<uint64_t, 12> pointers;
  for (const Tensor *t : operands)
    pointers.push_back(reinterpret_cast<uintptr_t>(t->data_ptr()));
  launchAt(handle, like, rows, cols, pointers, rowStrides);
}

/// Raises the refusal of a backward that would be differentiated again.
[[noreturn]] void refuseSecondOrder(const char *op) {
  TORCH_CHECK(false, "rowred.", op,
              ": the gradient of its gradient (create_graph=True) is not "
              "implemented");
}

/// Refuses a backward that would be differentiated again (create_graph
/// with an input that requires grad): the kernels' gradients are not
/// themselves differentiable.
void checkOnceDifferentiable(const char *op, const variable_list &tensors) {
  if (!at::GradMode::is_enabled())
    return;
  for (const Tensor &t : tensors)
    if (t.defined() && t.requires_grad())
      refuseSecondOrder(op);
}

/// The incoming gradient as the backward kernels read it: contiguous rows
/// of the forward input's dtype.
Tensor asRows(const Tensor &grad, const Tensor &like) {
  return grad.contiguous().to(like.scalar_type());
}

//===----------------------------------------------------------------------===//
// softmax, log_softmax: dx from the output y and dy.
//===----------------------------------------------------------------------===//

/// y = softmax or log-softmax of the rows of x (the forward kernel's op);
/// dx from y and dy (the backward kernel's).
struct SoftmaxFunction : public torch::autograd::Function<SoftmaxFunction> {
  /// y = the forward kernel over the rows of x (contiguous, or 2-D with
  /// rows at least N apart), contiguous in x's shape.
  static Tensor forward(AutogradContext *ctx, const Tensor &x,
                        int64_t forwardKernel, int64_t backwardKernel) {
    TORCH_CHECK(x.dim() > 0 && (x.is_contiguous() || x.dim() == 2),
                "rowred._native_ops.softmax: expected contiguous or 2-D rows");
    int64_t n = x.size(-1);
    Tensor y = at::empty_like(x, at::MemoryFormat::Contiguous);
    int64_t rows = n ? x.numel() / n : 0;
    int64_t stride = x.dim() == 2 && rows > 1 ? x.stride(0) : n;
    launch(forwardKernel, x, rows, n, {&x, &y}, {stride, n});
    ctx->saved_data["backward"] = backwardKernel;
    ctx->save_for_backward({y});
    return y;
  }

  static variable_list backward(AutogradContext *ctx, variable_list grads) {
    Tensor y = ctx->get_saved_variables()[0];
    checkOnceDifferentiable("softmax", {y, grads[0]});
    Tensor dy = asRows(grads[0], y);
    Tensor dx = at::empty_like(y);
    int64_t n = y.size(-1);
    launch(ctx->saved_data["backward"].toInt(), y, n ? y.numel() / n : 0, n,
           {&y, &dy, &dx}, {n, n, n});
    return {dx, Tensor(), Tensor()};
  }
};

//===----------------------------------------------------------------------===//
// The norms: y = norm(x) over the rows of N of a contiguous x (any leading
// dimensions) with per-column operands, f32 statistics per row saved for
// the backward, whose kernel reads x and dy once and sums the columns'
// gradients in a fixed order.
//===----------------------------------------------------------------------===//

/// The rows of a contiguous tensor whose last dimension is the row.
int64_t rowsOf(const Tensor &x) {
  TORCH_CHECK(x.dim() > 0 && x.is_contiguous(),
              "rowred._native_ops: the norms take contiguous rows");
  int64_t n = x.size(-1);
  return n ? x.numel() / n : 0;
}

/// The forward kernel's outputs over `rowInputs` (x; the residual form's
/// x and residual) and `columns` (the weight; layer_norm's weight and
/// bias): one row output per row input (y; h = x + residual), then
/// `statistics` f32 values per row (rstd; layer_norm's mean and rstd).
std::vector<Tensor> normForward(int64_t kernel, c10::ArrayRef<Tensor> rowInputs,
                                c10::ArrayRef<Tensor> columns, int statistics) {
  const Tensor &x = rowInputs[0];
  int64_t rows = rowsOf(x), n = x.size(-1);
  for (const Tensor &input : rowInputs)
    TORCH_CHECK(input.sizes() == x.sizes() && input.is_contiguous(),
                "rowred._native_ops: the row inputs must be contiguous and "
                "of one shape");
  std::vector<Tensor> results;
  for (const Tensor &input : rowInputs)
    results.push_back(at::empty_like(input));
  for (int i = 0; i < statistics; ++i)
    results.push_back(at::empty({rows}, x.options().dtype(at::kFloat)));
  // docs/abi.md: the inputs, the outputs, the columns, the per-row outputs.
  c10::SmallVector<const Tensor *, 8> operands;
  for (const Tensor &t : rowInputs)
    operands.push_back(&t);
  for (size_t i = 0; i < rowInputs.size(); ++i)
    operands.push_back(&results[i]);
  for (const Tensor &t : columns)
    operands.push_back(&t);
  for (size_t i = rowInputs.size(); i < results.size(); ++i)
    operands.push_back(&results[i]);
  c10::SmallVector<int64_t, 4> strides(2 * rowInputs.size(), n);
  launch(kernel, x, rows, n, operands, strides);
  return results;
}

/// (dx, the columns' gradients) of a norm from its backward kernel: x (the
/// residual form's h), dy and `extra` (the gradient h itself got, where
/// defined) in, dx out, the weight and the forward's `statistics`, then
/// one gradient like the weight per forward column (`columnGradients`).
std::pair<Tensor, std::vector<Tensor>>
normBackward(int64_t kernel, const Tensor &x, const Tensor &grad,
             const Tensor &extra, const Tensor &weight,
             c10::ArrayRef<Tensor> statistics, int columnGradients) {
  int64_t rows = rowsOf(x), n = x.size(-1);
  Tensor dy = asRows(grad, x);
  Tensor added = extra.defined() ? asRows(extra, x) : Tensor();
  Tensor dx = at::empty_like(x);
  std::vector<Tensor> columns;
  // Over no rows the kernel does not run: the columns' sums are zeros.
  for (int i = 0; i < columnGradients; ++i)
    columns.push_back(rows ? at::empty_like(weight) : at::zeros_like(weight));
  // docs/abi.md: the row inputs, dx, the weight, the statistics, then the
  // columns' gradients; a row stride per row input and output.
  c10::SmallVector<const Tensor *, 10> operands = {&x, &dy};
  if (added.defined())
    operands.push_back(&added);
  operands.push_back(&dx);
  c10::SmallVector<int64_t, 4> strides(operands.size(), n);
  operands.push_back(&weight);
  for (const Tensor &t : statistics)
    operands.push_back(&t);
  for (const Tensor &t : columns)
    operands.push_back(&t);
  launch(kernel, x, rows, n, operands, strides);
  return {dx, columns};
}

/// A gradient the caller asked for, else undefined.
Tensor ifNeeded(AutogradContext *ctx, size_t input, const Tensor &grad) {
  return ctx->needs_input_grad(input) ? grad : Tensor();
}

/// y = rms_norm(x) with the weight; dx and dw from x, dy, the weight and
/// the saved rstd.
struct RmsNormFunction : public torch::autograd::Function<RmsNormFunction> {
  static Tensor forward(AutogradContext *ctx, const Tensor &x,
                        const Tensor &weight, int64_t forwardKernel,
                        int64_t backwardKernel) {
    std::vector<Tensor> out = normForward(forwardKernel, {x}, {weight}, 1);
    ctx->saved_data["backward"] = backwardKernel;
    ctx->save_for_backward({x, weight, out[1]});
    return out[0];
  }

  static variable_list backward(AutogradContext *ctx, variable_list grads) {
    variable_list saved = ctx->get_saved_variables();
    checkOnceDifferentiable("rms_norm", {saved[0], saved[1], grads[0]});
    auto [dx, columns] =
        normBackward(ctx->saved_data["backward"].toInt(), saved[0], grads[0],
                     Tensor(), saved[1], {saved[2]}, 1);
    return {dx, ifNeeded(ctx, 1, columns[0]), Tensor(), Tensor()};
  }
};

/// The residual form: h = x + residual, y = rms_norm(h); returns (y, h).
/// x and the residual both get the gradient of h: y's through the backward
/// kernel plus the gradient h itself got, added in that kernel (the plain
/// backward's where h got none).
struct RmsNormResidualFunction
    : public torch::autograd::Function<RmsNormResidualFunction> {
  static variable_list forward(AutogradContext *ctx, const Tensor &x,
                               const Tensor &residual, const Tensor &weight,
                               int64_t forwardKernel, int64_t backwardKernel,
                               int64_t plainBackwardKernel) {
    std::vector<Tensor> out =
        normForward(forwardKernel, {x, residual}, {weight}, 1);
    ctx->set_materialize_grads(false);
    ctx->saved_data["backward"] = backwardKernel;
    ctx->saved_data["plain_backward"] = plainBackwardKernel;
    ctx->save_for_backward({out[1], weight, out[2]});
    return {out[0], out[1]};
  }

  static variable_list backward(AutogradContext *ctx, variable_list grads) {
    const Tensor &gradY = grads[0], &gradH = grads[1];
    if (!gradY.defined())
      return {gradH, gradH, Tensor(), Tensor(), Tensor(), Tensor()};
    variable_list saved = ctx->get_saved_variables();
    checkOnceDifferentiable("rms_norm", {saved[0], saved[1], gradY, gradH});
    int64_t kernel =
        ctx->saved_data[gradH.defined() ? "backward" : "plain_backward"]
            .toInt();
    auto [dh, columns] =
        normBackward(kernel, saved[0], gradY, gradH, saved[1], {saved[2]}, 1);
    return {dh, dh, ifNeeded(ctx, 2, columns[0]), Tensor(), Tensor(), Tensor()};
  }
};

/// y = layer_norm(x) with the weight and bias; dx, dw and db from x, dy,
/// the weight and the saved mean and rstd.
struct LayerNormFunction : public torch::autograd::Function<LayerNormFunction> {
  static Tensor forward(AutogradContext *ctx, const Tensor &x,
                        const Tensor &weight, const Tensor &bias,
                        int64_t forwardKernel, int64_t backwardKernel) {
    std::vector<Tensor> out =
        normForward(forwardKernel, {x}, {weight, bias}, 2);
    ctx->saved_data["backward"] = backwardKernel;
    ctx->save_for_backward({x, weight, out[1], out[2]});
    return out[0];
  }

  static variable_list backward(AutogradContext *ctx, variable_list grads) {
    variable_list saved = ctx->get_saved_variables();
    checkOnceDifferentiable("layer_norm", {saved[0], saved[1], grads[0]});
    auto [dx, columns] =
        normBackward(ctx->saved_data["backward"].toInt(), saved[0], grads[0],
                     Tensor(), saved[1], {saved[2], saved[3]}, 2);
    return {dx, ifNeeded(ctx, 1, columns[0]), ifNeeded(ctx, 2, columns[1]),
            Tensor(), Tensor()};
  }
};

//===----------------------------------------------------------------------===//
// cross-entropy without a gradient: the per-row losses of the kernel,
// reduced.
//===----------------------------------------------------------------------===//

/// The label whose row has no loss (packs.IGNORE_INDEX).
constexpr int64_t kIgnoreIndex = -100;

/// The count of the rows not ignored, f32 (exact to 2^24 rows), on the GPU.
Tensor countRows(const Tensor &target) {
  return target.ne(kIgnoreIndex).sum(at::kFloat);
}

/// The loss for the reduction `reduction` (0: none, 1: mean over the `count`
/// rows not ignored, 2: sum) of the f32 per-row losses `loss`, in `type`
/// (rounded once, from f32).
Tensor reduceLoss(const Tensor &loss, int64_t reduction, const Tensor &count,
                  at::ScalarType type) {
  if (reduction == 0)
    return loss.to(type);
  if (reduction == 2)
    return loss.sum().to(type);
  Tensor mean = at::empty({}, loss.options().dtype(type));
  return at::div_out(mean, loss.sum(), count);
}

/// The loss of logits (2-D) and int64 labels for the reduction
/// `reduction` (reduceLoss), from the cross_entropy kernel's f32 per-row
/// losses: f32, or in the logits' dtype with `inLogitsDtype`.
Tensor crossEntropyLoss(const Tensor &logits, const Tensor &labels,
                        int64_t reduction, bool inLogitsDtype, int64_t kernel) {
  Tensor x = logits.contiguous(), target = labels.contiguous();
  int64_t rows = x.size(0), n = x.size(1);
  Tensor loss = at::empty({rows}, x.options().dtype(at::kFloat));
  Tensor lse = at::empty_like(loss);
  launch(kernel, x, rows, n, {&x, &target, &loss, &lse}, {n});
  return reduceLoss(loss, reduction,
                    reduction == 1 ? countRows(target) : Tensor(),
                    inLogitsDtype ? logits.scalar_type() : at::kFloat);
}

//===----------------------------------------------------------------------===//
// cross-entropy of logits that require grad: the forward's kernel writes the
// gradient, the backward scales it.
//===----------------------------------------------------------------------===//

/// x *= factor in place for a 2-D x and a 0-d factor on x's device, left
/// out on the GPU where the factor is 1 (rowred._scale.scale_rows_, a Triton
/// kernel: the package sets it when it loads the module). Leaked: it must
/// not be released at exit without the GIL.
py::object *scaleRows = nullptr;

void setScaleRows(py::object fn) { scaleRows = new py::object(std::move(fn)); }

/// The loss of contiguous logits (2-D) and int64 labels whose gradient the
/// cross_entropy_grad kernel writes in the forward, into a new buffer or,
/// with `inPlace`, over the logits (their values are gone after the call);
/// the backward scales that gradient by the incoming one. A launch scales
/// each row's gradient by the reduction's factor: 1 / count for the mean,
/// else 1.
struct CrossEntropyTrainFunction
    : public torch::autograd::Function<CrossEntropyTrainFunction> {
  static Tensor forward(AutogradContext *ctx, const Tensor &logits,
                        const Tensor &labels, int64_t reduction,
                        bool inLogitsDtype, bool inPlace, int64_t kernel) {
    TORCH_CHECK(logits.dim() == 2 && logits.is_contiguous(),
                "rowred._native_ops.cross_entropy_train: expected contiguous "
                "2-D logits");
    Tensor target = labels.contiguous();
    int64_t rows = logits.size(0), n = logits.size(1);
    Tensor grad = inPlace ? logits : at::empty_like(logits);
    at::TensorOptions f32 = logits.options().dtype(at::kFloat);
    Tensor scale = at::empty({rows}, f32), count;
    if (reduction == 1) {
      count = countRows(target);
      at::reciprocal_out(scale, count.expand({rows}));
    } else {
      scale.fill_(1);
    }
    Tensor loss = at::empty({rows}, f32);
    // docs/abi.md: the logits, the gradient, the labels, the rows' scale,
    // the rows' loss; a row stride per row input and output.
    launch(kernel, logits, rows, n, {&logits, &grad, &target, &scale, &loss},
           {n, n});
    ctx->saved_data["reduction"] = reduction;
    ctx->save_for_backward({grad});
    return reduceLoss(loss, reduction, count,
                      inLogitsDtype ? logits.scalar_type() : at::kFloat);
  }

  static variable_list backward(AutogradContext *ctx, variable_list grads) {
    Tensor dx = ctx->get_saved_variables()[0];
    // The gradient depends on the logits, which required grad: under
    // create_graph (the grad mode on) it would need differentiating.
    if (at::GradMode::is_enabled())
      refuseSecondOrder("cross_entropy");
    // The gradient is scaled in place (a buffer of the op's own, or the
    // logits): a kept graph's later backward (retain_graph) finds it scaled
    // by the earlier one's factor, and scales by the quotient.
    Tensor factor = grads[0];
    auto earlier = ctx->saved_data.find("factor");
    if (earlier != ctx->saved_data.end())
      factor =
          grads[0].to(at::kFloat) / earlier->second.toTensor().to(at::kFloat);
    ctx->saved_data["factor"] = grads[0];
    if (ctx->saved_data["reduction"].toInt() == 0) {
      // One factor per row, through a tensor of its own version counter, as
      // the kernels write: what a kept graph saved stays at its version.
      dx.variable_data().mul_(factor.unsqueeze(-1).to(dx.scalar_type()));
    } else {
      TORCH_CHECK(scaleRows, "rowred._native_ops: set_scale_rows was not "
                             "called");
      py::gil_scoped_acquire gil;
      (*scaleRows)(dx, factor);
    }
    return {dx, Tensor(), Tensor(), Tensor(), Tensor(), Tensor()};
  }
};

Tensor crossEntropyTrain(const Tensor &logits, const Tensor &labels,
                         int64_t reduction, bool inLogitsDtype, bool inPlace,
                         int64_t kernel) {
  return CrossEntropyTrainFunction::apply(logits, labels, reduction,
                                          inLogitsDtype, inPlace, kernel);
}

Tensor crossEntropyTotal(const Tensor &logits, const Tensor &labels, bool mean,
                         bool inLogitsDtype, int64_t kernel) {
  Tensor x = logits.contiguous(), target = labels.contiguous();
  int64_t rows = x.size(0), n = x.size(1);
  // The kernel's totals (docs/abi.md): the loss summed over the rows and the
  // count of rows not ignored, in one buffer; zeros over no rows.
  Tensor totals = at::empty({2}, x.options().dtype(at::kFloat));
  if (rows == 0)
    totals.zero_();
  auto *sums = static_cast<float *>(totals.data_ptr());
  launchAt(kernel, x, rows, n,
           {reinterpret_cast<uintptr_t>(x.data_ptr()),
            reinterpret_cast<uintptr_t>(target.data_ptr()),
            reinterpret_cast<uintptr_t>(sums),
            reinterpret_cast<uintptr_t>(sums + 1)},
           {n});
  Tensor sum = totals[0];
  at::ScalarType type = inLogitsDtype ? logits.scalar_type() : at::kFloat;
  if (!mean)
    return sum.to(type);
  Tensor loss = at::empty({}, x.options().dtype(type));
  return at::div_out(loss, sum, totals[1]);
}

Tensor softmax(const Tensor &x, int64_t forwardKernel, int64_t backwardKernel) {
  return SoftmaxFunction::apply(x, forwardKernel, backwardKernel);
}

Tensor rmsNorm(const Tensor &x, const Tensor &weight, int64_t forwardKernel,
               int64_t backwardKernel) {
  return RmsNormFunction::apply(x, weight, forwardKernel, backwardKernel);
}

std::tuple<Tensor, Tensor>
rmsNormResidual(const Tensor &x, const Tensor &residual, const Tensor &weight,
                int64_t forwardKernel, int64_t backwardKernel,
                int64_t plainBackwardKernel) {
  variable_list out = RmsNormResidualFunction::apply(
      x, residual, weight, forwardKernel, backwardKernel, plainBackwardKernel);
  return {out[0], out[1]};
}

Tensor layerNorm(const Tensor &x, const Tensor &weight, const Tensor &bias,
                 int64_t forwardKernel, int64_t backwardKernel) {
  return LayerNormFunction::apply(x, weight, bias, forwardKernel,
                                  backwardKernel);
}

} // namespace

// The kernels are rowred_runtime handles (int) the package looked up for
// the input's dtype, row length and device (and the norms' epsilon).
PYBIND11_MODULE(_native_ops, m) {
  m.doc() = "The rowred package's eager ops with their autograd in C++ "
            "(runtime/torch/TorchOps.cpp); called by rowred._native.";
  m.def("softmax", &softmax,
        "softmax(x, forward, backward) -> y: the rows of x (contiguous, or "
        "2-D rows that do not overlap), y's gradient by `backward` from y "
        "and dy");
  m.def("rms_norm", &rmsNorm,
        "rms_norm(x, weight, forward, backward) -> y, over the rows of a "
        "contiguous x");
  m.def("rms_norm_residual", &rmsNormResidual,
        "rms_norm_residual(x, residual, weight, forward, backward, "
        "plain_backward) -> (y, h)");
  m.def("layer_norm", &layerNorm,
        "layer_norm(x, weight, bias, forward, backward) -> y");
  m.def("cross_entropy_total", &crossEntropyTotal,
        "cross_entropy_total(logits, labels, mean, in_logits_dtype, kernel) "
        "-> loss (the mean, or the sum, over the rows summed in the kernel; "
        "f32, or the logits' dtype)");
  m.def("cross_entropy_train", &crossEntropyTrain,
        "cross_entropy_train(logits, labels, reduction, in_logits_dtype, "
        "in_place, kernel) -> loss, differentiable: the cross_entropy_grad "
        "kernel writes the gradient in the forward (over the logits with "
        "in_place), the backward scales it");
  m.def("set_scale_rows", &setScaleRows,
        "set_scale_rows(fn): fn(x, factor) scales x in place by a 0-d factor "
        "(the backward of cross_entropy_train's mean and sum)");
  m.def("cross_entropy_loss", &crossEntropyLoss,
        "cross_entropy_loss(logits, labels, reduction, in_logits_dtype, "
        "kernel) -> loss (reduction 0: none, 1: mean, 2: sum; f32, or the "
        "logits' dtype)");
}
