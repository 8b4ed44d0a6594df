"""PyTorch's own OpInfo tests against the adapter's device: the op sweep.

- :mod:`.worker` runs inside a worker process with torch: for each OpInfo of
  ``op_db`` and each dtype CPU supports, the op on the device against the op on CPU;
- :mod:`.compiled` is the compiled sample's worker (``ops sweep --compile``): each op of
  the sample through ``torch.compile(backend="inductor")`` on the device, against CPU;
- :mod:`.activation` finds how the workers activate the adapter (its shims, its autoload
  entry point or its module) and checks the device it registers;
- :mod:`.runner` starts the worker and starts a new one after a crash;
- :mod:`.expected` reads the expected results (known failures, per torch era) and
  judges a sweep against them;
- :mod:`.disabled_tests` reads and writes them in PyTorch's disabled-tests JSON, and
  :mod:`.baseline` finds an adapter's files per torch line and writes what a sweep saw
  (``--write-expected``);
- :mod:`.test_configs` applies the adapter's ``set_test_configs`` (torch 2.13+) to op_db;
- :mod:`.record` turns a judged sweep into the JSON record that CI keeps and the
  ``ops`` table view shows;
- :mod:`.causes` groups a sweep's disagreements by cause, for a readable first sweep.
"""

from __future__ import annotations

from typing import List

from ..build import requirements_for

__all__ = ["requirements", "OPS_ENV", "SWEEP_MODES", "OPS_COMPILE_ENV", "COMPILE_MODES"]

# What the sweep needs next to torch: PyTorch's test machinery imports expecttest and
# numpy. torch < 2.4 was compiled against NumPy 1 and cannot use NumPy 2's C API.
_REQUIREMENTS = (
    ("", ("expecttest", "numpy")),
    ("<2.4", ("numpy<2",)),
)

# The nox cells sweep the fixed sample; ADAPTER_MATRIX_OPS=full sweeps the whole op_db,
# =none skips the sweep.
OPS_ENV = "ADAPTER_MATRIX_OPS"
SWEEP_MODES = ("sample", "full", "none")
# The nox cells add the compiled sample (--compile; skipped with the reason where the
# device declares inductor absent); ADAPTER_MATRIX_OPS_COMPILE=off leaves it out.
OPS_COMPILE_ENV = "ADAPTER_MATRIX_OPS_COMPILE"
COMPILE_MODES = ("on", "off")


def requirements(torch: str) -> List[str]:
    """What to install next to ``torch`` (a version) to run the sweep."""
    return requirements_for(_REQUIREMENTS, torch)
