"""``check --constraints pip|uv``: the pins that keep a working environment as it is.

A later ``pip install`` or ``uv sync`` of anything that names torch may move it to another
release or another build (PyPI's CUDA torch over ``2.13.0+cpu``), and the adapter, built for
one torch, stops loading. Cambricon's README and ByteDance's VeOmni pin by hand; this writes
the pins from what ``check`` found: torch (its local label kept), each installed companion and
the adapter, at their exact versions, with the index torch's build comes from.

- ``pip``: a constraints file (``pip install -c FILE``, or ``PIP_CONSTRAINT=FILE`` for every
  later install); the index as ``--extra-index-url``, which pip honours in a constraints file.
- ``uv``: a ``[tool.uv]`` block for ``pyproject.toml``: ``override-dependencies`` (no
  dependency can ask for another torch), the index as an explicit ``[[tool.uv.index]]`` and
  ``[tool.uv.sources]`` sending torch and its labelled companions there alone.

Only an environment that works is pinned (supported, experimental or deprecated): pinning an
unsupported one would keep it broken, and ``check`` names its fixes instead.
"""

from __future__ import annotations

import json
from typing import Dict, List, NamedTuple, Optional, Sequence, Tuple

from ..matrix.model import Matrix
from ..matrix.status import Status
from .fixes import torch_index
from .installed_companions import CompanionState
from .judgment import Environment, Verdict

__all__ = ["FORMATS", "KeptPins", "keep_pins", "render_pins"]

FORMATS = ("pip", "uv")


class KeptPins(NamedTuple):
    """What keeps one environment: ``requirements`` (``name==version``, torch first), the
    ``where`` option torch's build needs (``("--index-url", URL)``, ``("--find-links", DIR)``
    or None for PyPI), the packages that come from it, and what was pinned (for the header)."""

    requirements: Tuple[str, ...]
    where: Optional[Tuple[str, str]]
    from_index: Tuple[str, ...]
    describes: str


class NothingToKeep(ValueError):
    """The environment does not work: there is nothing to pin."""


def keep_pins(
    matrix: Matrix,
    env: Environment,
    answer: Verdict,
    companions: Sequence[CompanionState],
    stack: Sequence[Tuple[str, str]] = (),
) -> KeptPins:
    """The pins of ``env`` as ``check`` judged it, and of the stack above the adapter (``stack``:
    each layer and what it pins, as installed); :class:`NothingToKeep` when it does not work."""
    if answer.outcome.rank > Status.DEPRECATED.rank or env.torch is None or env.adapter is None:
        raise NothingToKeep(
            f"{matrix.adapter.distribution} is {answer.outcome.value} here, or not installed: there is nothing to keep"
            " (adapter-matrix check names the fixes; pin after installing one)"
        )
    label = env.torch.local
    requirements = [f"torch=={env.torch}"]
    from_index = ["torch"]
    for state in companions:
        if state.installed is None or state.state not in ("paired", "unchecked"):
            continue
        requirements.append(f"{state.companion.name}=={state.installed}")
        if label and state.installed.endswith(f"+{label}"):
            from_index.append(state.companion.name)  # torchvision 0.28.0+cpu lives beside torch 2.13.0+cpu
    requirements.append(f"{matrix.adapter.distribution}=={env.adapter}")
    requirements += [f"{name}=={version}" for name, version in stack]  # the layers keep what they pin
    index = None
    if answer.release is not None and answer.line is not None:
        option = (torch_index(matrix, answer.release, answer.line, label) or "").split()
        if len(option) == 2:
            index = (option[0], option[1])
    describes = (
        f"{matrix.adapter.distribution} {env.adapter} with torch {env.torch} on Python {env.python}"
        f" is {answer.outcome.value} ({matrix.path})"
    )
    return KeptPins(tuple(requirements), index, tuple(from_index), describes)


def render_pins(pins: Sequence[KeptPins], fmt: str) -> str:
    """The constraints file (``pip``) or the pyproject block (``uv``) of one or more environments' pins."""
    requirements: List[str] = list(dict.fromkeys(r for p in pins for r in p.requirements))
    indexes = list(dict.fromkeys(p.where for p in pins if p.where is not None))
    header = [f"# adapter-matrix check --constraints {fmt}: {p.describes}" for p in pins]
    if fmt == "pip":
        header.append("# use: pip install -c THIS_FILE ..., or PIP_CONSTRAINT=THIS_FILE for every later install")
        options = [f"{'--extra-index-url' if o == '--index-url' else o} {v}" for o, v in indexes]
        return "\n".join(header + options + requirements) + "\n"
    links = [v for o, v in indexes if o == "--find-links"]
    urls = [v for o, v in indexes if o == "--index-url"]
    lines = header + ["# add to pyproject.toml", "[tool.uv]", "override-dependencies = ["]
    lines += [f"    {json.dumps(r)}," for r in requirements] + ["]"]
    if links:
        lines.append(f"find-links = {json.dumps(links)}")
    names = [f"torch-{i}" if len(urls) > 1 else "torch" for i in range(len(urls))]
    for name, url in zip(names, urls):
        lines += ["", "[[tool.uv.index]]", f"name = {json.dumps(name)}", f"url = {json.dumps(url)}"]
        lines.append("explicit = true  # only the packages [tool.uv.sources] sends here")
    if urls:  # one torch build per environment: several indexes only when matrices disagree
        lines += ["", "[tool.uv.sources]"]
        index_name = dict(zip(urls, names))
        sources: Dict[str, str] = {}  # package -> the index of the first environment that pins it there
        also: List[str] = []
        for pin in pins:
            if pin.where is None or pin.where[0] != "--index-url":
                continue  # PyPI, or a folder: find-links above, no source needed
            for package in pin.from_index:
                first = sources.setdefault(package, index_name[pin.where[1]])
                if first != index_name[pin.where[1]]:  # uv takes one index per package
                    also.append(f"# {package}: {pin.describes} takes it from {pin.where[1]}, not {first}")
        lines += [f"{package} = {{ index = {json.dumps(index)} }}" for package, index in sources.items()]
        lines += also
    return "\n".join(lines) + "\n"
