"""Build a :class:`~adapter_matrix.matrix.model.Matrix` from ``compat.yaml``.

:func:`load` reads the file, converts it following the declarations in
:mod:`adapter_matrix.matrix.schema`, runs the consistency checks of
:mod:`adapter_matrix.matrix.consistency`, and either returns the model with its warnings or
raises :class:`~adapter_matrix.matrix.diagnostics.MatrixError` carrying *every* error found.
A user mistake never escapes as a traceback.
"""

from __future__ import annotations

import difflib
import math
import os
import re
from typing import Dict, List, Optional, Tuple, Union

from packaging.specifiers import SpecifierSet
from packaging.version import InvalidVersion, Version

from ..files import printable
from ..limits import MAX_AGE_DAYS, MAX_REGEX_CHARS, MAX_TIMEOUT
from ..matrix import companions as _companions
from ..matrix import consistency
from ..names import canonical_name, is_project_name
from ..urls import PYPI_SIMPLE
from .diagnostics import Diagnostic, Mark, MatrixError, display_path, read_matrix_file
from .model import (
    ABSENT,
    DEFAULT_EVIDENCE,
    ENUM,
    PRESET_NAMES,
    SCHEMA_VERSION,
    SCHEMA_VERSIONS,
    VERSION,
    CellCompanion,
    CellRef,
    Constraint,
    Detector,
    Dimension,
    EvidencePolicy,
    GitPin,
    InstallSource,
    Layer,
    LayerRelease,
    LayerResult,
    LayerSource,
    LoadResult,
    Matrix,
    MatrixAdapter,
    PackagePin,
    PinSet,
    PythonClaim,
    Release,
    Runner,
    ShimRange,
    Spec,
    Status,
    StatusRule,
    TorchLine,
    Value,
)
from .reader import Reader
from .schema import RELEASE_DEFAULTS
from .source import YAML_INT, Mapping, Node, Scalar, Sequence, parse
from .suite_names import BUILT_IN_GROUPS, suite_groups

__all__ = ["load", "load_bytes", "load_text", "load_any_bytes", "is_layer", "LoadResult", "LayerResult", "PYPI"]


PYPI = PYPI_SIMPLE  # the default install source
# \Z, not $: `$` also matches before a final newline, and a YAML block scalar (`|`) ends with one.
_DOTTED = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*\Z")
_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*\Z")
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*\Z")
# a tag or a commit: no space, no leading dash (an option to git), nothing a URL's @REF cannot carry
_GIT_REF = re.compile(r"^[A-Za-z0-9_.][A-Za-z0-9_./+-]*\Z")
# a repository pip and git can clone: pip's git+ schemes and git's own, no space; pip splits a
# direct reference's ``@REF`` at the path's last ``@``, so the path has none
_GIT_URL = re.compile(r"^(git\+)?(https?|ssh|git|file)://[^\s/]*(/[^\s@]*)?\Z")
BUILTIN_DETECTORS = ("os", "arch")  # dimensions of these names detect themselves (schema 2)


def _local_label(text: str) -> bool:
    """Whether ``text`` is a PEP 440 local version label (``cpu``, ``cxx11.abi``), as packaging reads one."""
    try:
        return Version(f"0+{text}").local is not None
    except InvalidVersion:
        return False


def _label(name: str) -> str:
    """A dimension name inside a message: as written when it is a name, else quoted."""
    return name if _IDENT.match(name) else repr(name)


def _one_line(diagnostic: Diagnostic) -> Diagnostic:
    """Escape the control characters a file can put into a message (a key with a newline,
    a bidi override): each diagnostic must stay one ``FILE:LINE:COL: ...`` line, shown as
    written (:func:`~adapter_matrix.files.printable`, the one terminal escaper)."""
    return diagnostic._replace(message=printable(diagnostic.message), hint=printable(diagnostic.hint))


_DAYS = re.compile(r"[0-9]{1,6}\Z")


def _seconds(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):  # float() reads "nan" and "inf"
        raise ValueError("not a finite number")
    return value


def _is_spec(text: str) -> bool:
    """Whether ``text`` reads as a PEP 440 specifier set or version (a dimension of a layer)."""
    text = text.strip()
    try:
        SpecifierSet(text if text[:1] in "<>=!~" else f"=={text}")
        return True
    except ValueError:
        return False


def _is_range(text: str) -> bool:
    """Whether a list element is a specifier set rather than one version (``>=8.5``, ``9.0.*``)."""
    text = text.strip()
    return text[:1] in "<>=!~" or "," in text or text.endswith(".*")


def _series(text: str) -> Spec:
    """A compatible series: ``8.5.*`` (every 8.5 release, 8.5.RC1 included) or a specifier set."""
    from .reader import _spec

    spec = _spec(text)
    for s in spec.specifier:
        if s.operator == "===" or (s.operator == "==" and not s.version.endswith(".*")):
            raise ValueError("one version, not a series")
    return spec


class _Builder(Reader):
    """Converts one parsed document into the model, recording diagnostics as it goes."""

    def __init__(self, filename: str) -> None:
        super().__init__(filename)
        self.kinds: Dict[str, str] = {}  # dimension name -> kind, for reading constraints
        self.owned: Dict[str, str] = {}  # a layer's own dimensions -> kind

    # -- dimension constraints -----------------------------------------------------------

    def dimension_specs(self, node: Optional[Node], what: str) -> Tuple[Tuple[str, Constraint], ...]:
        out = []
        for key, value in self.entries(node, what):
            constraint = self.constraint(key.text, value, what)
            if constraint is not None:
                out.append((key.text, constraint))
        return tuple(out)

    def constraint(self, name: str, node: Node, what: str) -> Optional[Constraint]:
        """A version dimension takes a specifier set (``>=8.1``; a bare version is ``==``),
        an enumeration one value or a list; a list of versions is a set of values too."""
        kind = self.kinds.get(name, VERSION)  # an undeclared name is reported by consistency
        label = f"{_label(name)} {'specifier' if kind == VERSION else 'value'} in {what}"
        if isinstance(node, Mapping):
            return self.series(name, node, what, kind)
        if isinstance(node, Sequence):
            if not node.items:
                self.diags.error(node.mark, f"the {_label(name)} list in {what} is empty", "list at least one value")
                return None
            # a version dimension's list may mix values and ranges: any of them (`[8.3.RC1, ">=8.5"]`)
            ranges = [n for n in node.items if kind == VERSION and isinstance(n, Scalar) and _is_range(n.text)]
            values = tuple(
                v
                for v in (self.value(n, label, kind) for n in node.items if not any(n is r for r in ranges))
                if v is not None
            )
            also = tuple(s for s in (self.spec(n, label) for n in ranges) if s is not None)
            if len(values) + len(also) < len(node.items):
                return None
            written = [str(v) for v in values] + [s.text for s in also]
            return Constraint(", ".join(written), values=values, also=also)
        if kind == ENUM or (isinstance(node, Scalar) and node.text.strip().casefold() == ABSENT):
            value = self.value(node, label, kind)
            return Constraint(value.text, values=(value,)) if value else None
        spec = self.spec(node, label)
        return Constraint(spec.text, spec=spec) if spec else None

    def series(self, name: str, node: Mapping, what: str, kind: str) -> Optional[Constraint]:
        """``{min: 9.1.0, compatible: ["8.5.*", "9.0.*"]}``: a minimum with named compatible
        series, as a vendor states it ("lines 7.3.X-26.1.X work with CANN 8.5.X-9.1.X")."""
        f = self.fields(node, "compatible-series", f"the {_label(name)} series in {what}")
        if kind != VERSION:
            self.diags.error(
                node.mark,
                f"{_label(name)} in {what} is an enumeration: it has no minimum or series",
                "give a value or a list of values",
            )
            return None
        if not f:
            return None
        hint = "write a series as a version prefix with .*, e.g. '8.5.*', or a specifier set such as '>=8.5,<9'"
        minimum = self.value(f["min"], f"{_label(name)} minimum", VERSION) if "min" in f else None
        items = self.items(f.get("compatible"), f"the {_label(name)} compatible series")
        if "compatible" in f and isinstance(f["compatible"], Sequence) and not items:
            self.diags.error(f["compatible"].mark, f"the {_label(name)} compatible series list is empty", hint)
            return None
        also = tuple(
            s for s in (self.convert(n, f"{_label(name)} compatible series", _series, hint) for n in items) if s
        )
        if minimum is None or len(also) < len(items) or not also:
            return None
        spec = Spec.parse(f">={minimum.text}")
        text = f">={minimum.text} (compatible series {', '.join(s.text for s in also)})"
        return Constraint(text, spec=spec, also=also, series=True)

    def value(self, node: Node, what: str, kind: str) -> Optional[Value]:
        hint = (
            "write a PEP 440 version such as 8.1.RC1, or declare the dimension `kind: enum`"
            if kind == VERSION
            else "write a name"
        )
        return self.convert(node, what, lambda text: Value.of(text, kind), hint)

    # -- sections ----------------------------------------------------------------------

    def matrix(self, root: Node) -> Optional[Matrix]:
        if isinstance(root, Mapping) and root.get("schema-version") is not None:
            self.schema_version = self.read_schema_version(root.get("schema-version")) or SCHEMA_VERSION
        top = self.fields(root, "root", "compat.yaml")
        if not top:
            return None
        schema_version = self.read_schema_version(top.get("schema-version"))
        adapter = self.adapter(top.get("adapter"), root.mark)
        sources = self.sources(top.get("sources"))
        torch = self.torch_lines(top.get("torch"))
        dimensions = tuple(self.dimension(k, v) for k, v in self.entries(top.get("dimensions"), "dimensions"))
        shims = tuple(s for s in (self.shim(n) for n in self.items(top.get("shims"), "shims")) if s)
        releases = tuple(r for n in self.items(top.get("releases"), "releases") for r in self.release_entry(n))
        companions = _companions.parse_companions(self, top.get("companions"))
        smoke, runs_on, ci_companions = self.ci(top.get("ci"))
        evidence = self.evidence(top.get("evidence"))
        variants = (
            self.fields(top["torch-variants"], "torch-variants", "torch-variants") if "torch-variants" in top else {}
        )
        variants_changeable = self.boolean(variants.get("changeable"), "changeable", False)
        if adapter is None or schema_version is None:
            return None
        return Matrix(
            path=self.filename,
            schema_version=schema_version,
            adapter=adapter,
            torch=tuple(sorted(torch, key=lambda line: line.minor)),
            sources=sources,
            dimensions=dimensions,
            shims=shims,
            releases=tuple(sorted(releases, key=lambda r: r.version)),
            smoke=smoke,
            declares_shims="shims" in top,
            runs_on=runs_on,
            evidence=evidence,
            companions=companions,
            ci_companions=ci_companions,
            variants_changeable=variants_changeable,
        )

    def layer(self, root: Node) -> Optional[Layer]:
        """A layer's matrix (the file has ``layer:``): its releases and what each needs below it."""
        self.schema_version = 2
        top = self.fields(root, "layer-root", "a layer's compat.yaml")
        if not top:
            return None
        schema_version = self.read_schema_version(top.get("schema-version"))
        if schema_version is not None and schema_version < 2:
            self.diags.error(
                top["schema-version"].mark, "a layer's matrix needs schema-version 2", "write `schema-version: 2`"
            )
        f = self.fields(top["layer"], "layer", "layer") if "layer" in top else {}
        distribution = self.string(f.get("distribution"), "layer distribution")
        adapter = self.string(f.get("adapter"), "layer adapter")
        self.project_name(f, distribution, "layer distribution")
        self.project_name(f, adapter, "layer adapter", key="adapter")
        owned = tuple(self.layer_dimension(k, v) for k, v in self.entries(f.get("dimensions"), "layer dimensions"))
        self.owned = {d.name: d.kind for d in owned}
        releases: List[LayerRelease] = []
        seen: Dict[Version, Mark] = {}
        below = canonical_name(adapter) if adapter else ""
        for node in self.items(top.get("releases"), "releases"):
            release = self.layer_release(node, below)
            if release is None:
                continue
            if release.version in seen:
                self.diags.error(
                    release.mark,
                    f"release {release.version} is listed twice (first at line {seen[release.version].line})",
                    "keep one entry per version",
                )
                continue
            seen[release.version] = release.mark
            releases.append(release)
        if "releases" in top and not releases and not self.diags.errors:
            self.diags.error(top["releases"].mark, "the layer lists no releases", "list them under releases:")
        index_url = self.location(f.get("index-url"), "index-url")
        source = self.layer_source(f["source"]) if "source" in f else None
        if "source" not in f or source is not None:  # a source with an error is said once, at its line
            self.check_refs(distribution or "the layer", releases, source, index_url)
        if distribution is None or adapter is None or schema_version is None:
            return None
        if canonical_name(distribution) == canonical_name(adapter):
            self.diags.error(
                f["adapter"].mark,
                f"layer {distribution} names itself as its adapter",
                "name the adapter it sits on, e.g. torch-npu",
            )
        for release in releases:  # a layer that requires itself: a cycle of one
            for pin in release.packages:
                if pin.name == canonical_name(distribution):
                    self.diags.error(
                        pin.mark,
                        f"{distribution} {release.version} requires itself ({pin})",
                        "a layer requires the layers below it only: remove this pin",
                    )
        return Layer(
            path=self.filename,
            schema_version=schema_version,
            distribution=distribution,
            adapter=adapter,
            description=self.string(f.get("description"), "layer description") or "",
            releases=tuple(sorted(releases, key=lambda r: r.version)),
            mark=top["layer"].mark,
            index_url=index_url,
            dimensions=owned,
            source=source,
        )

    def layer_source(self, node: Node) -> Optional[LayerSource]:
        """``source: {git: URL, build-isolation: false}``: where releases no index serves come from."""
        f = self.fields(node, "layer-source", "layer source")
        url = self.string(f.get("git"), "source git URL")
        isolated = self.boolean(f.get("build-isolation"), "build-isolation", True)
        if url is not None and not _GIT_URL.match(url):
            self.diags.error(
                f["git"].mark,
                f"source git URL {url!r} is not a URL pip can clone",
                "give the repository's URL, e.g. git: https://gitcode.com/Ascend/vision.git",
            )
            url = None
        if url is None:
            return None
        return LayerSource(url, isolated, node.mark)

    def check_refs(
        self, name: str, releases: List[LayerRelease], source: Optional[LayerSource], index_url: Optional[str]
    ) -> None:
        """A release's ``ref:`` names a tag or commit of the layer's ``source``: refused without
        one, or when two releases name the same; a release without one, where no index serves the
        layer, is said (a fix can only tell the user to build it)."""
        seen: Dict[str, Version] = {}
        for release in releases:
            if release.ref is None:
                if source is not None and index_url is None:
                    self.diags.warning(
                        release.mark,
                        f"{name} {release.version} names no ref: and no index serves {name} (its source is git only)",
                        "add ref: with the tag or commit it is built from, so fixes and tables can install it",
                    )
                continue
            mark = release.mark_of("ref")
            if source is None:
                self.diags.error(
                    mark,
                    f"{name} {release.version} names ref {release.ref!r} but the layer names no source",
                    "add `source: {git: URL}` under layer: (the repository the ref is in)",
                )
            elif release.ref in seen:
                self.diags.error(
                    mark,
                    f"{name} {release.version} names ref {release.ref!r}, as {seen[release.ref]} does",
                    "each release is built from its own tag or commit",
                )
            seen.setdefault(release.ref, release.version)

    def layer_dimension(self, key: Scalar, node: Node) -> Dimension:
        """A dimension the layer owns: values, the machine's detectors, the build's, and aliases."""
        if not _IDENT.match(key.text):
            self.diags.error(key.mark, f"dimension name {key.text!r} is not an identifier", "use a name such as soc")
        f = self.fields(node, "layer-dimension", f"layer dimension {key.text!r}")
        kind = self.string(f.get("kind"), "dimension kind") or VERSION
        if kind not in (VERSION, ENUM):
            self.diags.error(f["kind"].mark, f"unknown dimension kind {kind!r}", "use version or enum")
            kind = VERSION
        self.kinds[key.text] = kind
        what = f"{_label(key.text)} {'version' if kind == VERSION else 'value'}"
        values = self.list_of(f.get("values"), what, lambda n, w: self.value(n, w, kind))
        detectors = tuple(d for d in (self.detector(n) for n in self.items(f.get("detect"), "detect")) if d)
        built = tuple(d for d in (self.detector(n) for n in self.items(f.get("built"), "built")) if d)
        aliases = []
        for value_key, patterns in self.entries(f.get("aliases"), "aliases"):
            texts = tuple(t for t in (self.string(n, "alias pattern") for n in self.items(patterns, "aliases")) if t)
            aliases.append((value_key.text, texts))
        if not detectors and not built:
            self.diags.error(
                key.mark,
                f"layer dimension {_label(key.text)} has no detector",
                "give `detect:` (the machine's value, an override variable first) and/or `built:` (the build's)",
            )
        return Dimension(
            name=key.text,
            description=self.string(f.get("description"), "description") or "",
            values=values if kind == ENUM else tuple(sorted(values, key=lambda v: v.order)),
            detectors=detectors,
            mark=key.mark,
            kind=kind,
            changeable=self.boolean(f.get("changeable"), "changeable", kind == VERSION),
            built=built,
            aliases=tuple(aliases),
        )

    def git_pin(self, name: Scalar, node: Node) -> Tuple[Optional[Spec], Optional[GitPin]]:
        """``{git: URL, ref: COMMIT-OR-TAG, version: V}``: the version it stands for, and the commit."""
        g = self.fields(node, "git-pin", f"git pin of {name.text}")
        url = self.string(g.get("git"), "git URL")
        version = self.version(g["version"], "git pin version") if "version" in g else None
        ref = self.git_ref(g.get("ref"))
        if url is None or ref is None or version is None:
            return None, None
        return Spec(str(version), SpecifierSet(f"=={version}")), GitPin(url, ref, node.mark)

    def git_ref(self, node: Optional[Node]) -> Optional[str]:
        """A commit or a tag: one word that is no option (``git checkout REF`` and pip's ``@REF``)."""
        ref = self.string(node, "git ref")
        if ref is not None and node is not None and not _GIT_REF.match(ref.strip()):
            self.diags.error(
                node.mark, f"git ref {ref!r} is not a commit or a tag", "e.g. ref: 1b16c01 or ref: v0.11.0"
            )
            return None
        return ref.strip() if ref is not None else None

    def layer_release(self, node: Node, adapter: str) -> Optional[LayerRelease]:
        f = self.fields(node, "layer-release", "layer release")
        version = self.version(f["version"], "release version") if "version" in f else None
        status = self.status(f.get("status"))
        reason = self.string(f.get("reason"), "reason") or ""
        if status is Status.BROKEN and not reason:
            self.diags.error(f["status"].mark, "a broken release needs a reason", "add `reason:` (and a `link:`)")
        elif status is Status.UNSUPPORTED:
            self.diags.error(f["status"].mark, "a release cannot be unsupported", "use broken or eol, with a reason")
            status = None
        packages: List[PackagePin] = []
        for key, name in (("torch", "torch"), ("adapter", adapter)):
            if key in f:
                spec = self.pin_set(f[key], f"{key} specifier")
                if spec is not None:
                    packages.append(PackagePin(name, spec, f[key].mark))
        line = self.string(f.get("adapter-line"), "adapter release line")
        if "adapter" in f and line is not None:
            self.diags.error(
                f["adapter-line"].mark,
                "a layer release names the adapter by version (adapter:) or by release line (adapter-line:), not both",
                "keep one",
            )
        named = {p.name for p in packages}
        for section, optional in (("requires", False), ("requires-if-installed", True)):
            for req_key, req_node in self.entries(f.get(section), section):
                git = None
                if isinstance(req_node, Mapping) and not optional:  # {git: URL, ref: ..., version: V}
                    one, git = self.git_pin(req_key, req_node)
                    req_spec = PinSet.of(one) if one is not None else None
                else:
                    req_spec = self.pin_set(req_node, f"{req_key.text} specifier")
                req_name = canonical_name(req_key.text)
                if req_name in ("torch", "python", adapter):
                    self.diags.error(
                        req_key.mark,
                        f"{req_key.text} under {section}:",
                        f"write it as the release's own `{'adapter' if req_name == adapter else req_name}:` key",
                    )
                elif req_name in named:
                    self.diags.error(
                        req_key.mark,
                        f"{req_key.text} is pinned twice (requires: and requires-if-installed:)",
                        "keep one: requires-if-installed: applies only when it is installed",
                    )
                elif req_spec is not None:
                    named.add(req_name)
                    packages.append(PackagePin(req_name, req_spec, req_node.mark, git, optional))
        dimensions = []
        for dim_key, dim_node in self.entries(f.get("dimensions"), "layer release dimensions"):
            constraint = self.layer_constraint(dim_key.text, dim_node)
            if constraint is not None:
                dimensions.append((dim_key.text, constraint))
        python = self.pin_set(f["python"], "Python specifier") if "python" in f else None
        if version is None or status is None:
            return None
        return LayerRelease(
            version=version,
            date=self.date(f.get("date"), "release date"),
            status=status,
            reason=reason,
            link=self.string(f.get("link"), "link"),
            python=python,
            packages=tuple(packages),
            adapter_line=line,
            dimensions=tuple(dimensions),
            mark=node.mark,
            marks=tuple((k, v.mark) for k, v in f.items()),
            ref=self.git_ref(f["ref"]) if "ref" in f else None,
        )

    def pin_set(self, node: Node, what: str) -> Optional[PinSet]:
        """A pin: one specifier set (a bare version means ==), or a list of them meaning any
        of them (``[2.1.0, 2.6.0]``: PEP 440 has no OR)."""
        if not isinstance(node, Sequence):
            spec = self.spec(node, what)
            return PinSet.of(spec) if spec is not None else None
        if not node.items:
            self.diags.error(
                node.mark, f"the {what} list is empty", "list what it accepts, each a version or a specifier set"
            )
            return None
        specs = [self.spec(item, what) for item in node.items]
        found = tuple(s for s in specs if s is not None)
        return PinSet(found) if len(found) == len(specs) else None

    def layer_constraint(self, name: str, node: Node) -> Optional[Constraint]:
        """A layer constrains dimensions the adapter's matrix defines, which this file does not
        know: a specifier set where the values read as one (``9.1.0``, ``>=8.5``), or a
        minimum with compatible series (a mapping), else names."""
        items = node.items if isinstance(node, Sequence) else (node,)
        scalars = [n for n in items if isinstance(n, Scalar)]
        # versions or ranges: a version dimension (a bad range is then an error, not a name)
        specs = (
            isinstance(node, Mapping)
            or all(isinstance(n, Scalar) and _is_spec(n.text) for n in items)
            or any(_is_range(n.text) for n in scalars)
        )
        owned = self.owned.get(name)  # the layer's own dimension: its declared kind
        self.kinds[name] = owned or (VERSION if specs else ENUM)
        return self.constraint(name, node, "layer release dimensions")

    def read_schema_version(self, node: Optional[Node]) -> Optional[int]:
        if node is None:
            return None
        if isinstance(node, Scalar) and node.tag == YAML_INT and node.text in [str(v) for v in SCHEMA_VERSIONS]:
            return int(node.text)
        if not any(d.message.startswith("unsupported schema-version") for d in self.diags.items):
            known = " and ".join(map(str, SCHEMA_VERSIONS))
            newest = max(SCHEMA_VERSIONS)
            text = node.text if isinstance(node, Scalar) else ""
            if isinstance(node, Scalar) and node.tag == YAML_INT and text.isdigit() and int(text) > newest:
                hint = f"this adapter-matrix reads schema-version {known}; upgrade adapter-matrix for newer files"
            elif text.strip() in [str(v) for v in SCHEMA_VERSIONS] or text.strip() in [
                f"{v}.0" for v in SCHEMA_VERSIONS
            ]:
                # "2" in quotes, or 2.0: the version meant is plain, but it is a whole number, unquoted
                hint = f"write it as a whole number without quotes: `schema-version: {int(float(text))}`"
            else:
                hint = f"this adapter-matrix reads schema-version {known}: write `schema-version: {newest}`"
            self.diags.error(node.mark, f"unsupported schema-version {node.describe()}", hint)
        return None

    def project_name(self, f: Dict[str, Node], name: Optional[str], what: str, key: str = "distribution") -> None:
        """An error at ``f[key]`` when ``name`` is no name pip installs (every command would fail)."""
        if name is not None and not is_project_name(name):
            self.diags.error(
                f[key].mark,
                f"{what} {name!r} is not a distribution name pip can install",
                "use ASCII letters, digits and . _ - inside, starting and ending with a letter or digit (PEP 508)",
            )

    def adapter(self, node: Optional[Node], root_mark: Mark) -> Optional[MatrixAdapter]:
        if node is None:
            return None
        f = self.fields(node, "adapter", "adapter")
        distribution = self.string(f.get("distribution"), "adapter distribution")
        device = self.string(f.get("device"), "adapter device")
        shims = self.string(f.get("shims"), "adapter shims package")
        self.project_name(f, distribution, "adapter distribution")
        if device is not None and not _IDENT.match(device):
            self.diags.error(f["device"].mark, f"device name {device!r} is not an identifier", "use a name such as npu")
        if shims is not None and not _DOTTED.match(shims):
            self.diags.error(
                f["shims"].mark, f"shims package {shims!r} is not a valid dotted module name", "e.g. my_adapter.shims"
            )
        if distribution is None or device is None or (shims is None and "shims" in f):
            return None
        return MatrixAdapter(distribution, device, shims, node.mark)

    def sources(self, node: Optional[Node]) -> Tuple[InstallSource, ...]:
        out = [InstallSource("pypi", PYPI, None, None, None, node.mark if node else Mark(self.filename, 1, 1))]
        for key, value in self.entries(node, "sources"):
            f = self.fields(value, "source", f"source {key.text!r}")
            src = InstallSource(
                name=key.text,
                index_url=self.location(f.get("index-url"), "index-url"),
                find_links=self.location(f.get("find-links"), "find-links", folders=True),
                variant=self.string(f.get("variant"), "variant"),
                fallback=self.string(f.get("fallback"), "fallback"),
                mark=key.mark,
            )
            if "index-url" not in f and "find-links" not in f:  # a bad one is said at its place
                self.diags.error(
                    key.mark, f"source {key.text!r} has neither index-url nor find-links", "give at least one"
                )
            if key.text == "pypi":
                out[0] = src
            else:
                out.append(src)
        return tuple(out)

    def torch_lines(self, node: Optional[Node]) -> List[TorchLine]:
        out: List[TorchLine] = []
        seen: Dict[Version, Mark] = {}
        for key, value in self.entries(node, "torch"):
            minor = self.torch_line_key(key, "torch entries")
            if minor is None:
                continue
            if minor in seen:
                self.diags.error(
                    key.mark, f"duplicate torch minor {minor}", f"it is already described at line {seen[minor].line}"
                )
                continue
            seen[minor] = key.mark
            f = self.fields(value, "torch", f"torch {minor}")
            released = self.date(f.get("released"), "release date")
            patches = []  # each node read once: one error for a scalar, each patch's at its own place
            for patch_node in self.items(f.get("patches"), "patches"):
                patch = self.version(patch_node, "patch version")
                if patch is None:
                    continue
                patches.append(patch)
                if (patch.major, patch.minor) != (minor.major, minor.minor):
                    self.diags.error(
                        patch_node.mark,
                        f"patch {patch} does not belong to torch {minor}",
                        f"list {minor}.N versions only",
                    )
            python = self.list_of(f.get("python"), "Python version", self.python)
            if len(set(python)) != len(python):
                self.diags.error(
                    f["python"].mark, f"torch {minor} lists a Python version twice", "list each version once"
                )
            install = self.string(f.get("install"), "install source") or "pypi"
            if released is None or not patches or not python:
                if "patches" in f and not patches and not self.diags.errors:
                    self.diags.error(
                        f["patches"].mark, f"torch {minor} lists no patch releases", "list at least one, e.g. [2.4.0]"
                    )
                continue
            out.append(
                TorchLine(minor, released, tuple(sorted(set(patches))), tuple(sorted(set(python))), install, key.mark)
            )
        return out

    def dimension(self, key: Scalar, node: Node) -> Dimension:
        if not _IDENT.match(key.text):
            self.diags.error(key.mark, f"dimension name {key.text!r} is not an identifier", "use a name such as cann")
        f = self.fields(node, "dimension", f"dimension {key.text!r}")
        kind = VERSION
        if "kind" in f:
            written = self.string(f["kind"], "dimension kind")
            if written in (VERSION, ENUM):
                kind = written
            elif written is not None:
                self.diags.error(f["kind"].mark, f"unknown dimension kind {written!r}", "use version or enum")
        self.kinds[key.text] = kind
        detectors = tuple(d for d in (self.detector(n) for n in self.items(f.get("detect"), "detect")) if d)
        if not detectors and "detect" not in f and key.text in BUILTIN_DETECTORS and self.schema_version >= 2:
            detectors = (Detector("builtin", (key.text,), None, 5.0, key.mark),)
        what = f"{_label(key.text)} {'version' if kind == VERSION else 'value'}"
        values: Dict[str, Value] = {}
        seen: Dict[object, Value] = {}  # Value.same as a key: one look-up per value, not a scan
        for item in self.items(f.get("values"), what):
            value = self.value(item, what, kind)
            if value is None:
                continue
            twin = seen.setdefault(value.identity, value)
            if twin is not value:
                self.diags.error(
                    item.mark,
                    f"{_label(key.text)} lists {value} twice" + (f" (as {twin})" if twin.text != value.text else ""),
                    "list each value once",
                )
                continue
            values[value.text] = value
        ordered = tuple(values.values()) if kind == ENUM else tuple(sorted(values.values(), key=lambda v: v.order))
        return Dimension(
            name=key.text,
            description=self.string(f.get("description"), "description") or "",
            values=ordered,
            detectors=detectors,
            mark=key.mark,
            kind=kind,
            changeable=self.boolean(f.get("changeable"), "changeable", kind == VERSION),
            runner=self.runner(f.get("runner")),
            link=self.string(f.get("link"), "link"),
        )

    def runner(self, node: Optional[Node]) -> Optional[Runner]:
        if node is None:
            return None
        if isinstance(node, Mapping):
            labels = tuple((k.text, label) for k, v in node for label in [self.string(v, "runner label")] if label)
            return Runner(None, labels)
        template = self.string(node, "runner label")
        return Runner(template) if template else None

    def detector(self, node: Node) -> Optional[Detector]:
        f = self.fields(node, "detector", "detector")
        kinds = [k for k in ("env", "file", "command", "distribution", "builtin", "preset") if k in f]
        if len(kinds) != 1:
            choices = "env, file, command, distribution" + (", builtin, preset" if self.schema_version >= 2 else "")
            self.diags.error(
                node.mark, f"a detector needs exactly one of {choices}", "split it into one detector per source"
            )
            return None
        kind = kinds[0]
        target = self._detector_target(f, kind)
        if target is None:
            return None
        regex = self._detector_regex(node, f, kind)
        template = self._detector_template(f, regex)
        return Detector(kind, target, regex, self._detector_timeout(f), node.mark, template)

    def _detector_target(self, f: Dict[str, Node], kind: str) -> Optional[Tuple[str, ...]]:
        """What the detector reads: a command's arguments, else its one value (None: nothing to read)."""
        if kind == "command":
            target = tuple(
                s for s in (self.string(n, "command argument") for n in self.items(f["command"], "command")) if s
            )
            if not target:
                self.diags.error(
                    f["command"].mark, "the command is empty", "give the program and its arguments as a list"
                )
                return None
            return target
        value = self.string(f[kind], kind)
        if value is None:
            return None
        if kind == "env" and not _ENV_NAME.match(value):
            self.diags.error(f[kind].mark, f"{value!r} is not an environment variable name")
        if kind == "builtin" and value not in BUILTIN_DETECTORS:
            self.diags.error(f[kind].mark, f"unknown built-in detector {value!r}", "use os or arch")
        if kind == "preset" and value not in PRESET_NAMES:
            close = difflib.get_close_matches(value, PRESET_NAMES, 1)
            self.diags.error(
                f[kind].mark,
                f"unknown detector preset {value!r}",
                f"did you mean {close[0]}?" if close else "use one of " + ", ".join(PRESET_NAMES),
            )
        return (value,)

    def _detector_regex(self, node: Node, f: Dict[str, Node], kind: str) -> Optional[str]:
        """The regex that finds the version, bounded and compiled (None: none, or a bad one)."""
        regex = self.string(f.get("regex"), "regex")
        if regex is not None and len(regex) > MAX_REGEX_CHARS:
            self.diags.error(
                f["regex"].mark,
                f"the regex has {len(regex)} characters, more than {MAX_REGEX_CHARS}",
                "a version regex is short: match the line that holds the version",
            )
            return None
        if regex is not None:
            try:
                re.compile(regex)
            except (re.error, OverflowError, RecursionError) as exc:  # `a{4294967296}`, deep nesting
                self.diags.error(
                    f["regex"].mark, f"bad regex {regex!r}: {exc}", "fix the regular expression (Python syntax)"
                )
                return None
        elif kind in ("file", "command"):
            self.diags.error(
                node.mark, f"a {kind} detector needs a regex", "add `regex:` with a group that captures the version"
            )
        return regex

    def _detector_template(self, f: Dict[str, Node], regex: Optional[str]) -> Optional[str]:
        """The template that joins the regex's named groups, each group it names defined."""
        template = self.string(f.get("template"), "template")
        if template is not None and regex is not None:
            groups = set(re.compile(regex).groupindex)
            named = set(re.findall(r"\{([^{}]*)\}", template))
            if not named:
                self.diags.error(
                    f["template"].mark,
                    f"template {template!r} names no group",
                    "write the groups as {name}, e.g. '{id}{version_id}'",
                )
            elif named - groups:
                missing = ", ".join(sorted(named - groups))
                self.diags.error(
                    f["template"].mark,
                    f"template {template!r} names {missing}, which the regex does not define",
                    "give the regex a named group (?P<name>...) for each",
                )
        elif template is not None:
            self.diags.error(
                f["template"].mark,
                "a template needs a regex with named groups",
                "add `regex:` with (?P<name>...) groups",
            )
        return template

    def _detector_timeout(self, f: Dict[str, Node]) -> float:
        """The seconds a detector may take (5 unless given, at most MAX_TIMEOUT)."""
        if "timeout" not in f:
            return 5.0
        parsed = self.convert(f["timeout"], "timeout", _seconds, "give seconds as a number")
        if parsed is not None and not 0 < parsed <= MAX_TIMEOUT:
            self.diags.error(
                f["timeout"].mark,
                f"timeout must be more than 0 and at most {MAX_TIMEOUT:g} seconds, found {parsed:g}",
                "e.g. timeout: 10",
            )
            return 5.0
        return parsed if parsed is not None else 5.0

    def shim(self, node: Node) -> Optional[ShimRange]:
        f = self.fields(node, "shim", "shim")
        module = self.string(f.get("module"), "shim module")
        torch = self.spec(f["torch"], "torch specifier") if "torch" in f else None
        if module is not None and not _DOTTED.match(module):
            self.diags.error(
                f["module"].mark,
                f"shim module {module!r} is not a valid dotted module name",
                "use e.g. shims.torch_2_4",
            )
            return None
        if module is None or torch is None:
            return None
        return ShimRange(module, torch, node.mark)

    def status(self, node: Optional[Node]) -> Optional[Status]:
        if node is None:
            return None
        s = self.scalar(node, "status")
        if s is None:
            return None
        try:
            return Status(s.text)
        except ValueError:
            allowed = ", ".join(x.value for x in Status if x is not Status.UNSUPPORTED)  # unsupported: exceptions only
            close = difflib.get_close_matches(s.text, [x.value for x in Status], n=1)
            hint = f"did you mean {close[0]!r}? " if close else ""
            self.diags.error(s.mark, f"unknown status {s.text!r}", f"{hint}use one of {allowed}")
            return None

    def python_claim(self, node: Node, free_threaded: bool) -> Optional[PythonClaim]:
        if isinstance(node, Sequence):
            exact = self.list_of(node, "Python version", self.python)
            if not exact:
                self.diags.error(node.mark, "the Python list is empty", "list versions or give a range such as '>=3.9'")
                return None
            return PythonClaim(
                ", ".join(str(p) for p in exact), exact=tuple(sorted(set(exact))), free_threaded=free_threaded
            )
        spec = self.spec(node, "Python specifier")
        return PythonClaim(spec.text, spec=spec, free_threaded=free_threaded) if spec else None

    def release_entry(self, node: Node) -> List[Release]:
        """A release, or (schema 2) a release line's packages, each with the line's keys."""
        if not (isinstance(node, Mapping) and node.get("line") is not None):
            release = self.release(self.fields(node, "release", "release"), node.mark, "release")
            return [release] if release else []
        f = self.fields(node, "line", "release line")
        name = self.string(f.get("line"), "release line name")
        if name is None:
            return []
        defaults = {k: v for k, v in f.items() if k in RELEASE_DEFAULTS}
        out = []
        for package in self.items(f.get("packages"), "packages"):
            own = self.fields(package, "package", f"package of release line {name}")
            merged = dict(defaults, **own)
            mine, shared = own.get("exceptions"), defaults.get("exceptions")
            if isinstance(mine, Sequence) and isinstance(shared, Sequence):  # the package's first, then the line's
                merged["exceptions"] = Sequence(mine.items + shared.items, mine.mark)
            for key in ("python", "status"):
                if key not in merged and "version" in own:
                    self.diags.error(
                        package.mark,
                        f"package {own['version'].describe()} of release line {name} has no {key!r}",
                        f"give `{key}:` on the package or on the line",
                    )
            release = self.release(merged, package.mark, f"package of release line {name}", name)
            if release is not None:
                out.append(release)
        if "packages" in f and not out and not self.diags.errors:
            self.diags.error(f["packages"].mark, f"release line {name} ships no packages", "list them under packages:")
        return out

    def release(self, f: Dict[str, Node], mark: Mark, what: str, line: Optional[str] = None) -> Optional[Release]:
        version = self.version(f["version"], "release version") if "version" in f else None
        torch, variant = self.torch_claim(f["torch"]) if "torch" in f else (None, None)
        if "torch-variant" in f:
            written = self.string(f["torch-variant"], "torch variant")
            if written is not None and not _local_label(written):
                self.diags.error(
                    f["torch-variant"].mark,
                    f"torch variant {written!r} is not a local version label",
                    "write it as after the + in 2.8.0+cpu, e.g. cpu, xpu, cxx11.abi",
                )
            elif written is not None and variant is not None and written != variant:
                self.diags.error(
                    f["torch-variant"].mark,
                    f"torch-variant {written} contradicts the torch pin's +{variant}",
                    "keep one of them",
                )
            variant = variant or written
        free_threaded = self.boolean(f.get("free-threaded"), "free-threaded", False)
        python = self.python_claim(f["python"], free_threaded) if "python" in f else None
        status = self.status(f.get("status"))
        reason = self.string(f.get("reason"), "reason") or ""
        if status is Status.BROKEN and not reason:
            self.diags.error(
                f["status"].mark, "a broken release needs a reason", "add `reason:` (and a `link:` to the issue)"
            )
        elif status is Status.UNSUPPORTED:
            self.diags.error(
                f["status"].mark,
                "a release cannot be unsupported",
                "leave the cells out of its torch, python or dimensions, or mark them with an exception: `status: unsupported`",
            )
            status = None
        elif status not in (None, Status.SUPPORTED) and not reason:
            self.diags.warning(
                f["status"].mark, f"status {status} without a reason", "add `reason:` so users learn why"
            )
        if torch is not None and "torch" in f:
            self.warn_bare_minor(torch, f["torch"].mark)
        rules = tuple(r for r in (self.rule(n) for n in self.items(f.get("exceptions"), "exceptions")) if r)
        if version is None or torch is None or python is None or status is None:
            return None
        return Release(
            version=version,
            date=self.date(f.get("date"), "release date"),
            torch=torch,
            python=python,
            status=status,
            reason=reason,
            link=self.string(f.get("link"), "link"),
            supported_until=self.date(f.get("supported-until"), "supported-until date"),
            dimensions=self.dimension_specs(f.get("dimensions"), f"{what} dimensions"),
            rules=rules,
            mark=mark,
            marks=tuple((k, v.mark) for k, v in f.items()),
            release_line=line,
            variant=variant,
            torch_source=self.string(f.get("torch-source"), "torch source"),
            index_url=self.location(f.get("index-url"), "index-url"),
        )

    def warn_bare_minor(self, torch: Spec, mark: Mark) -> None:
        """A bare ``2.9`` is ``==2.9``, which PEP 440 reads as 2.9.0 only, while ``init
        --torch 2.9`` means the whole line: say which one the file gets."""
        only = list(torch.specifier)
        if len(only) == 1 and only[0].operator == "==" and re.fullmatch(r"\d+\.\d+", only[0].version):
            line = only[0].version
            major, minor = line.split(".")
            self.diags.warning(
                mark,
                f"torch {torch.text} means {line}.0 only (PEP 440 pads {line} with zeros), not the {line} line as `init --torch {line}` does",
                f"write {line}.0 for that patch, or '>={line},<{major}.{int(minor) + 1}' for every patch of the line",
            )

    def torch_claim(self, node: Node) -> Tuple[Optional[Spec], Optional[str]]:
        """The torch specifier and the variant an exact pin carries: ``2.8.0+cpu`` claims
        torch 2.8.0, cpu build. A local label anywhere else cannot be said (a range of
        ``+cpu`` versions is ``torch-variant: cpu``)."""
        spec = self.spec(node, "torch specifier")
        if spec is None:
            return None, None
        local = [s for s in spec.specifier if "+" in s.version]
        if not local:
            return spec, None
        (only,) = list(spec.specifier) if len(spec.specifier) == 1 else (None,)
        if only is None or only.operator != "==" or only.version.endswith(".*"):
            self.diags.error(
                node.mark,
                f"torch specifier {spec.text!r} puts a local label (+...) in a range",
                "pin one version (2.8.0+cpu) or give the build as `torch-variant:`",
            )
            return None, None
        public, _, variant = only.version.partition("+")
        return Spec(spec.text, SpecifierSet(f"=={public}")), variant

    def rule(self, node: Node) -> Optional[StatusRule]:
        f = self.fields(node, "exception", "exception")
        status = self.status(f.get("status"))
        if status is None:
            return None
        return StatusRule(
            torch=self.spec(f["torch"], "torch specifier") if "torch" in f else None,
            python=self.spec(f["python"], "Python specifier") if "python" in f else None,
            dimensions=self.dimension_specs(f.get("dimensions"), "exception dimensions"),
            status=status,
            reason=self.string(f.get("reason"), "reason") or "",
            link=self.string(f.get("link"), "link"),
            mark=node.mark,
        )

    def ci(self, node: Optional[Node]) -> Tuple[Tuple[CellRef, ...], Tuple[str, ...], Tuple[CellCompanion, ...]]:
        if node is None:
            return (), (), ()
        f = self.fields(node, "ci", "ci")
        runs_on = tuple(
            s for s in (self.string(n, "runner label") for n in self.items(f.get("runs-on"), "runs-on")) if s
        )
        out = []
        for item in self.items(f.get("smoke"), "smoke"):
            cell = self.fields(item, "cell", "smoke cell")
            minor = self.version(cell["torch"], "torch minor") if "torch" in cell else None
            python = self.python(cell["python"], "Python version") if "python" in cell else None
            if minor is not None and python is not None:
                out.append(CellRef(minor, python, item.mark))
        return tuple(out), runs_on, _companions.parse_cell_companions(self, f.get("companions"))

    def evidence(self, node: Optional[Node]) -> EvidencePolicy:
        if node is None:
            return DEFAULT_EVIDENCE
        f = self.fields(node, "evidence", "evidence")
        days = DEFAULT_EVIDENCE.max_age_days
        if "max-age-days" in f:
            n = f["max-age-days"]
            if isinstance(n, Scalar) and n.tag == YAML_INT and _DAYS.match(n.text) and 1 <= int(n.text) <= MAX_AGE_DAYS:
                days = int(n.text)
            else:
                self.diags.error(
                    n.mark,
                    f"max-age-days must be a whole number of days from 1 to {MAX_AGE_DAYS}, found {n.describe()}",
                    "e.g. max-age-days: 180",
                )
        sources = []
        for item in self.items(f.get("sources"), "evidence sources"):
            path = self.string(item, "evidence source")
            if path is not None and (os.path.isabs(path) or ".." in path.replace("\\", "/").split("/")):
                self.diags.error(
                    item.mark,
                    f"evidence source {path!r} is not inside the matrix's folder",
                    "give a path relative to this file, e.g. shims",
                )
            elif path is not None:
                sources.append(path.rstrip("/"))
        suites = []
        known: Optional[List[str]] = None  # the groups a cell can report, read once when a name is not built in
        for item in self.items(f.get("suites"), "evidence suites"):
            group = self.string(item, "suite group")
            if group is not None and (not group or group in suites):
                self.diags.error(
                    item.mark,
                    f"suite group {group!r} is empty or named twice",
                    "list each suite group once, e.g. [conformance, ops]",
                )
            elif group is not None:
                if group not in BUILT_IN_GROUPS and known is None:
                    known = suite_groups(os.path.dirname(self.filename), sources)
                if known and group not in known:  # none known: the sources are not here (an installed matrix)
                    # a warning, not an error: the file still works (the records just never count),
                    # and an adopting adapter's suites may live where the sources do not say
                    close = difflib.get_close_matches(group, known, n=1)
                    self.diags.warning(
                        item.mark,
                        f"suite group {group!r} is not one a cell reports",
                        (f"did you mean {close[0]!r}? " if close else "")
                        + f"a group is one of {', '.join(BUILT_IN_GROUPS)}, a folder of the evidence sources "
                        "(tests/conformance/workloads: workloads) or a @pytest.mark.suite name in them; add the "
                        "suite's folder to evidence: sources:, or fix the name",
                    )
                suites.append(group)
        folder = self.string(f.get("folder"), "evidence folder") or DEFAULT_EVIDENCE.folder
        return EvidencePolicy(folder, days, tuple(sources), node.mark, tuple(suites))


def is_layer(tree: Optional[Node]) -> bool:
    """Whether a parsed file is a layer's matrix (it has ``layer:``), not an adapter's."""
    return isinstance(tree, Mapping) and tree.get("layer") is not None


def _load_layer(tree: Node, filename: str, problems: List[Diagnostic]) -> LayerResult:
    builder = _Builder(filename)
    builder.diags.extend(problems)
    layer = builder.layer(tree)
    if builder.diags.errors or layer is None:
        if not builder.diags.errors:
            builder.diags.error(Mark(filename, 1, 1), "the file does not describe a layer")
        raise MatrixError([_one_line(d) for d in builder.diags.sorted()], filename)
    return LayerResult(layer, [_one_line(d) for d in builder.diags.warnings])


def load_text(text: str, filename: str = "compat.yaml", *, check_modules: bool = True) -> LoadResult:
    """Load an adapter's matrix from text. Raises :class:`MatrixError` with every error found
    (a layer's matrix is one: this caller needs an adapter's; :func:`load_any_bytes` reads both)."""
    result = _load_any(text, filename, check_modules=check_modules, layers=False)
    assert isinstance(result, LoadResult)
    return result


def _load_any(text: str, filename: str, *, check_modules: bool, layers: bool) -> Union[LoadResult, LayerResult]:
    tree, problems = parse(text, filename)
    if is_layer(tree) and tree is not None:
        if layers:
            return _load_layer(tree, filename, problems)
        raise MatrixError(
            [
                Diagnostic(
                    tree.mark,
                    "this is a layer's matrix (it has `layer:`): it has no cells of its own",
                    "`check` and `validate` read it together with its adapter's matrix; plan, test and tabulate the adapter's",
                )
            ],
            filename,
        )
    builder = _Builder(filename)
    builder.diags.extend(problems)
    matrix = None
    if tree is None and not problems:
        builder.diags.error(
            Mark(filename, 1, 1),
            "the file is empty",
            "write a first one with `adapter-matrix init --distribution NAME --device NAME` (see the README)",
        )
    elif tree is not None:
        matrix = builder.matrix(tree)
    if matrix is not None:
        # every error in one run (issue 67): the model's checks too, even when the fields had errors
        complete = not builder.diags.errors
        builder.diags.extend(consistency.check(matrix, check_modules=check_modules, complete=complete))
    if builder.diags.errors or matrix is None:
        if not builder.diags.errors:
            builder.diags.error(Mark(filename, 1, 1), "the file does not describe a matrix")
        raise MatrixError([_one_line(d) for d in builder.diags.sorted()], filename)
    return LoadResult(matrix, [_one_line(d) for d in builder.diags.sorted() if d.severity == "warning"])


def _decoded(raw: bytes, filename: str) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise MatrixError(
            [Diagnostic(Mark(filename, line, 1), "the file is not UTF-8", "save it as UTF-8")], filename
        ) from None


def load_bytes(raw: bytes, filename: str, *, check_modules: bool = True) -> LoadResult:
    """Load an adapter's matrix from the bytes of a file shown to users as ``filename``."""
    return load_text(_decoded(raw, filename), filename, check_modules=check_modules)


def load_any_bytes(raw: bytes, filename: str, *, check_modules: bool = True) -> Union[LoadResult, LayerResult]:
    """An adapter's matrix or a layer's, whichever the file is."""
    return _load_any(_decoded(raw, filename), filename, check_modules=check_modules, layers=True)


def load(path: os.PathLike[str] | str, *, check_modules: bool = True) -> LoadResult:
    """Load and validate ``path``. Raises :class:`MatrixError` for unreadable or invalid files."""
    name = os.fspath(path)
    return load_bytes(read_matrix_file(name), display_path(name), check_modules=check_modules)
