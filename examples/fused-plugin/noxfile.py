"""tiny-fused's cells: tiny-openreg's (this plugin is a layer on it, compat.yaml), each building
the adapter from ../cmake-adapter and then this plugin against the adapter just built, both
against the cell's torch, and running both test suites.

    nox -l                                # the cells: tiny-openreg's matrix, one per plan row
    nox -s "device(py3.11-torch2.13)"     # one cell

adapter_matrix.nox declares the cells; this file says what to build and how to test.
"""

import nox

from adapter_matrix.nox import Adapter, Pytest, cells

nox.options.default_venv_backend = "uv|virtualenv"
nox.options.sessions = ["device"]

cells(
    Adapter(
        matrix="../cmake-adapter/compat.yaml",  # the torch lines and Pythons are the adapter's
        layers=["compat.yaml"],  # the cell's check judges this layer too, its op library included
        # in order: the adapter is built and installed first, then this plugin builds against it
        projects=["../cmake-adapter", "."],
        # the plugin's suite (tests/fused: group "fused") and the adapter's (group "tests")
        tests=Pytest("tests", args=["../cmake-adapter/tests"]),
        evidence="evidence",  # this plugin's records, beside its compat.yaml
        # what the records ran on beside the adapter's sources: a change to either ages them
        sources=["MANIFEST.in", "pyproject.toml", "setup.py", "tests", "tiny_fused"],
    )
)
