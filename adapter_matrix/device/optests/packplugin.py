"""The pytest plugin ``ops tests`` loads into each file's process (``-p``): no upstream file is edited.

Configured by the JSON file ``$ADAPTER_MATRIX_OPTESTS`` names (:func:`config_for`), it

1. activates the device before anything imports ``common_device_type`` (the way the
   adapter's users do: :func:`..opsweep.activation.activate`), unless this is the CPU control;
2. applies the override file (:mod:`.packoverrides`) to ``op_db``, ``module_db`` and
   ``optim_db`` in place, before the test modules import them: the op allow list, tolerance
   overrides, attribute changes (the device added to ``supports_fused_on``);
3. after collection: keeps this shard's tests (``index % K == I``) or the tests named for the
   control, and marks the override file's skips and expected failures;
4. writes each test's start and outcome to the log as it happens, one JSON line each, flushed:
   a file killed at its time limit, or by a segfault, keeps what it ran, and the runner knows
   which test was running.
"""

from __future__ import annotations

import faulthandler
import json
import os
import sys
from typing import Any, Dict, List, Mapping, Optional, TypedDict

import pytest

from .packconfig import CONFIG_ENV, PluginConfig
from .packoverrides import apply_to_dbs, matches, test_id

MESSAGE_CHARS = 400


class _TestState(TypedDict, total=False):
    """What a test's reports (setup, call, teardown) told so far."""

    seconds: float
    outcome: str
    error: Optional[str]


_config: Optional[PluginConfig] = None
_log: Any = None
_reports: Dict[str, _TestState] = {}


def _write(record: Mapping[str, object]) -> None:
    if _log is not None:
        _log.write(json.dumps(record) + "\n")
        _log.flush()


def pytest_configure(config: Any) -> None:
    global _config, _log
    path = os.environ.get(CONFIG_ENV)
    if not path:
        return
    with open(path, encoding="utf-8") as fh:
        _config = json.load(fh)
    _log = open(_config["log"], "a", encoding="utf-8")  # noqa: SIM115 - open for the whole session
    faulthandler.enable(file=sys.stderr, all_threads=False)  # a segfault names the Python frame
    import torch

    chosen = _config.get("activate")
    if chosen:
        from ..opsweep.activation import activate

        activate(torch, chosen, _config["device"])
    changed = apply_to_dbs(_config.get("overrides") or {}, _config["device"])
    _write({"configured": changed})


def _id(item: Any) -> str:
    cls = getattr(item, "cls", None)
    return test_id(item.name, cls.__name__ if cls is not None else item.parent.name)


def pytest_collection_modifyitems(session: Any, config: Any, items: List[Any]) -> None:
    if not _config:
        return
    index, count = _config.get("shard") or (0, 1)
    only = _config.get("only")
    overrides = _config.get("overrides") or {}
    kept, dropped = [], []
    for position, item in enumerate(items):
        tid = _id(item)
        if position % count != index or (only is not None and tid not in only):
            dropped.append(item)
            continue
        kept.append(item)
        skip = matches(overrides.get("skip") or {}, tid, _config["device"])
        if skip is not None:
            item.add_marker(pytest.mark.skip(reason=f"override: {skip}"))
        xfail = matches(overrides.get("xfail") or {}, tid, _config["device"])
        if xfail is not None:
            item.add_marker(pytest.mark.xfail(reason=f"override: {xfail}", strict=False))
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept
    _write({"collected": len(kept)})


def pytest_runtest_logstart(nodeid: str, location: Any) -> None:
    if _config:
        _reports[nodeid] = {}
        _write({"start": nodeid})


def _message(report: Any) -> str:
    crash = getattr(report.longrepr, "reprcrash", None)
    text = crash.message if crash is not None else str(report.longrepr)
    return " ".join(text.split())[:MESSAGE_CHARS]


def pytest_runtest_logreport(report: Any) -> None:
    if not _config:
        return
    state = _reports.setdefault(report.nodeid, {})
    state["seconds"] = state.get("seconds", 0.0) + getattr(report, "duration", 0.0)
    outcome: Optional[str] = None
    if report.when == "setup" and report.failed:
        outcome = "error"
    elif report.skipped and hasattr(report, "wasxfail"):
        outcome = "xfailed"
    elif report.skipped and "outcome" not in state:
        outcome = "skipped"
        crash = report.longrepr
        state["error"] = str(crash[2])[:MESSAGE_CHARS] if isinstance(crash, tuple) and len(crash) == 3 else None
    elif report.when == "call":
        outcome = "passed" if report.passed else "failed"
        if report.passed and getattr(report, "wasxfail", None) is not None:
            outcome = "xpassed"  # an expected failure of the override file that passes
    if report.failed and report.when != "teardown" and "error" not in state:
        state["error"] = _message(report)
    if outcome is not None and "outcome" not in state:
        state["outcome"] = outcome
    if report.when == "teardown":
        cls = report.nodeid.split("::")
        _write(
            {
                "test": report.nodeid,
                "id": test_id(cls[-1], cls[-2] if len(cls) > 2 else ""),
                "outcome": state.get("outcome", "error" if report.failed else "passed"),
                "error": state.get("error"),
                "seconds": round(state["seconds"], 3),
            }
        )
