// What the device library exports to the _C stub: plain C, so the stub needs no torch headers.
#pragma once

#define TINY_OPENREG_API __attribute__((visibility("default")))

#ifdef __cplusplus
extern "C" {
#endif

// (major, minor) of the torch the library was compiled against
TINY_OPENREG_API void tiny_openreg_built_for(int* major, int* minor);

#ifdef __cplusplus
}
#endif
