"""An environment as the binary check sees it: files, not a running interpreter."""

from __future__ import annotations

import os
import sys
from typing import NamedTuple, Tuple

__all__ = ["Site"]


class Site(NamedTuple):
    """An environment as files: its import path (site-packages folders), the root its
    absolute paths live under (``/``, or an image's unpacked root), its loader settings,
    and its interpreter's cache tag (``cpython-311``, which names compiled cores)."""

    paths: Tuple[str, ...]
    root: str = "/"
    ld_library_path: str = ""
    cache_tag: str = ""

    @classmethod
    def running(cls) -> Site:
        """This process: ``sys.path``, this machine, this ``LD_LIBRARY_PATH``."""
        return cls(tuple(sys.path), "/", os.environ.get("LD_LIBRARY_PATH", ""), sys.implementation.cache_tag or "")
