"""pytorch.org's "Additional Platforms" entry, generated from the matrix.

pytorch.org lists vendor platforms from one JSON file and one Markdown page per vendor
(``_additional_platforms/ID.json`` and ``_get_started/additional_platforms/ID.md`` of
pytorch/pytorch.github.io). Its generator refuses a JSON file whose keys are not
``name``, ``support_channel``, ``stable`` and optionally ``preview``, whose ``stable`` or
``preview`` holds no OS key or another key than ``linux`` and ``windows``, and a page
longer than 200 lines; :func:`validate` applies the same limits (and asks for ``linux``,
which the integration guide requires), so a vendor can submit the files as written.

The commands are the selector's (``check``'s fixes for a fresh environment), joined with
``&&`` where a torch from its own index comes first, and pinned: the adapter exactly, torch
to one line (exactly when the release pins a patch). ``stable`` is the newest supported
combination for each OS whose torch and adapter are final releases (on x86_64 where the
matrix has an arch: pytorch.org's own Linux commands are for it); ``preview`` the newest
combination with a pre-release or nightly (IPEX 2.10.10+xpu pins torch 2.10.0.dev20251205),
else the newest experimental one of a newer release or torch line, when there is one.

The page's table has the newest build per torch line and per value of every other dimension
(each CANN, each arch: torch_npu 2.1.0.post17 for CANN 8.3.RC1, not the oldest CANN's .post6),
its verification snippet imports the adapter where torch cannot load it by itself (device
autoload came with torch 2.5), and its prerequisites name each driver-level dimension with the
link the matrix gives (``dimensions: NAME: link:``). The files are named after ``--id``
(pytorch.org's entry for torch_npu is ``ascend_npu``), else the distribution.
"""

from __future__ import annotations

import datetime as _dt
import json
import re
import shlex
from typing import Any, Dict, List, NamedTuple, Optional, Sequence, Tuple

from packaging.requirements import InvalidRequirement, Requirement
from packaging.version import Version

from ..errors import ChoiceError
from ..matrix.model import Matrix
from ..names import escaped_name
from ..urls import PYPI_PROJECT
from .selector_entries import SelectorEntry
from .views.lag import lag
from .views.selector import selector

__all__ = ["PlatformEntry", "platform_entry", "validate", "MAX_LINES", "pinned_problems"]

MAX_LINES = 200  # the generator's MAX_MARKDOWN_LINES
_REQUIRED = {"name", "support_channel", "stable"}
_ALLOWED = _REQUIRED | {"preview"}
_OS_KEYS = {"linux", "windows"}
_AUTOLOAD = Version("2.5")  # torch's device autoload (the torch.backends entry point) since 2.5
_ID = re.compile(r"^[a-z0-9][a-z0-9_]*$")  # a file name pytorch.org's generator takes as the id


class PlatformEntry(NamedTuple):
    """The two files, named after ``platform_id``: ``ID.json`` and ``ID.md``."""

    platform_id: str
    data: Dict[str, Any]
    markdown: str

    @property
    def json_text(self) -> str:
        return json.dumps(self.data, indent=2, ensure_ascii=False) + "\n"


def validate(data: Dict[str, Any], markdown: str) -> List[str]:
    """What pytorch.org's generator (and its guide's "linux is required") would refuse."""
    errors = []
    keys = set(data)
    if _REQUIRED - keys:
        errors.append(f"missing keys: {', '.join(sorted(_REQUIRED - keys))}")
    if keys - _ALLOWED:
        errors.append(f"unknown keys: {', '.join(sorted(keys - _ALLOWED))}")
    for name in ("name", "support_channel"):
        if name in data and (not isinstance(data[name], str) or not data[name].strip()):
            errors.append(f"{name} must be a non-empty string")
    for channel in ("stable", "preview"):
        commands = data.get(channel)
        if commands is None:
            continue
        if not isinstance(commands, dict) or not set(commands) & _OS_KEYS:
            errors.append(f"{channel} must be an object with a linux or windows command")
            continue
        if set(commands) - _OS_KEYS:
            errors.append(f"{channel} has unknown keys: {', '.join(sorted(set(commands) - _OS_KEYS))}")
        if "linux" not in commands:
            errors.append(f"{channel} has no linux command (the integration guide requires one)")
        errors += [f"{channel}.{os}: {p}" for os, command in commands.items() for p in pinned_problems(command)]
    lines = len(markdown.splitlines())
    if lines > MAX_LINES:
        errors.append(f"the page has {lines} lines, more than {MAX_LINES}")
    return errors


def pinned_problems(command: str) -> List[str]:
    """Why a published command is not pinned: a requirement without a version, a range
    wider than one torch line, or an adapter that is not exact."""
    problems = []
    for part in command.split("&&"):
        words = shlex.split(part)
        if "install" not in words:
            problems.append(f"not a pip install: {part.strip()}")
            continue
        args = words[words.index("install") + 1 :]
        skip = False
        for word in args:
            if skip:
                skip = False
                continue
            if word.startswith("-"):
                skip = "=" not in word and word in ("--index-url", "--extra-index-url", "--find-links", "-i", "-f")
                continue
            try:
                req = Requirement(word)
            except InvalidRequirement:
                problems.append(f"not a requirement: {word}")
                continue
            specs = list(req.specifier)
            if not specs:
                problems.append(f"{req.name} is not pinned")
            elif req.name != "torch" and not any(s.operator in ("==", "===") for s in specs):
                problems.append(f"{req.name} is not pinned to one version: {req.specifier}")
            elif req.name == "torch" and not any(s.operator in ("==", "===") for s in specs):
                lows = [Version(s.version) for s in specs if s.operator == ">="]
                highs = [Version(s.version) for s in specs if s.operator == "<"]
                one_line = (
                    len(lows) == 1 and len(highs) == 1 and highs[0].release[:2] == (lows[0].major, lows[0].minor + 1)
                )
                if not one_line:
                    problems.append(f"torch is not pinned to one line: {req.specifier}")
    return problems


def _command(entry: SelectorEntry) -> str:
    return " && ".join(entry["commands"])


def _os_of(entry: SelectorEntry) -> Tuple[str, ...]:
    """The OSes a combination serves: its os value, else Linux (pytorch.org's minimum)."""
    os = entry["dimensions"].get("os")
    if os is None:
        return ("linux",)
    return tuple(o for o in _OS_KEYS if o == os.lower() or os.lower().startswith(o))


def _preview_only(entry: SelectorEntry) -> bool:
    """A nightly or a pre-release, of torch or of the adapter: pytorch.org's ``preview``, never ``stable``."""
    return Version(entry["torch"]).is_prerelease or Version(entry["release"]).is_prerelease


def _x86_first(entries: Sequence[SelectorEntry]) -> List[SelectorEntry]:
    """``entries`` (best first) with, among equals otherwise, x86_64 first: pytorch.org's own
    Linux commands are for it (a stable sort keeps the rest of the order)."""
    return sorted(entries, key=lambda e: e["dimensions"].get("arch", "x86_64") != "x86_64")


def _pick(entries: Sequence[SelectorEntry], status: str, os: str, preview: bool = False) -> Optional[SelectorEntry]:
    # entries are best first: the newest torch line, then release, then Python
    usable = [e for e in entries if e["commands"] and os in _os_of(e) and _preview_only(e) == preview]
    best = [e for e in usable if e["status"] == status]
    if not best:
        return None
    top = [
        e
        for e in best
        if (e["torch_line"], e["release"], e["python"])
        == tuple(best[0][k] for k in ("torch_line", "release", "python"))
    ]
    return _x86_first(top)[0]


def _newest_per_line(supported: Sequence[SelectorEntry], dims: Sequence[str]) -> List[SelectorEntry]:
    """One combination per torch line and value of every other dimension (each CANN, each
    arch, each OS): the newest build, on its newest Python; torch lines newest first."""
    best: Dict[Tuple[str, ...], SelectorEntry] = {}
    for e in supported:
        key = (e["torch_line"], *(e["dimensions"].get(d, "") for d in dims))
        kept = best.get(key)
        if kept is None or (Version(e["release"]), Version(e["python"].rstrip("t"))) > (
            Version(kept["release"]),
            Version(kept["python"].rstrip("t")),
        ):
            best[key] = e
    return sorted(best.values(), key=lambda e: (Version(e["torch_line"]), Version(e["release"])), reverse=True)


def _python_range(pythons: Sequence[str]) -> str:
    plain = sorted((p for p in set(pythons) if not p.endswith("t")), key=Version)
    if not plain:
        return ", ".join(sorted(set(pythons)))
    return f"{plain[0]} to {plain[-1]}" if len(plain) > 1 else plain[0]


def _markdown(matrix: Matrix, name: str, support: str, entries: Sequence[SelectorEntry], stable: SelectorEntry) -> str:
    dist, device = matrix.adapter.distribution, matrix.adapter.device
    supported = [e for e in entries if e["status"] == "supported" and e["commands"]]
    pythons = [e["python"] for e in supported if e["release"] == stable["release"]]
    lines = [
        f"# Installing on {name}",
        "",
        f"`{dist}` brings the `{device}` device to PyTorch. The commands below are pinned: each installs",
        "one adapter release with the torch it was tested with. They are generated from the adapter's",
        "compatibility matrix (`compat.yaml`), as are its other published tables.",
        "",
        "## Prerequisites",
        "",
        "### Software Requirements",
        "",
        f"* Python {_python_range(pythons)} (for {dist} {stable['release']})",
    ]
    constrained = [d.name for d in matrix.dimensions if any(d.name in e["dimensions"] for e in supported)]
    for dim in matrix.dimensions:  # the toolkit, the driver, the hardware: what pip does not install
        if dim.name in ("os", "arch"):
            continue
        value = stable["dimensions"].get(dim.name)
        what = f" ({dim.description})" if dim.description else ""
        where = f" ([get it]({dim.link}))" if dim.link else ""
        if value is not None:
            step = "installed first: it is not a pip package" if dim.changeable else "on the machine"
            lines.append(f"* {dim.name} {value}{what}, {step}{where}")
        elif dim.values:
            named = ", ".join(str(v) for v in dim.values if not v.absent)
            where_it_is = "installed first" if dim.changeable else "the machine's"
            lines.append(f"* {dim.name}{what}: one of {named}, {where_it_is}{where}")
    per_build = [name for name in constrained if name not in ("os", "arch")]
    if per_build:
        lines += [
            "",
            f"Each {dist} build is for one {' and one '.join(per_build)}: the table below names the build for each.",
        ]
    lines += [
        "",
        "## Installation",
        "",
        "### pip",
        "",
        f"The newest supported combination ({dist} {stable['release']}, torch {stable['torch']}):",
        "",
        "```bash",
        *stable["commands"],
        "```",
        "",
        "Every torch line, with the newest supported build for each "
        + (", ".join(d.name for d in matrix.dimensions if any(d.name in e["dimensions"] for e in supported)) or "line")
        + ":",
        "",
    ]
    dims = constrained
    header = ["torch", dist, *dims, "Python", "command"]
    lines += ["| " + " | ".join(header) + " |", "|" + " --- |" * len(header)]
    for e in _newest_per_line(supported, dims):
        same = [
            x["python"]
            for x in supported
            if x["release"] == e["release"]
            and x["torch_line"] == e["torch_line"]
            and x["dimensions"] == e["dimensions"]
        ]
        cells = [e["torch_line"], e["release"], *(e["dimensions"].get(d, "any") for d in dims), _python_range(same)]
        lines.append("| " + " | ".join(cells + [" && ".join(f"`{c}`" for c in e["commands"])]) + " |")
        if len(lines) > MAX_LINES - 30:  # leave room for the rest of the page
            break
    module = escaped_name(dist)
    oldest = min((Version(e["torch_line"]) for e in supported), default=_AUTOLOAD)
    lines += [
        "",
        "## Verification",
        "",
        "```python",
        "import torch",
    ]
    if oldest < _AUTOLOAD:  # no device autoload before torch 2.5: the adapter is imported by hand
        lines.append(f"import {module}  # torch 2.5 and later load it by themselves; older torch needs this line")
    lines += [
        "",
        f'x = torch.ones(2, 2, device="{device}")',
        "print(x @ x)",
        "```",
        "",
        f'The output is a 2 x 2 tensor of twos on `device="{device}:0"`.',
        "",
        *_lag_notes(matrix),
        "## Documentation",
        "",
        f"* Support: {support}",
        f"* PyPI: {PYPI_PROJECT.format(name=dist)}",
    ]
    return "\n".join(lines) + "\n"


def _lag_notes(matrix: Matrix, count: int = 4) -> List[str]:
    """How soon the adapter followed the newest torch releases (``table --view lag``): the
    newest ``count`` lines a release claims, in days; nothing when none does."""
    rows = [e for e in lag(matrix).data["lag"] if e["first_release"]["release"] is not None][:count]
    if not rows:
        return []

    def said(side: Dict[str, Any]) -> str:
        return f"{side['release']} ({side['days']} days)" if side["release"] is not None else "not yet"

    out = [
        "## Release lag",
        "",
        "Days from each torch release to the adapter's first release claiming it and its first supporting it:",
        "",
        "| torch | released | first release | first supported |",
        "| --- | --- | --- | --- |",
    ]
    out += [
        f"| {e['torch_line']} | {e['torch_released']} | {said(e['first_release'])} | {said(e['first_supported'])} |"
        for e in rows
    ]
    return out + [""]


def platform_entry(
    matrix: Matrix,
    support_channel: str,
    name: Optional[str] = None,
    today: Optional[_dt.date] = None,
    platform_id: Optional[str] = None,
) -> PlatformEntry:
    """The JSON data and the Markdown page, named ``platform_id`` (pytorch.org's id of the
    entry: ``ascend_npu``; default the distribution's name with ``_``); ``ValueError`` when
    the matrix has no supported combination for Linux or the result would not validate."""
    if not support_channel or not re.match(r"https?://", support_channel):
        raise ChoiceError("support-channel", "URL is needed: where users get help (pytorch.org requires one)")
    if platform_id is not None and not _ID.match(platform_id):
        raise ChoiceError(
            "id", f"{platform_id!r} is not an id pytorch.org takes: lower-case letters, digits and _ (ascend_npu)"
        )
    entries: List[SelectorEntry] = selector(matrix, today=today, picks=False).data["combinations"]
    name = name or matrix.adapter.distribution
    data: Dict[str, Any] = {"name": name, "support_channel": support_channel}
    stable = {os: e for os in ("linux", "windows") if (e := _pick(entries, "supported", os)) is not None}
    if "linux" not in stable:
        raise ValueError(f"{matrix.adapter.distribution} has no supported combination for Linux: nothing to publish")
    data["stable"] = {os: _command(e) for os, e in stable.items()}
    preview = {}
    for os, best in stable.items():
        # a nightly or pre-release first (supported or experimental), else a newer experimental one
        newer = (
            _pick(entries, "supported", os, preview=True)
            or _pick(entries, "experimental", os, preview=True)
            or _pick(
                [
                    e
                    for e in entries
                    if Version(e["release"]) > Version(best["release"])
                    or Version(e["torch_line"]) > Version(best["torch_line"])
                ],
                "experimental",
                os,
            )
        )
        if newer is not None:
            preview[os] = _command(newer)
    if "linux" in preview:
        data["preview"] = preview
    markdown = _markdown(matrix, name, support_channel, entries, stable["linux"])
    errors = validate(data, markdown)
    if errors:  # a bug here, not the user's: say what pytorch.org would refuse
        raise ValueError("the platform entry would not validate: " + "; ".join(errors))
    platform_id = platform_id or re.sub(r"[^a-z0-9]+", "_", matrix.adapter.distribution.lower()).strip("_")
    return PlatformEntry(platform_id, data, markdown)
