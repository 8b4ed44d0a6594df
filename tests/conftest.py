"""What every suite of this repository shares: ``--shuffle SEED`` runs the tests in a seeded
random order, to show that none depends on what ran before it.

    pytest tests/unit --shuffle 1        # the same order again with the same seed

The order of the modules is shuffled, then the order of the tests inside each module (as
pytest-randomly does): a module-scoped fixture is still set up once. The seed is printed in
the header, so a failing order can be replayed. ``--shuffle`` without it keeps pytest's order.
"""

from __future__ import annotations

import random
import warnings
from typing import Dict, List

# typer < 0.24 (pyproject.toml keeps it there: 0.24 imports pydantic at start-up) imports two
# names that click 8.2 deprecates, a DeprecationWarning at typer's first import. It is typer's to
# fix, and it would end `pytest -W error` before the first test: typer is imported once here, in
# the first conftest pytest loads, with exactly that warning ignored.
with warnings.catch_warnings():
    warnings.filterwarnings(
        "ignore", message=r"'click\.utils\.get_(binary|text)_stream' is deprecated", category=DeprecationWarning
    )
    import typer  # noqa: F401


def pytest_addoption(parser):
    parser.addoption(
        "--shuffle",
        type=int,
        metavar="SEED",
        default=None,
        help="run the tests in a random order drawn from SEED (modules, then the tests inside each)",
    )


def pytest_report_header(config):
    seed = config.getoption("--shuffle")
    return None if seed is None else f"test order: shuffled with seed {seed} (--shuffle {seed} replays it)"


def pytest_collection_modifyitems(config, items):
    seed = config.getoption("--shuffle")
    if seed is None:
        return
    rng = random.Random(seed)
    modules: Dict[str, List] = {}
    for item in items:
        modules.setdefault(str(item.fspath), []).append(item)
    order = list(modules)
    rng.shuffle(order)
    shuffled = []
    for module in order:
        tests = modules[module]
        rng.shuffle(tests)
        shuffled += tests
    items[:] = shuffled
