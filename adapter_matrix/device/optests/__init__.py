"""PyTorch's own test files on the adapter's device (``adapter-matrix ops tests``).

- :mod:`.packrun` runs the files of a test pack (:mod:`adapter_matrix.upstream.testpacks`),
  one process per file, through PyTorch's device hooks, and judges each test against the
  expectations (PyTorch's disabled-tests JSON) and the CPU control;
- :mod:`.packplugin` is the pytest plugin inside each file's process: activation, the
  override file, the shard, each test's outcome as it happens;
- :mod:`.packzygote` is the fork server each file's process is forked from (torch and the
  device ready once);
- :mod:`.packoverrides` reads an adapter's override file (skips, expected failures,
  tolerances, an op allow list, attribute changes of OpInfos, ModuleInfos, OptimizerInfos);
- :mod:`.packrecord` turns a run into the JSON record a cell keeps.
"""

from __future__ import annotations

__all__ = ["TESTS_ENV", "TESTS_MODES"]

# A cell runs its adapter's OpTests only when asked: ADAPTER_MATRIX_OPS_TESTS=on (what
# `adapter-matrix tier --ops tests` sets), or OpTests(default=True) in the noxfile; =off skips them.
TESTS_ENV = "ADAPTER_MATRIX_OPS_TESTS"
TESTS_MODES = ("on", "off")
