"""The CPU computation a distributed comparison expects, in a fresh interpreter (ranks.py).

    python reference.py MODULE FUNCTION OUT_JSON [INT...]

Calls ``FUNCTION(*INTS)`` of the data module ``MODULE`` of this folder (``llm_data``,
``ddp_data``) and writes its result as JSON. It runs as the ranks do, in a process of its own
with one intra-op thread and the adapter imported, so nothing that ran before in the test's
process can change its rounding.
"""

from __future__ import annotations

import importlib
import json
import os
import sys


def main() -> None:
    module, function, out, args = sys.argv[1], sys.argv[2], sys.argv[3], [int(a) for a in sys.argv[4:]]
    import shims  # noqa: F401 - the ranks' process state: the adapter active beside torch

    sys.path.insert(0, __file__.rsplit("/", 1)[0])
    result = getattr(importlib.import_module(module), function)(*args)
    with open(f"{out}.{os.getpid()}", "w") as fh:  # whole or not at all: later tests read it
        json.dump(result, fh)
    os.replace(f"{out}.{os.getpid()}", out)


if __name__ == "__main__":
    main()
