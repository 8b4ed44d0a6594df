"""Shared helpers for the tool's unit tests and the device conformance suite."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "tests" / "fixtures"


@pytest.fixture
def repo() -> Path:
    return REPO


@pytest.fixture(autouse=True)
def _private_cache(tmp_path_factory, monkeypatch):
    """Each test session gets its own compiled-matrix cache (never the user's)."""
    if "ADAPTER_MATRIX_TEST_KEEP_CACHE" not in os.environ:
        monkeypatch.setenv("ADAPTER_MATRIX_CACHE", str(tmp_path_factory.getbasetemp() / "cache"))
