"""A distribution's name, one way: PEP 503's canonical form, and the escaped form that wheel
and ``.dist-info`` file names use.

:func:`canonical_name` is ``packaging.utils.canonicalize_name`` (a unit test ties the two),
and every module of the package canonicalizes through it. It lives here because ``check`` runs
it at start-up, and importing ``packaging.utils`` loads ``packaging.tags`` (about 20 ms, more
than the rest of a warm check).
"""

from __future__ import annotations

__all__ = ["canonical_name", "escaped_name", "is_project_name"]


def canonical_name(name: str) -> str:
    """``Torch_NPU`` and ``torch.npu`` -> ``torch-npu`` (PEP 503): names that are the same project.

    PEP 503's ``re.sub(r"[-_.]+", "-", name).lower()`` with string methods: ``re`` is not
    loaded yet when a warm ``check`` starts, and would cost it 4 ms."""
    out = name.lower().replace("_", "-").replace(".", "-")
    while "--" in out:
        out = out.replace("--", "-")
    return out


def escaped_name(name: str) -> str:
    """The name as a wheel's or a ``.dist-info`` folder's file name spells it: ``torch_npu``."""
    return canonical_name(name).replace("-", "_")


def is_project_name(name: str) -> bool:
    """Whether pip can install ``name``: PEP 508's ``[A-Z0-9]([A-Z0-9._-]*[A-Z0-9])?``, ASCII
    and case-insensitive (``demo adapter`` or ``démo`` makes every printed command fail)."""

    def alnum(c: str) -> bool:
        return c.isascii() and c.isalnum()

    return bool(name) and alnum(name[0]) and alnum(name[-1]) and all(alnum(c) or c in "._-" for c in name)
