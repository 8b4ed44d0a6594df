"""What ``ops tests`` runs, from the adapter's matrix: the request :func:`.packrun.run` takes.

The device and how it is activated (as ``ops sweep``: :mod:`..opsweep.activation`), the
override files (``op-tests/overrides.yaml``, ``op-tests/overrides-X.Y.yaml`` next to the
matrix, or those named), and the expectations: PyTorch's disabled-tests JSON, by default the
torch line's ``op-sweep/pytorch-disabled-tests-X.Y.json``, the file the op sweep reads too
(its keys name PyTorch's tests, so one file says what is known to fail in both).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Sequence, Tuple

from ...files import atomic_write
from ..opsweep import baseline
from ..opsweep import disabled_tests as dt
from ..opsweep.activation import activation_of
from . import packoverrides
from .packrun import TestsRequest, TestsResult, TestsRunError, expectations_after

__all__ = ["TestsOptions", "Prepared", "prepare", "update"]


@dataclass(frozen=True)
class TestsOptions:
    """The command line's choices (``ops tests``)."""

    __test__ = False

    files: Tuple[str, ...] = ()
    overrides: Tuple[str, ...] = ()
    expected: Optional[str] = None
    control: Optional[str] = None
    jobs: int = 1
    timeout: float = 1800.0
    activate: Optional[str] = None


@dataclass(frozen=True)
class Prepared:
    request: TestsRequest
    activation: str  # how, for the first line of the output
    expected_path: str
    override_paths: Tuple[str, ...]


def prepare(matrix: Any, test_dir: str, pack_files: Sequence[str], options: TestsOptions) -> Prepared:
    """The request for ``matrix``'s adapter (a validated model) on the pack at ``test_dir``."""
    adapter = matrix.adapter
    activation = activation_of(adapter.distribution, adapter.shims, options.activate)
    matrix_dir = os.path.dirname(os.path.abspath(matrix.path))
    line = baseline.installed_torch_line()
    paths = options.overrides or tuple(packoverrides.paths_for(matrix_dir, line))
    overrides = packoverrides.merge([packoverrides.load(p) for p in paths])
    expected_path = options.expected or baseline.paths_for(matrix_dir, line or "unknown")["json"]
    expected: Dict[str, List[object]] = dict(dt.read(expected_path).entries) if os.path.exists(expected_path) else {}
    files = options.files or tuple(pack_files)
    missing = [f for f in files if not os.path.isfile(os.path.join(test_dir, f))]
    if missing:
        raise TestsRunError(f"not in the pack ({test_dir}): {', '.join(missing)}; its files: {', '.join(pack_files)}")
    request = TestsRequest(
        test_dir, tuple(files), adapter.device, activation.target, overrides, expected, options.jobs, options.timeout,
        options.control,
    )  # fmt: skip
    return Prepared(request, activation.how, expected_path, tuple(paths))


def update(result: TestsResult, prepared: Prepared) -> None:
    """``--update-expected``: write what the run saw into the expectations file."""
    previous = prepared.request.expected
    os.makedirs(os.path.dirname(os.path.abspath(prepared.expected_path)), exist_ok=True)
    atomic_write(prepared.expected_path, dt.dumps(expectations_after(result, previous)))
