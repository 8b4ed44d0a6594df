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

# (name, version, index URL or None) -> sha256 digests; None when the index could not be read
Hashes = Callable[[str, str, Optional[str]], Optional[Sequence[str]]]


class Pin(NamedTuple):
    """One package of a fix's stack: its exact version (the local label kept: ``2.10.0+cpu``)
    and where it comes from: ``index_url`` (None: the default index, PyPI), or ``find_links`` (a
    folder of wheels); ``only`` when it must come from that index alone (torch's build)."""

    name: str
    version: str
    index_url: Optional[str] = None
    find_links: Optional[str] = None
    only: bool = False
    # (URL, ref): built from its repository, not an index: a layer pins it by commit, or it is a
    # layer release its source's ref names (no index serves it)
    git: Optional[Tuple[str, str]] = None
    build_isolation: bool = True  # False: its build needs the installed torch
    by_hand: Optional[str] = None  # no index serves it and no ref names it: where to build it from

    @property
    def note(self) -> str:
        """What a file says of a package it cannot pin (``by_hand``), as a comment."""
        return f"# {self.name} {self.version}: no index serves it; build it from {self.by_hand} yourself"

    @property
    def requirement(self) -> str:
        """``name==version``, or the direct reference of a package built from git (its version,
        0.20.1+7.1.0, is no build's)."""
        return self.direct or f"{self.name}=={self.version}"

    @property
    def direct(self) -> Optional[str]:
        """``name @ git+URL@REF`` for a package a layer pins by commit (PEP 508), else None."""
        if self.git is None:
            return None
        url = self.git[0] if self.git[0].startswith("git+") else f"git+{self.git[0]}"
        return f"{self.name} @ {url}@{self.git[1]}"


def _new_python(fix: Fix) -> Optional[str]:
    """The Python a fix moves to (a new environment), else None: the file says it, since
    neither a constraints file nor a ``[tool.uv]`` block can choose the interpreter."""
    return str(fix.cell.python) if "python" in fix.changes else None


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
        if name in below or name in fix.in_clones:  # moved in its clone by the fix: no wheel pinned
            continue
        layer = named.get(name)
        pin = Pin(layer.distribution if layer else name, version, layer.index_url if layer else None)
        if name in sources:
            url, ref, isolated = sources[name]
            pin = pin._replace(index_url=None, git=(url, ref), build_isolation=isolated)
        built = layer.release(Version(version)) if layer is not None else None
        if layer is not None and layer.source is not None and built is not None and layer.unserved(built):
            pin = pin._replace(index_url=None, by_hand=layer.source.url)
        pins.append(pin)
    return tuple(pins)


def _from_git(layers: Sequence[Layer], fix: Fix) -> Dict[str, Tuple[str, str, bool]]:
    """The packages of the fix's stack built from a git ref, as the fix installs them: a layer
    release with a ``ref`` of its ``source``, and a package a layer release pins by commit
    (name -> (URL, ref, build isolation))."""
    versions = dict(fix.packages)
    out: Dict[str, Tuple[str, str, bool]] = {}
    for layer in layers:
        text = versions.get(layer.name)
        release = layer.release(Version(text)) if text is not None else None
        if release is None:
            continue
        if layer.source is not None and release.ref is not None:
            out[layer.name] = (layer.source.url, release.ref, layer.source.build_isolation)
        for pin in release.packages:
            if pin.git is not None and pin.name in versions:  # the fix's stack holds it at the pinned commit
                out.setdefault(pin.name, (pin.git.url, pin.git.ref, True))
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


def render_uv(pins: Sequence[Pin], describes: str, python: Optional[str] = None) -> str:
    """The ``[tool.uv]`` block of the pins (see the module's docstring); ``python``: the Python
    the fix moves to, which uv takes from ``.python-version`` (``uv python pin``), not from here."""
    lines = [
        f"# adapter-matrix check --emit uv: {describes}",
        "# add to pyproject.toml; [project] dependencies name what you use, these pin the whole stack",
    ]
    if python is not None:
        lines.append(f"# on Python {python}: uv python pin {python} (a [tool.uv] block cannot choose it)")
    lines += [
        "[tool.uv]",
        "constraint-dependencies = [",
        *(f"    {json.dumps(p.requirement)}," for p in pins if p.by_hand is None),
        "]",
        *(p.note for p in pins if p.by_hand is not None),
    ]
    links = list(dict.fromkeys(p.find_links for p in pins if p.find_links))
    if links:
        lines.append(f"find-links = {json.dumps(links)}")
    unisolated = [p.name for p in pins if p.git and not p.build_isolation]
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
    if names or any(p.git for p in pins):
        lines += ["", "[tool.uv.sources]"]
        for p in pins:
            if p.git is not None:  # pinned by commit: from its repository, not an index
                lines.append(f"{p.name} = {{ git = {json.dumps(p.git[0])}, rev = {json.dumps(p.git[1])} }}")
            elif p.index_url is not None:
                lines.append(f"{p.name} = {{ index = {json.dumps(names[p.index_url])} }}")
    return "\n".join(lines) + "\n"


def render_requirements(
    pins: Sequence[Pin], describes: str, hashes: Optional[Hashes] = None, python: Optional[str] = None
) -> str:
    """The requirements (and constraints) file of the pins, with each file's hash where
    ``hashes`` finds them on the package's index (see the module's docstring); ``python``: the
    Python the fix moves to, whose pip must read the file."""
    lines = [f"# adapter-matrix check --emit requirements: {describes}"]
    if any(p.git for p in pins):  # pip takes no link as a constraint: the file is read with -r
        lines.append(
            f"# use: {f'python{python} -m ' if python else ''}pip install -r THIS_FILE, or uv pip install "
            f"{f'--python {python} ' if python else ''}-r THIS_FILE (its commits are links: no -c)"
        )
    elif python is None:
        lines.append(
            "# use: uv pip install -r THIS_FILE, or pip install -c THIS_FILE ... (-r THIS_FILE when it has hashes)"
        )
    else:
        lines.append(
            f"# use, in an environment of Python {python}: uv pip install --python {python} -r THIS_FILE, or "
            f"python{python} -m pip install -c THIS_FILE ... (-r THIS_FILE when it has hashes)"
        )
    lines += [f"--extra-index-url {url}" for url in dict.fromkeys(p.index_url for p in pins if p.index_url)]
    lines += [f"--find-links {url}" for url in dict.fromkeys(p.find_links for p in pins if p.find_links)]
    unisolated = [p.name for p in pins if p.git and not p.build_isolation]
    if unisolated:
        lines.append(
            f"# {', '.join(unisolated)} build{'s' if len(unisolated) == 1 else ''} against the installed torch:"
            " install torch first, then pip install --no-build-isolation -r THIS_FILE"
        )
    found: Dict[str, Sequence[str]] = {}
    if hashes is not None and any(p.git for p in pins):  # pip cannot hash a git checkout: none, or pip refuses
        lines.append("# no hashes: pip's hash checking cannot check a package built from git")
        hashes = None
    for pin in [p for p in pins if p.by_hand is None] if hashes is not None else ():
        digests = hashes(pin.name, pin.version, pin.index_url) if hashes is not None else ()
        if not digests:  # pip checks every requirement once one has a hash: all or none, and no more asking
            why = (
                f"the index of {pin.name} ({pin.index_url or 'the default index'}) could not be read"
                if digests is None
                else f"the index gave none for {pin.name}"
            )
            lines.append(f"# no hashes: {why}, and pip's hash checking needs every one")
            found = {}
            break
        found[pin.name] = digests
    lines += [p.note for p in pins if p.by_hand is not None]
    for pin in [p for p in pins if p.by_hand is None]:
        digests = found.get(pin.name) or ()
        lines.append(pin.requirement + "".join(f" \\\n    --hash=sha256:{d}" for d in digests))
    return "\n".join(lines) + "\n"


def render_emitted(
    fmt: str, pins: Sequence[Pin], describes: str, hashes: Optional[Hashes] = None, fix: Optional[Fix] = None
) -> str:
    """The pins as ``fmt`` (one of :data:`EMIT_FORMATS`); ``fix``: the fix they are of (its Python)."""
    python = _new_python(fix) if fix is not None else None
    text = render_uv(pins, describes, python) if fmt == "uv" else render_requirements(pins, describes, hashes, python)
    if fix is None or not fix.in_clones:
        return text
    head, _sep, rest = text.partition("\n")
    said = ", ".join(fix.in_clones)
    note = f"# not pinned here: {said}, installed from a clone, which the fix checks out there (check's fix says how)"
    return f"{head}\n{note}\n{rest}"
