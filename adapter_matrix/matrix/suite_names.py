"""The suite groups a cell can report, for ``evidence: suites:`` to be checked against.

A record counts only when it ran every group ``evidence: suites:`` names, so a name no cell
reports (``conformence``) makes every record stale for good, without a word. The groups are
those :mod:`adapter_matrix.ci.suites` counts: the conformance suite's own tests
(``conformance``), the suites that are not pytest runs (``ops``: the op sweep and PyTorch's
op tests), the torchvision tests (``companions``), and an adapter's own: each folder of its
test suites (``tests/conformance/workloads`` is ``workloads``, a ``Pytest("tests")`` file
directly in ``tests/`` is ``tests``) and each ``@pytest.mark.suite("NAME")`` or
``write_summary("NAME", ...)`` in them. Those suites are the evidence ``sources:`` (the
adapter and the suites that test it), read here without importing anything.
"""

from __future__ import annotations

import os
import re
from typing import List, Sequence

__all__ = ["BUILT_IN_GROUPS", "suite_groups"]

BUILT_IN_GROUPS = ("conformance", "ops", "companions", "workloads")
# a group named in a test file: @pytest.mark.suite("NAME"), write_summary("NAME", ...)
_NAMED = re.compile(r"""(?:\.suite|write_summary)\(\s*["']([^"'\n]+)["']""")
_SKIP = {"__pycache__", "node_modules", "build", "dist"}
_MOST_FILES = 5000  # a source folder is a package and its tests; a huge tree is read no further


def suite_groups(base: str, sources: Sequence[str]) -> List[str]:
    """The groups a cell can report, read from the evidence ``sources`` (relative to ``base``,
    the matrix's folder); empty when no folder of them is on disk (a matrix installed without
    its suites) or they are too large to read: then nothing can be said."""
    found = dict.fromkeys(BUILT_IN_GROUPS)
    seen_any, files = False, 0
    for source in sources:
        top = os.path.join(base or ".", source)
        if not os.path.isdir(top):  # a file (setup.py) holds no suite
            continue
        seen_any = True
        found[os.path.basename(os.path.normpath(top))] = None
        for folder, dirs, names in os.walk(top):
            dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in _SKIP)
            found.update(dict.fromkeys(dirs))
            for name in names:
                files += 1
                if files > _MOST_FILES:
                    return []  # not read to the end: a name may be further on
                if name.endswith(".py"):
                    found.update(dict.fromkeys(_named(os.path.join(folder, name))))
    return list(found) if seen_any else []


def _named(path: str) -> List[str]:
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            return _NAMED.findall(fh.read(1 << 20))
    except OSError:
        return []
