// The Work that the npu_gloo process group (shims/distributed.py) returns: a collective that
// already finished, whose future holds the caller's device tensors.
//
// A C++ object, not a Python subclass of Work: C++ callers (DDP's reducer, its parameter
// checks) keep only the C++ pointer, and on torch 2.1 pybind11 forgets a Python subclass's
// overrides once its Python object is gone, so wait() fell through to the base class and
// blocked forever.
#include "npu.h"  // first: the version gates decide what else to include

#include <ATen/core/ivalue.h>
#include <torch/csrc/distributed/c10d/Work.hpp>

#include <algorithm>
#include <vector>

namespace npu {

namespace {

class DoneWork final : public c10d::Work {
 public:
  DoneWork(std::vector<at::Tensor> result, std::vector<c10::Device> devices)
      : result_(std::move(result)),
        future_(c10::make_intrusive<c10::ivalue::Future>(c10::ListType::create(c10::TensorType::get()),
                                                         std::move(devices))) {
    future_->markCompleted(c10::IValue(result_));
    finish();
  }

  std::vector<at::Tensor> result() override { return result_; }
  c10::intrusive_ptr<c10::ivalue::Future> getFuture() override { return future_; }

 private:
  std::vector<at::Tensor> result_;
  c10::intrusive_ptr<c10::ivalue::Future> future_;
};

}  // namespace

c10::intrusive_ptr<c10d::Work> done_work(std::vector<at::Tensor> result) {
  std::vector<c10::Device> devices;
  for (const auto& t : result) {
    if (t.defined() && t.device().type() != c10::DeviceType::CPU &&
        std::find(devices.begin(), devices.end(), t.device()) == devices.end()) {
      devices.push_back(t.device());
    }
  }
  return c10::make_intrusive<DoneWork>(std::move(result), std::move(devices));
}

}  // namespace npu
