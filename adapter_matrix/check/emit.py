"""``check --emit uv|requirements``: ``check``'s first fix as input for a resolver.

The fix's commands are for pip typed by hand; a project that locks its environment wants
the same fix as data. Both forms pin **every** package of the stack the fix leaves (torch
with its variant label, the adapter, each layer and what the layers pin), each from its own
index, as :func:`fix_pins` reads them from the model and the fix (the commands are not parsed
back):

- ``uv``: a ``[tool.uv]`` block for ``pyproject.toml``: ``constraint-dependencies`` with every
  pin, each index the pins need as an explicit ``[[tool.uv.index]]`` (only the packages sent
  there come from it: no other package can be taken from PyTorch's CPU index), and
  ``[tool.uv.sources]`` sending each such package to its index.
- ``requirements``: a requirements file that is also a constraints file (``uv pip install -r
  FILE``, ``pip install -c FILE``): the indexes as ``--extra-index-url`` (pip and uv read index
  options in it), then ``name==version`` per package, with ``--hash=sha256:…`` of each of its
  files where the index's answer gives them (``hashes``: read by the caller, outside this spoke).
  With a hash on any line pip checks every requirement's hash: a requirement that is not in the
  file itself (``pip install -c FILE NAME``) then needs its own, so hashed files are used as
  ``pip install -r FILE``.
"""

from __future__ import annotations

import json
from typing import Callable, Dict, NamedTuple, Optional, Sequence, Tuple

from packaging.version import Version

from ..matrix.model import Layer, Matrix
from ..names import canonical_name
from .fixes import torch_index
from .judgment import Fix
from .variants import index_label

__all__ = ["EMIT_FORMATS", "Pin", "Hashes", "fix_pins", "render_emitted", "render_uv", "render_requirements"]

EMIT_FORMATS = ("uv", "requirements")

Hashes = Callable[[str, str, Optional[str]], Sequence[str]]  # (name, version, index URL or None) -> sha256 digests


class Pin(NamedTuple):
    """One package of a fix's stack: its exact version (the local label kept: ``2.10.0+cpu``)
    and where it comes from: ``index_url`` (None: the default index, PyPI), or ``find_links`` (a
    folder of wheels); ``only`` when it must come from that index alone (torch's build)."""

    name: str
    version: str
    index_url: Optional[str] = None
    find_links: Optional[str] = None
    only: bool = False
    # no index serves it: built from its repository (``git+URL@REF``, a PEP 508 direct reference)
    url: Optional[str] = None
    build_isolation: bool = True  # False: its build needs the installed torch
    by_hand: Optional[str] = None  # no index serves it and no ref names it: where to build it from

    @property
    def note(self) -> str:
        """What a file says of a package it cannot pin (``by_hand``), as a comment."""
        return f"# {self.name} {self.version}: no index serves it; build it from {self.by_hand} yourself"

    @property
    def requirement(self) -> str:
        return f"{self.name} @ {self.url}" if self.url else f"{self.name}=={self.version}"


def fix_pins(matrix: Matrix, layers: Sequence[Layer], fix: Fix) -> Tuple[Pin, ...]:
    """Every package of the stack ``fix`` leaves, torch first, each with its index."""
    cell = fix.cell
    release = cell.release
    where = (torch_index(matrix, release, cell.line, cell.torch.local) or "").split()
    torch = Pin("torch", str(cell.torch))
    if len(where) == 2 and where[0] == "--index-url":
        torch = torch._replace(index_url=where[1], only=True)
    elif len(where) == 2:
        torch = torch._replace(find_links=where[1])
    pins = [torch, Pin(matrix.adapter.distribution, str(release.version), release.index_url)]
    named = {layer.name: layer for layer in layers}
    below = {"torch", canonical_name(matrix.adapter.distribution)}
    sources = _from_git(layers, fix)
    for name, version in fix.packages:
        if name in below:
            continue
        layer = named.get(name)
        pin = Pin(layer.distribution if layer else name, version, layer.index_url if layer else None)
        if name in sources:
            pin = pin._replace(index_url=None, url=sources[name][0], build_isolation=sources[name][1])
        built = layer.release(Version(version)) if layer is not None else None
        if layer is not None and layer.source is not None and built is not None and layer.unserved(built):
            pin = pin._replace(index_url=None, by_hand=layer.source.url)
        pins.append(pin)
    return tuple(pins)


def _from_git(layers: Sequence[Layer], fix: Fix) -> Dict[str, Tuple[str, bool]]:
    """The packages of the fix's stack built from a git ref, as the fix installs them: a layer
    release with a ``ref`` of its ``source``, and a package a layer release pins by commit
    (name -> (``git+URL@REF``, build isolation))."""
    versions = dict(fix.packages)
    out: Dict[str, Tuple[str, bool]] = {}
    for layer in layers:
        text = versions.get(layer.name)
        release = layer.release(Version(text)) if text is not None else None
        if release is None:
            continue
        if layer.source is not None and release.ref is not None:
            out[layer.name] = (f"{layer.source.pip_url}@{release.ref}", layer.source.build_isolation)
        for pin in release.packages:
            if pin.git is not None and pin.name in versions:  # the fix's stack holds it at the pinned commit
                out.setdefault(pin.name, (f"{pin.git.pip_url}@{pin.git.ref}", True))
    return out


def _index_names(pins: Sequence[Pin]) -> Dict[str, str]:
    """A name for each index the pins need: PyTorch's by its label (``pytorch-cpu``), any other
    by the first package that comes from it (``vllm-ascend-index``)."""
    out: Dict[str, str] = {}
    for pin in pins:
        if pin.index_url is None or pin.index_url in out:
            continue
        label = index_label(pin.index_url)
        name = f"pytorch-{label}" if label else f"{canonical_name(pin.name)}-index"
        while name in out.values():
            name += "-2"
        out[pin.index_url] = name
    return out


def render_uv(pins: Sequence[Pin], describes: str) -> str:
    """The ``[tool.uv]`` block of the pins (see the module's docstring)."""
    lines = [
        f"# adapter-matrix check --emit uv: {describes}",
        "# add to pyproject.toml; [project] dependencies name what you use, these pin the whole stack",
        "[tool.uv]",
        "constraint-dependencies = [",
        *(f"    {json.dumps(p.requirement)}," for p in pins if p.by_hand is None),
        "]",
        *(p.note for p in pins if p.by_hand is not None),
    ]
    links = list(dict.fromkeys(p.find_links for p in pins if p.find_links))
    if links:
        lines.append(f"find-links = {json.dumps(links)}")
    unisolated = [p.name for p in pins if p.url and not p.build_isolation]
    if unisolated:
        lines.append(f"no-build-isolation-package = {json.dumps(unisolated)}")
        lines.append(
            f"# {', '.join(unisolated)} build{'s' if len(unisolated) == 1 else ''} against the installed torch:"
            f" uv sync {' '.join('--no-install-package ' + n for n in unisolated)} first, then uv sync"
        )
    names = _index_names(pins)
    for url, name in names.items():
        lines += ["", "[[tool.uv.index]]", f"name = {json.dumps(name)}", f"url = {json.dumps(url)}"]
        lines.append("explicit = true  # only the packages [tool.uv.sources] sends here")
    if names:
        lines += ["", "[tool.uv.sources]"]
        lines += [f"{p.name} = {{ index = {json.dumps(names[p.index_url])} }}" for p in pins if p.index_url is not None]
    return "\n".join(lines) + "\n"


def render_requirements(pins: Sequence[Pin], describes: str, hashes: Optional[Hashes] = None) -> str:
    """The requirements (and constraints) file of the pins, with each file's hash where
    ``hashes`` finds them on the package's index (see the module's docstring)."""
    lines = [
        f"# adapter-matrix check --emit requirements: {describes}",
        "# use: uv pip install -r THIS_FILE, or pip install -c THIS_FILE ... (-r THIS_FILE when it has hashes)",
    ]
    lines += [f"--extra-index-url {url}" for url in dict.fromkeys(p.index_url for p in pins if p.index_url)]
    lines += [f"--find-links {url}" for url in dict.fromkeys(p.find_links for p in pins if p.find_links)]
    unisolated = [p.name for p in pins if p.url and not p.build_isolation]
    if unisolated:
        lines.append(
            f"# {', '.join(unisolated)} build{'s' if len(unisolated) == 1 else ''} against the installed torch:"
            " install torch first, then pip install --no-build-isolation -r THIS_FILE"
        )
    found: Dict[str, Sequence[str]] = {}
    if hashes is not None and any(p.url for p in pins):  # pip cannot hash a git checkout: none, or pip refuses
        lines.append("# no hashes: pip's hash checking cannot check a package built from git")
        hashes = None
    for pin in [p for p in pins if p.by_hand is None] if hashes is not None else ():
        digests = hashes(pin.name, pin.version, pin.index_url) if hashes is not None else ()
        if not digests:  # pip checks every requirement once one has a hash: all or none, and no more asking
            lines.append(f"# no hashes: the index gave none for {pin.name}, and pip's hash checking needs every one")
            found = {}
            break
        found[pin.name] = digests
    lines += [p.note for p in pins if p.by_hand is not None]
    for pin in [p for p in pins if p.by_hand is None]:
        digests = found.get(pin.name) or ()
        lines.append(pin.requirement + "".join(f" \\\n    --hash=sha256:{d}" for d in digests))
    return "\n".join(lines) + "\n"


def render_emitted(fmt: str, pins: Sequence[Pin], describes: str, hashes: Optional[Hashes] = None) -> str:
    """The pins as ``fmt`` (one of :data:`EMIT_FORMATS`)."""
    return render_uv(pins, describes) if fmt == "uv" else render_requirements(pins, describes, hashes)
