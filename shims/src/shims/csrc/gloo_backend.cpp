// The C++ face of the npu_gloo process group: a c10d::Backend for npu (and CPU) tensors.
//
// The group itself is a Python ProcessGroup (shims/distributed.py), which serves every
// call made on the group object. Some callers bypass it and ask the group for its backend
// of a device type instead: torch's c10d dispatcher ops (all_gather_single in FSDP, the
// functional collectives of DTensor), and the group's name (`group_name`, which DeviceMesh
// reads) is the name of its registered backend. With no backend registered those failed
// ("No backend type associated with device type npu", "ProcessGroup name not set"). This
// backend is registered on the group for npu and cpu; like the Python group, it hands gloo
// CPU tensors over the device tensors' memory (no copy), so gloo reads and writes device
// memory in place, and returns a finished Work holding the caller's tensors.
#include "npu.h"  // first: the version gates decide what else to include

#include <torch/csrc/distributed/c10d/Backend.hpp>

#include <Python.h>  // the GIL, released while gloo goes (release())

#include <string>
#include <vector>

namespace npu {

c10::intrusive_ptr<c10d::Work> done_work(std::vector<at::Tensor> result);  // distributed.cpp

void release_gloo(const c10::intrusive_ptr<c10d::Backend>& backend);

namespace {

using Tensors = std::vector<at::Tensor>;
using TensorLists = std::vector<std::vector<at::Tensor>>;
using WorkPtr = c10::intrusive_ptr<c10d::Work>;

Tensors hosts(const Tensors& tensors) {
  Tensors out;
  out.reserve(tensors.size());
  for (const auto& t : tensors) out.push_back(host_alias(t));
  return out;
}

TensorLists hosts(const TensorLists& lists) {
  TensorLists out;
  out.reserve(lists.size());
  for (const auto& l : lists) out.push_back(hosts(l));
  return out;
}

Tensors flat(const TensorLists& lists) {
  Tensors out;
  for (const auto& l : lists) out.insert(out.end(), l.begin(), l.end());
  return out;
}

// Gives the GIL up for its scope when this thread holds it. Whoever calls into gloo must not
// hold it: gloo's worker thread frees a finished collective's tensors while it holds gloo's
// queue lock, and a tensor with a Python wrapper (the host aliases of the Python group's calls)
// takes the GIL to go; a caller that holds the GIL and enqueues (or waits for) the next
// collective then waits for that worker for ever. torch 2.14's binding of all_gather_single
// calls the backend with the GIL held (2.13's all_gather_into_tensor released it first): an
// all-gather right after an all_reduce on the same group hung within ~100 groups.
class WithoutGil {
 public:
  WithoutGil() : state_(Py_IsInitialized() && PyGILState_Check() ? PyEval_SaveThread() : nullptr) {}
  ~WithoutGil() {
    if (state_) PyEval_RestoreThread(state_);
  }
  WithoutGil(const WithoutGil&) = delete;
  WithoutGil& operator=(const WithoutGil&) = delete;

 private:
  PyThreadState* state_;
};

// Runs a gloo collective (a call that returns its Work) to completion without the GIL.
template <typename Collective>
void complete(Collective&& collective) {
  WithoutGil released;
  collective()->wait();
}

bool unsupported(const c10::Error& e) { return std::string(e.what()).find("does not support") != std::string::npos; }

class GlooBackend final : public c10d::Backend {
 public:
  explicit GlooBackend(c10::intrusive_ptr<c10d::Backend> gloo)
      : c10d::Backend(gloo->getRank(), gloo->getSize()), gloo_(std::move(gloo)) {}

  const std::string getBackendName() const override { return "npu_gloo"; }

  WorkPtr broadcast(Tensors& tensors, const c10d::BroadcastOptions& opts) override {
    auto h = hosts(tensors);
    return finish([&] { return gloo_->broadcast(h, opts); }, tensors);
  }
  WorkPtr allreduce(Tensors& tensors, const c10d::AllreduceOptions& opts) override {
    auto h = hosts(tensors);
    return finish([&] { return gloo_->allreduce(h, opts); }, tensors);
  }
  WorkPtr allreduce_coalesced(Tensors& tensors, const c10d::AllreduceCoalescedOptions& opts) override {
    auto h = hosts(tensors);
    return finish([&] { return gloo_->allreduce_coalesced(h, opts); }, tensors);
  }
  WorkPtr reduce(Tensors& tensors, const c10d::ReduceOptions& opts) override {
    auto h = hosts(tensors);
    return finish([&] { return gloo_->reduce(h, opts); }, tensors);
  }
  WorkPtr allgather(TensorLists& outputs, Tensors& inputs, const c10d::AllgatherOptions& opts) override {
    auto ho = hosts(outputs);
    auto hi = hosts(inputs);
    return finish([&] { return gloo_->allgather(ho, hi, opts); }, flat(outputs));
  }
  WorkPtr _allgather_base(at::Tensor& output, at::Tensor& input, const c10d::AllgatherOptions& opts) override {
    at::Tensor ho = host_alias(output), hi = host_alias(input);
    return finish([&] { return gloo_->_allgather_base(ho, hi, opts); }, {output});
  }
  WorkPtr allgather_coalesced(TensorLists& outputs, Tensors& inputs, const c10d::AllgatherOptions& opts) override {
    auto ho = hosts(outputs);
    auto hi = hosts(inputs);
    return finish([&] { return gloo_->allgather_coalesced(ho, hi, opts); }, flat(outputs));
  }
  WorkPtr allgather_into_tensor_coalesced(Tensors& outputs, Tensors& inputs, const c10d::AllgatherOptions& opts) override {
    auto ho = hosts(outputs);
    auto hi = hosts(inputs);
    return finish([&] { return gloo_->allgather_into_tensor_coalesced(ho, hi, opts); }, outputs);
  }
  WorkPtr gather(TensorLists& outputs, Tensors& inputs, const c10d::GatherOptions& opts) override {
    auto ho = hosts(outputs);
    auto hi = hosts(inputs);
    return finish([&] { return gloo_->gather(ho, hi, opts); }, flat(outputs));
  }
  WorkPtr scatter(Tensors& outputs, TensorLists& inputs, const c10d::ScatterOptions& opts) override {
    auto ho = hosts(outputs);
    auto hi = hosts(inputs);
    return finish([&] { return gloo_->scatter(ho, hi, opts); }, outputs);
  }
  WorkPtr reduce_scatter(Tensors& outputs, TensorLists& inputs, const c10d::ReduceScatterOptions& opts) override {
    auto ho = hosts(outputs);
    auto hi = hosts(inputs);
    try {
      return finish([&] { return gloo_->reduce_scatter(ho, hi, opts); }, outputs);
    } catch (const c10::Error& e) {
      if (!unsupported(e)) throw;
    }
    // gloo builds without reduce_scatter (torch 2.1-2.7 at least): all-reduce each
    // rank's contribution in turn, keep ours. Every rank runs the same sequence.
    for (size_t i = 0; i < ho.size(); ++i) {
      for (size_t r = 0; r < hi[i].size(); ++r) {
        Tensors reduced{hi[i][r].clone()};
        complete([&] { return gloo_->allreduce(reduced, allreduce_options(opts)); });
        if (static_cast<int>(r) == getRank()) ho[i].copy_(reduced[0]);
      }
    }
    return done_work(outputs);
  }
  WorkPtr _reduce_scatter_base(at::Tensor& output, at::Tensor& input, const c10d::ReduceScatterOptions& opts) override {
    at::Tensor ho = host_alias(output), hi = host_alias(input);
    try {
      return finish([&] { return gloo_->_reduce_scatter_base(ho, hi, opts); }, {output});
    } catch (const c10::Error& e) {
      if (!unsupported(e)) throw;
    }
    reduce_scatter_by_allreduce(ho, hi, opts);
    return done_work({output});
  }
  WorkPtr reduce_scatter_tensor_coalesced(Tensors& outputs, Tensors& inputs, const c10d::ReduceScatterOptions& opts) override {
    auto ho = hosts(outputs);
    auto hi = hosts(inputs);
    try {
      return finish([&] { return gloo_->reduce_scatter_tensor_coalesced(ho, hi, opts); }, outputs);
    } catch (const c10::Error& e) {
      if (!unsupported(e)) throw;
    }
    for (size_t i = 0; i < ho.size(); ++i) reduce_scatter_by_allreduce(ho[i], hi[i], opts);
    return done_work(outputs);
  }
  WorkPtr alltoall_base(at::Tensor& output, at::Tensor& input, std::vector<int64_t>& output_splits,
                        std::vector<int64_t>& input_splits, const c10d::AllToAllOptions& opts) override {
    at::Tensor ho = host_alias(output), hi = host_alias(input);
    return finish([&] { return gloo_->alltoall_base(ho, hi, output_splits, input_splits, opts); }, {output});
  }
  WorkPtr alltoall(Tensors& outputs, Tensors& inputs, const c10d::AllToAllOptions& opts) override {
    auto ho = hosts(outputs);
    auto hi = hosts(inputs);
    return finish([&] { return gloo_->alltoall(ho, hi, opts); }, outputs);
  }
  WorkPtr send(Tensors& tensors, int dst, int tag) override {
    auto h = hosts(tensors);
    return finish([&] { return gloo_->send(h, dst, tag); }, tensors);
  }
  WorkPtr recv(Tensors& tensors, int src, int tag) override {
    auto h = hosts(tensors);
    return finish([&] { return gloo_->recv(h, src, tag); }, tensors);
  }
  WorkPtr recvAnysource(Tensors& tensors, int tag) override {
    auto h = hosts(tensors);
    return finish([&] { return gloo_->recvAnysource(h, tag); }, tensors);
  }
  WorkPtr barrier(const c10d::BarrierOptions& opts) override {
    return finish([&] { return gloo_->barrier(opts); }, {});
  }

 private:
  // Work on this device is synchronous: run gloo's collective to completion here, then stand
  // for the caller's tensors.
  template <typename Collective>
  static WorkPtr finish(Collective&& collective, Tensors result) {
    complete(collective);
    return done_work(std::move(result));
  }
  static c10d::AllreduceOptions allreduce_options(const c10d::ReduceScatterOptions& opts) {
    c10d::AllreduceOptions out;
    out.reduceOp = opts.reduceOp;
    out.timeout = opts.timeout;
    return out;
  }
  // Rank r's output is chunk r of the reduction of every rank's input.
  void reduce_scatter_by_allreduce(at::Tensor& output, const at::Tensor& input, const c10d::ReduceScatterOptions& opts) {
    Tensors reduced{input.clone()};
    complete([&] { return gloo_->allreduce(reduced, allreduce_options(opts)); });
    output.copy_(reduced[0].flatten().chunk(getSize())[getRank()].view_as(output));
  }

  c10::intrusive_ptr<c10d::Backend> gloo_;

 public:
  ~GlooBackend() override { release(); }

  // gloo's destructor joins its worker threads, and a worker may still be freeing the tensors
  // of a collective that has finished; a tensor with a Python wrapper takes the GIL to go. So
  // let gloo go without the GIL, or the two threads wait for each other for ever (seen:
  // destroy_process_group() hung in ~ProcessGroupGloo's join while the worker waited for the
  // GIL in TensorImpl::decref_pyobject, once in ~60 groups torn down right after a collective).
  void release() {
    if (!gloo_) return;
    WithoutGil released;
    gloo_.reset();
  }
};

}  // namespace

c10::intrusive_ptr<c10d::Backend> gloo_backend(c10::intrusive_ptr<c10d::Backend> gloo) {
  return c10::make_intrusive<GlooBackend>(std::move(gloo));
}

// The group's shutdown (destroy_process_group) lets gloo go while the interpreter is alive:
// gloo joins its threads in its destructor, which must not run during interpreter exit.
void release_gloo(const c10::intrusive_ptr<c10d::Backend>& backend) {
  if (auto* ours = dynamic_cast<GlooBackend*>(backend.get())) ours->release();
}

}  // namespace npu
