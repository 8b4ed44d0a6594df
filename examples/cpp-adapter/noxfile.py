"""tiny-accel's matrix cells: one `device(...)` session per row of `adapter-matrix plan`.

    nox -l                                # every cell of compat.yaml
    nox -t smoke                          # the smoke tier
    nox -s "device(py3.11-torch2.13)"     # one cell, by the id `adapter-matrix plan` prints
    ADAPTER_MATRIX_WHEELS=/path/to/wheels nox -s "device(py3.11-torch2.13)"   # offline

adapter_matrix.nox declares the cells; this file says what to build and how to test.
"""

import nox

from adapter_matrix.nox import Adapter, Pytest, cells

nox.options.default_venv_backend = "uv|virtualenv"
nox.options.sessions = ["device"]  # a bare `nox` runs every cell: select a tier with -t

cells(
    Adapter(
        matrix="compat.yaml",
        projects=["."],  # the folders built into wheels and installed, in order
        tests=Pytest("tests"),  # or Command(["python", "-m", "mysuite", "{posargs}"])
        # build=("adapter-matrix", "build", "--json"),  # a native part, compiled against the cell's torch
        # env={"MY_DRIVER_VERSION": "2.1"},  # what a runner provides
    )
)
