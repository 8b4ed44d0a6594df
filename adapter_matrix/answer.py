"""What ``adapter-matrix check`` answers: the document ``check --json`` prints, declared once.

``check`` builds one :class:`Answer` per matrix (:func:`adapter_matrix.check.report.answer_of`),
prints the :class:`CheckDocument` that holds them as JSON, or renders each for the
terminal (:func:`adapter_matrix.check.report.render_check`). A cell reads the JSON back
typed (:func:`read_check`) to verify its environment (:mod:`adapter_matrix.ci.verify`)
and to fill its result record. The types live beside the model, not in ``check`` or
``ci``, so that neither imports the other.

The document is a stable interface (docs/commands.md, ``check --json``): the keys are
the fields below, in this order. A step that adds a section to an answer (``deep``
under ``--deep``) declares it as a field with a ``None`` default and names it in
:data:`ANSWER_SECTIONS`: the section is written only when it is set.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Dict, Mapping, NamedTuple, Optional, Tuple, Union

from .documents import from_json, to_json
from .matrix.status import Status

if TYPE_CHECKING:
    from .matrix.diagnostics import Diagnostic

__all__ = [
    "CHECK_SCHEMA",
    "ANSWER_SECTIONS",
    "DimensionSeen",
    "EnvironmentSeen",
    "CellSeen",
    "FixSeen",
    "CompanionFix",
    "CompanionSeen",
    "BinaryFile",
    "SymbolSeen",
    "LinkedSeen",
    "BinaryProblem",
    "BinarySection",
    "LayerSeen",
    "StackSeen",
    "DeepStep",
    "AutoloadEntry",
    "AutoloadProblem",
    "PluginSeen",
    "AutoloadSection",
    "DeepSection",
    "Answer",
    "DiagnosticSeen",
    "Invalid",
    "CheckDocument",
    "read_check",
]

CHECK_SCHEMA = 1

ANSWER_SECTIONS = ("binary", "deep", "stack")  # the keys of an answer written only when set: sections a step adds


class DimensionSeen(NamedTuple):
    """How an extra dimension was found: its value and where from, or why not."""

    value: Optional[str]
    source: Optional[str]
    error: Optional[str]


class EnvironmentSeen(NamedTuple):
    """The environment asked about, as found (or as the what-if options assume)."""

    python: str  # the full version, e.g. 3.11.9 (the feature release when assumed)
    python_minor: str
    implementation: str
    free_threaded: bool
    torch: Optional[str]  # with its local label, e.g. 2.13.0+cpu
    torch_variant: Optional[str]
    torch_family: Optional[str]
    adapter: Optional[str]
    dimensions: Dict[str, DimensionSeen]
    # check --env: which environment was judged from its files ("virtual environment PATH")
    location: Optional[str] = None
    # torch's dist-info is there but unreadable: "installed, but its metadata is unreadable (…)"
    torch_error: Optional[str] = None

    def _written(self, name: str) -> bool:
        return name not in ("location", "torch_error") or getattr(self, name) is not None


class CellSeen(NamedTuple):
    """The cell a fix lands in."""

    release: str
    torch: str
    python: str
    dimensions: Dict[str, str]
    status: Status


class FixSeen(NamedTuple):
    """A change that makes the environment usable: the steps by hand, then the commands."""

    summary: str
    manual: Tuple[str, ...]
    commands: Tuple[str, ...]
    changes: Tuple[str, ...]
    cell: CellSeen
    diff: Tuple[str, ...] = ()  # uv's lines for what pip changes: "- torch==2.16.0", "+ torch==2.15.0"


class CompanionFix(NamedTuple):
    summary: str
    commands: Tuple[str, ...]


class CompanionSeen(NamedTuple):
    """One declared companion package and the answer for it."""

    name: str
    installed: Optional[str]
    variant: Optional[str]
    source: str
    state: str  # paired | unpaired | variant | unknown | absent | unchecked
    requires: Optional[str]
    reason: Optional[str]
    decided_by: Tuple[str, ...]
    fix: Optional[CompanionFix]


class BinaryFile(NamedTuple):
    """One shared library of the distribution: its C++ ABI and where the loader finds each
    library it needs (None: nowhere)."""

    file: str
    cxx11_abi: Optional[int]  # _GLIBCXX_USE_CXX11_ABI it was built with (None: its symbols do not say)
    needed: Dict[str, Optional[str]]


class SymbolSeen(NamedTuple):
    """A symbol a library needs and nothing exports, mangled and readable."""

    name: str
    demangled: str


class LinkedSeen(NamedTuple):
    """The distribution a plugin's library links (its adapter): installed, and built against."""

    distribution: str
    installed: str
    built_against: Optional[str]  # the exact version its metadata pins, if it pins one


# The keys every binary problem has; the others belong to one kind each (docs/commands.md).
_PROBLEM_KEYS = ("kind", "file", "subject", "message", "fix")


class BinaryProblem(NamedTuple):
    """What the loader would refuse in the binary check, and the fix. ``kind`` is
    ``built-for`` (with ``built_for``), ``missing-symbol`` (with ``symbols``, and ``linked``
    for a plugin's library), ``missing-library`` (with ``searched``), ``cxx11-abi``,
    ``symbol-version`` (with ``missing``) or ``unreadable``."""

    kind: str
    file: str
    subject: str
    message: str
    fix: str
    built_for: Optional[str] = None  # built-for: the torch minor it was built for
    symbols: Optional[Tuple[SymbolSeen, ...]] = None  # missing-symbol
    linked: Optional[LinkedSeen] = None  # missing-symbol of a plugin's library against its adapter's
    searched: Optional[Tuple[str, ...]] = None  # missing-library: the folders the loader searched
    missing: Optional[Tuple[str, ...]] = None  # symbol-version: the versions not defined

    def _written(self, name: str) -> bool:
        return name in _PROBLEM_KEYS or getattr(self, name) is not None


class BinarySection(NamedTuple):
    """The ``binary`` section of an answer: the installed distribution's libraries read as the
    dynamic loader will, against the installed torch (:mod:`adapter_matrix.binary.audit`)."""

    ok: bool
    distribution: str
    version: Optional[str]
    torch: Optional[str]
    torch_cxx11_abi: Optional[int]
    built_for: Optional[str]  # the exact torch it was built for, when known
    built_for_line: Optional[str]  # the torch minor its metadata or its build's manifest says
    files: Tuple[BinaryFile, ...]
    problems: Tuple[BinaryProblem, ...]
    notes: Tuple[str, ...]

    def summary(self) -> Tuple[bool, int, Tuple[str, ...]]:
        """(ok, libraries read, each problem's message): what a cell's record keeps of it."""
        return self.ok, len(self.files), tuple(p.message for p in self.problems)


class LayerSeen(NamedTuple):
    """One layer of the stack above the adapter (vllm-ascend) and its answer."""

    name: str  # its distribution
    matrix: str  # the layer's compat.yaml
    installed: Optional[str]
    release: Optional[str]  # the release entry the installed version is
    status: Status
    problems: Tuple[str, ...]  # each pin what is installed breaks
    decided_by: Tuple[str, ...]
    # the layer's own libraries read against torch and the adapter installed (a plugin of a
    # plugin's op library); written only when the layer is installed
    binary: Optional[BinarySection] = None
    # how it is installed: {name, kind (wheel|vcs|editable|directory|checkout|unknown), path, version,
    # commit, describe, url, requested, source, error, past} (check/provenance.py)
    provenance: Optional[Dict[str, Optional[str]]] = None

    def _written(self, name: str) -> bool:
        return name not in ("binary", "provenance") or getattr(self, name) is not None


class StackSeen(NamedTuple):
    """The stack judged as one: its layers, and why no stack keeps what the user holds
    (``conflict``), when none does; the answer's ``fixes`` are then whole stacks. ``no_fix``:
    when a stack that is not supported gets no fix, why none exists and what would have to
    change (``no fix: …``, or ``no better combination: …`` when none beats what is installed).
    ``provenance``: how every package of the stack that is installed is installed."""

    layers: Tuple[LayerSeen, ...]
    conflict: Optional[str] = None
    provenance: Optional[Tuple[Dict[str, Optional[str]], ...]] = None
    no_fix: Optional[str] = None
    # a layer release held or installed that no fix keeps (end of life, broken, not a release of
    # its matrix), and where the fixes take it; not a conflict of pins
    not_kept: Optional[str] = None

    def _written(self, name: str) -> bool:
        return name != "provenance" or self.provenance is not None


class DeepStep(NamedTuple):
    """One step of ``check --deep``: what it did, whether it worked, how long it took, and why not."""

    name: str
    ok: bool
    seconds: float
    detail: str = ""


class DeepSection(NamedTuple):
    """``check --deep``'s section of an answer: torch imported, the adapter activated, a timed
    smoke on its device, step by step."""

    ok: bool
    steps: Tuple[DeepStep, ...]


class Answer(NamedTuple):
    """The answer for one adapter's matrix: one entry of ``checks``."""

    matrix: Optional[str]  # None: `check --adapter DIST` of an adapter without a matrix
    origin: str
    adapter: str
    environment: EnvironmentSeen
    verdict: Status
    exit_code: int
    reasons: Tuple[str, ...]
    assumptions: Tuple[str, ...]
    release: Optional[str]
    torch_line: Optional[str]
    shim: Optional[str]
    decided_by: Tuple[str, ...]
    companions: Tuple[CompanionSeen, ...]
    fixes: Tuple[FixSeen, ...]
    binary: Optional[BinarySection] = None  # the binary check of the adapter's libraries (docs/commands.md)
    deep: Optional[DeepSection] = None  # --deep
    stack: Optional[StackSeen] = None  # the layers above the adapter, when any is installed or given

    def _written(self, name: str) -> bool:
        return name not in ANSWER_SECTIONS or getattr(self, name) is not None

    def to_json(self) -> Dict[str, object]:
        return to_json(self)

    def companion(self, name: str) -> Optional[CompanionSeen]:
        return next((c for c in self.companions if c.name == name), None)


class DiagnosticSeen(NamedTuple):
    """One problem of a matrix file ``check`` could not load, where it is and how to fix it
    (a :class:`~adapter_matrix.matrix.diagnostics.Diagnostic`, as ``check --json`` writes it)."""

    file: str
    line: Optional[int]  # 1-based; None when the problem is the whole file (it cannot be read)
    column: Optional[int]
    severity: str  # error | warning
    message: str
    hint: Optional[str]  # how to fix it, when the diagnostic says

    @classmethod
    def of(cls, diagnostic: Diagnostic) -> DiagnosticSeen:
        mark = diagnostic.mark
        placed = mark.line > 0
        return cls(
            mark.file,
            mark.line if placed else None,
            mark.column if placed else None,
            diagnostic.severity,
            diagnostic.message,
            diagnostic.hint or None,
        )


class Invalid(NamedTuple):
    """An installed matrix ``check`` could not load: it answers for the others."""

    origin: str
    matrix: str
    errors: Tuple[str, ...]
    diagnostics: Tuple[DiagnosticSeen, ...] = ()  # every diagnostic of the file, errors and warnings


class AutoloadEntry(NamedTuple):
    """A ``torch.backends`` entry point of the environment, which ``import torch`` runs."""

    name: str
    value: str  # module:function
    distribution: str
    version: str
    dist_info: str  # the folder it was read from


class AutoloadProblem(NamedTuple):
    """What would go wrong when ``import torch`` runs the entry points, and the fix."""

    kind: str  # stale | module-missing | function-missing | privateuse1-conflict | platform-conflict
    message: str
    fix: str


class PluginSeen(NamedTuple):
    """An entry point of the plugin chain above the adapter (torch's, vLLM's, Dynamo's groups)."""

    group: str
    name: str
    value: str
    distribution: str
    version: str


class AutoloadSection(NamedTuple):
    """The ``autoload`` section of ``check --json``: the environment's ``torch.backends`` entry
    points linted from their files, and the plugin chain when it holds more than them."""

    ok: bool
    entry_points: Tuple[AutoloadEntry, ...]
    problems: Tuple[AutoloadProblem, ...]
    chain: Optional[Tuple[PluginSeen, ...]] = None  # only when a plugin beyond torch.backends is installed

    def _written(self, name: str) -> bool:
        return name != "chain" or self.chain is not None


class CheckDocument(NamedTuple):
    """The whole ``check --json`` document: the worst exit code and one answer per matrix,
    or (``error``) the usage error that stopped ``check`` before any answer; when that error is
    a matrix file that is not valid, ``diagnostics`` lists its problems."""

    schema: int
    exit_code: int
    error: Optional[str] = None
    checks: Tuple[Answer, ...] = ()
    invalid: Tuple[Invalid, ...] = ()
    # the environment's torch.backends entry points, linted: {ok, entry_points, problems}, and
    # {chain} when it holds a plugin of the stack above (vLLM's, Dynamo's)
    autoload: Optional[AutoloadSection] = None
    # the matrix that stopped check (error): every diagnostic of it; written only when there are some
    diagnostics: Tuple[DiagnosticSeen, ...] = ()
    # a top-level package importable from several places (a clone on PYTHONPATH beside a
    # distribution's copy): which one Python imports and which it hides, one line each
    shadowed: Tuple[str, ...] = ()
    # the error is the tool's own (a bug, exit code 5), not the user's; written only then
    internal: bool = False

    def _written(self, name: str) -> bool:
        if name == "autoload":  # not when check refused its command line
            return self.autoload is not None
        if name in ("diagnostics", "shadowed"):
            return bool(getattr(self, name))
        if name == "internal":
            return self.internal
        return name != "error" or self.error is not None  # only a refused command line has one

    def to_json(self) -> Dict[str, object]:
        return to_json(self)

    @property
    def answer(self) -> Answer:
        """The one answer of a check of one matrix (a cell checks its own)."""
        (one,) = self.checks
        return one


def read_check(data: Union[CheckDocument, Mapping[str, object]]) -> CheckDocument:
    """``check --json``'s output (parsed JSON, or the document itself) as a :class:`CheckDocument`;
    :class:`~adapter_matrix.documents.DocumentError` naming the first key that is not as declared."""
    if isinstance(data, CheckDocument):
        return data
    return from_json(CheckDocument, dict(data), "the check document")
