// scaled_dot_product_attention picks its kernel through a dispatch stub: CPU's choice is
// its flash kernel (_scaled_dot_product_flash_attention_for_cpu) for most inputs, and a
// device without an entry gets the "math" composite, which rounds differently. Our entry
// asks CPU's chooser (the _fused_sdp_choice op's CPU kernel) about host aliases of the
// same tensors, so npu runs the kernel CPU runs (through the fallback) and attention
// matches CPU bit for bit.
#include "npu.h"  // first: the version gates decide what else to include

#if ADAPTER_SDPA_CHOICE_STUB && __has_include(<ATen/native/transformers/attention.h>)
#include <ATen/native/DispatchStub.h>
#include <ATen/native/transformers/attention.h>
#include <ATen/ops/_fused_sdp_choice.h>

namespace npu {

namespace {

// CPU's chooser reads requires_grad: a mask that needs a gradient rules out its flash kernel
// (which cannot differentiate the mask), and so does grad mode with inputs that need one for
// some of its checks. A bare host alias is a fresh tensor without the flag, so the alias
// carries it; otherwise npu would pick a kernel whose backward then refuses the mask.
at::Tensor chooser_alias(const at::Tensor& t) {
  at::Tensor alias = host_alias(t);
  if (t.requires_grad() && !alias.requires_grad()) alias.set_requires_grad(true);
  return alias;
}

c10::optional<at::Tensor> chooser_alias_of(const c10::optional<at::Tensor>& t) {
  if (!t.has_value() || !t->defined()) return t;
  return chooser_alias(*t);
}

#if ADAPTER_SDPA_ENABLE_GQA
int64_t sdp_choice(const at::Tensor& query, const at::Tensor& key, const at::Tensor& value,
                   const c10::optional<at::Tensor>& attn_mask, double dropout_p, bool is_causal,
                   c10::optional<double> scale, bool enable_gqa) {
  return at::_fused_sdp_choice(chooser_alias(query), chooser_alias(key), chooser_alias(value), chooser_alias_of(attn_mask), dropout_p,
                               is_causal, scale, enable_gqa);
}
#else
int64_t sdp_choice(const at::Tensor& query, const at::Tensor& key, const at::Tensor& value,
                   const c10::optional<at::Tensor>& attn_mask, double dropout_p, bool is_causal,
                   c10::optional<double> scale) {
  return at::_fused_sdp_choice(chooser_alias(query), chooser_alias(key), chooser_alias(value), chooser_alias_of(attn_mask), dropout_p,
                               is_causal, scale);
}
#endif

}  // namespace

}  // namespace npu

namespace at::native {
REGISTER_PRIVATEUSE1_DISPATCH(_fused_sdp_choice_stub, &npu::sdp_choice)
}  // namespace at::native

#endif
