"""An adapter's published releases as its matrix (``adapter-matrix init --from-index``).

From a :class:`~adapter_matrix.upstream.history.History` (the adapter's wheels on the index)
and torch's own facts (:class:`~adapter_matrix.upstream.index.Upstream`), write a
``compat.yaml`` holding every final release the index has, post-releases included:

- its ``torch``: what its wheels require (``Requires-Dist``), as pip enforces it; a release
  whose wheels declare nothing gets what the other releases of its line require, and says so;
- its ``python``: the CPython builds it has wheels for; its ``date``: its first upload;
- the platforms its wheels cover, as an ``arch`` (and ``os``) dimension when there is more
  than one; a release whose wheels differ by platform (torch-npu's x86_64 wheels require
  torch's ``+cpu`` build, its aarch64 wheels PyPI's) gets one entry per platform;
- every torch line from the oldest a release requires to the newest on the index (a line
  no release serves yet is a fact a vendor's table shows too).

Post-releases belong to the release they follow: ``2.9.0``, ``2.9.0.post2`` ...
``2.9.0.post9`` make up release line ``2.9.0``. They are builds, not newer copies: torch-npu
builds each for a driver toolkit (2.9.0 for CANN 8.5.0, 2.9.0.post6 for 9.1.0), which the
index does not know. So the status a maintainer expects of such a history (docs/importing.md,
"The status an import gives") is ``supported`` for every build the index serves (none is
deprecated merely for being older: it may be the one for the user's toolkit), and ``broken``
for a yanked one (left out, and named in the header, when its torch is older than any live
release's: IPEX's PyPI history yanks 19 of 22). The file says what the index cannot know (the
driver toolkit each build is for, end-of-life dates): the maintainer's to add. The history may come from any index, PEP 691 JSON or PEP 503 HTML
(:mod:`adapter_matrix.upstream.simple_html`).

The file keeps a comment saying where each fact came from, and validates as written;
``validate --upstream`` checks its releases against the same index
(:mod:`adapter_matrix.upstream.own`).
"""

from __future__ import annotations

import datetime as _dt
import re
from typing import Dict, FrozenSet, List, NamedTuple, Optional, Sequence, Tuple

from packaging.specifiers import SpecifierSet
from packaging.version import Version

from ..matrix.model import SCHEMA_VERSION, PythonVersion, minor_line
from ..names import escaped_name
from ..urls import PYTORCH_INDEX
from .history import History, Platform, Published
from .index import Upstream, UpstreamError, UpstreamLine, python_order

__all__ = ["Entry", "device_of", "entries", "import_text", "python_text", "status_of", "torch_text"]

_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
# torch's own indexes, one per local label (as check's fixes know them)
_PYTORCH_LABEL = re.compile(r"(cpu|xpu|cu\d+|rocm\d+(\.\d+)*)\Z")


def device_of(distribution: str) -> Optional[str]:
    """The device a distribution's name suggests: ``torch-npu`` -> ``npu``; ``None`` if none."""
    name = escaped_name(distribution)
    for prefix in ("torch_", "pytorch_"):
        if name.startswith(prefix) and _IDENTIFIER.match(name[len(prefix) :]):
            return name[len(prefix) :]
    return None


def torch_text(spec: SpecifierSet) -> str:
    """A wheel's torch requirement as a release writes it: ``2.9.0+cpu`` for
    ``==2.9.0+cpu``, else the specifier (``==2.14.0.*``, ``>=2.1.0``)."""
    specs = list(spec)
    if len(specs) == 1 and specs[0].operator == "==" and "*" not in specs[0].version:
        return specs[0].version
    return ",".join(sorted(str(s) for s in specs))


def python_text(pythons: Sequence[PythonVersion]) -> Tuple[str, bool]:
    """(the claim as written, free-threaded): a range when the plain builds are consecutive
    minors (``>=3.10,<3.15``) and the free-threaded ones are among them, else a list."""
    plain = sorted(p.version for p in pythons if not p.free_threaded)
    threaded = {p.version for p in pythons if p.free_threaded}
    consecutive = all(
        (b.major, b.minor) == (a.major, a.minor + 1) for a, b in zip(plain, plain[1:])
    ) and threaded <= set(plain)
    if plain and consecutive:
        top = plain[-1]
        return f'">={plain[0]},<{top.major}.{top.minor + 1}"', bool(threaded)
    listed = ", ".join(f'"{p}"' for p in sorted(pythons, key=python_order))
    return f"[{listed}]", False


class Entry(NamedTuple):
    """One release entry to write: a release on the platforms whose wheels agree."""

    release: Published
    platforms: Tuple[Platform, ...]
    torch: str
    python: Tuple[PythonVersion, ...]
    inferred: str = ""  # why this torch, when no wheel declares one


def _inferred_torch(
    release: Published, platform: Platform, history: History, torch_versions: FrozenSet[Version]
) -> Tuple[str, str]:
    """The torch of a release whose wheels declare none, and where it came from: what the
    nearest release of its line declares on that platform (a later one first), else its own
    version (torch-npu X.Y.Z is built for torch X.Y.Z); when torch has no such release
    (``torch_versions``: IPEX 2.3.100, 2.8.10+xpu), the torch line of its version
    (``==2.3.*``)."""
    line = [r for r in history.releases if r.line == release.line]
    later = sorted((r for r in line if r.version > release.version), key=lambda r: r.version)
    earlier = sorted((r for r in line if r.version < release.version), key=lambda r: r.version, reverse=True)
    for other in later + earlier:
        build = other.build(platform)
        if build is not None and build.torch is not None:
            return torch_text(build.torch), f"as {other.version} of its line declares"
    own = release.line
    if torch_versions and own not in torch_versions:
        minor = minor_line(own)
        if any(minor_line(v) == minor for v in torch_versions):
            return f"=={minor}.*", f"by its version (torch {minor})"
    return str(own), "by its version"


def entries(history: History, torch_versions: FrozenSet[Version] = frozenset()) -> List[Entry]:
    """The entries of every release, newest first: one per group of platforms whose wheels
    require the same torch and have the same Pythons (``torch_versions``: torch's releases,
    for a release whose wheels declare no torch: see :func:`_inferred_torch`)."""
    out: List[Entry] = []
    for release in sorted(history.releases, key=lambda r: r.version, reverse=True):
        groups: Dict[Tuple[str, Tuple[PythonVersion, ...], str], List[Platform]] = {}
        for build in release.builds:
            if build.torch is not None:
                torch, inferred = torch_text(build.torch), ""
            else:
                torch, inferred = _inferred_torch(release, build.platform, history, torch_versions)
            groups.setdefault((torch, build.pythons, inferred), []).append(build.platform)
        for (torch, python, inferred), platforms in groups.items():
            out.append(Entry(release, tuple(platforms), torch, python, inferred))
    return out


def status_of(release: Published) -> Tuple[str, str]:
    """(status, reason) of a release in an imported history: see the module docstring."""
    if release.yanked is not None:
        why = f": {release.yanked}" if release.yanked else ""
        return "broken", f"yanked from the index{why}"
    # an older build of a line is not superseded: it may be the build for the user's toolkit
    return "supported", ""


def _claimed_lines(spec_text: str, index: Dict[Version, UpstreamLine]) -> List[Version]:
    body = spec_text if spec_text[:1] in "<>=!~" else f"=={spec_text}"
    spec = SpecifierSet(body)
    found = [minor for minor, line in index.items() if any(spec.contains(p.version) for p in line.patches)]
    if not found:  # a pin with a local label: ==2.9.0+cpu holds the public 2.9.0
        public = [Version(s.version.split("+")[0]) for s in spec if s.operator == "==" and "*" not in s.version]
        found = [minor_line(v) for v in public if minor_line(v) in index]
    return found


def _dimension_values(history: History) -> Dict[str, List[str]]:
    """The platform dimensions worth writing: ``arch`` (and ``os``) when wheels cover more than one."""
    platforms = [p for p in history.platforms if p != "any"]
    out: Dict[str, List[str]] = {}
    oses = list(dict.fromkeys(p.os for p in platforms))
    arches = list(dict.fromkeys(p.arch for p in platforms))
    if len(oses) > 1:
        out["os"] = oses
    if len(arches) > 1:
        out["arch"] = arches
    return out


def _dimensions_of(entry: Entry, history: History, dims: Dict[str, List[str]]) -> str:
    every = [p for p in history.platforms if p != "any"]
    if "any" in entry.platforms or set(entry.platforms) >= set(every):
        return ""
    parts = []
    for name in dims:
        values = list(dict.fromkeys(p.os if name == "os" else p.arch for p in entry.platforms))
        if len(values) < len(dims[name]):
            parts.append(f"{name}: {values[0]}" if len(values) == 1 else f"{name}: [{', '.join(values)}]")
    return f", dimensions: {{{', '.join(parts)}}}" if parts else ""


def import_text(
    history: History,
    torch: Upstream,
    device: str,
    origin: str,
    torch_origin: str,
    today: Optional[_dt.date] = None,
) -> str:
    """The text of a ``compat.yaml`` holding ``history`` (see the module docstring).
    :class:`UpstreamError` when the index has no release, or a release requires a torch
    ``torch``'s answer does not have."""
    if not history.releases:
        left = f" (only pre-releases: {', '.join(map(str, history.prereleases))})" if history.prereleases else ""
        raise UpstreamError(f"{history.origin}: {history.name} has no release with a wheel{left}")
    index = torch.lines()
    written, left_out, claimed = _kept(history, torch, index, torch_origin)
    # from the oldest line a release requires to the newest torch has: `validate --upstream`
    # expects every newer line described, and a line no release serves yet is a fact too
    oldest = min(claimed)
    torch_lines = [line for minor, line in index.items() if minor >= oldest]
    dims = _dimension_values(history)
    day = (today or _dt.date.today()).isoformat()
    out = _header(history, device, origin, day, dims)
    if left_out:
        out += _left_out(left_out, torch_origin)
    out += _adapter_and_torch(history, device, torch_origin, torch_lines)
    out += _sources(history, written)
    out += _dimensions_section(dims)
    out += ["", "releases:"]
    by_line: Dict[Version, List[Entry]] = {}
    for entry in written:
        by_line.setdefault(entry.release.line, []).append(entry)
    for line_version in sorted(by_line, reverse=True):
        out += _release_line(history, line_version, by_line[line_version], dims)
    return "\n".join(out) + "\n"


def _header(history: History, device: str, origin: str, day: str, dims: Dict[str, List[str]]) -> List[str]:
    """The file's opening comment: where every fact comes from, and what is the user's to add."""
    label, toolkit = _toolkit(device)
    serial = f", _last-serial {history.serial}" if history.serial else ""
    out = [
        f"# The release history of {history.name}, imported by `adapter-matrix init --from-index {history.name}`",
        f"# on {day} from {origin}",
        f"# (the index's {'PEP 503 page' if history.html else 'PEP 691 answer'}{serial}). Every fact below is the index's:",
        "# - a release's torch: the Requires-Dist of its wheels, what pip enforces;",
        "# - its python: the CPython tags of its wheels (cp310 ...); "
        + ("no date: a PEP 503 page has no upload times;" if history.html else "its date: its first upload;"),
    ]
    if dims:
        out.append(
            f"# - {' and '.join(dims)}: the platform tags of its wheels; a release whose wheels differ by platform"
            " has one entry per platform;"
        )
    out += [
        "# - post-releases are releases of the release they follow (2.9.0.post9 of line 2.9.0).",
        '# Status (docs/importing.md, "The status an import gives"): every build the index serves is',
        "# supported, a yanked one broken; no build is deprecated for being older than another.",
        f"# The index does not know the driver toolkit{label} each build is for: post-releases",
        "# of one line are often builds for different toolkit releases, not newer copies. Add it: a",
        f"# `{toolkit}` dimension (under `dimensions:`, with the values the builds need) and each",
        f"# entry's value (`dimensions: {{{toolkit}: VALUE}}`, beside any arch), so that a fix names the",
        "# build for the user's toolkit.",
        "# Yours to add too: end of life (status: eol, supported-until), exceptions.",
        "# `adapter-matrix validate --upstream pypi` checks the index's facts again.",
    ]
    if history.prereleases:
        shown = ", ".join(str(v) for v in history.prereleases[:4]) + (" ..." if len(history.prereleases) > 4 else "")
        out.append(f"# Left out: {len(history.prereleases)} pre-releases ({shown}): pip installs them only with --pre.")
    return out


def _adapter_and_torch(
    history: History, device: str, torch_origin: str, torch_lines: Sequence[UpstreamLine]
) -> List[str]:
    """The schema version, the adapter, and the torch lines its releases reach, as the index has them."""
    out = [
        f"schema-version: {SCHEMA_VERSION}",
        "",
        "adapter:",
        f"  distribution: {history.name}",
        f"  device: {device}",
        "",
        f"# Upstream facts from {torch_origin}: each torch line's Linux x86_64 CPython wheels;",
        "# `released` is the upload date of X.Y.0.",
        "torch:",
    ]
    for line in torch_lines:
        patches = ", ".join(str(p.version) for p in line.patches)
        pythons = ", ".join(f'"{p}"' for p in line.python)
        out.append(f'  "{line.minor}": {{released: {line.released}, patches: [{patches}], python: [{pythons}]}}')
    return out


def _sources(history: History, written: Sequence[Entry]) -> List[str]:
    """PyTorch's index for each torch build with a local label the wheels require (none: no lines)."""
    variants = sorted({e.torch.split("+", 1)[1] for e in written if "+" in e.torch})
    if not variants:
        return []
    unknown = [v for v in variants if not _PYTORCH_LABEL.match(v)]
    if unknown:
        raise UpstreamError(
            f"{history.name}'s wheels require torch +{', +'.join(unknown)}, a build no index this tool knows has; "
            "write the matrix by hand with a `sources:` entry for it"
        )
    out = [
        "",
        f"# Some wheels require a torch build with a local label (+{', +'.join(variants)}), which PyPI does not",
        "# have: it comes from PyTorch's own index. That build is the adapter's choice, not the machine's,",
        "# so a fix may move a user to it.",
        "sources:",
    ]
    out += [f'  {v}: {{index-url: "{PYTORCH_INDEX.format(label=v)}", variant: {v}}}' for v in variants]
    out.append("torch-variants: {changeable: true}")
    return out


def _dimensions_section(dims: Dict[str, List[str]]) -> List[str]:
    """The platform dimensions the wheels differ by (none: no lines)."""
    if not dims:
        return []
    out = ["", "dimensions:"]
    for name, values in dims.items():
        what = "CPU architecture" if name == "arch" else "operating system"
        out.append(
            f"  {name}: {{kind: enum, description: {what} of the wheels (platform tags), values: [{', '.join(values)}]}}"
            f" # detected by the built-in {name} detector"
        )
    return out


def _release_line(
    history: History, line_version: Version, group: Sequence[Entry], dims: Dict[str, List[str]]
) -> List[str]:
    """One release line: a comment saying what its first release declares, then each entry."""
    head = group[0].release
    count = len({e.release.version for e in group}) - 1
    several_os = len({p.os for p in history.platforms if p != "any"}) > 1
    declared = "; ".join(
        f"{b.declared[0] if b.declared else 'no torch requirement' if head.read else 'unread metadata'}"
        f" on {b.platform if several_os else b.platform.arch}"
        for b in head.builds
    )
    out = [
        f"  # {history.name} {line_version}"
        + (f" and its {count} post-release{'s' if count > 1 else ''}" if count else "")
        + f"; {head.version} declares {declared}"
        + ("; each build's driver toolkit: not on the index" if count else ""),
        f'  - line: "{line_version}"',
        "    status: supported",
        "    packages:",
    ]
    out += [f"      - {_entry_text(entry, history, dims)}" for entry in group]
    return out


def _entry_text(entry: Entry, history: History, dims: Dict[str, List[str]]) -> str:
    """One release's entry in flow style, with why its torch was inferred when it was."""
    status, reason = status_of(entry.release)
    python, threaded = python_text(entry.python)
    fields = [f"version: {entry.release.version}"]
    if entry.release.uploaded:
        fields.append(f"date: {entry.release.uploaded}")
    fields.append(f'torch: "{entry.torch}"' if entry.torch[:1] in "<>=!~" else f"torch: {entry.torch}")
    fields.append(f"python: {python}")
    if threaded:
        fields.append("free-threaded: true")
    text = "{" + ", ".join(fields) + _dimensions_of(entry, history, dims)
    if status != "supported":
        text += f", status: {status}, reason: {_quoted(reason)}"
    text += "}"
    said = "its wheels declare no torch requirement" if entry.release.read else "its metadata was not recorded"
    note = f" # {said}: torch {entry.torch} {entry.inferred}" if entry.inferred else ""
    return text + note


def _kept(
    history: History, torch: Upstream, index: Dict[Version, UpstreamLine], torch_origin: str
) -> Tuple[List[Entry], List[Published], Dict[Version, None]]:
    """The entries to write, the yanked releases left out, and the torch lines the entries
    claim. A yanked release is kept (as broken) when its torch is a line the live releases
    reach anyway (from the oldest they require on): an older one, or one torch's answer does
    not have, would add torch lines for a release nobody may install, so it is left out (the
    file's header names it). A live release whose torch is not there is an error."""
    every = entries(history, frozenset(p.version for p in torch.patches))
    lines = [(entry, _claimed_lines(entry.torch, index)) for entry in every]
    live = [minor for entry, found in lines if entry.release.yanked is None for minor in found]
    floor = min(live) if live else None

    def out_of_reach(found: List[Version]) -> bool:
        return not found or (floor is not None and max(found) < floor)

    left_out = {
        entry.release.version: entry.release
        for entry, _found in lines
        if entry.release.yanked is not None
        and all(out_of_reach(f) for e, f in lines if e.release.version == entry.release.version)
    }
    kept: List[Entry] = []
    claimed: Dict[Version, None] = {}
    for entry, found in lines:
        if entry.release.version in left_out:
            continue
        if not found:
            raise UpstreamError(
                f"{history.name} {entry.release.version} requires torch {entry.torch}, which {torch_origin} does not have"
            )
        claimed.update(dict.fromkeys(found))
        kept.append(entry)
    if not kept:
        raise UpstreamError(
            f"{history.origin}: every release of {history.name} is yanked and requires a torch that "
            f"{torch_origin} does not have: nothing to write"
        )
    return kept, sorted(left_out.values(), key=lambda r: r.version), claimed


def _left_out(releases: Sequence[Published], torch_origin: str) -> List[str]:
    """The header's lines that name the yanked releases left out, and why."""
    reasons = list(dict.fromkeys(r.yanked or "no reason given" for r in releases))
    versions = [str(r.version) for r in releases]
    shown = ", ".join(versions) if len(versions) <= 6 else f"{', '.join(versions[:3])} ... {', '.join(versions[-2:])}"
    return [
        f"# Left out: {len(releases)} release{'s' if len(releases) > 1 else ''} yanked from the index ({shown};"
        f" {'; '.join(repr(r) for r in reasons)}),",
        f"# each requiring a torch older than the releases still on it (or one {torch_origin} does not have):",
        "# pip installs a yanked release only when pinned exactly (==). Add one by hand, status: broken, to",
        "# have `check` name it.",
    ]


# The driver toolkit a device's adapters are built against, as vendors name it: the file's
# header names it so the maintainer knows what to add (a device not listed: "(e.g. CANN)").
# (the name vendors give it, the dimension's name as the presets spell it)
_TOOLKITS = {
    "npu": ("CANN", "cann"),
    "xpu": ("oneAPI", "oneapi"),
    "musa": ("MUSA", "musa"),
    "mlu": ("Neuware", "neuware"),
}


def _toolkit(device: str) -> Tuple[str, str]:
    """How the header names the driver toolkit of ``device``'s builds, and the dimension's name."""
    label, name = _TOOLKITS.get(device, ("e.g. CANN", "cann"))
    return f" ({label})", name


def _quoted(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
