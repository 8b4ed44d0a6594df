"""Queries on the model: cells, statuses, shims, verdicts and fixes."""

from __future__ import annotations

import datetime as dt

import pytest
from packaging.version import Version

from adapter_matrix.check.judgment import Environment
from adapter_matrix.check.verdict import verdict
from adapter_matrix.matrix.loader import load, load_text
from adapter_matrix.matrix.model import PythonVersion, Status, Value
from adapter_matrix.matrix.queries import cells, shim_for

from .helpers import FIXTURES, REPO

TODAY = dt.date(2026, 1, 1)


@pytest.fixture(scope="module")
def minimal():
    return load(FIXTURES / "minimal.yaml").matrix


def env(python="3.11", torch=None, adapter=None, **dims):
    return Environment(
        python=PythonVersion.parse(python),
        torch=Version(torch) if torch else None,
        adapter=Version(adapter) if adapter else None,
        dimensions=tuple((k, Value.of(v, "version") if v else None) for k, v in dims.items()),
    )


def test_cells_intersect_claims_with_wheels(minimal):
    got = {(str(c.release.version), str(c.line.minor), str(c.python)) for c in cells(minimal, today=TODAY)}
    # 1.0.0: torch 2.1-2.2 x Python >=3.8 (2.1 has no 3.12 wheel)
    assert ("1.0.0", "2.1", "3.8") in got and ("1.0.0", "2.2", "3.12") in got
    assert ("1.0.0", "2.1", "3.12") not in got
    # 2.0.0: torch 2.2-2.3 x Python >=3.9
    assert ("2.0.0", "2.2", "3.8") not in got and ("2.0.0", "2.3", "3.12") in got
    assert len(got) == 4 + 5 + 4 + 4


def test_cell_torch_is_the_newest_claimed_patch(minimal):
    by_key = {(str(c.release.version), str(c.line.minor)): c.torch for c in cells(minimal, today=TODAY)}
    assert by_key[("1.0.0", "2.1")] == Version("2.1.2")
    assert by_key[("2.0.0", "2.3")] == Version("2.3.1")


def test_exception_overrides_status_first_match(minimal):
    statuses = {
        (str(c.release.version), str(c.line.minor), str(c.python)): c.status for c in cells(minimal, today=TODAY)
    }
    assert statuses[("2.0.0", "2.3", "3.12")] is Status.EXPERIMENTAL
    assert statuses[("2.0.0", "2.3", "3.11")] is Status.SUPPORTED
    assert statuses[("1.0.0", "2.1", "3.8")] is Status.DEPRECATED


def test_shim_for_ignores_local_labels(minimal):
    assert shim_for(minimal, Version("2.2.2+cpu")).module == "shims.torch_2_1"
    assert shim_for(minimal, Version("2.3.0")).module == "shims.torch_2_3"
    assert shim_for(minimal, Version("2.4.0")) is None


def test_supported_verdict_names_shim_and_rows(minimal):
    v = verdict(minimal, env("3.11", "2.3.1+cpu", "2.0.0"), TODAY)
    assert v.outcome is Status.SUPPORTED and v.exit_code == 0
    assert v.shim.module == "shims.torch_2_3"
    assert any(m.line == minimal.release(Version("2.0.0")).mark.line for m in v.decided_by)
    assert v.fixes == ()


def test_experimental_and_deprecated_exit_3_with_reason(minimal):
    v = verdict(minimal, env("3.12", "2.3.1", "2.0.0"), TODAY)
    assert v.outcome is Status.EXPERIMENTAL and v.exit_code == 3
    assert v.reasons == ("not tested on 3.12 yet",)
    v = verdict(minimal, env("3.10", "2.1.2", "1.0.0"), TODAY)
    assert v.outcome is Status.DEPRECATED and v.exit_code == 3


def test_unknown_torch_gets_nearest_supported_torch_as_a_pip_command(minimal):
    v = verdict(minimal, env("3.11", "2.0.1", "2.0.0"), TODAY)
    assert v.outcome is Status.UNSUPPORTED and v.exit_code == 1
    assert "not a torch release this matrix describes" in v.reasons[0]
    assert v.fixes[0].commands == ("pip install 'torch>=2.2,<2.3'",)
    assert v.fixes[0].changes == ("torch",)


def test_release_that_does_not_claim_torch_suggests_the_release_that_does(minimal):
    v = verdict(minimal, env("3.11", "2.1.2", "2.0.0"), TODAY)
    assert v.outcome is Status.UNSUPPORTED
    # first: keep the adapter, move torch to the nearest line it supports
    assert v.fixes[0].changes == ("torch",)
    assert v.fixes[0].commands == ("pip install 'torch>=2.2,<2.3'",)
    # then: keep torch, install the (deprecated) release that claims it
    assert v.fixes[1].changes == ("adapter",)
    assert v.fixes[1].commands == ("pip install 'demo-adapter==1.0.0'",)
    assert v.fixes[1].summary.startswith("downgrade demo-adapter from 2.0.0 to 1.0.0 (deprecated:")
    assert v.fixes[1].diff == ("- demo-adapter==2.0.0", "+ demo-adapter==1.0.0")  # as uv says it


def test_python_without_wheel_is_unsupported(minimal):
    v = verdict(minimal, env("3.12", "2.1.2", "1.0.0"), TODAY)
    assert v.outcome is Status.UNSUPPORTED
    assert v.reasons == ("torch 2.1 has no wheel for Python 3.12 (it has 3.8\u20133.11)",)


def test_no_adapter_installed_says_which_release_to_install(minimal):
    v = verdict(minimal, env("3.11", "2.3.1"), TODAY)
    assert v.outcome is Status.UNSUPPORTED
    assert v.reasons[0] == "demo-adapter is not installed"
    assert v.fixes[0].commands == ("pip install 'demo-adapter==2.0.0'",)


def test_no_torch_installed_suggests_the_newest_supported_line(minimal):
    v = verdict(minimal, env("3.11", None, "2.0.0"), TODAY)
    assert v.reasons == ("torch is not installed",)
    assert v.fixes[0].commands == ("pip install 'torch>=2.3,<2.4'",)


def test_support_window_turns_cells_into_eol(tmp_path):
    text = (
        (FIXTURES / "minimal.yaml")
        .read_text()
        .replace(
            "    reason: superseded by 2.0.0\n", "    reason: superseded by 2.0.0\n    supported-until: 2025-06-30\n"
        )
    )
    m = load_text(text, "m.yaml").matrix
    v = verdict(m, env("3.10", "2.1.2", "1.0.0"), dt.date(2025, 7, 1))
    assert v.outcome is Status.EOL
    assert v.reasons == ("support for 1.0.0 ended on 2025-06-30",)
    assert verdict(m, env("3.10", "2.1.2", "1.0.0"), dt.date(2025, 6, 30)).outcome is Status.DEPRECATED


DIMS = """
dimensions:
  cann:
    description: toolkit
    values: ["8.0.0", "8.1.0", "9.0.0"]
    detect:
      - env: DEMO_CANN_VERSION
"""


@pytest.fixture
def with_dims():
    text = (
        (FIXTURES / "minimal.yaml").read_text().replace("shims:\n  - module", DIMS.lstrip() + "shims:\n  - module", 1)
    )
    text = text.replace(
        '    python: ">=3.9"\n    status: supported',
        '    python: ">=3.9"\n    status: supported\n    dimensions:\n      cann: ">=8.1"',
    )
    return load_text(text, "dims.yaml").matrix


def test_cells_enumerate_extra_dimension_values(with_dims):
    rel = with_dims.release(Version("2.0.0"))
    got = {(str(c.line.minor), str(c.python), dict(c.dimensions)["cann"].version) for c in cells(with_dims, rel, TODAY)}
    assert ("2.3", "3.11", Version("8.1.0")) in got and ("2.3", "3.11", Version("9.0.0")) in got
    assert not any(v == Version("8.0.0") for _, _, v in got)


def test_dimension_mismatch_and_unknown_dimension(with_dims):
    v = verdict(with_dims, env("3.11", "2.3.1", "2.0.0", cann="8.0.0"), TODAY)
    assert v.outcome is Status.UNSUPPORTED and "needs cann >=8.1, found 8.0.0" in v.reasons[0]
    v = verdict(with_dims, env("3.11", "2.3.1", "2.0.0", cann=None), TODAY)
    assert v.outcome is Status.SUPPORTED
    assert v.assumptions == ("cann could not be detected; assumed it satisfies >=8.1",)


def test_repository_matrix_supports_the_dev_environment():
    m = load(REPO / "compat.yaml").matrix
    v = verdict(m, env("3.11", "2.13.0+cpu", "0.1.0"))
    assert v.outcome is Status.SUPPORTED
    assert v.shim is not None and v.shim.module.startswith("shims.torch_")
