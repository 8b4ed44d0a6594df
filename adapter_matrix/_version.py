"""The version of the adapter-matrix distribution (kept apart so that any module can read it)."""

__version__ = "0.2.0"
