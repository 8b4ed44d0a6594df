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
combination for each OS; ``preview`` the newest experimental one of a newer release or
torch line, when there is one.
"""

from __future__ import annotations

import datetime as _dt
import json
import re
import shlex
from typing import Any, Dict, List, NamedTuple, Optional, Sequence, Tuple

from packaging.requirements import InvalidRequirement, Requirement
from packaging.version import Version

from ..matrix.model import Matrix
from .views.selector import selector

__all__ = ["PlatformEntry", "platform_entry", "validate", "MAX_LINES", "pinned_problems"]

MAX_LINES = 200  # the generator's MAX_MARKDOWN_LINES
_REQUIRED = {"name", "support_channel", "stable"}
_ALLOWED = _REQUIRED | {"preview"}
_OS_KEYS = {"linux", "windows"}


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


def _command(entry: Dict[str, Any]) -> str:
    return " && ".join(entry["commands"])


def _os_of(entry: Dict[str, Any]) -> Tuple[str, ...]:
    """The OSes a combination serves: its os value, else Linux (pytorch.org's minimum)."""
    os = entry["dimensions"].get("os")
    if os is None:
        return ("linux",)
    return tuple(o for o in _OS_KEYS if o == os.lower() or os.lower().startswith(o))


def _pick(entries: Sequence[Dict[str, Any]], status: str, os: str) -> Optional[Dict[str, Any]]:
    # entries are best first: the newest torch line, then release, then Python
    return next((e for e in entries if e["status"] == status and e["commands"] and os in _os_of(e)), None)


def _python_range(pythons: Sequence[str]) -> str:
    plain = sorted((p for p in set(pythons) if not p.endswith("t")), key=Version)
    if not plain:
        return ", ".join(sorted(set(pythons)))
    return f"{plain[0]} to {plain[-1]}" if len(plain) > 1 else plain[0]


def _markdown(
    matrix: Matrix, name: str, support: str, entries: Sequence[Dict[str, Any]], stable: Dict[str, Any]
) -> str:
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
    for dim in matrix.dimensions:
        value = stable["dimensions"].get(dim.name)
        if value is None or dim.name == "os":
            continue
        what = f" ({dim.description})" if getattr(dim, "description", None) else ""
        step = "installed first: it is not a pip package" if dim.changeable else "on the machine"
        lines.append(f"* {dim.name} {value}{what}, {step}")
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
        "Other torch lines, each with the newest supported release:",
        "",
    ]
    dims = [d.name for d in matrix.dimensions if any(d.name in e["dimensions"] for e in supported)]
    header = ["torch", dist, *dims, "Python", "command"]
    lines += ["| " + " | ".join(header) + " |", "|" + " --- |" * len(header)]
    seen = set()
    for e in supported:  # best first: one row per torch line and OS
        key = (e["torch_line"], e["dimensions"].get("os"))
        if key in seen:
            continue
        seen.add(key)
        same = [x["python"] for x in supported if x["release"] == e["release"] and x["torch_line"] == e["torch_line"]]
        cells = [e["torch_line"], e["release"], *(e["dimensions"].get(d, "any") for d in dims), _python_range(same)]
        lines.append("| " + " | ".join(cells + [" && ".join(f"`{c}`" for c in e["commands"])]) + " |")
        if len(lines) > MAX_LINES - 30:  # leave room for the rest of the page
            break
    lines += [
        "",
        "## Verification",
        "",
        "```python",
        "import torch",
        "",
        f'x = torch.ones(2, 2, device="{device}")',
        "print(x @ x)",
        "```",
        "",
        f'The output is a 2 x 2 tensor of twos on `device="{device}:0"`.',
        "",
        "## Documentation",
        "",
        f"* Support: {support}",
        f"* PyPI: https://pypi.org/project/{dist}/",
    ]
    return "\n".join(lines) + "\n"


def platform_entry(
    matrix: Matrix,
    support_channel: str,
    name: Optional[str] = None,
    today: Optional[_dt.date] = None,
) -> PlatformEntry:
    """The JSON data and the Markdown page; ``ValueError`` when the matrix has no supported
    combination for Linux or the result would not validate."""
    if not support_channel or not re.match(r"https?://", support_channel):
        raise ValueError(
            "the platform view needs --support-channel URL: where users get help (pytorch.org requires one)"
        )
    entries = selector(matrix, today=today, picks=False).data["combinations"]
    name = name or matrix.adapter.distribution
    data: Dict[str, Any] = {"name": name, "support_channel": support_channel}
    stable = {os: e for os in ("linux", "windows") if (e := _pick(entries, "supported", os)) is not None}
    if "linux" not in stable:
        raise ValueError(f"{matrix.adapter.distribution} has no supported combination for Linux: nothing to publish")
    data["stable"] = {os: _command(e) for os, e in stable.items()}
    preview = {}
    for os, best in stable.items():
        newer = _pick(
            [
                e
                for e in entries
                if Version(e["release"]) > Version(best["release"])
                or Version(e["torch_line"]) > Version(best["torch_line"])
            ],
            "experimental",
            os,
        )
        if newer is not None:
            preview[os] = _command(newer)
    if "linux" in preview:
        data["preview"] = preview
    markdown = _markdown(matrix, name, support_channel, entries, stable["linux"])
    errors = validate(data, markdown)
    if errors:  # a bug here, not the user's: say what pytorch.org would refuse
        raise ValueError("the platform entry would not validate: " + "; ".join(errors))
    platform_id = re.sub(r"[^a-z0-9]+", "_", matrix.adapter.distribution.lower()).strip("_")
    return PlatformEntry(platform_id, data, markdown)
