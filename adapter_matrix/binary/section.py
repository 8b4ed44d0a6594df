"""The binary section of ``check``: the audit of an installed adapter, or its stored answer.

The audit and its store keep the section as the JSON it is written as; :func:`binary_section`
hands ``check`` the declared :class:`~adapter_matrix.answer.BinarySection`, read once here
(typed at the boundary, as packaging's ``pylock`` reads a lock file).

It sits in the binary stage (after ``check`` and ``device``, whose facts it reads: where a
distribution is installed, the environment ``check --env`` judges, the reference device's
compiled cores); ``check`` itself only renders the section and folds it into the verdict
(:mod:`adapter_matrix.check.binary`).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Dict, Mapping, Optional, Tuple

from ..answer import BinarySection
from ..documents import DocumentError, from_json

if TYPE_CHECKING:
    from ..check.elsewhere import Target
    from ..matrix.model import Release
    from .site import Site

__all__ = ["binary_section", "binary_entry", "stored_binary_section"]


def _site(target: Optional[Target]) -> Site:
    """The environment to judge: ``check --env``'s files and root (``target``), else the running one."""
    from .site import Site

    if target is None:
        return Site.running()
    tag = "cpython-" + target.python.rstrip("t").replace(".", "")
    return Site(target.paths, target.root, "" if target.root != "/" else os.environ.get("LD_LIBRARY_PATH", ""), tag)


def _where(distribution: str, target: Optional[Target]) -> Optional[Tuple[Site, str]]:
    """The environment to judge and the folder the distribution is installed in there; None
    when it is not installed."""
    from ..check.facts import distribution_folder

    site = _site(target)
    located = distribution_folder(distribution, site.paths)
    return None if located is None else (site, located[0])


def binary_entry(distribution: str, pin: Optional[str], target: Optional[Target] = None) -> Optional[str]:
    """Where the section for ``distribution`` built for torch ``pin`` is stored (a memo
    entry, :mod:`adapter_matrix.memo`); None when it is not installed."""
    from .store import environment_key

    where = _where(distribution, target)
    return None if where is None else environment_key(distribution, where[1], where[0], pin)


def stored_binary_section(
    distribution: str, pin: Optional[str], target: Optional[Target] = None
) -> Optional[Dict[str, object]]:
    """The stored section for ``distribution`` built for torch ``pin``, if nothing it was
    decided from changed since; None otherwise (or when it is not installed). A stat of each
    file it read: it imports neither the model, the ELF reader nor the audit."""
    from ..memo import load_stamped

    entry = binary_entry(distribution, pin, target)
    return None if entry is None else load_stamped(entry)


def _typed(report: Mapping[str, object]) -> BinarySection:
    return from_json(BinarySection, report, "the binary section")


def binary_section(
    distribution: str, release: Optional[Release] = None, target: Optional[Target] = None
) -> Optional[BinarySection]:
    """The ``binary`` section for the installed ``distribution`` (in ``target``, ``check
    --env``'s environment, else this one); None when it is not installed.

    The warm path (nothing changed since the last check) is :func:`stored_binary_section`."""
    from ..check.binary import built_for

    pin = built_for(release)
    cached = stored_binary_section(distribution, pin, target)
    if cached is not None:
        try:
            return _typed(cached)
        except DocumentError:  # stored in another shape: audited again, and stored anew
            pass
    where = _where(distribution, target)
    if where is None:
        return None
    from .audit import audit

    report = audit(distribution, where[0], built_for=pin)
    return None if report is None else _typed(report)
