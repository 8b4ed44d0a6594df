"""The reference device's C++ core and shims: build cache, version gates, probe, capabilities, the op sweep."""
