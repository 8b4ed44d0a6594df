"""PyTorch's own OpInfo tests on the device: the fixed sample of ``tests/ops/expected.yaml``.

The sample's ops run, in all six dtypes forward and in float32/float64 backward, in the
sweep's worker process against CPU, and every task must end as the expectations say
(the whole op_db runs in the nox cells with ``ADAPTER_MATRIX_OPS=full``).
"""

from __future__ import annotations

import os

import pytest

pytest.importorskip("expecttest", reason="the OpInfo sweep needs expecttest (the test extra)")

from adapter_matrix.device.opsweep import expected as ex
from adapter_matrix.device.opsweep import record as rec
from adapter_matrix.device.opsweep.runner import run_sweep

from .support import DEVICE

EXPECTED = os.path.join(os.path.dirname(__file__), "..", "ops", "expected.yaml")


@pytest.fixture(scope="module")
def sample_record():
    expectations = ex.load(EXPECTED)
    sweep = run_sweep(DEVICE.type, "shims", ops=expectations.sample, dtypes=ex.DTYPES, kinds=ex.KINDS)
    return rec.build_record(sweep, ex.judge(sweep, expectations), expectations, "sample")


def test_the_sample_ends_as_the_expectations_say(sample_record):
    problems = [f"{p['task']}: {p['problem']} ({p['error']})" for p in sample_record["problems"]]
    assert not problems, "\n".join(problems)


def test_the_sample_covers_every_dtype_and_both_directions(sample_record):
    assert sample_record["ops"] >= 40
    for dtype, kinds in sample_record["by_dtype"].items():
        assert kinds["forward"]["passed"] > 0, dtype
    assert set(sample_record["by_dtype"]) == set(ex.DTYPES)
    for dtype in ("float32", "float64"):
        assert sample_record["by_dtype"][dtype]["backward"]["passed"] >= 30, dtype
