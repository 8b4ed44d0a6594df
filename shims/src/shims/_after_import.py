"""Run code right after a module is imported, without importing it (or now, if it is)."""

from __future__ import annotations

import importlib.util
import sys
from types import ModuleType
from typing import Any, Callable

__all__ = ["after_import"]


def after_import(name: str, then: Callable[[], None]) -> None:
    """Call ``then()`` once module ``name`` is executed: now if it is imported already."""
    if name in sys.modules:
        then()
    else:
        sys.meta_path.insert(0, _AfterImport(name, then))


class _AfterImport:
    """A meta path finder that runs ``then()`` once, right after module ``name`` is executed."""

    def __init__(self, name: str, then: Callable[[], None]) -> None:
        self.name, self.then = name, then

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        if fullname != self.name:
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(fullname)
        if spec is None or spec.loader is None:
            return spec
        exec_module = spec.loader.exec_module
        then = self.then

        def exec_then(module: ModuleType) -> None:
            exec_module(module)
            then()

        spec.loader.exec_module = exec_then  # type: ignore[method-assign]
        return spec
