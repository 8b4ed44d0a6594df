"""The op sweep without torch: crash isolation, the expectations file, judging, the record.

The worker is replaced by ``tests/unit/fake_opworker.py``, which speaks the worker's
protocol and crashes, aborts and hangs on purpose; the real worker runs in
``tests/conformance/test_opinfo.py``.
"""

from __future__ import annotations

import os
import sys
import textwrap
import time

import pytest

from adapter_matrix.device.opsweep import expected as ex
from adapter_matrix.device.opsweep import record as rec
from adapter_matrix.device.opsweep.runner import Selection, Sweep, SweepError, Task, run_sweep, run_sweeps

from .helpers import REPO, cli

FAKE = "tests.unit.fake_opworker"


def fake_sweep(ops, timeout=30.0):
    env = dict(os.environ, PYTHONPATH=str(REPO))
    seen = []
    sweep = run_sweep(
        "npu",
        "shims",
        ops=ops,
        timeout=timeout,
        env=env,
        workers=(FAKE,),
        progress=lambda task, done, total: seen.append((task.op, done, total)),
    )
    return sweep, seen


# -- the runner ---------------------------------------------------------------------------


def test_a_crash_is_that_tasks_result_and_the_sweep_goes_on():
    sweep, seen = fake_sweep(["add", "segv", "mul", "abort", "sub"])
    assert [(t.op, t.outcome) for t in sweep.tasks] == [
        ("add", "passed"),
        ("segv", "crashed"),
        ("mul", "passed"),
        ("abort", "crashed"),
        ("sub", "passed"),
    ]
    segv, abort = sweep.tasks[1], sweep.tasks[3]
    assert segv.error.startswith("SIGSEGV: Fatal Python error: Segmentation fault")
    assert abort.error.startswith("SIGABRT: ") and "what():  boom" in abort.error
    assert "Segmentation fault" in (segv.detail or "")
    assert sweep.workers == 3  # one start, one restart per crash: not one interpreter per op
    assert [done for _, done, _ in seen] == [1, 2, 3, 4, 5]


def test_a_hang_is_killed_and_recorded_as_timeout():
    start = time.perf_counter()
    sweep, _ = fake_sweep(["add", "hang", "mul"], timeout=1.0)
    assert [(t.op, t.outcome) for t in sweep.tasks] == [("add", "passed"), ("hang", "timeout"), ("mul", "passed")]
    assert "no result after 1 s" in sweep.tasks[1].error
    assert time.perf_counter() - start < 30


def test_a_crash_in_the_last_task_ends_the_sweep():
    sweep, _ = fake_sweep(["add", "segv"])
    assert [t.outcome for t in sweep.tasks] == ["passed", "crashed"]


def test_shards_side_by_side_give_the_sweep_one_process_gives():
    """The plan dealt across 3 processes, 2 at a time: every task once, in plan order, each
    crash and hang recorded in its task and restarting only its own shard."""
    env = dict(os.environ, PYTHONPATH=str(REPO))
    ops = ["add", "segv", "mul", "hang", "abort", "sub", "div"]
    one = run_sweep("npu", "shims", ops=ops, timeout=1.0, env=env, workers=(FAKE,))
    seen = []
    dealt = run_sweep(
        "npu",
        "shims",
        ops=ops,
        timeout=1.0,
        env=env,
        workers=(FAKE,),
        shards=3,
        jobs=2,
        progress=lambda task, done, total: seen.append((task.op, done, total)),
    )
    assert [(t.op, t.outcome) for t in dealt.tasks] == [(t.op, t.outcome) for t in one.tasks]
    assert [t.outcome for t in dealt.tasks] == ["passed", "crashed", "passed", "timeout", "crashed", "passed", "passed"]
    # shards 0 (add, hang, div), 1 (segv, abort), 2 (mul, sub): a crash or hang restarts its own
    # shard only, and a shard whose last task crashed starts nothing more
    assert one.workers == 4 and dealt.workers == 2 + 2 + 1
    assert sorted(done for _, done, _ in seen) == list(range(1, 8)) and {total for _, _, total in seen} == {7}


def test_sweeps_side_by_side_each_keep_their_own_tasks():
    env = dict(os.environ, PYTHONPATH=str(REPO))
    first, second = run_sweeps(
        "npu",
        "shims",
        [Selection(("add", "fail"), workers=(FAKE,), shards=2), Selection(("mul", "sub", "div"), workers=(FAKE,))],
        env=env,
        jobs=2,
    )
    assert [(t.op, t.outcome) for t in first.tasks] == [("add", "passed"), ("fail", "failed")]
    assert [t.op for t in second.tasks] == ["mul", "sub", "div"]
    assert (first.workers, second.workers) == (2, 1)
    assert first.selection["ops"] == ["add", "fail"]


def test_a_worker_that_cannot_start_is_one_error_not_a_loop():
    with pytest.raises(SweepError, match=r"before its first task.*ImportError: no module named torch"):
        fake_sweep(["startup"])


# -- the expectations file ----------------------------------------------------------------


def write(tmp_path, text):
    path = tmp_path / "expected.yaml"
    path.write_text(textwrap.dedent(text))
    return str(path)


def task(op, outcome="passed", dtype="float32", kind="forward", family="other", error=None):
    return Task(op, family, dtype, kind, outcome, error)


GOOD = """\
    schema: 1
    sample: [add, mul]
    expected:
      - ops: [to_sparse]
        outcome: unsupported
        reason: strided only
      - ops: [sgn]
        kinds: [backward]
        outcome: crashes
        reason: zero tensors
        issue: "12"
      - ops: [as_strided]
        torch: "<2.5"
        dtypes: [bfloat16]
        outcome: fails
        reason: old era
"""


def test_expectations_load(tmp_path):
    e = ex.load(write(tmp_path, GOOD))
    assert e.sample == ("add", "mul")
    assert [(x.ops, x.outcome, x.issue) for x in e.entries] == [
        (("to_sparse",), "unsupported", None),
        (("sgn",), "crashes", "12"),
        (("as_strided",), "fails", None),
    ]


def test_expectations_report_every_problem_with_its_position(tmp_path):
    path = write(
        tmp_path,
        """\
        schema: 1
        expected:
          - ops: [a]
            outcome: broken
            reason: x
          - ops: [b]
            outcome: fails
          - ops: [c]
            outcome: fails
            reason: y
            torch: ">=two"
            dtypes: [float8]
            colour: red
    """,
    )
    with pytest.raises(ex.ExpectationsError) as info:
        ex.load(path)
    text = str(info.value)
    assert "expected.yaml:4:14: outcome: unknown value 'broken'" in text
    assert "expected.yaml:6:5: missing `reason`" in text
    assert "expected.yaml:11:12: torch: '>=two' is not a version specifier" in text
    assert "expected.yaml:12:14: dtypes: unknown value 'float8'" in text
    assert "expected.yaml:13:5: unknown key 'colour'" in text


def test_the_repositorys_expectations_are_valid():
    e = ex.load(str(REPO / "tests" / "ops" / "expected.yaml"))
    assert len(e.sample) >= 40
    assert all(entry.reason for entry in e.entries)


# -- judging ------------------------------------------------------------------------------


def sweep_of(*tasks, torch="2.13.0+cpu"):
    return Sweep(torch, "3.11.0", "npu", list(tasks), 1.0, 1)


def problems(sweep, path):
    return [(v.task.op, v.problem) for v in ex.judge(sweep, ex.load(path)) if v.problem]


def test_a_new_failure_and_a_new_pass_both_disagree(tmp_path):
    path = write(tmp_path, GOOD)
    found = problems(sweep_of(task("add", "failed"), task("to_sparse", "passed"), task("mul", "crashed")), path)
    assert found[0] == ("add", "new failure")
    assert (
        found[1][0] == "to_sparse"
        and found[1][1].startswith("passes now, but ")
        and "expects it to be unsupported" in found[1][1]
    )
    assert found[2] == ("mul", "new crash")


def test_listed_tasks_that_end_as_listed_agree(tmp_path):
    path = write(tmp_path, GOOD)
    sweep = sweep_of(
        task("to_sparse", "failed"),
        task("sgn", "crashed", kind="backward"),
        task("sgn", "passed"),
        task("jiterator_unary", "skipped"),
    )
    assert problems(sweep, path) == []


def test_a_crash_listed_as_a_failure_is_not_explained(tmp_path):
    path = write(tmp_path, GOOD)
    assert problems(sweep_of(task("to_sparse", "crashed")), path)[0][1].endswith("expects it to be unsupported")


def test_entries_hold_for_their_torch_era_and_cover_variants(tmp_path):
    path = write(tmp_path, GOOD)
    old = sweep_of(task("as_strided.partial_views", "failed", dtype="bfloat16"), torch="2.4.1")
    new = sweep_of(task("as_strided.partial_views", "failed", dtype="bfloat16"), torch="2.5.1")
    assert problems(old, path) == []
    assert problems(new, path) == [("as_strided.partial_views", "new failure")]


# -- the record ---------------------------------------------------------------------------


def test_the_record_counts_ops_per_family_and_the_float32_rate(tmp_path):
    path = write(tmp_path, GOOD)
    sweep = sweep_of(
        task("add", family="binary"),
        task("add", kind="backward", family="binary"),
        task("mul", family="binary"),
        task("mul", "failed", kind="backward", family="binary", error="sample 1: differs"),
        task("to_sparse", "failed", error="NotImplementedError"),
        task("to_sparse", "failed", dtype="int64"),
        task("jiterator_unary", "skipped"),
    )
    record = rec.build_record(sweep, ex.judge(sweep, ex.load(path)), ex.load(path), "full")
    assert record["families"] == {
        "binary": {"passed": 1, "failed": 0, "unsupported": 0, "skipped": 0, "unexpected": 1},
        "other": {"passed": 0, "failed": 0, "unsupported": 1, "skipped": 1, "unexpected": 0},
    }
    assert record["float32"] == {"ops": 4, "compared": 3, "matched": 1, "percent": 33.33}
    assert not record["ok"] and record["problems"] == [
        {"task": "mul/float32/backward", "outcome": "failed", "problem": "new failure", "error": "sample 1: differs"}
    ]
    sparse = [f for f in record["failures"] if f["op"] == "to_sparse"]
    assert sparse == [
        {
            "op": "to_sparse",
            "family": "other",
            "state": "unsupported",
            "outcome": "failed",
            "tasks": ["float32/forward", "int64/forward"],
            "reason": "strided only",
            "issue": None,
            "problem": None,
            "error": "NotImplementedError",
        }
    ]
    counts = rec.summary(record, "results/ops/x.json")
    assert counts["tasks"] == {"passed": 3, "failed": 3, "crashed": 0, "timeout": 0, "skipped": 1}
    assert counts["problems"] == 1 and counts["record"] == "results/ops/x.json"


def test_the_op_dtypes_view_counts_tasks_per_dtype_and_direction_and_names_the_worst_state(tmp_path):
    from adapter_matrix.matrix.cache import load_matrix
    from adapter_matrix.tables.views.op_dtypes import op_dtypes

    path = write(tmp_path, GOOD)
    sweep = sweep_of(
        task("add", family="binary"),
        task("add", kind="backward", family="binary"),
        task("mul", "failed", kind="backward", family="binary", error="sample 1: differs"),
        task("to_sparse", "failed", dtype="int64"),
        task("exp", "crashed", dtype="int64"),
    )
    record = rec.build_record(sweep, ex.judge(sweep, ex.load(path)), ex.load(path), "full")
    table = op_dtypes(load_matrix(str(REPO / "compat.yaml")).matrix, records=[record])
    assert [c.key for c in table.columns] == ["torch", "float32/forward", "float32/backward", "int64/forward"]
    (row,) = table.rows
    cells = {c.key: cell for c, cell in zip(table.columns, row)}
    assert cells["float32/forward"].text == "1/0" and cells["float32/forward"].state == "ops_ok"
    assert (
        cells["float32/backward"].text == "1/1" and cells["float32/backward"].state == "ops_new"
    )  # mul: a new failure
    assert (
        cells["int64/forward"].text == "0/2" and cells["int64/forward"].state == "ops_new"
    )  # a crash counts as failed
    assert "1 crashed" in cells["int64/forward"].title


def test_ops_sweep_rejects_a_bad_expectations_file_with_exit_2(tmp_path):
    path = write(tmp_path, "schema: 1\nexpected: [{ops: [a], outcome: fails}]\n")
    result = cli("ops", "sweep", "--expected", path)
    assert result.code == 2
    assert "missing `reason`" in result.err and "1 problem(s) in the expectations" in result.err


# -- the compiled sample (ops sweep --compile) ----------------------------------------------

COMPILED_EXPECTATIONS = """\
    schema: 1
    sample: [add, mul]
    expected:
      - ops: [to_sparse]
        outcome: unsupported
        reason: strided only
      - ops: [nonzero]
        kinds: [compiled]
        torch: "<2.4"
        outcome: fails
        reason: dynamo cannot capture a data-dependent output shape on this era
"""


def compiled_task(op, outcome="passed", family="other", error=None):
    return Task(op, family, "float32", ex.COMPILED, outcome, error)


def judged_record(path, eager, compiled=None, torch="2.13.0+cpu"):
    expectations = ex.load(path)
    eager_sweep = sweep_of(*eager, torch=torch)
    part = None
    if compiled is not None:
        part = rec.compiled_record(compiled, ex.judge(compiled, expectations), "inductor", 2)
    return rec.build_record(eager_sweep, ex.judge(eager_sweep, expectations), expectations, "sample", part)


EAGER = (task("add"), task("add", kind="backward"), task("nonzero"), task("to_sparse", "failed"))


def test_the_compiled_sample_is_kept_apart_and_leaves_the_eager_numbers_as_they_were(tmp_path):
    path = write(tmp_path, COMPILED_EXPECTATIONS)
    compiled = sweep_of(
        compiled_task("add"),
        compiled_task("nonzero", "failed", error="sample 0: CompileFailure: Unsupported: data-dependent"),
        compiled_task("to_sparse", "failed", error="sample 0: NotImplementedError"),
        compiled_task("jiterator_unary", "skipped", error="CPU raises for every sample"),
        torch="2.3.1",
    )
    with_compiled = judged_record(path, EAGER, compiled, torch="2.3.1")
    without = judged_record(path, EAGER, torch="2.3.1")
    part = with_compiled.pop("compiled")
    for record in (with_compiled, without):
        record.pop("timestamp")
    assert with_compiled == without  # eager counts, failures, tasks and verdict: untouched
    assert part["ok"] and part["skipped"] is None and part["ops"] == 4
    assert part["outcomes"] == {"passed": 1, "failed": 2, "crashed": 0, "timeout": 0, "skipped": 1}
    assert part["float32"] == {"ops": 4, "compared": 3, "matched": 1, "percent": 33.33}
    assert [(f["op"], f["state"], f["reason"]) for f in part["failures"]] == [
        ("nonzero", "failed", "dynamo cannot capture a data-dependent output shape on this era"),
        ("to_sparse", "unsupported", "strided only"),  # an entry without kinds covers compiled tasks too
    ]
    assert [t["op"] for t in part["tasks"]] == ["nonzero", "to_sparse", "jiterator_unary"]


def test_a_compiled_expectation_holds_for_compiled_tasks_only_and_in_its_era(tmp_path):
    path = write(tmp_path, COMPILED_EXPECTATIONS)
    eager_failure = judged_record(path, (task("nonzero", "failed"),), torch="2.3.1")
    assert eager_failure["problems"][0]["problem"] == "new failure"  # kinds: [compiled] says nothing of eager
    newer = sweep_of(compiled_task("nonzero", "failed", error="sample 0: boom"), torch="2.4.0")
    record = judged_record(path, EAGER, newer, torch="2.4.0")
    assert not record["ok"] and not record["compiled"]["ok"]
    assert record["compiled"]["problems"] == [
        {"task": "nonzero/float32/compiled", "outcome": "failed", "problem": "new failure", "error": "sample 0: boom"}
    ]
    passes = sweep_of(compiled_task("nonzero"), torch="2.3.1")
    problem = judged_record(path, EAGER, passes, torch="2.3.1")["compiled"]["problems"][0]["problem"]
    assert problem.startswith("passes now, but ") and "remove or narrow the entry" in problem


def test_a_compiler_the_device_declares_absent_is_a_skip_with_its_reason(tmp_path):
    from adapter_matrix.cli.ops import compiled_counts

    env = dict(os.environ, PYTHONPATH=str(REPO))
    absent = run_sweep("npu", "shims", ops=["absent", "add"], env=env, workers=(FAKE,), kinds=(ex.COMPILED,))
    assert absent.tasks == [] and absent.absent == "capability inductor is absent: not on this torch"
    record = judged_record(write(tmp_path, COMPILED_EXPECTATIONS), EAGER, absent)
    part = record["compiled"]
    assert record["ok"] and part["skipped"] == absent.absent and part["ops"] == 0
    assert part["float32"]["percent"] is None
    counts = compiled_counts(part)
    assert (counts.passed, counts.failed, counts.skipped) == (0, 0, 1)
    assert counts.skips == ("compiled sample: capability inductor is absent: not on this torch",)
    assert rec.summary(record)["compiled"]["skipped"] == absent.absent


def test_the_suite_group_of_the_compiled_sample_counts_ops_by_their_verdict(tmp_path):
    from adapter_matrix.cli.ops import compiled_counts

    path = write(tmp_path, COMPILED_EXPECTATIONS)
    compiled = sweep_of(
        compiled_task("add"),
        compiled_task("mul", "crashed", error="SIGSEGV: boom"),
        compiled_task("nonzero", "failed"),
        compiled_task("jiterator_unary", "skipped", error="CPU raises for every sample"),
        torch="2.3.1",
    )
    counts = compiled_counts(judged_record(path, EAGER, compiled, torch="2.3.1")["compiled"])
    assert (counts.passed, counts.failed, counts.skipped) == (1, 1, 2)  # mul: a new crash
    assert counts.skips == (
        "nonzero (compiled): dynamo cannot capture a data-dependent output shape on this era",
        "jiterator_unary (compiled): CPU raises for every sample",
    )


def test_summaries_and_the_results_table_read_records_with_and_without_the_compiled_sample(tmp_path):
    from adapter_matrix.ci.record import OpsSummary, ResultRecord
    from adapter_matrix.ci.results import _op_sweep

    path = write(tmp_path, COMPILED_EXPECTATIONS)
    old = judged_record(path, EAGER)
    old_summary = rec.summary(old)
    assert "compiled" not in old_summary
    assert _op_sweep(ResultRecord(ops=OpsSummary.of(old_summary))) == "sample"
    new = rec.summary(judged_record(path, EAGER, sweep_of(compiled_task("add"), compiled_task("mul", "failed"))))
    assert new["compiled"]["outcomes"]["failed"] == 1 and new["compiled"]["problems"] == 1 and not new["ok"]
    assert _op_sweep(ResultRecord(ops=OpsSummary.of(new))) == "sample, compiled 1/2"
    skipped = dict(new, compiled=dict(new["compiled"], skipped="capability inductor is absent: x"))
    assert _op_sweep(ResultRecord(ops=OpsSummary.of(skipped))) == "sample, compiled skipped"


def test_ops_sweep_keeps_the_compiled_kind_for_compile(tmp_path):
    result = cli("ops", "sweep", "--kind", "compiled")
    assert result.code == 2 and "--kind 'compiled': choose from forward, backward, module" in result.err
    assert "--compile" in result.err


def test_the_compiled_worker_asks_the_adapters_capability_api(monkeypatch):
    import types

    from adapter_matrix.device.opsweep.compiled import absent_reason

    declared = {"inductor": "torch 2.0's inductor has no device registry"}

    def capability(feature):
        if feature not in declared and feature != "known":
            raise KeyError(feature)
        return declared.get(feature)

    monkeypatch.setitem(sys.modules, "fake_adapter", types.SimpleNamespace(capability=capability))
    monkeypatch.setitem(sys.modules, "plain_adapter", types.ModuleType("plain_adapter"))
    assert absent_reason("fake_adapter") == "capability inductor is absent: torch 2.0's inductor has no device registry"
    declared.clear()
    assert absent_reason("fake_adapter") is None  # KeyError: an adapter that does not know the feature tries it
    declared["inductor"] = None
    assert absent_reason("fake_adapter") is None
    assert absent_reason("plain_adapter") is None  # no capability API: try it


def test_in_a_cell_the_compiled_sample_counts_in_the_ops_group(tmp_path, monkeypatch):
    from adapter_matrix.ci.suites import SUMMARIES_ENV, read_summaries
    from adapter_matrix.cli.ops import _leave_suite_counts

    path = write(tmp_path, COMPILED_EXPECTATIONS)
    monkeypatch.setenv(SUMMARIES_ENV, str(tmp_path / "suites"))
    _leave_suite_counts(judged_record(path, EAGER))
    eager = read_summaries(str(tmp_path / "suites"))["ops"]
    compiled = sweep_of(compiled_task("add"), compiled_task("mul", "failed", error="sample 0: differs"))
    _leave_suite_counts(judged_record(path, EAGER, compiled))
    both = read_summaries(str(tmp_path / "suites"))["ops"]
    assert (eager.passed, eager.failed, eager.skipped) == (3, 0, 1)  # to_sparse: a known failure
    assert (both.passed, both.failed, both.skipped) == (4, 1, 1)  # mul compiled: a new failure fails the cell
