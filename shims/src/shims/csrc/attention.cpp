// scaled_dot_product_attention picks its kernel through a dispatch stub: CPU's choice is
// its flash kernel (_scaled_dot_product_flash_attention_for_cpu) for most inputs, and a
// device without an entry gets the "math" composite, which rounds differently. Our entry
// answers what CPU's chooser answers for the same tensors, so npu runs the kernel CPU runs
// (through the fallback) and attention matches CPU bit for bit.
//
// It calls CPU's kernel of _fused_sdp_choice directly (at::cpu::, no dispatcher), with the
// tensors it was given: CPU's chooser reads only metadata (dtypes, shapes, strides,
// requires_grad, the global SDP flags). So it answers for fake and meta tensors
// too: under FakeTensorMode (torch.compile), the Meta kernel of _fused_sdp_choice calls this
// entry with the FakeTensors, and redispatching anything real from here would fail
// ("Please convert all Tensors to FakeTensors first").
#include "npu.h"  // first: the version gates decide what else to include

#if ADAPTER_SDPA_CHOICE_STUB && __has_include(<ATen/native/transformers/attention.h>)
#include <ATen/native/DispatchStub.h>
#include <ATen/native/transformers/attention.h>
#include <ATen/ops/_fused_sdp_choice_cpu_dispatch.h>

namespace npu {

namespace {

#if ADAPTER_SDPA_ENABLE_GQA
int64_t sdp_choice(const at::Tensor& query, const at::Tensor& key, const at::Tensor& value,
                   const c10::optional<at::Tensor>& attn_mask, double dropout_p, bool is_causal,
                   c10::optional<double> scale, bool enable_gqa) {
  return at::cpu::_fused_sdp_choice(query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa);
}
#else
int64_t sdp_choice(const at::Tensor& query, const at::Tensor& key, const at::Tensor& value,
                   const c10::optional<at::Tensor>& attn_mask, double dropout_p, bool is_causal,
                   c10::optional<double> scale) {
  return at::cpu::_fused_sdp_choice(query, key, value, attn_mask, dropout_p, is_causal, scale);
}
#endif

}  // namespace

}  // namespace npu

namespace at::native {
REGISTER_PRIVATEUSE1_DISPATCH(_fused_sdp_choice_stub, &npu::sdp_choice)
}  // namespace at::native

#endif
