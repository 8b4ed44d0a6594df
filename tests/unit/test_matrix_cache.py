"""The compiled-matrix cache never serves a model built by other code than the code running.

In a checkout, the modules that read and build the model change between versions; the
cache key stamps every module of ``adapter_matrix/matrix`` (not a hand-kept list that
once forgot ``reader.py``). A copy of the package whose reader is edited must compile
the matrix anew, into an entry of its own, and answer with what the edited code says.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import adapter_matrix

from .helpers import FIXTURES

PACKAGE = Path(adapter_matrix.__file__).parent

# Loads the fixture through the cache; prints the entry it used and a message the reader writes.
PROBE = """
import json, sys
# the copy, not this checkout: past an editable install's finder, which would take precedence
sys.meta_path = [f for f in sys.meta_path if not type(f).__module__.startswith("__editable__")]
sys.path.insert(0, sys.argv[2])
from adapter_matrix.matrix import cache, reader
result = cache.load_matrix(sys.argv[1])
raw = open(sys.argv[1], "rb").read()
print(json.dumps({
    "entry": cache.compiled_matrix_path(raw, sys.argv[1]),
    "reader": reader.__file__,
    "marker": getattr(reader, "EDITED", None),
    "releases": [str(r.version) for r in result.matrix.releases],
}))
"""


def _load(copy: Path, cache: Path, matrix: Path) -> dict:
    env = dict(os.environ, ADAPTER_MATRIX_CACHE=str(cache), PYTHONDONTWRITEBYTECODE="1")
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, str(matrix), str(copy)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_an_edited_reader_is_a_new_cache_key_never_a_stale_model(tmp_path):
    copy = tmp_path / "copy"
    shutil.copytree(PACKAGE, copy / "adapter_matrix", ignore=shutil.ignore_patterns("__pycache__"))
    cache = tmp_path / "cache"
    matrix = tmp_path / "compat.yaml"
    shutil.copy(FIXTURES / "minimal.yaml", matrix)

    first = _load(copy, cache, matrix)
    assert first["reader"].startswith(str(copy))  # the copy runs, not the installed package
    assert _load(copy, cache, matrix)["entry"] == first["entry"]  # unchanged code: the same entry
    assert len(list((cache / "matrices").iterdir())) == 1

    reader = copy / "adapter_matrix" / "matrix" / "reader.py"
    reader.write_text(reader.read_text() + "\nEDITED = 'yes'  # a new reader\n")
    edited = _load(copy, cache, matrix)
    assert edited["marker"] == "yes"
    assert edited["entry"] != first["entry"]  # the edited reader compiles the matrix anew
    assert len(list((cache / "matrices").iterdir())) == 2
    assert edited["releases"] == first["releases"] == ["1.0.0", "2.0.0"]


def test_the_cache_key_stamps_every_module_of_the_model_package():
    from adapter_matrix.matrix import cache

    cache._stamp = None
    stamped = {part.split(":")[0] for part in cache._model_stamp().decode().split(";")}
    assert stamped == {p.name for p in (PACKAGE / "matrix").glob("*.py")}
