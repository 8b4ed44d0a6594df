"""The environment as the model sees it: detected, or assumed by what-if flags.

torch and the adapter are read from distribution metadata (:mod:`adapter_matrix.check.facts`),
never imported: ``import torch`` costs seconds and can itself be what is broken.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Dict, NamedTuple, Optional, Tuple

from packaging.version import InvalidVersion, Version

from ..errors import AdapterMatrixError
from ..matrix.model import ABSENT, Dimension, Matrix, PythonVersion, Value
from .detectors import Detection, builtin_value, detect
from .facts import distribution_requires, distribution_version, python_identity, unreadable_metadata
from .judgment import Environment

if TYPE_CHECKING:
    from .elsewhere import Target

__all__ = ["AssumptionError", "Installed", "current_python", "dimension_value", "detect_environment", "torch_family"]


class AssumptionError(AdapterMatrixError, ValueError):
    """A value a what-if question assumes that the matrix cannot take. ``kind`` is what was
    assumed (``torch``, ``adapter``, ``dimension``, ``companion``); ``name`` and ``value``
    the assumption (no ``value``: the names in ``problem`` are not the matrix's)."""

    def __init__(self, kind: str, problem: str, name: Optional[str] = None, value: Optional[str] = None) -> None:
        self.kind, self.problem, self.name, self.value = kind, problem, name, value
        said = f"{name}={value!r}" if name and value is not None else repr(value) if value is not None else ""
        super().__init__(f"assumed {kind} {said} {problem}".replace("  ", " "))


class Installed(NamedTuple):
    """An environment as detected, with how each dimension was found."""

    environment: Environment
    torch_text: Optional[str]
    adapter_text: Optional[str]
    detections: Tuple[Detection, ...]

    torch_family: Optional[str] = None  # the variant family fixes keep (see torch_family)
    # torch's dist-info is there but its METADATA has no Version: installed and broken, said so
    torch_error: Optional[str] = None

    @property
    def torch_variant(self) -> Optional[str]:
        torch = self.environment.torch
        return torch.local if torch is not None else None


def torch_family(torch: Optional[Version], requires: Tuple[str, ...]) -> Optional[str]:
    """The torch variant family, the user's hardware: the local label (``cpu``, ``xpu``,
    ``cu126``, ``cxx11.abi``), else ``cuda`` for PyPI's unlabelled build when its metadata
    requires ``nvidia-*`` packages, else ``pypi`` (PyPI's build for this platform)."""
    if torch is None:
        return None
    if torch.local:
        return torch.local
    return "cuda" if any(r.lower().startswith("nvidia-") for r in requires) else "pypi"


def _parse(text: Optional[str]) -> Optional[Version]:
    if text is None:
        return None
    try:
        return Version(text)
    except InvalidVersion:
        return None


def dimension_value(dim: Dimension, text: Optional[str]) -> Optional[Value]:
    """``text`` read as a value of ``dim``, or None when it is not one (or absent)."""
    if text is None:
        return None
    try:
        return dim.value(text)
    except InvalidVersion:
        return None


def current_python(target: Optional[Target] = None) -> Tuple[PythonVersion, str, str]:
    """This interpreter (or ``target``'s, ``check --env``): feature release (``3.13t`` when
    free-threaded), full version, implementation."""
    feature, full, implementation = python_identity(target)
    return PythonVersion.parse(feature), full, implementation


def detect_environment(
    matrix: Matrix,
    *,
    python: Optional[PythonVersion] = None,
    torch: Optional[str] = None,
    adapter: Optional[str] = None,
    dimensions: Optional[Dict[str, str]] = None,
    target: Optional[Target] = None,
) -> Installed:
    """Detect the environment (``target``'s, ``check --env``, else this one); each other keyword
    overrides one detected value (what-if questions).

    Raises :class:`AssumptionError` for an override that is not a valid version or value.
    """
    detected_python, full, implementation = current_python(target)
    if python is not None:
        full = str(python)
        implementation = "cpython"
    torch_text = torch if torch is not None else distribution_version("torch", target)
    adapter_text = adapter if adapter is not None else distribution_version(matrix.adapter.distribution, target)
    for label, text, given in (("torch", torch_text, torch), ("adapter", adapter_text, adapter)):
        if given is not None and _parse(text) is None:
            raise AssumptionError(label, "is not a PEP 440 version", value=text)
    overrides = dimensions or {}
    detections = []
    dim_values = []
    for dim in matrix.dimensions:
        if dim.name in overrides:
            found = Detection(dim.name, overrides[dim.name], "--set", None)
        else:
            found = detect(dim, target)
        if found.value is None and any(v.absent for v in dim.values):
            # a dimension that may be absent is absent when nothing finds it (no oneAPI)
            found = Detection(dim.name, ABSENT, "nothing found: absent", found.error)
        value = dimension_value(dim, found.value)
        if found.value is not None and value is None:
            found = Detection(dim.name, None, found.source, f"{found.value!r} is not a PEP 440 version")
            if dim.name in overrides:
                raise AssumptionError("dimension", "is not a PEP 440 version", dim.name, overrides[dim.name])
        if (
            value is not None
            and dim.kind == "enum"
            and dim.name in overrides
            and not any(value.same(v) for v in dim.values)
        ):
            known = ", ".join(str(v) for v in dim.values)
            raise AssumptionError("dimension", f"is not one of its values ({known})", dim.name, overrides[dim.name])
        detections.append(found)
        dim_values.append((dim.name, value))
    unknown = set(overrides) - {d.name for d in matrix.dimensions}
    if unknown:
        raise AssumptionError(
            "dimension",
            f"names unknown dimension(s) {', '.join(sorted(unknown))}; the matrix declares: "
            + (", ".join(d.name for d in matrix.dimensions) or "none"),
        )
    env = Environment(
        python=python or detected_python,
        python_full=full,
        implementation=implementation,
        torch=_parse(torch_text),
        adapter=_parse(adapter_text),
        dimensions=tuple(dim_values),
        platform_os=builtin_value("os"),  # the shell the fixes are typed in, when no os dimension says
    )
    requires = distribution_requires("torch", target) if torch is None and env.torch is not None else ()
    broken = unreadable_metadata("torch", target) if torch is None and torch_text is None else None
    return Installed(env, torch_text, adapter_text, tuple(detections), torch_family(env.torch, requires), broken)
