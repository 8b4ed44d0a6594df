"""Test sessions, generated from compat.yaml through adapter_matrix (never parsed here).

    nox -l                      # every session
    nox -t unit                 # the tool's own tests on every local Python (3.8-3.13)
"""

from __future__ import annotations

import os
import sys

import nox

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from adapter_matrix.interpreters import expose  # noqa: E402

UNIT_PYTHONS = ["3.8", "3.9", "3.10", "3.11", "3.12", "3.13"]

nox.options.default_venv_backend = "uv|virtualenv"
nox.options.reuse_existing_virtualenvs = True
nox.options.sessions = []  # nothing runs without -s/-t: the matrix is large

expose(UNIT_PYTHONS)


@nox.session(python=UNIT_PYTHONS, tags=["unit"])
def unit(session: nox.Session) -> None:
    """The tool's own tests (no torch): the CLI must work on every Python torch supports."""
    session.install("-e", ".[test]")
    session.run("python", "-m", "pytest", "tests/unit", "-q", *session.posargs)
