// scaled_dot_product_attention picks its kernel through a dispatch stub: CPU's choice is
// its flash kernel (_scaled_dot_product_flash_attention_for_cpu) for most inputs, and a
// device without an entry gets the "math" composite, which rounds differently. Our entry
// asks CPU's chooser (the _fused_sdp_choice op's CPU kernel) about host aliases of the
// same tensors, so npu runs the kernel CPU
// runs (through the fallback) and attention matches CPU bit for bit.
#include "npu.h"  // first: the version gates decide what else to include

#if ADAPTER_SDPA_CHOICE_STUB && __has_include(<ATen/native/transformers/attention.h>)
#include <ATen/native/DispatchStub.h>
#include <ATen/native/transformers/attention.h>
#include <ATen/ops/_fused_sdp_choice.h>

namespace npu {

namespace {

c10::optional<at::Tensor> host_alias_of(const c10::optional<at::Tensor>& t) {
  if (!t.has_value() || !t->defined()) return t;
  return host_alias(*t);
}

#if ADAPTER_SDPA_ENABLE_GQA
int64_t sdp_choice(const at::Tensor& query, const at::Tensor& key, const at::Tensor& value,
                   const c10::optional<at::Tensor>& attn_mask, double dropout_p, bool is_causal,
                   c10::optional<double> scale, bool enable_gqa) {
  return at::_fused_sdp_choice(host_alias(query), host_alias(key), host_alias(value), host_alias_of(attn_mask), dropout_p,
                               is_causal, scale, enable_gqa);
}
#else
int64_t sdp_choice(const at::Tensor& query, const at::Tensor& key, const at::Tensor& value,
                   const c10::optional<at::Tensor>& attn_mask, double dropout_p, bool is_causal,
                   c10::optional<double> scale) {
  return at::_fused_sdp_choice(host_alias(query), host_alias(key), host_alias(value), host_alias_of(attn_mask), dropout_p,
                               is_causal, scale);
}
#endif

}  // namespace

}  // namespace npu

namespace at::native {
REGISTER_PRIVATEUSE1_DISPATCH(_fused_sdp_choice_stub, &npu::sdp_choice)
}  // namespace at::native

#endif
