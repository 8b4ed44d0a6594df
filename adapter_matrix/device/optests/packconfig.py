"""What the runner (``packrun``) tells the pytest plugin (``packplugin``) of each file's process:
a JSON file named by :data:`CONFIG_ENV`. Its own module so that the runner, which the nox cells
import, never imports pytest: only the plugin, inside the test process, does."""

from __future__ import annotations

from typing import List, Optional, TypedDict

from .packoverrides import Overrides

__all__ = ["CONFIG_ENV", "PluginConfig"]

CONFIG_ENV = "ADAPTER_MATRIX_OPTESTS"


class PluginConfig(TypedDict):
    """The file ``CONFIG_ENV`` names, written by the runner for each file's process."""

    log: str  # where the plugin appends its JSON lines
    device: str
    activate: Optional[str]
    overrides: Overrides
    shard: List[int]  # [index, count]
    only: Optional[List[str]]  # the tests to run (a control run on CPU), else all
