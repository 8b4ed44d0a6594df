"""toy-adapter's matrix cells: one `device(...)` session per row of `adapter-matrix plan`.

    nox -l                                # every cell of compat.yaml
    nox -s "device(py3.11-torch2.13)"     # one cell
    ADAPTER_MATRIX_WHEELS=/opt/wheels:wheelhouse nox -s "device(py3.11-torch2.13)"   # offline

Everything comes from adapter_matrix.nox (docs/nox.md in adapter-matrix): the adapter
says what to build, how to test, and the driver its cells run with.
"""

import nox

from adapter_matrix.nox import Adapter, Pytest, cells

nox.options.default_venv_backend = "uv|virtualenv"
nox.options.sessions = ["device"]

cells(
    Adapter(
        matrix="compat.yaml",
        projects=["."],  # adapter-matrix goes into each cell by itself: the copy running nox
        tests=Pytest("tests"),
        suites=["tests"],
        env={"TOY_DRIVER_VERSION": "2.1"},  # the driver a real runner provides (toy_adapter/compat.yaml: driver >=2.0)
        load="import",  # a skeleton device: no memory yet, so the cell imports it but creates no tensor on it
    )
)
