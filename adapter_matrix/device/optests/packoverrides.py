"""An adapter's override file for PyTorch's test files: what the run changes, never the files.

Next to the adapter's ``compat.yaml``: ``op-tests/overrides.yaml`` (every torch line) and
``op-tests/overrides-X.Y.yaml`` (one line; its entries after the general file's), or
``ops tests --overrides FILE``::

    schema: 1
    skip:                       # test id -> reason: not run (a test that hangs or corrupts the device)
      "test_foo (__main__.TestBarPRIVATEUSE1)": "hangs the device queue"
    xfail:                      # test id -> reason: must fail (pytest's xfail; a pass says so)
      "test_matches_cpu_sort (__main__.TestPackOps)": "sort is not stable on the device"
    ops: [add, mul]             # op_db allow list (OpInfo name or full name)
    tolerances:                 # toleranceOverride DecorateInfos for the device
      - {op: exp, dtypes: [float32], atol: 1.0e-4, rtol: 1.0e-4, test: TestPackOps.test_matches_cpu}
    infos:                      # per-OpInfo / ModuleInfo / OptimizerInfo attribute changes
      - {optim: Adam, add: {supports_fused_on: ["{device}"]}}

A test id is written as PyTorch's disabled-tests keys are, ``method (module.Class)``, and
matches as PyTorch's ``check_if_enable`` does: the test's class starts with the key's class
and the method is the test's, or the test's without its device and dtype suffix.
``{device}`` in a value is the adapter's device name. Everything here is applied by
:mod:`.packplugin` inside each file's process before the test modules import.
"""

from __future__ import annotations

import os
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, TypedDict, cast

from ...matrix.diagnostics import Diagnostic, Diagnostics, Mark, display_path
from ...matrix.source import Mapping as MapNode
from ...matrix.source import Node, Scalar, parse
from ...matrix.source import Sequence as SeqNode
from ..opsweep.expected import ExpectationsError

__all__ = ["FOLDER", "KEYS", "paths_for", "load", "merge", "test_id", "split_id", "matches", "apply_to_dbs"]

FOLDER = "op-tests"
KEYS = ("schema", "skip", "xfail", "ops", "tolerances", "infos")
INFO_KINDS = ("op", "module", "optim")


class _ToleranceBase(TypedDict):
    op: str


class Tolerance(_ToleranceBase, total=False):
    """A ``tolerances`` entry: the op's atol/rtol on the device, for some dtypes or test."""

    dtypes: List[str]
    atol: float
    rtol: float
    test: str  # ``Class.method``, or a class


class Overrides(TypedDict, total=False):
    """An override file's data, as :func:`load` validates it (``schema`` dropped). An ``infos``
    entry names its db entry (op, module or optim) and maps attributes to values (``set``) or to
    values to append (``add``): the OpInfo attributes are torch's, so they are kept as objects."""

    skip: Dict[str, str]  # test id -> reason
    xfail: Dict[str, str]
    ops: List[str]  # the OpInfos kept (an allow list)
    tolerances: List[Tolerance]
    infos: List[Dict[str, object]]


def paths_for(matrix_dir: str, line: Optional[str]) -> List[str]:
    """The override files next to the matrix that exist: the general one, then the line's."""
    names = ["overrides.yaml"] + ([f"overrides-{line}.yaml"] if line else [])
    return [p for p in (os.path.join(matrix_dir, FOLDER, n) for n in names) if os.path.exists(p)]


def _plain(node: Optional[Node]) -> Any:
    if node is None:
        return None
    if isinstance(node, Scalar):
        if node.is_null:
            return None
        if not node.quoted and node.tag.endswith(":float"):
            return float(node.text)
        if not node.quoted and node.tag.endswith(":int"):
            return int(node.text)
        return node.text
    if isinstance(node, MapNode):
        return {k.text: _plain(v) for k, v in node}
    return [_plain(v) for v in node]


def load(path: str) -> Overrides:
    """The override file as plain data for the plugin; :class:`ExpectationsError` lists every problem."""
    name = display_path(path)
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    except OSError as exc:
        raise ExpectationsError([Diagnostic(Mark(name, 0, 0), f"cannot read the overrides: {exc.strerror}")]) from None
    tree, problems = parse(text, name)
    found = Diagnostics()
    found.items.extend(problems)
    out: Dict[str, object] = {}
    if not isinstance(tree, MapNode):
        found.error(Mark(name, 1, 1), "an override file is a mapping", "start it with `schema: 1`")
        raise ExpectationsError(found.items)
    for key, value in tree:
        if key.text not in KEYS:
            found.error(key.mark, f"unknown key {key.text!r}", f"allowed: {', '.join(KEYS)}")
            continue
        plain = _plain(value)
        if key.text == "schema" and plain != 1:
            found.error(key.mark, "schema: expected 1")
        elif key.text in ("skip", "xfail"):
            if not isinstance(plain, dict) or not all(isinstance(v, str) for v in plain.values()):
                found.error(key.mark, f"{key.text}: a mapping of test id to reason", '"test_x (__main__.TestY)": "why"')
            else:
                for tid in plain:
                    if split_id(tid) is None:
                        found.error(
                            tree.key_mark(key.text),
                            f"{key.text}: {tid!r} is not a test id",
                            "write it as `method (module.Class)`",
                        )
        elif key.text == "ops" and not (isinstance(plain, list) and all(isinstance(v, str) for v in plain)):
            found.error(key.mark, "ops: a list of OpInfo names")
        elif key.text == "tolerances":
            for item, entry in zip(value if isinstance(value, SeqNode) else (), plain or ()):
                if not (
                    isinstance(entry, dict)
                    and isinstance(entry.get("op"), str)
                    and entry.keys() <= {"op", "dtypes", "atol", "rtol", "test"}
                ):
                    found.error(item.mark, "a tolerance names `op` and any of dtypes, atol, rtol, test")
                elif not isinstance(entry.get("atol", 0.0), (int, float)) or not isinstance(
                    entry.get("rtol", 0.0), (int, float)
                ):
                    found.error(item.mark, "atol and rtol are numbers")
        elif key.text == "infos":
            for item, entry in zip(value if isinstance(value, SeqNode) else (), plain or ()):
                kinds = [k for k in INFO_KINDS if isinstance(entry, dict) and k in entry]
                if len(kinds) != 1 or not entry.keys() <= {*INFO_KINDS, "set", "add"}:
                    found.error(item.mark, "an info change names one of op, module, optim, and `set` or `add`")
                elif not all(isinstance(entry.get(k, {}), dict) for k in ("set", "add")):
                    found.error(item.mark, "`set` and `add` map an attribute to its value (`add`: values to append)")
        out[key.text] = plain
    if found.items:
        raise ExpectationsError(found.items)
    out.pop("schema", None)
    return cast(Overrides, out)  # validated above


def merge(parts: Sequence[Overrides]) -> Overrides:
    """Several override files as one: mappings joined, lists concatenated, in order."""
    out: Dict[str, object] = {}
    for part in parts:
        for key, value in part.items():
            have = out.get(key)
            if isinstance(value, dict):
                out[key] = {**(have if isinstance(have, dict) else {}), **value}
            elif key == "ops" and isinstance(have, list) and isinstance(value, list):
                out[key] = [v for v in have if v in value]  # both allow lists hold
            else:
                out[key] = [*(have if isinstance(have, list) else []), *cast(List[object], value or [])]
    return cast(Overrides, out)  # the keys and shapes of the parts'


# -- test ids ---------------------------------------------------------------------------------


def test_id(method: str, cls: str) -> str:
    """A test as PyTorch's disabled-tests keys name it."""
    return f"{method} (__main__.{cls})"


def split_id(tid: str) -> Optional[Tuple[str, str]]:
    """(method, class) of ``method (module.Class)``; None when it is not written so."""
    method, _, rest = tid.partition(" ")
    if not method or not rest.startswith("(") or not rest.endswith(")"):
        return None
    return method, rest[1:-1].rpartition(".")[2]


def _sanitized(method: str, device: str) -> str:
    head, sep, _ = method.rpartition(f"_{device}")
    return head if sep else method


def matches(entries: Mapping[str, Any], tid: str, device: str) -> Optional[Any]:
    """The value of the first key of ``entries`` that covers the test ``tid`` (check_if_enable's rule)."""
    parts = split_id(tid)
    if parts is None:
        return None
    method, cls = parts
    names = {method, _sanitized(method, device)}
    for key, value in entries.items():
        kparts = split_id(key)
        if kparts is not None and kparts[0] in names and cls.startswith(kparts[1]):
            return value
    return None


# -- applying (inside the file's process) -----------------------------------------------------


def _expand(value: Any, device: str) -> Any:
    if isinstance(value, str):
        return value.replace("{device}", device)
    if isinstance(value, list):
        return [_expand(v, device) for v in value]
    return value


def _infos(kind: str) -> List[Any]:
    if kind == "op":
        from torch.testing._internal.common_methods_invocations import op_db

        return list(op_db)
    if kind == "module":
        from torch.testing._internal.common_modules import module_db

        return list(module_db)
    from torch.testing._internal.common_optimizers import optim_db

    return list(optim_db)


def _name_of(kind: str, info: Any) -> Tuple[str, ...]:
    if kind == "op":
        return (info.name, getattr(info, "full_name", info.name))
    cls = info.module_cls if kind == "module" else info.optim_cls
    short = cls.__name__
    return (short, f"nn.{short}", f"{cls.__module__}.{short}")


def apply_to_dbs(overrides: Overrides, device: str) -> List[str]:
    """Change op_db, module_db and optim_db in place as the overrides say; what changed, in words."""
    changed: List[str] = []
    allow = overrides.get("ops")
    if allow is not None:
        from torch.testing._internal.common_methods_invocations import op_db

        before = len(op_db)
        op_db[:] = [op for op in op_db if op.name in allow or getattr(op, "full_name", op.name) in allow]
        changed.append(f"op allow list keeps {len(op_db)} of {before} OpInfos")
    tolerances = overrides.get("tolerances") or []
    if tolerances:
        import torch
        from torch.testing._internal.common_device_type import tol, toleranceOverride
        from torch.testing._internal.opinfo.core import DecorateInfo

        ops = _infos("op")
        for entry in tolerances:
            dtypes = [getattr(torch, d) for d in entry.get("dtypes") or ("float32",)]
            spec = {d: tol(atol=float(entry.get("atol", 0.0)), rtol=float(entry.get("rtol", 0.0))) for d in dtypes}
            cls, _, test = (entry.get("test") or "").partition(".")
            decorate = DecorateInfo(toleranceOverride(spec), cls or None, test or None, device_type=device)
            hits = [op for op in ops if entry["op"] in _name_of("op", op)]
            for op in hits:
                op.decorators = (*op.decorators, decorate)
            changed.append(
                f"tolerance of {entry['op']} ({len(hits)} OpInfos): atol {entry.get('atol', 0)}, rtol {entry.get('rtol', 0)}"
            )
    for change in overrides.get("infos") or []:
        kind = next(k for k in INFO_KINDS if k in change)
        to_set = cast(Dict[str, object], change.get("set") or {})
        to_add = cast(Dict[str, object], change.get("add") or {})
        hits = [info for info in _infos(kind) if change[kind] in _name_of(kind, info)]
        for info in hits:
            for attr, value in to_set.items():
                setattr(info, attr, _expand(value, device))
            for attr, values in to_add.items():
                current = getattr(info, attr)
                added = [v for v in _expand(values, device) if v not in current]
                setattr(info, attr, type(current)([*current, *added]) if isinstance(current, (tuple, list)) else added)
        what = ", ".join(
            [
                *(f"{a} = {v}" for a, v in to_set.items()),
                *(f"{a} += {_expand(v, device)}" for a, v in to_add.items()),
            ]
        )
        changed.append(f"{kind} {change[kind]} ({len(hits)} infos): {what}")
    return changed
