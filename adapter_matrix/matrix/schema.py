"""The keys of ``compat.yaml`` (schema versions 1 and 2), declared once.

The loader uses these declarations to reject unknown keys (with a did-you-mean), to
require mandatory ones, and to refuse a key newer than the file's ``schema-version``;
:func:`json_schema` turns the same declarations into the JSON Schema that editors use
to complete and validate the file. Types and meaning are checked by the loader; the
JSON Schema mirrors them as far as JSON Schema can.

Version 2 only adds: every version-1 file means the same when read as version 2, so a
file moves up by changing its ``schema-version`` line (docs/real-matrices.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, Optional, Tuple

from .model import PRESET_NAMES, SCHEMA_VERSIONS, Status

__all__ = [
    "Field",
    "Struct",
    "STRUCTS",
    "json_schema",
    "SCHEMA_ID",
    "RELEASE_DEFAULTS",
    "URL_PATTERN",
    "FOLDER_PATTERN",
]

SCHEMA_ID = "https://adapter-matrix.invalid/schema/compat-v2.json"

_VERSION = {"type": ["string", "number"], "description": "A PEP 440 version, e.g. 2.4.1"}
_MINOR = {"type": ["string", "number"], "pattern": r"^\d+\.\d+$"}
_SPEC = {
    "type": ["string", "number"],
    "description": "A PEP 440 specifier set such as '>=2.1,<2.5', or one exact version",
}
_DATE = {"type": "string", "format": "date"}
_PYTHON = {"type": ["string", "number"], "pattern": r"^3\.\d+t?$"}
_STRING = {"type": "string"}
# an index is an http(s) URL with a host, or an absolute file: URL (pip and uv take these);
# find-links also takes a folder, spelled absolute, from home or explicitly relative (./wheels:
# a bare word is a typo more often than a folder). The loader checks these very patterns.
URL_PATTERN = r"^(?:https?://[^\s/?#]+|file:/)\S*$"
FOLDER_PATTERN = r"^(?:/|~|\.\.?/|[A-Za-z]:[\\/])"
_URL = {"type": "string", "format": "uri"}
_INDEX_URL = {"type": "string", "format": "uri", "pattern": URL_PATTERN}
_FIND_LINKS = {"type": "string", "pattern": f"{URL_PATTERN}|{FOLDER_PATTERN}"}
_STATUS = {"type": "string", "enum": [s.value for s in Status if s is not Status.UNSUPPORTED]}
_RULE_STATUS = {
    "type": "string",
    "enum": [s.value for s in Status],
    "description": "unsupported takes the cells out of the release's claim",
}
_IDENT = {"type": "string", "pattern": r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$"}


@dataclass(frozen=True)
class Field:
    """One key of a mapping: its JSON Schema fragment, whether it is required, what it means."""

    key: str
    json: Dict[str, Any]
    description: str
    required: bool = False
    since: int = 1  # the first schema-version that has the key
    optional_since: Optional[int] = None  # required before this schema-version, optional from it

    def required_in(self, schema_version: int) -> bool:
        return self.required and (self.optional_since is None or schema_version < self.optional_since)


@dataclass(frozen=True)
class Struct:
    """A mapping with a fixed set of keys."""

    name: str
    description: str
    fields: Tuple[Field, ...]

    @property
    def keys(self) -> Tuple[str, ...]:
        return tuple(f.key for f in self.fields)

    @property
    def required(self) -> Tuple[str, ...]:
        """Keys required in the newest schema-version."""
        return self.required_in(max(SCHEMA_VERSIONS))

    def required_in(self, schema_version: int) -> Tuple[str, ...]:
        return tuple(f.key for f in self.fields if f.required_in(schema_version))

    def field(self, key: str) -> Field:
        return next(f for f in self.fields if f.key == key)


def _ref(name: str) -> Dict[str, Any]:
    return {"$ref": f"#/$defs/{name}"}


def _map_of(schema: Dict[str, Any]) -> Dict[str, Any]:
    return {"type": "object", "additionalProperties": schema}


def _list_of(schema: Dict[str, Any]) -> Dict[str, Any]:
    return {"type": "array", "items": schema}


_NONE = {"const": "none", "description": "No release (of the companion, for this torch line or adapter release)"}
_COMPANION_LINE = {
    "anyOf": [
        _NONE,
        {
            "type": "object",
            "description": "Companion release -> the torch its wheels require (a bare version means ==)",
            "additionalProperties": _SPEC,
        },
    ]
}
_VALUE = {
    "type": ["string", "number"],
    "description": "A version (8.1.RC1) or, for an enumeration, a name (Ascend910B); absent: the dimension is not there",
}
_DIMENSION_SPECS = {
    "type": "object",
    "description": "Extra dimension name -> a PEP 440 specifier set (a version dimension), one value or a list of values "
    "(an enumeration; for a version dimension the list may hold specifier sets too: any of them), or a minimum with "
    "compatible series ({min: 9.1.0, compatible: ['8.5.*', '9.0.*']})",
    "additionalProperties": {
        "oneOf": [_SPEC, {"type": "array", "minItems": 1, "items": _VALUE}, {"$ref": "#/$defs/compatible-series"}]
    },
}
# A layer release's pin: one specifier set, or a list meaning any of them (PEP 440 has no OR).
_PIN = {
    "oneOf": [
        _SPEC,
        {
            "type": "array",
            "minItems": 1,
            "items": _SPEC,
            "description": "Any of these (each a version or a specifier set): [2.1.0, 2.6.0] admits 2.1.0 and 2.6.0, not 2.5.1",
        },
    ]
}

# Keys a release line gives every package it ships (a package's own key wins; its
# exceptions are tried before the line's).
RELEASE_DEFAULTS = (
    "date",
    "python",
    "free-threaded",
    "status",
    "reason",
    "link",
    "supported-until",
    "dimensions",
    "exceptions",
    "torch-variant",
    "torch-source",
    "index-url",
)


def _release_fields(required: Tuple[str, ...]) -> Tuple[Field, ...]:
    """The keys of a release; ``required`` names those it must write itself."""
    fields = (
        Field("version", _VERSION, "The adapter's version (the package version users install)."),
        Field("date", _DATE, "Release date."),
        Field("torch", _SPEC, "Torch versions it supports; one exact version may carry the variant, e.g. 2.8.0+cpu."),
        Field(
            "python",
            {"oneOf": [_SPEC, _list_of(_PYTHON)]},
            "Python versions: a range (intersected with each torch's wheels) or an explicit list.",
        ),
        Field("free-threaded", {"type": "boolean"}, "Whether free-threaded builds (3.13t) are supported."),
        Field("status", _STATUS, "Support status of the release."),
        Field("reason", _STRING, "Why the status is what it is (required unless supported)."),
        Field("link", _URL, "An issue or announcement about the status."),
        Field("supported-until", _DATE, "End of the support window; later it counts as eol."),
        Field("dimensions", _DIMENSION_SPECS, "Extra dimension name -> supported values."),
        Field("exceptions", _list_of(_ref("exception")), "Status overrides for some cells; the first match wins."),
        Field(
            "torch-variant", _STRING, "The local label torch must carry, e.g. cpu (torch 2.8.0+cpu) or xpu.", since=2
        ),
        Field(
            "torch-source",
            _STRING,
            "The source torch is installed from for this release (default: the one with its variant, else the torch line's).",
            since=2,
        ),
        Field("index-url", _INDEX_URL, "The index this release's package is published on (default: PyPI).", since=2),
    )
    return tuple(
        Field(f.key, f.json, f.description, required=f.key in required, since=f.since, optional_since=f.optional_since)
        for f in fields
    )


STRUCTS: Dict[str, Struct] = {
    s.name: s
    for s in (
        Struct(
            "root",
            "A compatibility matrix: adapter releases x torch releases x Python versions x extra dimensions.",
            (
                Field(
                    "schema-version",
                    {"enum": list(SCHEMA_VERSIONS)},
                    "Version of this file format (1 or 2; 2 only adds keys).",
                    required=True,
                ),
                Field("adapter", _ref("adapter"), "The adapter this matrix describes.", required=True),
                Field("sources", _map_of(_ref("source")), "Named places CI installs torch from ('pypi' is built in)."),
                Field(
                    "torch", _map_of(_ref("torch")), "Upstream facts, one entry per torch minor ('2.4').", required=True
                ),
                Field("dimensions", _map_of(_ref("dimension")), "Extra dimensions such as a driver toolkit."),
                Field(
                    "shims",
                    _list_of(_ref("shim")),
                    "Which shim module serves which torch versions (optional from version 2: a matrix for checks, tables and plans only).",
                    required=True,
                    optional_since=2,
                ),
                Field(
                    "releases",
                    _list_of({"oneOf": [_ref("release"), _ref("line")]}),
                    "The adapter's releases, or release lines shipping one package per torch line.",
                    required=True,
                ),
                Field(
                    "companions",
                    _map_of(_ref("companion")),
                    "Torch extensions with kernels of their own (torchvision, an adapter's op library) and which of their releases pair with which torch.",
                    since=2,
                ),
                Field(
                    "torch-variants",
                    _ref("torch-variants"),
                    "Whether fixes may move users to another torch variant family (+cpu, +xpu, PyPI's unlabelled build).",
                    since=2,
                ),
                Field("ci", _ref("ci"), "Settings for the test plan."),
                Field(
                    "evidence", _ref("evidence"), "When a test record still counts as evidence for a supported cell."
                ),
            ),
        ),
        Struct(
            "adapter",
            "The adapter distribution and the device it provides.",
            (
                Field("distribution", _STRING, "Its Python distribution name on PyPI.", required=True),
                Field("device", _IDENT, "The PrivateUse1 device name, e.g. npu.", required=True),
                Field("shims", _IDENT, "The import package holding the era shims.", required=True, optional_since=2),
            ),
        ),
        Struct(
            "source",
            "Where CI installs torch from.",
            (
                Field("index-url", _INDEX_URL, "A package index (PEP 503/691)."),
                Field(
                    "find-links",
                    _FIND_LINKS,
                    "A page of wheels (https://...) or a folder of them (/opt/wheels, ./wheels, file:///opt/wheels), "
                    "tried without an index.",
                ),
                Field("variant", _STRING, "The local version label the wheels carry, e.g. cpu for 2.4.1+cpu."),
                Field("fallback", _STRING, "The source to use when this one has no matching wheel."),
            ),
        ),
        Struct(
            "torch",
            "Facts about one torch minor release line, as published upstream.",
            (
                Field("released", _DATE, "Release date of its first patch release (.0).", required=True),
                Field("patches", _list_of(_VERSION), "Its patch releases, e.g. [2.4.0, 2.4.1].", required=True),
                Field(
                    "python",
                    _list_of(_PYTHON),
                    "Python versions with Linux x86_64 wheels ('3.13t' = free-threaded).",
                    required=True,
                ),
                Field("install", _STRING, "Name of the source CI installs it from (default: pypi)."),
            ),
        ),
        Struct(
            "dimension",
            "An extra dimension of the matrix and how to detect its installed version.",
            (
                Field("description", _STRING, "What it is, for reports and tables."),
                Field(
                    "kind",
                    {"enum": ["version", "enum"]},
                    "version (the default: values compared as PEP 440 versions) or enum (names such as a SoC or an OS).",
                    since=2,
                ),
                Field(
                    "values",
                    _list_of(_VALUE),
                    "Known values, as written (8.1.RC1 stays 8.1.RC1), used to enumerate cells and tables.",
                ),
                Field(
                    "detect",
                    _list_of(_ref("detector")),
                    "Detectors, tried in order; the first answer wins (os and arch have a built-in one).",
                ),
                Field(
                    "changeable",
                    {"type": "boolean"},
                    "Whether a fix may ask the user to install another value (default: true for versions, a driver; false for an enum, a SoC or an OS).",
                    since=2,
                ),
                Field(
                    "runner",
                    {"oneOf": [_STRING, _map_of(_STRING)]},
                    "The CI runner provides it (it cannot be pip-installed): the runner label, a template such as 'cann-{value}' or a value -> label mapping.",
                    since=2,
                ),
                Field(
                    "link",
                    _URL,
                    "Where users get it (a toolkit's or driver's download page): the pytorch.org entry links its prerequisites here.",
                    since=2,
                ),
            ),
        ),
        Struct(
            "detector",
            "One way to read a dimension's value. Give exactly one of env, file, command, distribution, builtin, preset.",
            (
                Field("env", _STRING, "An environment variable holding the version."),
                Field("file", _STRING, "A file to read; 'regex' picks the version from it."),
                Field(
                    "command",
                    _list_of(_STRING),
                    "A command (argv list, run without a shell); 'regex' picks from stdout.",
                ),
                Field("distribution", _STRING, "A Python distribution whose version is the answer."),
                Field(
                    "builtin",
                    {"enum": ["os", "arch"]},
                    "The platform: os (linux, windows, macos) or arch (x86_64, aarch64).",
                    since=2,
                ),
                Field(
                    "preset",
                    {"enum": list(PRESET_NAMES)},
                    "A vendor toolkit's version, read where its installers put it in each of their layouts: cann (both the ascend-toolkit/latest and the 8.5 cann-<version> layouts), ascend-driver, musa, oneapi, neuware.",
                    since=2,
                ),
                Field(
                    "regex",
                    _STRING,
                    "Regular expression; group 'version' or group 1 is the version (with a template: the named groups it composes).",
                ),
                Field(
                    "template",
                    _STRING,
                    "Composes the value from the regex's named groups, each taken from the first line that matches it: '{id}{version_id}' gives ubuntu22.04 from /etc/os-release.",
                    since=2,
                ),
                Field(
                    "timeout",
                    {"type": "number", "exclusiveMinimum": 0},
                    "Seconds before a command is abandoned (default 5).",
                ),
            ),
        ),
        Struct(
            "shim",
            "A shim module and the torch versions it serves.",
            (
                Field("module", _IDENT, "Dotted module name, e.g. shims.torch_2_4.", required=True),
                Field("torch", _SPEC, "Torch versions it serves, e.g. '>=2.4,<2.6'.", required=True),
            ),
        ),
        Struct("release", "One release of the adapter.", _release_fields(("version", "torch", "python", "status"))),
        Struct(
            "line",
            "A release line (e.g. torch_npu 7.3.0): packages shipped together, one per torch line, sharing the line's keys.",
            (
                Field(
                    "line",
                    {"type": ["string", "number"]},
                    "The release line's name as written, e.g. 7.3.0 or 26.1.0.",
                    required=True,
                    since=2,
                ),
                Field(
                    "packages",
                    _list_of(_ref("package")),
                    "The packages it ships; each takes the line's keys unless it sets its own.",
                    required=True,
                    since=2,
                ),
            )
            + tuple(f for f in _release_fields(()) if f.key in RELEASE_DEFAULTS),
        ),
        Struct(
            "package",
            "One package of a release line; keys it does not set come from the line.",
            _release_fields(("version", "torch")),
        ),
        Struct(
            "exception",
            "A status override for the cells of a release it matches (unset keys match anything).",
            (
                Field("torch", _SPEC, "Torch versions it applies to."),
                Field("python", _SPEC, "Python versions it applies to."),
                Field("dimensions", _DIMENSION_SPECS, "Extra dimension versions it applies to."),
                Field(
                    "status",
                    _RULE_STATUS,
                    "The status of the matched cells (unsupported: not claimed at all).",
                    required=True,
                ),
                Field("reason", _STRING, "Why (required for broken)."),
                Field("link", _URL, "An issue or announcement."),
            ),
        ),
        Struct(
            "companion",
            "A companion package (keyed by its distribution name): upstream facts per torch line, and/or the adapter's own pins per release.",
            (
                Field("description", _STRING, "What it is, for reports and tables."),
                Field(
                    "torch",
                    _map_of(_COMPANION_LINE),
                    "Per torch line ('2.4'): the releases built for it, each with the torch requirement its wheels declare, or 'none'.",
                ),
                Field(
                    "adapter",
                    _map_of({"anyOf": [_NONE, _SPEC]}),
                    "Per adapter release: the versions of this package that pair with it, or 'none'.",
                ),
            ),
        ),
        Struct(
            "torch-variants",
            "The torch variant family (the local label +cpu, +xpu, +cu126, or PyPI's unlabelled build) follows the user's hardware.",
            (
                Field(
                    "changeable",
                    {"type": "boolean"},
                    "Whether a fix may install torch of another variant family than the installed one (default false).",
                    since=2,
                ),
            ),
        ),
        Struct(
            "ci",
            "Settings for test plans.",
            (
                Field("smoke", _list_of(_ref("cell")), "Cells of the smoke tier besides the oldest cell."),
                Field(
                    "runs-on",
                    _list_of(_STRING),
                    "Base runner labels of plan rows that need a runner-provided dimension (default: self-hosted).",
                    since=2,
                ),
                Field(
                    "companions",
                    _list_of(_STRING),
                    "Companions every test cell installs, at the release that pairs with its torch.",
                    since=2,
                ),
            ),
        ),
        Struct(
            "evidence",
            "Which result records count as evidence for the cells a release claims as supported "
            "(`adapter-matrix validate --results DIR --strict`).",
            (
                Field(
                    "folder",
                    _STRING,
                    "Where the nox cells write their records, relative to this file as named, symlinks not followed (default evidence).",
                ),
                Field(
                    "max-age-days",
                    {"type": "integer", "minimum": 1},
                    "A record older than this no longer counts (default 180).",
                ),
                Field(
                    "sources",
                    _list_of(_STRING),
                    "Files and folders under test (relative like folder): a record counts only while they hash as its release's "
                    "frozen sources did (adapter-matrix release), or, before the release is frozen, as they do now.",
                ),
                Field(
                    "suites",
                    _list_of(_STRING),
                    "Suite groups a record must have run to count (e.g. [conformance, ops, workloads]); "
                    "a nox run never replaces a committed record with one that ran fewer.",
                ),
            ),
        ),
        Struct(
            "layer-root",
            "A layer's matrix: a project that sits on an adapter (vllm-ascend, MindSpeed-LLM, torchvision_npu) and pins "
            "what it needs below it; the adapter's matrix gives the torch lines and dimensions.",
            (
                Field(
                    "schema-version",
                    {"const": 2},
                    "Version of this file format (layers need 2).",
                    required=True,
                    since=2,
                ),
                Field("layer", _ref("layer"), "The layer this matrix describes.", required=True, since=2),
                Field(
                    "releases",
                    _list_of(_ref("layer-release")),
                    "The layer's releases, each with what it needs below it.",
                    required=True,
                    since=2,
                ),
            ),
        ),
        Struct(
            "layer",
            "A layer's distribution and the adapter it sits on.",
            (
                Field("distribution", _STRING, "Its Python distribution name.", required=True, since=2),
                Field(
                    "adapter",
                    _STRING,
                    "The adapter distribution whose matrix defines the torch lines and dimensions it uses, e.g. torch-npu.",
                    required=True,
                    since=2,
                ),
                Field("description", _STRING, "What it is, for reports and tables.", since=2),
                Field("index-url", _INDEX_URL, "The index its releases are published on (default: PyPI).", since=2),
                Field(
                    "source",
                    _ref("layer-source"),
                    "The git repository its releases are built from when no index serves them; each release's "
                    "ref: names its tag or commit.",
                    since=2,
                ),
                Field(
                    "dimensions",
                    _map_of(_ref("layer-dimension")),
                    "Dimensions the layer owns (vllm-ascend's device generation), beside its adapter's; a name "
                    "its adapter's matrix also defines is an error.",
                    since=2,
                ),
            ),
        ),
        Struct(
            "layer-dimension",
            "A dimension a layer owns: the machine's value (detect) and what the installed build was made for (built).",
            (
                Field("description", _STRING, "What it is, for reports and tables.", since=2),
                Field(
                    "kind",
                    {"enum": ["version", "enum"]},
                    "version (the default) or enum (names such as a device generation).",
                    since=2,
                ),
                Field("values", _list_of(_VALUE), "Known values, as written.", since=2),
                Field(
                    "detect",
                    _list_of(_ref("detector")),
                    "The machine's value: detectors tried in order, an override variable first.",
                    since=2,
                ),
                Field(
                    "built",
                    _list_of(_ref("detector")),
                    "What the installed layer was built for: detectors tried in order; a file is relative to the "
                    "folder the layer is installed in (vllm_ascend/_build_info.py).",
                    since=2,
                ),
                Field(
                    "aliases",
                    _map_of(_list_of(_STRING)),
                    "Value -> shell patterns of the detected text that name it (A3: ['Ascend910_93*']).",
                    since=2,
                ),
                Field(
                    "changeable",
                    {"type": "boolean"},
                    "Whether a fix may ask the user to change it (default: true for versions, false for an enum).",
                    since=2,
                ),
            ),
        ),
        Struct(
            "layer-source",
            "Where a layer's releases come from when no index serves them: a git repository pip builds from.",
            (
                Field(
                    "git",
                    _STRING,
                    "The repository's URL (https://, ssh://, git://, file://; git+ optional).",
                    required=True,
                    since=2,
                ),
                Field(
                    "build-isolation",
                    {"type": "boolean"},
                    "false when the build needs what is installed (torch): pip is told --no-build-isolation, uv "
                    "no-build-isolation-package (default: true).",
                    since=2,
                ),
            ),
        ),
        Struct(
            "git-pin",
            "A package pinned by git commit: the repository, the commit or tag, and the release it stands for.",
            (
                Field("git", _STRING, "The repository's URL.", required=True, since=2),
                Field(
                    "ref",
                    {"type": ["string", "number"]},
                    "A commit (7 to 40 hex digits) or a tag.",
                    required=True,
                    since=2,
                ),
                Field(
                    "version",
                    _VERSION,
                    "The release the commit stands for (Spack's @git.REF=V): fixes and tables name it.",
                    required=True,
                    since=2,
                ),
            ),
        ),
        Struct(
            "layer-release",
            "One release of a layer and the versions it needs below it.",
            (
                Field("version", _VERSION, "The layer's version (the package version users install).", required=True),
                Field(
                    "ref",
                    {"type": ["string", "number"]},
                    "The tag or commit of the layer's source: this release is built from it (fixes install it so).",
                    since=2,
                ),
                Field("date", _DATE, "Release date."),
                Field("status", _STATUS, "Support status of the release.", required=True),
                Field("reason", _STRING, "Why the status is what it is (required for broken)."),
                Field("link", _URL, "An issue or announcement about the status."),
                Field("python", _PIN, "The Pythons it supports, e.g. '>=3.10,<3.13', or a list: ['3.8', '3.10']."),
                Field("torch", _PIN, "The torch it needs (a bare version means ==; a list: any of them)."),
                Field(
                    "adapter",
                    _PIN,
                    "The adapter versions it needs, as pip versions (2.10.0.post4; a list: any of them).",
                ),
                Field(
                    "adapter-line",
                    {"type": ["string", "number"]},
                    "Or the adapter's release line (26.1.0): the package of that line for the chosen torch.",
                ),
                Field(
                    "requires",
                    _map_of({"oneOf": [*_PIN["oneOf"], _ref("git-pin")]}),
                    "Other Python packages it pins: distribution name -> specifier (vllm: 0.23.0), a list: any of "
                    "them, or a git commit ({git: URL, ref: COMMIT-OR-TAG, version: V}).",
                ),
                Field(
                    "requires-if-installed",
                    _map_of(_PIN),
                    "Packages it pins only when they are installed (mooncake-transfer-engine beside vllm-ascend): "
                    "checked when present, ignored when absent, never installed by a fix.",
                    since=2,
                ),
                Field(
                    "dimensions",
                    _DIMENSION_SPECS,
                    "What it needs of the adapter's dimensions (cann: 9.1.0); never defines one.",
                ),
            ),
        ),
        Struct(
            "compatible-series",
            "A minimum with named compatible series, as a vendor states it: CANN 9.1.0 or later, or a release of "
            "the 8.5 or 9.0 series.",
            (
                Field("min", _VALUE, "The minimum value (9.1.0): it and every later one.", required=True, since=2),
                Field(
                    "compatible",
                    {"type": "array", "minItems": 1, "items": _SPEC},
                    "The older series also compatible, each a prefix with .* ('8.5.*') or a specifier set.",
                    required=True,
                    since=2,
                ),
            ),
        ),
        Struct(
            "cell",
            "A torch minor and a Python version.",
            (
                Field("torch", _MINOR, "A torch minor, e.g. '2.13'.", required=True),
                Field("python", _PYTHON, "A Python version, e.g. '3.11'.", required=True),
            ),
        ),
    )
}


def _struct_schema(struct: Struct) -> Dict[str, Any]:
    out: Dict[str, Any] = {
        "type": "object",
        "description": struct.description,
        "additionalProperties": False,
        "properties": {f.key: dict(f.json, description=f.description) for f in struct.fields},
    }
    if struct.required:
        out["required"] = list(struct.required)
    return out


def json_schema(schema_id: Optional[str] = None) -> Dict[str, Any]:
    """The JSON Schema (draft 2020-12) of ``compat.yaml``."""
    root = _struct_schema(STRUCTS["root"])
    defs = {name: _struct_schema(s) for name, s in STRUCTS.items() if name not in ("root", "layer-root")}
    defs["detector"]["oneOf"] = [
        {"required": [k]} for k in ("env", "file", "command", "distribution", "builtin", "preset")
    ]
    # version 1 requires what version 2 made optional
    root["allOf"] = [
        {
            "if": {"properties": {"schema-version": {"const": 1}}},
            "then": {
                "required": list(STRUCTS["root"].required_in(1)),
                "properties": {"adapter": {"required": list(STRUCTS["adapter"].required_in(1))}},
            },
        }
    ]
    # a layer's file (it has `layer:`) is read by its own root; an adapter's by the matrix root
    defs["matrix"] = root
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": schema_id or SCHEMA_ID,
        "title": "adapter-matrix compat.yaml",
        "description": STRUCTS["root"].description + " Or a layer's matrix (it has `layer:`).",
        "if": {"type": "object", "required": ["layer"]},
        "then": _struct_schema(STRUCTS["layer-root"]),
        "else": _ref("matrix"),
        "$defs": defs,
    }
