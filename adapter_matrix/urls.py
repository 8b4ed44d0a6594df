"""The indexes the tool names, one constant each: every module builds its URLs from these.

Strings only, so any part may import it (the core's first layer beside ``_version``).
"""

from __future__ import annotations

__all__ = ["PYPI_SIMPLE", "PYPI_PROJECT", "PYTORCH_INDEX", "PYTORCH_SOURCE_ARCHIVE"]

PYPI_SIMPLE = "https://pypi.org/simple"  # PyPI's Simple API (PEP 503/691); a project's page is PYPI_SIMPLE/NAME/
PYTORCH_INDEX = "https://download.pytorch.org/whl/{label}"  # PyTorch's index of one build variant (cpu, cu128, xpu)
PYPI_PROJECT = "https://pypi.org/project/{name}/"  # a project's page for people (the pytorch.org entry links it)
PYTORCH_SOURCE_ARCHIVE = "https://github.com/pytorch/pytorch/releases/download/v{version}/pytorch-v{version}.tar.gz"  # a release's source (test packs)
