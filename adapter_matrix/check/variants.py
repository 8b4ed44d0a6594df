"""PyTorch's build variants: the local version labels its wheels carry, and where each is published.

One pattern for both questions ``check`` asks of a label. Is it a build variant (a
companion must be built for the same one)? ``2.8.0+cpu``, ``+cu126``, ``+rocm6.2``,
``+xpu``, and the C++11-ABI builds of torch 2.1-2.6: ``+cpu.cxx11.abi`` (PyTorch's) and
``+cxx11.abi`` (Intel's, for IPEX). A source build's ``+git1234`` is not. And where does
pip find it? PyTorch's index ``https://download.pytorch.org/whl/<label>`` serves the
plain labels only: a C++11-ABI build comes from an index the matrix declares
(``sources:``), never from a URL made of its label.
"""

from __future__ import annotations

import re
from typing import Optional

from ..urls import PYTORCH_INDEX

__all__ = ["is_variant", "pytorch_index", "index_label"]

_VARIANT = re.compile(r"(?P<indexed>cpu|xpu|cu\d+|rocm\d+(?:\.\d+)*)|(?:cpu\.)?cxx11\.abi")


def is_variant(label: Optional[str]) -> bool:
    """Whether ``label`` (a local version label, e.g. ``cpu``) names a PyTorch build variant."""
    return label is not None and _VARIANT.fullmatch(label) is not None


def pytorch_index(label: str) -> Optional[str]:
    """PyTorch's own index for the builds labelled ``label``, if it publishes one of that name."""
    found = _VARIANT.fullmatch(label)
    return PYTORCH_INDEX.format(label=label) if found is not None and found.group("indexed") else None


def index_label(url: str) -> Optional[str]:
    """The label every torch on one of PyTorch's own indexes carries (``…/whl/nightly/xpu``
    has ``+xpu`` builds only); None for any other index."""
    host = PYTORCH_INDEX.format(label="")
    if not url.startswith(host):
        return None
    last = url.rstrip("/").rsplit("/", 1)[-1]
    found = _VARIANT.fullmatch(last)
    return last if found is not None and found.group("indexed") else None
