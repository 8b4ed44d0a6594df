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


def test_the_sample_ends_as_the_expectations_say_in_every_dtype_and_direction():
    # One test, one sweep: each conformance test runs in a fork of its own, where a
    # module-scoped fixture would run the whole sample again (about a minute per test).
    expectations = ex.load(EXPECTED)
    sweep = run_sweep(DEVICE.type, "shims", ops=expectations.sample, dtypes=ex.DTYPES, kinds=ex.KINDS)
    record = rec.build_record(sweep, ex.judge(sweep, expectations), expectations, "sample")

    problems = [f"{p['task']}: {p['problem']} ({p['error']})" for p in record["problems"]]
    assert not problems, "\n".join(problems)
    assert record["ops"] >= 40
    assert set(record["by_dtype"]) == set(ex.DTYPES)
    for dtype, kinds in record["by_dtype"].items():
        assert kinds["forward"]["passed"] > 0, dtype
    for dtype in ("float32", "float64"):
        assert record["by_dtype"][dtype]["backward"]["passed"] >= 30, dtype
