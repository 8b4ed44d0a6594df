"""PyTorch's own OpInfo tests against the adapter's device: the op sweep.

- :mod:`.worker` runs inside a worker process with torch: for each OpInfo of
  ``op_db`` and each dtype CPU supports, the op on the device against the op on CPU;
- :mod:`.runner` starts the worker and starts a new one after a crash;
- :mod:`.expected` reads the expected results (known failures, per torch era) and
  judges a sweep against them.
"""
