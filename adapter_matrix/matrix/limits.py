"""Bounds on what a matrix file may ask for (docs/security.md).

The loader rejects values outside them, and the import-time guard re-checks its memos
against them (a memo is read back from disk, so it is untrusted input too). This module
imports nothing: the guard loads it inside ``import torch``.
"""

MAX_TIMEOUT = 600.0  # seconds a detector's command may run
MAX_REGEX_CHARS = 1000  # a version regex is short
MAX_AGE_DAYS = 36500  # evidence older than a century is not evidence
