// The fused RNN cells that PyTorch's LSTM/GRU code calls for every accelerator
// (`input.is_privateuseone()` picks them, like CUDA and XPU) and implements for CUDA only.
//
// Each is composed of the ops CPU's unfused cell runs, in the same order, so a step on
// npu rounds like a step on CPU: the fused path hands us the gate GEMMs without their
// bias (`x @ W_ih^T`, `h @ W_hh^T`) and we add it as the separate `+ b` that CPU's
// `addmm(b, x, W^T)` performs after its dot products. The backward kernels replay the
// derivatives autograd would apply to CPU's graph (mul, sigmoid_backward, tanh_backward,
// the bias gradient as a sum over the batch), again in the same order.
//
// The workspace tensors are ours (forward writes them, backward reads them):
//   LSTM: [i, f, g, o]           the activated gates, (N, 4H)
//   GRU:  [r, z, n, h, hn]       reset/update/new gates, the previous hidden state and the
//                                hidden part of the new gate before the reset, (N, 5H)
#include "npu.h"  // first: the version gates decide what else to include

#include <ATen/ATen.h>
#include <torch/library.h>

#include <tuple>

namespace npu {

namespace {

at::Tensor plus_bias(const at::Tensor& gates, const c10::optional<at::Tensor>& bias) {
  return bias.has_value() && bias->defined() ? gates.add(*bias) : gates.clone();
}

at::Tensor bias_grad(const at::Tensor& grad_gates, bool has_bias) {
  return has_bias ? grad_gates.sum(0) : at::Tensor();
}

// CPU: gates = linear_hh(hx).add_(linear_ih(x)); i,f,o = sigmoid_, g = tanh_;
// cy = (f * cx).add_(i * g); hy = o * cy.tanh().
std::tuple<at::Tensor, at::Tensor, at::Tensor> lstm_cell(const at::Tensor& input_gates, const at::Tensor& hidden_gates,
                                                         const at::Tensor& cx, const c10::optional<at::Tensor>& input_bias,
                                                         const c10::optional<at::Tensor>& hidden_bias) {
  at::Tensor gates = plus_bias(hidden_gates, hidden_bias).add_(plus_bias(input_gates, input_bias));
  auto chunks = gates.unsafe_chunk(4, 1);
  at::Tensor ingate = chunks[0].sigmoid_();
  at::Tensor forgetgate = chunks[1].sigmoid_();
  at::Tensor cellgate = chunks[2].tanh_();
  at::Tensor outgate = chunks[3].sigmoid_();
  at::Tensor cy = (forgetgate * cx).add_(ingate * cellgate);
  at::Tensor hy = outgate * cy.tanh();
  return std::make_tuple(hy, cy, gates);
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> lstm_cell_backward(const c10::optional<at::Tensor>& grad_hy_opt,
                                                                  const c10::optional<at::Tensor>& grad_cy_opt,
                                                                  const at::Tensor& cx, const at::Tensor& cy,
                                                                  const at::Tensor& workspace, bool has_bias) {
  const bool has_hy = grad_hy_opt.has_value() && grad_hy_opt->defined();
  const bool has_cy = grad_cy_opt.has_value() && grad_cy_opt->defined();
  if (!has_hy && !has_cy) return std::make_tuple(at::Tensor(), at::Tensor(), at::Tensor());
  auto gates = workspace.unsafe_chunk(4, 1);
  const at::Tensor& ingate = gates[0];
  const at::Tensor& forgetgate = gates[1];
  const at::Tensor& cellgate = gates[2];
  const at::Tensor& outgate = gates[3];

  at::Tensor grad_out, grad_cy;  // d outgate, d cy (from hy and from the caller)
  if (has_hy) {
    at::Tensor tanh_cy = cy.tanh();
    grad_out = *grad_hy_opt * tanh_cy;
    grad_cy = at::tanh_backward(*grad_hy_opt * outgate, tanh_cy);
    if (has_cy) grad_cy = grad_cy + *grad_cy_opt;
  } else {
    grad_out = at::zeros_like(outgate, at::MemoryFormat::Contiguous);
    grad_cy = *grad_cy_opt;
  }
  at::Tensor grad_gates = at::cat({at::sigmoid_backward(grad_cy * cellgate, ingate),
                                   at::sigmoid_backward(grad_cy * cx, forgetgate),
                                   at::tanh_backward(grad_cy * ingate, cellgate),
                                   at::sigmoid_backward(grad_out, outgate)},
                                  1);
  at::Tensor grad_cx = grad_cy * forgetgate;
  return std::make_tuple(grad_gates, grad_cx, bias_grad(grad_gates, has_bias));
}

// CPU: ig = linear_ih(x), hg = linear_hh(h) (3 chunks each); r = hg0.add_(ig0).sigmoid_();
// z = hg1.add_(ig1).sigmoid_(); n = ig2.add(hg2.mul_(r)).tanh_(); hy = (h - n).mul_(z).add_(n).
std::tuple<at::Tensor, at::Tensor> gru_cell(const at::Tensor& input_gates, const at::Tensor& hidden_gates,
                                            const at::Tensor& hx, const c10::optional<at::Tensor>& input_bias,
                                            const c10::optional<at::Tensor>& hidden_bias) {
  auto ig = plus_bias(input_gates, input_bias).unsafe_chunk(3, 1);
  auto hg = plus_bias(hidden_gates, hidden_bias).unsafe_chunk(3, 1);
  at::Tensor hn_before_reset = hg[2].clone();
  at::Tensor resetgate = hg[0].add_(ig[0]).sigmoid_();
  at::Tensor inputgate = hg[1].add_(ig[1]).sigmoid_();
  at::Tensor newgate = ig[2].add(hg[2].mul_(resetgate)).tanh_();
  at::Tensor hy = (hx - newgate).mul_(inputgate).add_(newgate);
  at::Tensor workspace = at::cat({resetgate, inputgate, newgate, hx, hn_before_reset}, 1);
  return std::make_tuple(hy, workspace);
}

std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor, at::Tensor> gru_cell_backward(const at::Tensor& grad_hy,
                                                                                         const at::Tensor& workspace,
                                                                                         bool has_bias) {
  auto parts = workspace.unsafe_chunk(5, 1);
  const at::Tensor& resetgate = parts[0];
  const at::Tensor& inputgate = parts[1];
  const at::Tensor& newgate = parts[2];
  const at::Tensor& hx = parts[3];
  const at::Tensor& hn_before_reset = parts[4];

  at::Tensor grad_diff = grad_hy * inputgate;                                  // d (h - n)
  at::Tensor grad_inputgate = grad_hy * (hx - newgate);                        // d z
  at::Tensor grad_newgate = grad_hy + grad_diff.neg();                         // d n: from add_(n) and from (h - n)
  at::Tensor grad_new_pre = at::tanh_backward(grad_newgate, newgate);          // d (ig2 + hn)
  at::Tensor grad_hn = grad_new_pre * resetgate;                               // d hg2
  at::Tensor grad_reset_pre = at::sigmoid_backward(grad_new_pre * hn_before_reset, resetgate);
  at::Tensor grad_input_pre = at::sigmoid_backward(grad_inputgate, inputgate);
  at::Tensor grad_input_gates = at::cat({grad_reset_pre, grad_input_pre, grad_new_pre}, 1);
  at::Tensor grad_hidden_gates = at::cat({grad_reset_pre, grad_input_pre, grad_hn}, 1);
  return std::make_tuple(grad_input_gates, grad_hidden_gates, grad_diff, bias_grad(grad_input_gates, has_bias),
                         bias_grad(grad_hidden_gates, has_bias));
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("_thnn_fused_lstm_cell", TORCH_FN(lstm_cell));
  m.impl("_thnn_fused_lstm_cell_backward_impl", TORCH_FN(lstm_cell_backward));
  m.impl("_thnn_fused_gru_cell", TORCH_FN(gru_cell));
  m.impl("_thnn_fused_gru_cell_backward", TORCH_FN(gru_cell_backward));
}

}  // namespace npu
