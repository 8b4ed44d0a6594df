"""What every suite of this repository shares: ``--shuffle SEED`` runs the tests in a seeded
random order, to show that none depends on what ran before it.

    pytest tests/unit --shuffle 1        # the same order again with the same seed

The order of the modules is shuffled, then the order of the tests inside each module (as
pytest-randomly does): a module-scoped fixture is still set up once. The seed is printed in
the header, so a failing order can be replayed. ``--shuffle`` without it keeps pytest's order.
"""

from __future__ import annotations

import random
from typing import Dict, List


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
