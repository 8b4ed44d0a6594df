// A clean interpreter exit after backward() on the device.
//
// Why a script that trained could abort at exit ("terminate called without an active
// exception", status 134): torch's autograd engine runs the backward of non-CPU tensors on
// one worker thread per device index (pt_autograd_<i>, started for every device type with a
// guard, so for npu too). The GraphTask of a backward call holds the caller's thread-local
// state, which holds Python objects (the caller's contextvars.Context; also any torch
// function/dispatch mode). When the graph is done, the worker wakes the caller and only then
// drops its own reference to the GraphTask. If the caller has already returned, that drop is
// the last one, and freeing the Context needs the GIL. A script that ends right after
// backward() is in Py_FinalizeEx by then, and CPython ends any thread that takes the GIL
// during finalization with pthread_exit(); its forced unwind crosses a noexcept frame of
// torch's and std::terminate() aborts the process. With two devices there are two workers,
// and the second one's first GIL acquisition at start-up can land there too.
//
// The fix: before finalization starts (an atexit handler), with the GIL released, run one
// backward on each device whose graph holds no Python object, from C++. A worker takes its
// tasks in order and drops the GraphTask of a finished task before it takes the next one, so
// once the worker has run ours, every earlier GraphTask of that worker is gone, and the
// worker is idle in its queue (where it never touches Python again). Ours is freed without
// the GIL. Only done when the workers exist: starting them at exit would race the same way.
#include "npu.h"  // first: the version gates decide what else to include

#include <ATen/ATen.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <torch/csrc/autograd/autograd.h>

#include <dirent.h>

#include <fstream>
#include <string>

namespace npu {

namespace {

// Whether torch has started its autograd device threads (named pt_autograd_<i>) in this
// process. Linux names threads in /proc; elsewhere assume they exist.
bool autograd_device_threads_started() {
  DIR* tasks = opendir("/proc/self/task");
  if (tasks == nullptr) return true;
  bool found = false;
  while (dirent* entry = readdir(tasks)) {
    if (entry->d_name[0] == '.') continue;
    std::ifstream comm(std::string("/proc/self/task/") + entry->d_name + "/comm");
    std::string name;
    if (std::getline(comm, name) && name.rfind("pt_autograd_", 0) == 0) {
      found = true;
      break;
    }
  }
  closedir(tasks);
  return found;
}

}  // namespace

void quiesce_autograd_threads() {
  if (!autograd_device_threads_started()) return;
  // The engine keeps one worker per device index, shared by all device types.
  DeviceScope keep(current_device());
  for (c10::DeviceIndex i = 0; i < device_count(); ++i) {
    at::Tensor leaf = at::ones({1}, at::TensorOptions().device(device(i))).requires_grad_(true);
    at::Tensor out = leaf.mul(2).sum();
    torch::autograd::backward({out});
  }
}

}  // namespace npu
