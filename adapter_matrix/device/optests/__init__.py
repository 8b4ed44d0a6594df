"""PyTorch's own test files on the adapter's device (``adapter-matrix ops tests``).

- :mod:`.packrun` runs the files of a test pack (:mod:`adapter_matrix.upstream.testpacks`),
  one process per file, through PyTorch's device hooks, and judges each test against the
  expectations (PyTorch's disabled-tests JSON) and the CPU control;
- :mod:`.packplugin` is the pytest plugin inside each file's process: activation, the
  override file, the shard, each test's outcome as it happens;
- :mod:`.packoverrides` reads an adapter's override file (skips, expected failures,
  tolerances, an op allow list, attribute changes of OpInfos, ModuleInfos, OptimizerInfos);
- :mod:`.packrecord` turns a run into the JSON record a cell keeps.
"""
