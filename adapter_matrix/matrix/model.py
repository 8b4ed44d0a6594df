"""The validated, immutable model of a ``compat.yaml`` file.

Objects here are built once by :mod:`adapter_matrix.matrix.loader` and never mutated. Every
version is a :class:`packaging.version.Version` and every range a
:class:`packaging.specifiers.SpecifierSet`; nothing downstream compares version
strings. Each object keeps the :class:`~adapter_matrix.matrix.diagnostics.Mark` of its
definition so that answers can cite the row that decided them.
"""

from __future__ import annotations

import datetime as _dt
import functools
import re
from typing import List, NamedTuple, Optional, Tuple

from packaging.specifiers import SpecifierSet
from packaging.version import Version

from ..names import canonical_name
from .diagnostics import Diagnostic, Mark
from .status import Status

__all__ = [
    "Status",
    "PythonVersion",
    "Spec",
    "PythonClaim",
    "MatrixAdapter",
    "InstallSource",
    "TorchLine",
    "Detector",
    "Value",
    "Constraint",
    "Runner",
    "Dimension",
    "StatusRule",
    "Release",
    "ShimRange",
    "CellRef",
    "EvidencePolicy",
    "DEFAULT_EVIDENCE",
    "CompanionRelease",
    "CompanionLine",
    "AdapterPin",
    "CellCompanion",
    "Companion",
    "requirement",
    "Matrix",
    "LoadResult",
    "PinSet",
    "PackagePin",
    "GitPin",
    "LayerRelease",
    "LayerSource",
    "Layer",
    "LayerResult",
    "SCHEMA_VERSION",
    "SCHEMA_VERSIONS",
    "ABSENT",
]

SCHEMA_VERSION = 2  # the newest; files of every version in SCHEMA_VERSIONS load
SCHEMA_VERSIONS = (1, 2)


_PYTHON_RE = re.compile(r"^(?P<major>\d+)\.(?P<minor>\d+)(?P<t>t?)$")


class PythonVersion(NamedTuple):
    """A CPython feature release, e.g. ``3.11``, or a free-threaded build, ``3.13t``."""

    version: Version
    free_threaded: bool = False

    @classmethod
    def parse(cls, text: str) -> PythonVersion:
        """Parse ``"3.11"`` or ``"3.13t"``; raise :class:`ValueError` otherwise."""
        match = _PYTHON_RE.match(text.strip())
        if not match:
            raise ValueError(f"{text!r} is not a Python feature release such as '3.11' or '3.13t'")
        return cls(Version(f"{match['major']}.{match['minor']}"), bool(match["t"]))

    @property
    def tag(self) -> str:
        """The wheel ABI tag this build needs, e.g. ``cp311`` or ``cp313t``."""
        return f"cp{self.version.major}{self.version.minor}" + ("t" if self.free_threaded else "")

    def __str__(self) -> str:
        return f"{self.version.major}.{self.version.minor}" + ("t" if self.free_threaded else "")


class Spec(NamedTuple):
    """A specifier set together with the text the user wrote (``str(SpecifierSet)`` reorders)."""

    text: str
    specifier: SpecifierSet

    @classmethod
    def parse(cls, text: str) -> Spec:
        """Parse a PEP 440 specifier set; a bare version means ``==version``."""
        text = text.strip()
        body = text if not text or text[0] in "<>=!~" else f"=={text}"
        return cls(text, SpecifierSet(body))

    def contains(self, version: Version) -> bool:
        return self.specifier.contains(version, prereleases=True)

    def __str__(self) -> str:
        return self.text


class PythonClaim(NamedTuple):
    """Which Pythons a release supports: a range (``>=3.8``) or an explicit list of versions.

    A range is intersected with the wheels each torch release has; an explicit list is a
    claim about every listed version and is checked against those wheels.
    """

    text: str
    spec: Optional[Spec] = None
    exact: Tuple[PythonVersion, ...] = ()
    free_threaded: bool = False

    def admits(self, python: PythonVersion) -> bool:
        if self.exact:
            return python in self.exact
        if python.free_threaded and not self.free_threaded:
            return False
        return self.spec is None or self.spec.contains(python.version)

    def __str__(self) -> str:
        return self.text


class MatrixAdapter(NamedTuple):
    """The adapter the matrix describes. ``shims`` is ``None`` for an adapter that uses
    the matrix for checks, tables and plans only (schema version 2)."""

    distribution: str
    device: str
    shims: Optional[str]
    mark: Mark


class InstallSource(NamedTuple):
    """Where torch is installed from: an index, a folder of wheels, or both, with a fallback.

    ``variant`` is the local version label its wheels carry (``cpu`` for ``2.4.1+cpu``).
    """

    name: str
    index_url: Optional[str]
    find_links: Optional[str]
    variant: Optional[str]
    fallback: Optional[str]
    mark: Mark


class TorchLine(NamedTuple):
    """Upstream facts about one torch minor release line (e.g. 2.4)."""

    minor: Version
    released: _dt.date
    patches: Tuple[Version, ...]
    python: Tuple[PythonVersion, ...]
    install: str
    mark: Mark

    @property
    def latest(self) -> Version:
        return max(self.patches)

    @property
    def spec(self) -> Spec:
        """``>=2.4,<2.5``: every torch of this line, including future patch releases."""
        nxt = f"{self.minor.major}.{self.minor.minor + 1}"
        return Spec(f">={self.minor},<{nxt}", SpecifierSet(f">={self.minor},<{nxt}"))

    def holds(self, version: Version) -> bool:
        """Whether ``version`` (a patch, a pre-release, ``+cpu`` or not) is of this line."""
        return (version.major, version.minor) == (self.minor.major, self.minor.minor)

    def __str__(self) -> str:
        return str(self.minor)


PRESET_NAMES = ("cann", "ascend-driver", "musa", "oneapi", "neuware")  # adapter_matrix.check.presets


class Detector(NamedTuple):
    """How to read an extra dimension's installed value.

    ``kind`` is ``env`` (variable name), ``file`` (path, read with ``regex``),
    ``command`` (argv, run without a shell, stdout matched with ``regex``),
    ``distribution`` (a Python distribution's version), ``builtin`` (``os`` or
    ``arch``: the platform this process runs on) or ``preset`` (a vendor toolkit,
    :data:`PRESET_NAMES`, read by :mod:`adapter_matrix.check.presets`). ``template`` composes the value from
    the regex's named groups (``"{id}{version_id}"`` gives ``ubuntu22.04`` from
    /etc/os-release's ``ID`` and ``VERSION_ID`` lines).
    """

    kind: str
    target: Tuple[str, ...]
    regex: Optional[str]
    timeout: float
    mark: Mark
    template: Optional[str] = None

    def describe(self) -> str:
        what = " ".join(self.target) if self.kind == "command" else self.target[0]
        return f"{self.kind} {what}"


VERSION, ENUM = "version", "enum"  # the kinds of dimension
ABSENT = "absent"  # the value of a dimension that is not there at all (no oneAPI on a CPU machine)


class Value(NamedTuple):
    """A dimension value as written (``8.1.RC1``, ``Ascend910B``, ``linux``).

    Shown as written, compared as a version when it is one: ``8.1.RC1`` prints as
    ``8.1.RC1`` and sorts before ``8.1.0``. Enumeration values (``version`` is ``None``)
    compare without regard to case. ``absent`` is a value of any kind: the dimension is
    not there (it sorts first and satisfies no version range).
    """

    text: str
    version: Optional[Version] = None

    @classmethod
    def of(cls, text: str, kind: str) -> Value:
        """Parse ``text`` for a dimension of ``kind``; :class:`ValueError` for a bad version."""
        text = text.strip()
        if kind == ENUM or text.casefold() == ABSENT:
            return cls(ABSENT if text.casefold() == ABSENT else text)
        return cls(text, Version(text))

    def same(self, other: Value) -> bool:
        if self.version is not None and other.version is not None:
            return self.version == other.version
        return self.text.casefold() == other.text.casefold()

    @property
    def identity(self) -> Tuple[int, object]:
        """What :meth:`same` compares, as a dictionary key (the values of one dimension
        are all versions or all names): duplicates are found in linear time."""
        return (0, self.version) if self.version is not None else (1, self.text.casefold())

    @property
    def order(self) -> Tuple[int, object]:
        """Sort key: versions by version, enumeration values by name."""
        if self.absent:
            return (-1, "")
        return (0, self.version) if self.version is not None else (1, self.text.casefold())

    @property
    def absent(self) -> bool:
        return self.version is None and self.text == ABSENT

    def __str__(self) -> str:
        return self.text


class Constraint(NamedTuple):
    """What a release (or an exception) accepts of one dimension: a PEP 440 specifier
    set for a version dimension, a set of values for an enumeration.

    ``also``: specifier sets accepted besides (any of them): the elements of a list that
    are ranges (``[8.3.RC1, ">=8.5"]``), or a toolkit's named compatible series
    (``{min: 9.1.0, compatible: ["8.5.*", "9.0.*"]}``: ``spec`` is ``>=9.1.0``, ``also``
    the series, as vendors state them); ``series`` tells the second kind, which messages,
    tables and fixes name."""

    text: str
    spec: Optional[Spec] = None
    values: Tuple[Value, ...] = ()
    also: Tuple[Spec, ...] = ()
    series: bool = False

    def contains(self, value: Value) -> bool:
        if any(v.same(value) for v in self.values):
            return True
        if value.version is None:
            return False
        return (self.spec is not None and self.spec.contains(value.version)) or any(
            s.contains(value.version) for s in self.also
        )

    def __str__(self) -> str:
        return self.text


class Runner(NamedTuple):
    """The CI runner label that provides a dimension value: a template with ``{value}``,
    or one label per value."""

    template: Optional[str]
    labels: Tuple[Tuple[str, str], ...] = ()

    def label(self, value: Value) -> Optional[str]:
        """The label of the runners that provide ``value``; ``None`` when a mapping does not
        name it (no runner is known to have it: a plan for GitHub refuses such a row)."""
        for known, label in self.labels:
            if Value(known).same(Value(value.text)):
                return label
        return self.template.replace("{value}", value.text) if self.template else None


class Dimension(NamedTuple):
    """An extra dimension of the matrix: a driver toolkit version, a SoC, an OS, ...

    ``kind`` is ``version`` (values compared with ``packaging``) or ``enum`` (names).
    ``changeable``: whether a fix may ask the user to install another value (a driver
    toolkit can be upgraded; a SoC cannot be). ``runner``: set when a CI runner must
    provide the value (it cannot be pip-installed), with the label that selects one.
    ``link``: where users get it, for published instructions.
    """

    name: str
    description: str
    values: Tuple[Value, ...]
    detectors: Tuple[Detector, ...]
    mark: Mark
    kind: str = VERSION
    changeable: bool = True
    runner: Optional[Runner] = None
    link: Optional[str] = None  # where users get it (a download page)
    # a layer's own dimension: what its installed build was made for (vllm-ascend's wheel
    # records its device generation), read by these detectors, a `file` relative to the folder
    # the layer is installed in; and the values a detected text names (Ascend910_93* is A3)
    built: Tuple[Detector, ...] = ()
    aliases: Tuple[Tuple[str, Tuple[str, ...]], ...] = ()

    def named(self, text: str) -> str:
        """The value ``text`` names through :attr:`aliases` (shell patterns), else ``text``."""
        import fnmatch

        for value, patterns in self.aliases:
            if any(fnmatch.fnmatchcase(text.casefold(), p.casefold()) for p in patterns):
                return value
        return text

    def value(self, text: str) -> Value:
        """``text`` read as a value of this dimension (:class:`ValueError` if it is not one)."""
        return Value.of(text, self.kind)


class StatusRule(NamedTuple):
    """Overrides a release's status for the cells it matches (unset fields match anything)."""

    torch: Optional[Spec]
    python: Optional[Spec]
    dimensions: Tuple[Tuple[str, Constraint], ...]
    status: Status
    reason: str
    link: Optional[str]
    mark: Mark


class Release(NamedTuple):
    """One release of the adapter (one package version) and what it claims to support.

    ``release_line`` names the product release it ships in (torch_npu's 7.3.0 ships one
    package per torch line); ``variant`` is the local label torch must carry (``cpu``
    for ``2.8.0+cpu``); ``torch_source`` the source torch is installed from for it;
    ``index_url`` the index the package itself is published on (default PyPI).
    """

    version: Version
    date: Optional[_dt.date]
    torch: Spec
    python: PythonClaim
    status: Status
    reason: str
    link: Optional[str]
    supported_until: Optional[_dt.date]
    dimensions: Tuple[Tuple[str, Constraint], ...]
    rules: Tuple[StatusRule, ...]
    mark: Mark
    marks: Tuple[Tuple[str, Mark], ...] = ()  # (key, position) of each key written
    release_line: Optional[str] = None
    variant: Optional[str] = None
    torch_source: Optional[str] = None
    index_url: Optional[str] = None

    def mark_of(self, key: str) -> Mark:
        """The position of one of this release's keys (for messages), else the release's."""
        return next((mark for name, mark in self.marks if name == key), self.mark)

    def constraint(self, dimension: str) -> Optional[Constraint]:
        return dict(self.dimensions).get(dimension)

    @property
    def pins(self) -> Tuple[Version, ...]:
        """The exact torch versions its specifier names with ``==`` (no wildcard)."""
        return _pins(str(self.torch.specifier))

    @property
    def label(self) -> str:
        """How messages name it: the version, and its release line when it has one."""
        return str(self.version) + (f" (release {self.release_line})" if self.release_line else "")


@functools.lru_cache(maxsize=None)
def _pins(specifier: str) -> Tuple[Version, ...]:
    # Keyed by the text, not the SpecifierSet: `==2.12` and `==2.12.0` are equal (and hash
    # alike) as specifiers, but the pin each names is shown as written.
    out = []
    for s in SpecifierSet(specifier):
        if s.operator in ("==", "===") and not s.version.endswith(".*"):
            try:
                out.append(Version(s.version))
            except ValueError:  # === with a string that is not a version
                continue
    return tuple(out)


class ShimRange(NamedTuple):
    """The shim module that serves a range of torch versions."""

    module: str
    torch: Spec
    mark: Mark


class CellRef(NamedTuple):
    """A (torch minor, Python) pair named in the ``ci`` section."""

    torch: Version
    python: PythonVersion
    mark: Mark


class EvidencePolicy(NamedTuple):
    """When a result record still counts as evidence for a claimed cell (the ``evidence`` section).

    A passing record counts while it is at most ``max_age_days`` old, ran the torch patch
    the cell claims, ran every suite group of ``suites``, and ran on the contents of
    ``sources`` (paths relative to the matrix file: the adapter and the suites that test
    it) of its release: as frozen, else as the tree holds now.
    """

    folder: str  # where the nox cells write records, relative to the matrix file as named (symlinks not followed)
    max_age_days: int
    sources: Tuple[str, ...]
    mark: Mark
    suites: Tuple[str, ...] = ()  # the suite groups a record must have counts for to count (evidence: suites:)


DEFAULT_EVIDENCE = EvidencePolicy("evidence", 180, (), Mark("<default>", 0, 0))


def requirement(spec: Spec) -> str:
    """A specifier as a requirement's tail: ``2.1.1`` -> ``==2.1.1``; ``>=2.14.0`` stays."""
    text = spec.text
    return text if text[:1] in "<>=!~" else f"=={text}"


def minor_line(version: Version) -> Version:
    """The minor line of a version: ``2.4.1+cpu`` -> ``2.4`` (the one helper for it)."""
    return Version(f"{version.major}.{version.minor}")


class CompanionRelease(NamedTuple):
    """One release of a companion and the torch its wheels require."""

    version: Version
    torch: Spec
    line: Version  # the torch line it is listed under: the one it was built for
    mark: Mark  # where its requirement is written

    @property
    def open(self) -> bool:
        """Whether it also admits torch lines after its own (``>=2.14.0``)."""
        return any(self.torch.contains(Version(f"{self.line.major}.{self.line.minor + step}.0")) for step in (1, 2))

    def pairs_with(self, torch: Version) -> bool:
        """Whether ``torch`` (local label ignored, as pip does) satisfies its requirement."""
        return self.torch.contains(Version(torch.public))


class CompanionLine(NamedTuple):
    """A torch line's entry: the releases built for it; none when ``releases`` is empty."""

    minor: Version
    releases: Tuple[CompanionRelease, ...]
    mark: Mark


class AdapterPin(NamedTuple):
    """The companion versions that pair with one adapter release (``None``: none)."""

    release: Version
    spec: Optional[Spec]
    mark: Mark


class CellCompanion(NamedTuple):
    """A companion named under ``ci: companions:``: every test cell installs it."""

    name: str
    mark: Mark


class Companion(NamedTuple):
    """A companion package and the facts the matrix states about it."""

    name: str
    description: str
    lines: Tuple[CompanionLine, ...]  # oldest torch line first
    adapter: Tuple[AdapterPin, ...]
    mark: Mark
    torch_facts: bool = False  # whether it has a `torch:` section (upstream facts, maybe still empty)

    @property
    def releases(self) -> Tuple[CompanionRelease, ...]:
        """Every release listed under ``torch:``, oldest first."""
        return tuple(sorted((r for line in self.lines for r in line.releases), key=lambda r: r.version))

    def line(self, minor: Version) -> Optional[CompanionLine]:
        for entry in self.lines:
            if entry.minor == minor_line(minor):
                return entry
        return None

    def release(self, version: Version) -> Optional[CompanionRelease]:
        """The listed release an installed version is (``0.28.0+cpu`` is release 0.28.0)."""
        public = Version(version.public)
        return next((r for r in self.releases if r.version == public), None)

    def pairing(self, torch: Version) -> Tuple[CompanionRelease, ...]:
        """The listed releases whose torch requirement ``torch`` satisfies, oldest first."""
        return tuple(r for r in self.releases if r.pairs_with(torch))

    def choose(self, torch: Version) -> Optional[CompanionRelease]:
        """The release to install beside ``torch``: one built for its line, else one whose
        open requirement admits it; the newest of those."""
        candidates = self.pairing(torch)
        built = [r for r in candidates if r.line == minor_line(torch)]
        return max(built or candidates, key=lambda r: r.version, default=None)

    def pin(self, adapter_release: Version) -> Optional[AdapterPin]:
        return next((p for p in self.adapter if p.release == adapter_release), None)


class Matrix(NamedTuple):
    """A whole ``compat.yaml``: upstream facts, the adapter's releases, shims and CI settings.

    ``declares_shims`` is false for a schema-2 matrix without a ``shims:`` section: the
    shim rules (every supported cell has a shim) then do not apply. ``runs_on`` are the
    base CI runner labels of plan rows that need a runner-provided dimension.
    """

    path: str
    schema_version: int
    adapter: MatrixAdapter
    torch: Tuple[TorchLine, ...]
    sources: Tuple[InstallSource, ...]
    dimensions: Tuple[Dimension, ...]
    shims: Tuple[ShimRange, ...]
    releases: Tuple[Release, ...]
    smoke: Tuple[CellRef, ...]
    declares_shims: bool = True
    runs_on: Tuple[str, ...] = ()
    evidence: EvidencePolicy = DEFAULT_EVIDENCE
    companions: Tuple[Companion, ...] = ()  # torch extensions and their pairings (matrix.companions)
    ci_companions: Tuple[CellCompanion, ...] = ()  # the companions every test cell installs
    # Whether a fix may move the user to another torch variant family (+cpu, +xpu, PyPI's
    # unlabelled build): no by default, the family is the user's hardware (`torch-variants:`).
    variants_changeable: bool = False

    def torch_line(self, version: Version) -> Optional[TorchLine]:
        """The described minor line that ``version`` (e.g. ``2.4.1+cpu``) belongs to."""
        for line in self.torch:
            if line.holds(version):
                return line
        return None

    def source(self, name: str) -> Optional[InstallSource]:
        for src in self.sources:
            if src.name == name:
                return src
        return None

    def companion(self, name: str) -> Optional[Companion]:
        wanted = canonical_name(name)
        return next((c for c in self.companions if canonical_name(c.name) == wanted), None)

    def dimension(self, name: str) -> Optional[Dimension]:
        for dim in self.dimensions:
            if dim.name == name:
                return dim
        return None

    def release(self, version: Version) -> Optional[Release]:
        """The first release entry of ``version`` (see :meth:`releases_of` for all)."""
        found = self.releases_of(version)
        return found[0] if found else None

    def releases_of(self, version: Version) -> Tuple[Release, ...]:
        """The entries of an installed adapter version: those written with exactly this
        version, else the one whose public version matches (``2.8.0`` from PyPI is the
        ``2.8.0+cpu`` release). Several entries share a version when each serves other
        dimension values (IPEX 2.9.10 pins one torch on Linux, another on Windows)."""
        exact = tuple(rel for rel in self.releases if rel.version == version)
        if exact:
            return exact
        public = tuple(rel for rel in self.releases if Version(rel.version.public) == Version(version.public))
        return public if len({rel.version for rel in public}) == 1 else ()

    def release_lines(self) -> Tuple[str, ...]:
        """The release lines the releases name, in the order the file first names them."""
        return tuple(dict.fromkeys(rel.release_line for rel in self.releases if rel.release_line))

    @property
    def newest_release(self) -> Optional[Release]:
        return self.releases[-1] if self.releases else None


class LoadResult(NamedTuple):
    """A validated matrix and the warnings its file produced."""

    matrix: Matrix
    warnings: List[Diagnostic]


# -- layers: projects that sit on an adapter ---------------------------------------------


class GitPin(NamedTuple):
    """A pin by git commit (MindSpeed-RL pins vllm-ascend at ``v0.11.0-dev@1b16c01``): the
    repository, the commit or tag (``ref``), and the release it stands for (the pin's ``spec``,
    as Spack's ``@git.REF=V``). What is installed is judged by its commit, not its version string."""

    url: str
    ref: str
    mark: Mark

    @property
    def pip_url(self) -> str:
        """The URL as a direct reference names it: ``git+https://...``."""
        return _git_url(self.url)


def _git_url(url: str) -> str:
    """A repository's URL as pip's direct reference names it (``git+`` added where it is not)."""
    return url if url.startswith("git+") else f"git+{url}"


class LayerSource(NamedTuple):
    """Where a layer's releases come from when no index serves them (torchvision_npu is built
    from a tag of Ascend/vision): the repository, each release's ``ref`` naming its tag or
    commit. ``build_isolation`` false: the build needs what is installed (torch), so pip is told
    ``--no-build-isolation``."""

    url: str
    build_isolation: bool
    mark: Mark

    @property
    def pip_url(self) -> str:
        """The URL as a direct reference names it: ``git+https://...``."""
        return _git_url(self.url)


class PinSet(NamedTuple):
    """What one pin of a layer release accepts: any of its alternatives, each a version or a
    PEP 440 specifier set (``torch: [2.1.0, 2.6.0]``; a plain pin has one). PEP 440 has no OR
    (a comma is AND): a list is how a layer says "2.1.0 or 2.6.0" without admitting what lies
    between. The one place a pin is matched (:meth:`admits`)."""

    specs: Tuple[Spec, ...]

    @classmethod
    def of(cls, *specs: Spec) -> PinSet:
        return cls(tuple(specs))

    def admits(self, version: Version) -> bool:
        """Whether ``version`` satisfies one alternative; a local label (``+cpu``,
        ``+git4c901a4``) is ignored unless the pin names one, as pip does."""
        public = Version(version.public) if version.local else None
        return any(s.contains(version) or (public is not None and s.contains(public)) for s in self.specs)

    def contains(self, version: Version) -> bool:
        """Whether ``version`` satisfies one alternative as written (a Python, ``3.10``)."""
        return any(s.contains(version) for s in self.specs)

    @property
    def exact(self) -> Tuple[Version, ...]:
        """The versions its alternatives name with ``==`` (what a fix can install for it)."""
        # the text as written: str() of a SpecifierSet costs more
        return tuple(dict.fromkeys(v for s in self.specs for v in _pins(requirement(s))))

    @property
    def only_exact(self) -> bool:
        """Whether every alternative is one exact version (the pin admits :attr:`exact` only)."""
        return all(len(s.specifier) == 1 and len(_pins(requirement(s))) == 1 for s in self.specs)

    @property
    def requirement(self) -> str:
        """``==2.1.0 | ==2.6.0``: each alternative as a requirement's tail."""
        return " | ".join(requirement(s) for s in self.specs)

    @property
    def text(self) -> str:
        """As written: ``2.1.0 | 2.6.0`` (tables), ``>=3.10,<3.13``."""
        return " | ".join(s.text for s in self.specs)

    def __str__(self) -> str:
        return self.text


class PackagePin(NamedTuple):
    """What a layer release needs of one package below it: ``vllm ==0.23.0``, or any of
    several (``vllm ==0.10.1 | ==0.10.1.1``); with ``git``, the commit too (``spec`` is then
    ``==`` the version the commit stands for). ``optional``: the pin applies only when the
    package is installed (``requires-if-installed:``, Mooncake beside vllm-ascend)."""

    name: str  # canonical (PEP 503)
    spec: PinSet
    mark: Mark
    git: Optional[GitPin] = None
    optional: bool = False

    def admits(self, version: Version) -> bool:
        """Whether ``version`` satisfies the pin (:meth:`PinSet.admits`)."""
        return self.spec.admits(version)

    @property
    def exact(self) -> Tuple[Version, ...]:
        """The versions it names with ``==`` (what a fix can install for it)."""
        return self.spec.exact

    def __str__(self) -> str:
        return f"{self.name} {self.spec.requirement}" + (" (if installed)" if self.optional else "")


class LayerRelease(NamedTuple):
    """One release of a layer (vllm-ascend 0.23.0) and what it needs below it.

    ``torch`` and ``adapter`` are pins like any other (``packages`` holds them, with the
    layer's other pins such as vllm's); ``adapter_line`` names the adapter by its release line
    instead ("TorchNPU 26.1.0"): the adapter's matrix holds which package of that line serves
    which torch. ``dimensions`` constrain dimensions the adapter's matrix defines (CANN).
    """

    version: Version
    date: Optional[_dt.date]
    status: Status
    reason: str
    link: Optional[str]
    python: Optional[PinSet]
    packages: Tuple[PackagePin, ...]  # torch, the adapter and every other pinned distribution
    adapter_line: Optional[str]
    dimensions: Tuple[Tuple[str, Constraint], ...]
    mark: Mark
    marks: Tuple[Tuple[str, Mark], ...] = ()
    ref: Optional[str] = None  # the tag or commit of the layer's ``source`` this release is built from

    def mark_of(self, key: str) -> Mark:
        return next((mark for name, mark in self.marks if name == key), self.mark)

    def pin(self, name: str) -> Optional[PackagePin]:
        wanted = canonical_name(name)
        return next((p for p in self.packages if p.name == wanted), None)


class Layer(NamedTuple):
    """A layer's matrix: its distribution, the adapter it sits on, and its releases (oldest first)."""

    path: str
    schema_version: int
    distribution: str
    adapter: str  # the adapter distribution whose matrix gives the torch lines and dimensions
    description: str
    releases: Tuple[LayerRelease, ...]
    mark: Mark
    index_url: Optional[str] = None
    # dimensions the layer owns (vllm-ascend's device generation), read beside the adapter's
    dimensions: Tuple[Dimension, ...] = ()
    source: Optional[LayerSource] = None  # the git repository its releases are built from

    def unserved(self, release: LayerRelease) -> bool:
        """Whether no index serves ``release``: the layer names a source and no index, and the
        release no ref of it (a fix can only say to build it by hand)."""
        return self.source is not None and self.index_url is None and release.ref is None

    def dimension(self, name: str) -> Optional[Dimension]:
        return next((d for d in self.dimensions if d.name == name), None)

    def release(self, version: Version) -> Optional[LayerRelease]:
        """The entry of an installed version: exactly it, else the one of its public version
        (a ``+git`` build of 0.18.0 is release 0.18.0), else, for a version without a local
        label, the one release whose local label names a build of it (an installed 0.21.0 is
        release ``0.21.0+7.1.0``); none when several do (see :meth:`builds_of`)."""
        exact = next((r for r in self.releases if r.version == version), None)
        public = Version(version.public)
        found = exact or next((r for r in self.releases if r.version == public), None)
        if found is not None or version.local:
            return found
        builds = self.builds_of(version)
        return builds[0] if len(builds) == 1 else None

    def builds_of(self, version: Version) -> Tuple[LayerRelease, ...]:
        """The releases written as a local build of ``version``'s public version (0.20.1+7.0.0
        and 0.20.1+7.1.0 for 0.20.1): an installed version that names no build matches each."""
        public = Version(version.public)
        return tuple(r for r in self.releases if r.version.local and Version(r.version.public) == public)

    @property
    def name(self) -> str:
        return canonical_name(self.distribution)

    @property
    def name_of_adapter(self) -> str:
        return canonical_name(self.adapter)


class LayerResult(NamedTuple):
    """A validated layer's matrix and the warnings its file produced."""

    layer: Layer
    warnings: List[Diagnostic]
