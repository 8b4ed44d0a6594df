"""A detector template composes named groups under the same time bound as a plain regex."""

from __future__ import annotations

import time

from adapter_matrix.check.detectors import run_detector
from adapter_matrix.check.guard import _Probe


def test_a_template_composes_the_os_from_its_named_groups(tmp_path):
    release = tmp_path / "os-release"
    release.write_text('NAME="Ubuntu"\nVERSION_ID="22.04"\nID=ubuntu\n')
    probe = _Probe("file", (str(release),), r'^ID=(?P<id>\S+)|^VERSION_ID="?(?P<ver>[^"\s]+)', 5.0, "{id}{ver}")
    assert run_detector(probe) == ("ubuntu22.04", None)


def test_a_hostile_regex_in_a_template_ends_in_bounded_time(monkeypatch):
    monkeypatch.setenv("HOSTILE", "a" * 80 + "b")
    probe = _Probe("env", ("HOSTILE",), r"^(?P<v>(a|aa)+)$", 5.0, "{v}")
    start = time.monotonic()
    value, why = run_detector(probe)
    assert value is None and "took longer than" in why
    assert time.monotonic() - start < 5
