"""Hostile and broken inputs: no hang, no code execution, no traceback (docs/security.md).

Each test hands the tool one thing a matrix, a document, a cache or the environment can
hold against it, and checks what the user sees: a bounded run, one clear message and a
documented exit code, a terminal that stays untouched, a cache entry that is refused.
"""

from __future__ import annotations

import errno
import json
import os
import pickle
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from adapter_matrix import limits
from adapter_matrix.check.bounded import RegexTimeout, run_command, search
from adapter_matrix.files import FileReadError, atomic_write, read_regular
from adapter_matrix.limits import OUTPUT_BYTES
from adapter_matrix.matrix import cache
from adapter_matrix.matrix.diagnostics import MatrixError
from adapter_matrix.matrix.loader import load_text
from adapter_matrix.memo import CacheWarning

from .helpers import REPO, cli

TOY = (REPO / "examples" / "toy-adapter" / "toy_adapter" / "compat.yaml").read_text()
HOSTILE = "^(a|aa)+$"  # exponential backtracking on "aaa...a!"
VALUE = "a" * 79 + "!"  # 80 characters
BOUND = 20.0  # seconds any of these may take, however loaded the machine: a hang is minutes


def toy(detect: str = "      - env: TOY_DRIVER_VERSION\n", python: str = ">=3.8,<3.14") -> str:
    """The example adapter's matrix with ``detect`` as the driver's detectors (YAML lines)."""
    text = TOY.replace("      - env: TOY_DRIVER_VERSION\n", detect).replace(
        'python: ">=3.10,<3.14"', f'python: "{python}"'
    )
    return text.replace('python: ["3.10",', 'python: ["3.8", "3.9", "3.10",')


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("ADAPTER_MATRIX_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("ADAPTER_MATRIX_ALLOW_UNSUPPORTED", raising=False)


def _check(path: Path, env: dict, *extra: str) -> subprocess.CompletedProcess:
    """``adapter-matrix check --json -m PATH`` as users run it (the quick path, a real process)."""
    code = "import sys; from adapter_matrix.cli import main; sys.argv[0] = 'adapter-matrix'; main()"
    return subprocess.run(
        [
            sys.executable,
            "-c",
            code,
            "check",
            "-m",
            str(path),
            "--json",
            "--torch",
            "2.13.0",
            "--adapter",
            "1.0.0",
            *extra,
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=BOUND * 3,
    )


def _driver(proc: subprocess.CompletedProcess) -> dict:
    return json.loads(proc.stdout)["checks"][0]["environment"]["dimensions"]["driver"]


# -- regexes ---------------------------------------------------------------------------------


def test_a_hostile_regex_is_stopped_in_the_main_thread():
    start = time.perf_counter()
    with pytest.raises(RegexTimeout):
        search(HOSTILE, VALUE, seconds=0.3)
    assert time.perf_counter() - start < 5
    assert search(r"(?P<version>\d+\.\d+)", "driver 8.1 ok").version == "8.1"  # an ordinary one still answers


def test_a_hostile_regex_is_stopped_in_another_thread_too():
    outcome = []

    def run():
        try:
            search(HOSTILE, VALUE, seconds=0.3)
            outcome.append("finished")
        except RegexTimeout:
            outcome.append("stopped")
        outcome.append(search(r"v(\d+)", "v12").version)

    worker = threading.Thread(target=run)
    worker.start()
    worker.join(BOUND)
    assert outcome == ["stopped", "12"]


def test_an_alarm_the_program_set_is_left_alone():
    import signal

    fired = []
    previous = signal.signal(signal.SIGALRM, lambda *_: fired.append(1))
    try:
        signal.setitimer(signal.ITIMER_REAL, 0.8)
        with pytest.raises(RegexTimeout):  # runs in a child instead of taking the timer over
            search(HOSTILE, VALUE, seconds=0.2)
        time.sleep(1.0)
        assert fired == [1]
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def test_a_hostile_regex_ends_in_bounded_time_under_check(tmp_path):
    path = tmp_path / "compat.yaml"
    path.write_text(toy(f"      - env: TOY_DRIVER_VERSION\n        regex: '{HOSTILE}'\n"))
    start = time.perf_counter()
    proc = _check(path, dict(os.environ, TOY_DRIVER_VERSION=VALUE))
    assert time.perf_counter() - start < BOUND
    assert "Traceback" not in proc.stderr
    assert "took longer than 0.5 s; it was stopped" in _driver(proc)["error"]


def test_a_hostile_regex_ends_in_bounded_time_under_require(tmp_path):
    package = tmp_path / "site" / "hostile_adapter"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "compat.yaml").write_text(toy(f"      - env: TOY_DRIVER_VERSION\n        regex: '{HOSTILE}'\n"))
    code = (
        "from adapter_matrix import require\n"
        "s = require('hostile_adapter', version='1.0.0', torch_version='2.13.0')\n"
        "print(s.outcome)\n"
    )
    env = dict(os.environ, PYTHONPATH=str(package.parent), TOY_DRIVER_VERSION=VALUE)
    for _ in range(2):  # cold (the model is built) and warm (the facts memo)
        start = time.perf_counter()
        proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=BOUND * 3)
        assert time.perf_counter() - start < BOUND
        # an unreadable dimension is assumed to fit: the import goes on
        assert (proc.returncode, proc.stdout.strip()) == (0, "supported"), proc.stderr


def test_a_long_regex_is_a_validate_error():
    with pytest.raises(MatrixError, match=r"the regex has 1001 characters, more than 1000"):
        load_text(toy("      - env: TOY_DRIVER_VERSION\n        regex: '" + "a" * 1001 + "'\n"))


# -- regular files, bounded reads ------------------------------------------------------------


@pytest.mark.parametrize("kind", ["fifo", "device", "folder"])
def test_a_matrix_that_is_not_a_regular_file_is_a_clear_error(tmp_path, kind):
    path = {"fifo": tmp_path / "fifo", "device": Path("/dev/zero"), "folder": tmp_path}[kind]
    if kind == "fifo":
        os.mkfifo(path)
    start = time.perf_counter()
    res = cli("validate", "--matrix", str(path))
    assert time.perf_counter() - start < BOUND
    assert res.code == 2
    said = {
        "fifo": "it is a FIFO (named pipe), not a regular file",
        "device": "it is a device, not a regular file",
        "folder": "it is a folder, not a file",
    }[kind]
    assert f"cannot read the matrix: {said}" in res.err


def test_a_file_larger_than_the_limit_is_refused_before_it_is_read(tmp_path, monkeypatch):
    path = tmp_path / "big.yaml"
    path.write_bytes(b"#" * 4096)
    with pytest.raises(FileReadError, match="more than the 0 MiB"):
        read_regular(str(path), 1024)
    assert read_regular(str(path), 1024, truncate=True) == b"#" * 1024
    monkeypatch.setattr(limits, "MAX_READ_BYTES", 1024)
    assert read_regular(str(path), None) == b"#" * 4096


def test_a_file_detector_on_a_fifo_or_a_device_answers_at_once(tmp_path):
    fifo = tmp_path / "version-fifo"
    os.mkfifo(fifo)
    path = tmp_path / "compat.yaml"
    path.write_text(
        toy(f"      - file: {fifo}\n        regex: '(\\d+\\.\\d+)'\n      - file: /dev/zero\n        regex: '(\\d+)'\n")
    )
    start = time.perf_counter()
    proc = _check(path, dict(os.environ))
    assert time.perf_counter() - start < BOUND
    error = _driver(proc)["error"]
    assert "it is a FIFO (named pipe), not a regular file" in error and "/dev/zero: it is a device" in error


# -- commands --------------------------------------------------------------------------------


def _processes_with(needle: str) -> list:
    found = []
    for pid in os.listdir("/proc"):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as fh:
                if needle.encode() in fh.read().replace(b"\0", b" "):
                    found.append(pid)
        except OSError:
            continue
    return found


@pytest.mark.skipif(not os.path.isdir("/proc"), reason="needs /proc to list processes")
def test_a_timed_out_command_leaves_no_process_behind():
    marker = f"1000.{os.getpid()}"  # a sleep no other test starts, nor another run of this suite on the machine
    start = time.perf_counter()
    result = run_command(["sh", "-c", f"sleep {marker}; echo 1"], 0.5)
    assert result.error == "timeout" and time.perf_counter() - start < BOUND
    time.sleep(0.2)
    assert _processes_with(f"sleep {marker}") == []


def test_a_command_that_prints_endlessly_is_stopped_at_the_output_limit():
    start = time.perf_counter()
    result = run_command(["yes"], 30)
    assert result.error == "too-long" and len(result.output) == OUTPUT_BYTES
    assert time.perf_counter() - start < BOUND  # stopped at the limit, not at the timeout


def test_check_reports_a_runaway_command_and_goes_on(tmp_path):
    path = tmp_path / "compat.yaml"
    path.write_text(
        toy(
            "      - command: [yes]\n        regex: '(\\d+)'\n      - command: [sh, -c, 'sleep 1000; echo 1']\n"
            "        regex: '(\\d+)'\n        timeout: 0.5\n      - env: TOY_DRIVER_VERSION\n"
        )
    )
    proc = _check(path, dict(os.environ, TOY_DRIVER_VERSION="2.1"))
    driver = _driver(proc)
    assert driver["value"] == "2.1"
    proc = _check(path, {k: v for k, v in os.environ.items() if k != "TOY_DRIVER_VERSION"})
    error = _driver(proc)["error"]
    assert "command 'yes' printed more than 1 MiB; it was stopped" in error
    assert "command 'sh' timed out after 0.5 s" in error


# -- numbers and sizes -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "written, said",
    [
        ("1e300", "timeout must be more than 0 and at most 600 seconds, found 1e+300"),
        ("0", "timeout must be more than 0"),
        ("-1", "timeout must be more than 0"),
        (".inf", "give seconds as a number"),
    ],
)
def test_a_timeout_out_of_range_is_a_validate_error_not_an_overflow_in_check(tmp_path, written, said):
    path = tmp_path / "compat.yaml"
    path.write_text(
        toy(f"      - command: [echo, '1.0']\n        regex: '(\\d+\\.\\d+)'\n        timeout: {written}\n")
    )
    res = cli("validate", "--matrix", str(path))
    assert res.code == 2 and said in res.err
    proc = _check(path, dict(os.environ))
    assert proc.returncode == 2 and "Traceback" not in proc.stderr and said in proc.stderr


@pytest.mark.parametrize("days", ["0", "36501", "9" * 5000])
def test_max_age_days_out_of_range_is_a_validate_error(days):
    with pytest.raises(MatrixError, match="max-age-days must be a whole number of days from 1 to 36500"):
        load_text(toy().replace("\nevidence:\n", f"\nevidence:\n  max-age-days: {days}\n", 1))


def test_many_values_are_checked_for_duplicates_in_linear_time():
    values = [f'"{i // 1000}.{i % 1000}"' for i in range(40000)]
    values.append('"3.7.0"')  # the same version as "3.7", written differently
    text = toy().replace('values: ["1.0", "2.0", "2.1"]', f"values: [{', '.join(values)}]")
    start = time.perf_counter()
    with pytest.raises(MatrixError) as caught:
        load_text(text, check_modules=False)
    assert time.perf_counter() - start < BOUND  # pairwise comparison took 138 s here
    errors = [d.message for d in caught.value.diagnostics if d.severity == "error"]
    assert errors == ["driver lists 3.7.0 twice (as 3.7)"]


# -- the cache -------------------------------------------------------------------------------


def _compiled(tmp_path) -> tuple:
    path = tmp_path / "compat.yaml"
    path.write_text(toy())
    cache.load_matrix(str(path))
    from adapter_matrix.matrix.diagnostics import display_path

    return path, Path(cache.compiled_matrix_path(path.read_bytes(), display_path(str(path))))


class _Planted:
    """A pickle that runs a command when loaded: what a local attacker would plant."""

    def __init__(self, flag: Path) -> None:
        self.flag = flag

    def __reduce__(self):
        return (os.system, (f"touch {self.flag}",))


def test_cache_folders_are_private_and_entries_are_0600(tmp_path):
    _path, entry = _compiled(tmp_path)
    assert stat.S_IMODE(entry.stat().st_mode) == 0o600
    assert stat.S_IMODE(entry.parent.stat().st_mode) == 0o700
    assert stat.S_IMODE((tmp_path / "cache").stat().st_mode) == 0o700
    assert [p.name for p in entry.parent.iterdir() if p.name.endswith(".tmp")] == []


def test_a_planted_pickle_never_runs_even_in_a_private_cache(tmp_path):
    path, entry = _compiled(tmp_path)
    flag = tmp_path / "ran"
    entry.write_bytes(pickle.dumps(_Planted(flag)))
    result = cache.load_matrix(str(path))  # refused by the allowlist, rebuilt from the file
    assert not flag.exists()
    assert result.matrix.adapter.distribution == "toy-adapter"


@pytest.mark.parametrize("where", ["entry", "folder", "root"])
@pytest.mark.parametrize("who", [stat.S_IWGRP, stat.S_IWOTH])
def test_a_cache_entry_others_can_write_is_refused_with_a_message(tmp_path, where, who):
    path, entry = _compiled(tmp_path)
    target = {"entry": entry, "folder": entry.parent, "root": tmp_path / "cache"}[where]
    good = pickle.loads(entry.read_bytes())
    entry.write_bytes(pickle.dumps(good._replace(warnings=["planted"])))  # a valid entry, but not ours
    target.chmod(stat.S_IMODE(target.stat().st_mode) | who)
    with pytest.warns(CacheWarning, match="another user could have planted it"):
        result = cache.load_matrix(str(path))
    assert "planted" not in result.warnings  # parsed afresh, the planted entry unread


def test_a_cache_entry_of_the_wrong_shape_is_rebuilt(tmp_path):
    path, entry = _compiled(tmp_path)
    for wrong in ({"matrix": 1}, ("a", "b"), b"garbage"):
        entry.write_bytes(wrong if isinstance(wrong, bytes) else pickle.dumps(wrong))
        assert cache.load_matrix(str(path)).matrix.adapter.distribution == "toy-adapter"


@pytest.fixture
def hostile_package(tmp_path):
    package = tmp_path / "site" / "memo_adapter"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "compat.yaml").write_text(toy())
    return package


def _require(package: Path, env: dict) -> subprocess.CompletedProcess:
    code = (
        "import warnings; warnings.simplefilter('always')\n"
        "from adapter_matrix import require\n"
        "print(require('memo_adapter', version='1.0.0', torch_version='2.13.0').outcome)\n"
    )
    return subprocess.run(
        [sys.executable, "-c", code],
        env=dict(env, PYTHONPATH=str(package.parent)),
        capture_output=True,
        text=True,
        timeout=BOUND * 3,
    )


def _facts_memo(cache_root: Path) -> Path:
    (memo,) = (cache_root / "runtime").glob("*.facts.json")
    return memo


def test_a_memo_naming_a_command_never_runs_it_inside_import(hostile_package, tmp_path):
    env = dict(os.environ, ADAPTER_MATRIX_CACHE=str(tmp_path / "cache"), TOY_DRIVER_VERSION="2.1")
    assert _require(hostile_package, env).stdout.strip() == "supported"
    memo = _facts_memo(tmp_path / "cache")
    assert stat.S_IMODE(memo.stat().st_mode) == 0o600
    assert stat.S_IMODE(memo.parent.stat().st_mode) == 0o700
    flag = tmp_path / "ran"
    facts = json.loads(memo.read_text())
    facts["dimensions"] = [["driver", [["command", ["sh", "-c", f"touch {flag}; echo 2.1"], "(.*)", 5.0]]]]
    memo.write_text(json.dumps(facts))
    memo.chmod(0o600)
    for verdicts in (tmp_path / "cache" / "runtime").glob("*.verdict.json"):
        verdicts.unlink()
    proc = _require(hostile_package, env)
    assert proc.stdout.strip() == "supported" and not flag.exists()
    assert json.loads(memo.read_text())["dimensions"] == [
        ["driver", [["env", ["TOY_DRIVER_VERSION"], None, 5.0, None]]]
    ]  # rebuilt


def test_a_memo_in_a_cache_others_can_write_is_refused_with_a_message(hostile_package, tmp_path):
    env = dict(os.environ, ADAPTER_MATRIX_CACHE=str(tmp_path / "cache"), TOY_DRIVER_VERSION="1.0")
    first = _require(hostile_package, env)
    assert first.returncode == 1 and "needs driver >=2.0, found 1.0" in first.stderr
    runtime = tmp_path / "cache" / "runtime"
    for verdict in runtime.glob("*.verdict.json"):  # a planted answer: "supported"
        verdict.write_text(json.dumps({"outcome": "supported", "shim": None, "message": "planted"}))
    runtime.chmod(0o777)
    proc = _require(hostile_package, env)
    assert proc.returncode == 1 and "needs driver >=2.0, found 1.0" in proc.stderr
    assert "another user could have planted it" in proc.stderr


# -- writing files ---------------------------------------------------------------------------


def _enospc(*_args, **_kwargs):
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


DOC = "# Support\r\n\r\n<!-- adapter-matrix:table view=grid -->\r\nstale\r\n<!-- /adapter-matrix:table -->\r\n\r\nEnd.\r\n"


def _document(tmp_path) -> tuple:
    matrix = tmp_path / "compat.yaml"
    matrix.write_text(toy())
    doc = tmp_path / "README.md"
    doc.write_bytes(DOC.encode())
    return matrix, doc


def test_a_full_disk_during_table_update_is_one_message_and_the_document_is_intact(tmp_path, monkeypatch):
    matrix, doc = _document(tmp_path)
    monkeypatch.setattr(os, "replace", _enospc)
    res = cli("table", "--matrix", str(matrix), "--update", str(doc))
    assert res.code == 2
    assert (
        f"error: cannot write {doc}: the disk is full (no space left on the device); the file is unchanged" in res.err
    )
    assert doc.read_bytes() == DOC.encode()
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []


def test_a_full_disk_during_validate_write_is_one_message(tmp_path, monkeypatch):
    from .test_upstream import RECORDED_ARG, _without_2_15

    path = tmp_path / "compat.yaml"
    path.write_text(_without_2_15())
    before = path.read_bytes()
    monkeypatch.setattr(os, "fsync", _enospc)
    res = cli("validate", "--matrix", str(path), "--upstream", RECORDED_ARG, "--write")
    assert res.code == 2 and "the disk is full" in res.err and "Traceback" not in res.err
    assert path.read_bytes() == before


def test_a_read_only_folder_is_one_message(tmp_path, monkeypatch):
    matrix, doc = _document(tmp_path)
    real_open = os.open

    def read_only(path, flags, *args):
        if flags & os.O_CREAT:
            raise OSError(errno.EROFS, os.strerror(errno.EROFS), path)
        return real_open(path, flags, *args)

    monkeypatch.setattr(os, "open", read_only)
    res = cli("table", "--matrix", str(matrix), "--update", str(doc))
    assert res.code == 2 and f"cannot write {doc}: the file system is read-only" in res.err


@pytest.mark.parametrize(
    "output, said",
    [
        ("no/dir/s.json", "the folder {tmp}/no/dir does not exist"),
        ("README.md/s.json", "a part of {tmp}/README.md is a file, not a folder"),
    ],
)
def test_schema_output_into_a_missing_folder_or_a_file_is_one_message(tmp_path, output, said):
    (tmp_path / "README.md").write_text("hello\n")
    res = cli("schema", "--output", output, cwd=tmp_path)
    assert res.code == 2
    assert said.format(tmp=tmp_path.resolve()) in res.err.replace("\n", "")


def test_a_marker_with_an_unclosed_quote_is_one_message(tmp_path):
    matrix, doc = _document(tmp_path)
    doc.write_text("<!-- adapter-matrix:table view='grid -->\nx\n<!-- /adapter-matrix:table -->\n")
    res = cli("table", "--matrix", str(matrix), "--update", str(doc))
    assert res.code == 2
    assert f'{doc}:1:1: marker options "view=\'grid" cannot be read: no closing quotation' in res.err.replace("\n", "")


def test_a_crlf_document_is_updated_with_its_line_endings_kept(tmp_path):
    matrix, doc = _document(tmp_path)
    res = cli("table", "--matrix", str(matrix), "--update", str(doc))
    assert res.code == 0, res.err
    written = doc.read_bytes()
    assert b"stale" not in written and b"2.13" in written
    assert written.count(b"\n") == written.count(b"\r\n")  # every line ending is still CRLF
    assert written.startswith(b"# Support\r\n\r\n<!-- adapter-matrix:table view=grid -->\r\n")
    assert written.endswith(b"<!-- /adapter-matrix:table -->\r\n\r\nEnd.\r\n")
    assert cli("table", "--matrix", str(matrix), "--check", str(doc)).code == 0


def test_a_document_that_is_a_fifo_is_one_message(tmp_path):
    matrix, _doc = _document(tmp_path)
    fifo = tmp_path / "doc.md"
    os.mkfifo(fifo)
    res = cli("table", "--matrix", str(matrix), "--check", str(fifo))
    assert res.code == 2 and "it is a FIFO (named pipe), not a regular file" in res.err


def test_atomic_write_creates_its_temporary_file_exclusively(tmp_path, monkeypatch):
    target = tmp_path / "out.json"
    seen = []
    real_open = os.open

    def spy(path, flags, *args):
        if str(path).endswith(".tmp"):
            seen.append(flags)
        return real_open(path, flags, *args)

    monkeypatch.setattr(os, "open", spy)
    atomic_write(str(target), "{}\n")
    assert target.read_text() == "{}\n"
    assert seen and all(f & os.O_CREAT and f & os.O_EXCL and f & os.O_NOFOLLOW for f in seen)


# -- the terminal ----------------------------------------------------------------------------


def _yaml_path(path: Path) -> str:
    """``path`` as a double-quoted YAML string (escape sequences written as YAML escapes)."""
    return json.dumps(str(path)).replace("\\u001b", "\\e").replace("\\u0007", "\\a")


def test_escape_sequences_from_files_and_the_environment_never_reach_the_terminal(tmp_path):
    evil = tmp_path / "v\x1b]0;pwned\x07\x1b[2J"
    evil.write_text("version \x1b[2J9.9\n")
    path = tmp_path / "compat.yaml"
    path.write_text(
        toy(f"      - file: {_yaml_path(evil)}\n        regex: 'version (.*)'\n      - env: TOY_DRIVER_VERSION\n")
    )
    code = "import sys; from adapter_matrix.cli import main; sys.argv[0] = 'adapter-matrix'; main()"
    argv = [sys.executable, "-c", code, "check", "-m", str(path), "--torch", "2.13.0", "--adapter", "1.0.0"]
    for env in ({}, {"TOY_DRIVER_VERSION": "2.1\x1b]0;title\x07"}):
        proc = subprocess.run(argv, env=dict(os.environ, **env), capture_output=True, text=True, timeout=BOUND * 3)
        said = proc.stdout + proc.stderr
        assert "\x1b" not in said and "\x07" not in said and "\\x1b" in proc.stdout, said
    missing = tmp_path / "gone\x1b[2J"
    path.write_text(toy(f"      - file: {_yaml_path(missing)}\n        regex: '(.*)'\n"))
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=BOUND * 3)
    assert "\x1b" not in proc.stdout + proc.stderr and "gone\\x1b[2J" in proc.stdout
