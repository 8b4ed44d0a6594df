"""The binary section of ``check``: the audit of an installed adapter, or its stored answer.

It sits in the binary stage (after ``check`` and ``device``, whose facts it reads: where a
distribution is installed, the environment ``check --env`` judges, the reference device's
compiled cores); ``check`` itself only renders the section and folds it into the verdict
(:mod:`adapter_matrix.check.binary`).
"""

from __future__ import annotations

import os
from typing import Any, Dict, Optional, Tuple

__all__ = ["binary_section", "binary_entry", "stored_binary_section"]


def _where(distribution: str, site: Any) -> Optional[Tuple[Any, str]]:
    """The environment to judge (``check --env``'s, else the running one) and the folder the
    distribution is installed in; None when it is not installed."""
    from ..check.facts import distribution_folder, judged
    from .site import Site

    target = judged()
    if site is None and target is not None:  # `check --env`: that environment's files and root
        tag = "cpython-" + target.python.rstrip("t").replace(".", "")
        site = Site(target.paths, target.root, "" if target.root != "/" else os.environ.get("LD_LIBRARY_PATH", ""), tag)
    site = site or Site.running()
    located = distribution_folder(distribution, site.paths)
    return None if located is None else (site, located[0])


def binary_entry(distribution: str, pin: Optional[str], site: Any = None) -> Optional[str]:
    """Where the section for ``distribution`` built for torch ``pin`` is stored (a memo
    entry, :mod:`adapter_matrix.memo`); None when it is not installed."""
    from .store import environment_key

    where = _where(distribution, site)
    return None if where is None else environment_key(distribution, where[1], where[0], pin)


def stored_binary_section(distribution: str, pin: Optional[str], site: Any = None) -> Optional[Dict[str, Any]]:
    """The stored section for ``distribution`` built for torch ``pin``, if nothing it was
    decided from changed since; None otherwise (or when it is not installed). A stat of each
    file it read: it imports neither the model, the ELF reader nor the audit."""
    from ..memo import load_stamped

    entry = binary_entry(distribution, pin, site)
    return None if entry is None else load_stamped(entry)


def binary_section(distribution: str, release: Any = None, site: Any = None) -> Optional[Dict[str, Any]]:
    """The ``binary`` section for the installed ``distribution``; None when it is not installed.

    The warm path (nothing changed since the last check) is :func:`stored_binary_section`."""
    from ..check.binary import built_for

    pin = built_for(release)
    cached = stored_binary_section(distribution, pin, site)
    if cached is not None:
        return cached
    where = _where(distribution, site)
    if where is None:
        return None
    from .audit import audit

    return audit(distribution, where[0], built_for=pin)
