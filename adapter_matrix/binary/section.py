"""The binary section of ``check``: the audit of an installed adapter, or its stored answer.

It sits in the binary stage (after ``check`` and ``device``, whose facts it reads: where a
distribution is installed, the environment ``check --env`` judges, the reference device's
compiled cores); ``check`` itself only renders the section and folds it into the verdict
(:mod:`adapter_matrix.check.binary`).
"""

from __future__ import annotations

import os
from typing import Any, Dict, Optional

from ..check.binary import built_for

__all__ = ["binary_section"]


def binary_section(distribution: str, release: Any = None, site: Any = None) -> Optional[Dict[str, Any]]:
    """The ``binary`` section for the installed ``distribution``; None when it is not installed.

    The warm path (nothing changed since the last check) is a stored answer and a stat of
    each file it was decided from: it imports neither the ELF reader nor the audit."""
    from ..check.facts import distribution_folder, judged
    from .site import Site
    from .store import environment_key, load_verdict

    target = judged()
    if site is None and target is not None:  # `check --env`: that environment's files and root
        tag = "cpython-" + target.python.rstrip("t").replace(".", "")
        site = Site(target.paths, target.root, "" if target.root != "/" else os.environ.get("LD_LIBRARY_PATH", ""), tag)
    site = site or Site.running()
    located = distribution_folder(distribution, site.paths)
    if located is None:
        return None
    pin = built_for(release)
    cached = load_verdict(environment_key(distribution, located[0], site, pin))
    if cached is not None:
        return cached
    from .audit import audit

    return audit(distribution, site, built_for=pin)
