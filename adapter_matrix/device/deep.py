"""``check --deep``: import torch, activate the adapter, run a short smoke on its device.

It runs in a fresh interpreter with torch's device-backend autoload off
(:func:`deep_check_isolated`): the adapter is then activated by its own step, so an
adapter that fails inside the autoload (which breaks ``import torch`` itself, and hides
why) shows its error, with the chain of causes behind it.

Each step is timed. Before the adapter's C++ library is loaded, its build manifest is
compared with the running torch, so a library built for another torch is reported
with both versions and the fix, never as ``undefined symbol`` from the loader.
"""

from __future__ import annotations

import importlib
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Dict, List, Optional, TypeVar

from ..answer import DeepSection, DeepStep
from ..matrix.model import Matrix

if TYPE_CHECKING:  # torch is imported by the step that tries it, never at module level
    from types import ModuleType

    from torch import Tensor

T = TypeVar("T")

__all__ = ["DeepReport", "deep_check", "deep_check_isolated", "described"]


@dataclass
class DeepReport:
    steps: List[DeepStep] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return all(s.ok for s in self.steps)

    @property
    def failure(self) -> Optional[DeepStep]:
        return next((s for s in self.steps if not s.ok), None)

    def section(self) -> DeepSection:
        """The report as ``check --json`` writes it (and the isolated child prints it)."""
        return DeepSection(self.ok, tuple(s._replace(seconds=round(s.seconds, 4)) for s in self.steps))


class _Stop(Exception):
    pass


def described(exc: BaseException) -> str:
    """``Type: message``, then each cause behind it (``raise ... from``, or an error raised
    while handling another): an adapter's ImportError often wraps the loader's real answer."""
    parts: List[str] = []
    seen = set()
    current: Optional[BaseException] = exc
    while current is not None and id(current) not in seen and len(parts) < 8:
        seen.add(id(current))
        parts.append(f"{type(current).__name__}: {current}")
        current = current.__cause__ or (None if current.__suppress_context__ else current.__context__)
    return "; caused by ".join(parts)


def _step(report: DeepReport, name: str, fn: Callable[[], T]) -> T:
    start = time.perf_counter()
    try:
        value = fn()
    except Exception as exc:
        report.steps.append(DeepStep(name, False, time.perf_counter() - start, described(exc)))
        raise _Stop() from None
    detail = value if isinstance(value, str) else ""
    report.steps.append(DeepStep(name, True, time.perf_counter() - start, detail))
    return value


def _manifest_check(matrix: Matrix, package: str) -> str:
    """Compare the build this torch would load with the running torch, without loading it."""
    from ..device import build

    ext = build.Extension.of_package(package, matrix.adapter.device)
    explicit = os.environ.get(build.LIBRARY_ENV)
    folder = Path(explicit) if explicit else build.build_dir(ext)
    manifest = build.read_manifest(folder)
    if manifest is None:
        return f"not built yet for this torch: activation compiles it (or run `adapter-matrix build`) into {folder}"
    build.check_manifest(manifest, folder)
    return f"{folder.name}: built for torch {manifest['torch']} ({manifest['python']}), matches"


def _compare(torch: ModuleType, state: Dict[str, Tensor]) -> str:
    expected = (state["x"] @ state["x"]).relu().sum(dim=0)
    if not torch.allclose(state["back"], expected, rtol=1e-5, atol=1e-5):
        raise AssertionError(f"device result differs from CPU by {(state['back'] - expected).abs().max().item():.3g}")
    return "64x64 matmul + relu + sum equals CPU"


def deep_check(matrix: Matrix) -> DeepReport:
    """Run the steps in order; stop at the first failure."""
    report = DeepReport()
    package = matrix.adapter.shims
    if package is None:  # a matrix for checks, tables and plans only: no device to try
        report.steps.append(
            DeepStep("find the shims package", False, 0.0, f"{matrix.path} declares no shims package (adapter: shims:)")
        )
        return report
    # Activate the adapter ourselves (not through torch's autoload) to see its errors.
    os.environ["TORCH_DEVICE_BACKEND_AUTOLOAD"] = "0"
    try:
        torch = _step(report, "import torch", lambda: importlib.import_module("torch"))
        _step(report, "check the build manifest", lambda: _manifest_check(matrix, package))
        _step(
            report,
            f"activate {package}",
            lambda: importlib.import_module(package) and f"device {matrix.adapter.device} ready",
        )
        device = matrix.adapter.device
        state: Dict[str, Tensor] = {"x": torch.randn(64, 64, generator=torch.Generator().manual_seed(0))}
        _step(report, f"create on {device}", lambda: state.update(d=state["x"].to(device)) or f"{state['d'].device}")
        _step(report, "compute", lambda: state.update(out=(state["d"] @ state["d"]).relu().sum(dim=0)) or "")
        _step(report, "copy back", lambda: state.update(back=state["out"].cpu()) or "")
        _step(report, "compare with CPU", lambda: _compare(torch, state))
    except _Stop:
        pass
    return report


def deep_check_isolated(matrix_path: str, timeout: float = 600) -> DeepReport:
    """:func:`deep_check` in a fresh interpreter of this environment, with torch's device
    backend autoload off: no adapter is activated behind the steps' backs, and a crash of the
    adapter (a segfault in its library) is a failed step, not the end of ``check``."""
    import json
    import subprocess
    import sys

    env = dict(os.environ, TORCH_DEVICE_BACKEND_AUTOLOAD="0")
    start = time.perf_counter()
    try:
        proc = subprocess.run(
            [sys.executable, "-m", __name__, matrix_path], capture_output=True, text=True, env=env, timeout=timeout
        )
    except subprocess.TimeoutExpired:
        return DeepReport([DeepStep("run the deep check", False, timeout, f"no answer within {timeout:.0f} s")])
    try:
        from ..documents import from_json

        section = from_json(DeepSection, json.loads(proc.stdout.strip().splitlines()[-1]), "the deep check's report")
        return DeepReport(list(section.steps))
    except (ValueError, IndexError):  # no JSON, or not the declared report (a DocumentError is a ValueError)
        tail = (proc.stderr.strip().splitlines() or [f"exit status {proc.returncode}"])[-1]
        return DeepReport([DeepStep("run the deep check", False, time.perf_counter() - start, tail)])


if __name__ == "__main__":  # the isolated interpreter of deep_check_isolated
    import json
    import sys

    from ..documents import to_json
    from ..matrix.cache import load_matrix

    print(json.dumps(to_json(deep_check(load_matrix(sys.argv[1]).matrix).section())))
