// What the device library exports: to its own _C stub (plain C, so the stub needs no torch
// headers) and to plugins that register kernels on the device and allocate with its allocator
// (C++: they compile against torch anyway). The wheel ships this header as
// tiny_openreg/include/tiny_openreg.h and the library as tiny_openreg/lib/libtiny_openreg.so;
// tiny_openreg.get_include() and get_lib() say where they are.
#pragma once

#define TINY_OPENREG_API __attribute__((visibility("default")))

#ifdef __cplusplus
#include <cstdint>

namespace c10 {
struct Allocator;
}

namespace tiny_openreg {
// The device's allocator: a plugin allocates its outputs with it, as an adapter's own kernels do.
TINY_OPENREG_API c10::Allocator* allocator();
// How many allocations of nonzero size the allocator has made since the library loaded.
TINY_OPENREG_API std::uint64_t allocations();
}  // namespace tiny_openreg

extern "C" {
#endif

// (major, minor) of the torch the library was compiled against
TINY_OPENREG_API void tiny_openreg_built_for(int* major, int* minor);
// allocations(), for the _C stub
TINY_OPENREG_API unsigned long long tiny_openreg_allocations(void);

#ifdef __cplusplus
}
#endif
