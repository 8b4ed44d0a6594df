"""The adapter's own configuration of PyTorch's device tests (torch 2.13+), applied to the sweep.

From torch 2.13, ``PrivateUse1TestBase.set_test_configs(op_allowlist=, op_overrides=,
test_exclusions=)`` is how an out-of-tree device says, once, how PyTorch's device-generic
tests treat it: which OpInfos it runs at all (``op_allowlist``, by ``OpInfo.full_name``,
the sweep's op id), the ``DecorateInfo``s it adds to them (``op_overrides``: its
tolerances, its skips) and the generic tests it leaves out (``test_exclusions``). An
adapter that sets them where it is imported gets the same from the sweep, through
PyTorch's own code, not a copy of it:

- the op worker and the compiled sample take ``op_db`` as PyTorch's ``@ops`` tests see it
  on the device: ``_apply_op_allowlist`` then ``_apply_op_overrides`` of
  ``PrivateUse1TestBase`` on an ``ops(op_db)`` (:func:`configured`); an override's
  ``toleranceOverride`` for ``TestCommon.test_compare_cpu`` widens the sweep's tolerance,
  an override that skips that test makes a value difference tolerated and noted;
- ``test_exclusions`` of ``TestCommon`` (``"*"`` or ``test_compare_cpu``) leave the
  forward tasks out (:func:`excluded`); the module worker's
  ``instantiate_device_type_tests`` applies those of ``TestModule`` itself.

A torch before 2.13 has none of them: ``op_db`` as it is. The sweep's expectations are a
separate thing (:mod:`.expected`, :mod:`.disabled_tests`): an excluded or filtered task
is not run, so no expectation can see it pass again.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, List, Optional, Tuple, Type

if TYPE_CHECKING:  # torch is imported in the worker process only
    from torch.testing._internal.common_device_type import PrivateUse1TestBase
    from torch.testing._internal.opinfo.core import OpInfo

__all__ = ["configured", "excluded"]


def _base() -> Optional[Type[PrivateUse1TestBase]]:
    from torch.testing._internal import common_device_type as cdt

    base = getattr(cdt, "PrivateUse1TestBase", None)
    found: Optional[Type[PrivateUse1TestBase]] = (
        base if base is not None and hasattr(base, "set_test_configs") else None
    )
    return found


def configured(op_db: List[OpInfo]) -> Tuple[List[OpInfo], Optional[str]]:
    """``op_db`` under the adapter's ``op_allowlist`` and ``op_overrides``, and a note of
    what they changed (None where they are unset or torch has no ``set_test_configs``)."""
    base = _base()
    if base is None or (base.op_allowlist is None and not base.op_overrides):
        return list(op_db), None
    from torch.testing._internal.common_device_type import ops

    holder = ops(op_db)
    base._apply_op_allowlist(holder)  # PyTorch's order: filter first, then decorate
    base._apply_op_overrides(holder)
    parts = []
    if base.op_allowlist is not None:
        parts.append(f"op_allowlist keeps {len(holder.op_list)} of {len(op_db)} OpInfos")
    if base.op_overrides:
        parts.append(f"op_overrides decorate {len(base.op_overrides)} OpInfos")
    return list(holder.op_list), "the adapter's set_test_configs: " + ", ".join(parts)


def excluded(test_class: str, test: str) -> bool:
    """Whether the adapter's ``test_exclusions`` leave out ``test_class.test`` (or the class)."""
    base = _base()
    if base is None:
        return False
    skipped = base._get_test_exclusions(test_class)
    return "*" in skipped or test in skipped
