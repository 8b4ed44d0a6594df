"""``adapter-matrix env``: the environment as one Markdown block for a bug report.

``collect_env`` knows no PrivateUse1 adapter (vllm-ascend forks it to print CANN and
torch_npu), so reports arrive with half an environment. This report is ``check``'s own
answer, laid out for an issue: Python, torch and its build, the adapter, every layer and
package of the stack with where it was installed from, each dimension with where its value
came from, the plugins ``import torch`` and vLLM load, the binary check's findings, the
verdict, what no fix keeps, and the first fix. ``--json`` prints the same as the :class:`EnvReport` document.

Where a package came from is :func:`package_source`'s answer alone, read as ``check`` reads it
(``check.provenance``: a wheel from an index, a VCS install with its commit, an editable
install or a checkout on the import path with its path and commit).
"""

from __future__ import annotations

import platform as _platform
from typing import TYPE_CHECKING, Any, Dict, List, NamedTuple, Optional, Sequence, Tuple

from .._version import __version__
from ..answer import Answer, CheckDocument, DimensionSeen, FixSeen, PluginSeen
from ..documents import from_json, to_json
from ..names import canonical_name

if TYPE_CHECKING:
    from .elsewhere import Target
    from .provenance import Provenance, Survey

__all__ = ["ENV_SCHEMA", "SourceSeen", "PackageSeen", "AdapterSeen", "EnvReport", "package_source", "env_report"]

ENV_SCHEMA = 1


class SourceSeen(NamedTuple):
    """Where an installed distribution came from: ``kind`` is ``index`` (a wheel or sdist from an
    index: no ``direct_url.json``), ``vcs`` (``pip install git+URL@REV``: ``url``, ``commit``,
    ``revision``), ``checkout`` (an editable or local-folder install: ``path``, and ``commit``
    when it is a git checkout), ``archive`` (a file or URL: ``url``), ``unknown`` (its
    ``direct_url.json`` cannot be read: ``path``, its dist-info folder), ``assumed`` (a what-if
    version, not installed) or ``absent``."""

    kind: str
    url: Optional[str] = None
    commit: Optional[str] = None
    revision: Optional[str] = None
    path: Optional[str] = None

    def describe(self) -> str:
        if self.kind == "vcs":
            at = f"@{self.revision}" if self.revision else ""
            return f"VCS {self.url}{at}, commit {self.commit or 'unknown'}"
        if self.kind == "checkout":
            return f"checkout {self.path}" + (f", commit {self.commit}" if self.commit else ", not a git checkout")
        if self.kind == "archive":
            return f"archive {self.url}"
        if self.kind == "unknown":
            from .provenance import unknown_source

            return unknown_source(self.path or "")
        return {"index": "wheel from an index", "assumed": "assumed (what-if)", "absent": "not installed"}.get(
            self.kind, self.kind
        )


class PackageSeen(NamedTuple):
    """One package of the environment: ``role`` is ``torch``, ``adapter``, ``layer``, ``pinned``
    (what a layer pins: vllm) or ``companion``."""

    name: str
    version: Optional[str]
    role: str
    source: SourceSeen


class AdapterSeen(NamedTuple):
    """One adapter's part of the report (one per matrix ``check`` judged)."""

    adapter: str
    matrix: Optional[str]
    packages: Tuple[PackageSeen, ...]
    dimensions: Dict[str, DimensionSeen]
    verdict: str
    exit_code: int
    reasons: Tuple[str, ...]
    assumptions: Tuple[str, ...]
    binary: Tuple[str, ...]  # the binary check's findings (the adapter's and each layer's libraries)
    conflict: Optional[str]
    fix: Optional[FixSeen]
    # a layer release held or installed that no fix keeps (end of life, unknown, ambiguous) and
    # where the fixes take it: check's "not kept:" line (stack.not_kept); optional, for documents
    # written before it
    not_kept: Optional[str] = None
    no_fix: Optional[str] = None  # when no fix follows: why none exists, as check says it


class EnvReport(NamedTuple):
    """The document ``adapter-matrix env --json`` prints."""

    schema: int
    tool: str  # adapter-matrix's version
    python: str
    implementation: str
    platform: str  # OS and machine: linux x86_64
    location: Optional[str]  # --env: the environment read from its files
    torch: Optional[str]
    torch_build: Optional[str]  # the variant label (cpu, cu128), None for PyPI's default build
    plugins: Tuple[PluginSeen, ...]  # the entry points import torch and vLLM load
    plugin_problems: Tuple[str, ...]
    adapters: Tuple[AdapterSeen, ...]
    exit_code: int
    # torch's dist-info is there but unreadable, as check says it; optional (added after schema 1)
    torch_error: Optional[str] = None

    def to_json(self) -> Dict[str, Any]:
        return to_json(self)


def read_report(data: Any) -> EnvReport:
    """A parsed ``env --json`` document, checked key by key (``DocumentError`` names the first wrong one)."""
    return from_json(EnvReport, data, "the env document")


def package_source(
    name: str, target: Optional[Target] = None, looked: Optional[Survey] = None, judged: Optional[Provenance] = None
) -> SourceSeen:
    """Where ``name`` came from (see :class:`SourceSeen`), as ``check`` reads it
    (:mod:`~adapter_matrix.check.provenance`: its ``direct_url.json``, the clone behind an
    editable install, a checkout on the import path); ``absent`` when none is there.
    ``judged``: the record ``check`` judged the stack's package by (a checkout on ``PYTHONPATH``
    that hides the installed copy), which wins."""
    from .provenance import installed_provenance

    found = judged or installed_provenance(name, target)
    if found is None and looked is not None:
        found = looked.checkout(name)
    if found is None:
        return SourceSeen("absent")
    if found.kind == "vcs":
        return SourceSeen("vcs", found.url, found.commit, found.requested)
    if found.kind == "unknown":  # direct_url.json cannot be read: no wheel from an index is known
        return SourceSeen("unknown", path=found.path)
    if found.kind in ("editable", "directory", "checkout"):
        return SourceSeen("checkout", found.url, found.commit, None, found.source or found.path)
    return SourceSeen("archive", found.url) if found.url else SourceSeen("index")


def _packages(
    answer: Answer, target: Optional[Target], looked: Optional[Survey], pinned: Sequence[Tuple[str, str]] = ()
) -> Tuple[PackageSeen, ...]:
    """Torch, the adapter, each layer, each companion, then what the layers pin (``pinned``, as
    installed, and every package check judged the stack by: a checkout no metadata describes)."""
    from .provenance import Provenance

    env = answer.environment
    out: List[PackageSeen] = []
    records = answer.stack.provenance if answer.stack is not None else None
    judged = {str(r.get("name")): Provenance.from_json(r) for r in records or ()}

    def add(name: str, version: Optional[str], role: str) -> None:
        if any(canonical_name(p.name) == canonical_name(name) for p in out):
            return
        record = judged.get(canonical_name(name))
        if record is not None and record.kind == "checkout":
            version = record.version  # the copy Python imports, not the one it hides
        source = package_source(name, target, looked, record)
        if source.kind == "absent" and version is not None:
            source = SourceSeen("assumed")  # a what-if version (--torch, --companion)
        out.append(PackageSeen(name, version, role, source))

    add("torch", env.torch, "torch")
    add(answer.adapter, env.adapter, "adapter")
    if answer.stack is not None:
        for layer in answer.stack.layers:
            add(layer.name, layer.installed, "layer")
    for companion in answer.companions:
        if companion.installed is not None:
            add(companion.name, companion.installed, "companion")
    for name, version in pinned:
        add(name, version, "pinned")
    for name, record in judged.items():
        add(name, record.version, "pinned")
    return tuple(out)


def _binary(answer: Answer) -> Tuple[str, ...]:
    found = [p.message for p in answer.binary.problems] if answer.binary is not None else []
    if answer.stack is not None:
        for layer in answer.stack.layers:
            found += [f"{layer.name}: {p.message}" for p in layer.binary.problems] if layer.binary is not None else []
    return tuple(found)


def env_report(
    document: CheckDocument,
    target: Optional[Target],
    pinned: Sequence[Tuple[str, str]] = (),
    looked: Optional[Survey] = None,
) -> EnvReport:
    """The report of ``check``'s answer ``document`` for the environment ``target`` (None: this
    one; ``looked``: its import path's checkouts);
    ``pinned``: the stack's other packages as installed (what its layers pin: vllm)."""
    first = document.checks[0] if document.checks else None
    env = first.environment if first is not None else None
    adapters = []
    for answer in document.checks:
        packages = _packages(answer, target, looked, pinned)
        adapters.append(
            AdapterSeen(
                answer.adapter,
                answer.matrix,
                packages,
                dict(answer.environment.dimensions),
                str(answer.verdict),
                answer.exit_code,
                answer.reasons,
                answer.assumptions,
                _binary(answer),
                answer.stack.conflict if answer.stack is not None else None,
                answer.fixes[0] if answer.fixes else None,
                answer.stack.not_kept if answer.stack is not None else None,
                answer.stack.no_fix if answer.stack is not None else None,
            )
        )
    autoload = document.autoload
    plugins: Tuple[PluginSeen, ...] = ()
    problems: Tuple[str, ...] = ()
    if autoload is not None:
        plugins = autoload.chain or tuple(
            PluginSeen("torch.backends", e.name, e.value, e.distribution, e.version) for e in autoload.entry_points
        )
        problems = tuple(p.message for p in autoload.problems)
    return EnvReport(
        ENV_SCHEMA,
        __version__,
        env.python if env is not None else _platform.python_version(),
        env.implementation if env is not None else _platform.python_implementation().lower(),
        f"{_platform.system().lower()} {_platform.machine()}",
        env.location if env is not None else None,
        env.torch if env is not None else None,
        env.torch_variant if env is not None else None,
        plugins,
        problems,
        tuple(adapters),
        document.exit_code,
        env.torch_error if env is not None else None,
    )


def _cell(text: object) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _no_version(package: PackageSeen, torch_error: Optional[str] = None) -> str:
    """A checkout whose HEAD is at no tag has no version (check's report says the same); torch
    whose metadata is unreadable is said so, as check says it."""
    if package.role == "torch" and torch_error:
        return torch_error
    return "no version" if package.source.kind == "checkout" else "not installed"


def render_report(report: EnvReport) -> str:
    """The report as one Markdown block to paste into an issue."""
    lines = [
        f"### Environment (adapter-matrix env {report.tool})",
        "",
        f"- Python: {report.python} ({report.implementation}), {report.platform}",
        f"- torch: {report.torch or report.torch_error or 'not installed'}"
        + (f" (build: {report.torch_build})" if report.torch_build else ""),
    ]
    if report.location:
        lines.append(f"- environment: {report.location}")
    for seen in report.adapters:
        lines += [
            "",
            f"#### {seen.adapter}" + (f" ({seen.matrix})" if seen.matrix else ""),
            "",
            "| package | version | role | source |",
            "| --- | --- | --- | --- |",
        ]
        lines += [
            f"| {_cell(p.name)} | {_cell(p.version or _no_version(p, report.torch_error))} | {p.role} "
            f"| {_cell(p.source.describe())} |"
            for p in seen.packages
        ]
        if seen.dimensions:
            lines += ["", "| dimension | value | from |", "| --- | --- | --- |"]
            for name, found in seen.dimensions.items():
                value = found.value if found.value is not None else f"unknown ({found.error})"
                lines.append(f"| {_cell(name)} | {_cell(value)} | {_cell(found.source or '-')} |")
        lines += ["", f"**Verdict:** {seen.verdict}" + (": " + _cell("; ".join(seen.reasons)) if seen.reasons else "")]
        lines += [f"- assumed: {_cell(a)}" for a in seen.assumptions]
        if seen.not_kept:  # before the conflict, as check says it: why the fix moves that layer
            lines.append(f"- not kept: {_cell(seen.not_kept)}")
        if seen.conflict:
            lines.append(f"- conflict: {_cell(seen.conflict)}")
        lines += [f"- binary: {_cell(b)}" for b in seen.binary] or ["- binary: no finding"]
        if seen.fix is not None:
            lines += ["", f"**Fix:** {_cell(seen.fix.summary)}"]
            lines += [f"- by hand first: {_cell(step)}" for step in seen.fix.manual]
            if seen.fix.commands:
                lines += ["", "```sh", *seen.fix.commands, "```"]
        elif seen.no_fix:
            head, _sep, rest = seen.no_fix.partition(": ")
            lines += ["", f"**{head.capitalize()}:** {_cell(rest)}"]
    lines += ["", "#### Plugins that load", ""]
    lines += [  # each distribution by its name, as check's report names it (not its dist-info folder's)
        f"- {p.group}: {p.name} = {p.value} ({canonical_name(p.distribution)} {p.version})" for p in report.plugins
    ] or ["- none"]
    lines += [f"- problem: {_cell(p)}" for p in report.plugin_problems]
    return "\n".join(lines) + "\n"
