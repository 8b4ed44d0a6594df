"""The HTML page in a real browser: headless Chromium (Debian's `chromium` package).

The DOM must hold one `td.cell STATE` per grid position with the state the model
gives it; in light and in dark mode every state must have its own background and
readable text (WCAG AA contrast, measured from the computed styles); on a phone-sized
window the page must not scroll sideways. Screenshots go to results/screenshots/ (CI's
artifact folder). `.ci/run` installs Chromium; without it these tests are skipped.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import re
import shutil
import subprocess
import tempfile
from collections import Counter
from html.parser import HTMLParser
from pathlib import Path
from typing import Dict, List, Tuple

import pytest

from adapter_matrix.matrix.loader import load
from adapter_matrix.matrix.model import Status
from adapter_matrix.matrix.queries import cells, maintained
from adapter_matrix.tables import views as tables

from .helpers import FIXTURES, REPO

BROWSER = next((shutil.which(name) for name in ("chromium", "chromium-browser") if shutil.which(name)), None)
pytestmark = [
    pytest.mark.slow,  # starts Chromium for each page
    pytest.mark.skipif(
        BROWSER is None, reason="no Chromium on PATH (Debian: apt-get install chromium; .ci/run installs it)"
    ),
]
TODAY = _dt.date(2026, 12, 1)
SCREENSHOTS = REPO / "results" / "screenshots"
PHONE, DESKTOP = (390, 844), (1280, 900)

# Appended to a copy of the page (the page itself has no scripts): reads what the browser
# computed and writes it into the DOM, which --dump-dom then prints.
PROBE = """
<script>
(function () {
  var box = document.querySelector(".scroll");
  var out = {states: {}, width: window.innerWidth, scrollWidth: document.documentElement.scrollWidth,
             tableWidth: box.scrollWidth, boxWidth: box.clientWidth};
  var body = getComputedStyle(document.body);
  out.body = {bg: body.backgroundColor, fg: body.color};
  document.querySelectorAll("td.cell").forEach(function (td) {
    var state = td.className.replace("cell", "").trim();
    if (!out.states[state]) {
      var s = getComputedStyle(td);
      out.states[state] = {bg: s.backgroundColor, fg: s.color};
    }
  });
  var pre = document.createElement("pre");
  pre.id = "probe";
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
})();
</script>
"""


def _chromium(*args: str) -> str:
    with tempfile.TemporaryDirectory() as profile:
        proc = subprocess.run(
            [
                BROWSER, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                "--disable-background-networking", "--disable-component-update", "--disable-sync",
                "--hide-scrollbars", f"--user-data-dir={profile}", *args,
            ],
            capture_output=True, text=True, timeout=120,
        )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout


class _Cells(HTMLParser):
    """Collects the state of every `td.cell`, row by row."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: List[List[str]] = []
        self.probe = ""
        self._in_probe = False

    def handle_starttag(self, tag: str, attrs: List[Tuple[str, str]]) -> None:
        attr = dict(attrs)
        if tag == "tr":
            self.rows.append([])
        classes = (attr.get("class") or "").split()
        if tag == "td" and "cell" in classes:
            self.rows[-1].append(" ".join(c for c in classes if c != "cell"))
        self._in_probe = tag == "pre" and attr.get("id") == "probe"

    def handle_data(self, data: str) -> None:
        if self._in_probe:
            self.probe += data


def _dom(page: Path, *args: str) -> _Cells:
    parser = _Cells()
    parser.feed(_chromium(*args, "--dump-dom", page.as_uri()))
    return parser


def _rgb(css: str) -> Tuple[float, ...]:
    return tuple(float(x) for x in re.findall(r"[\d.]+", css)[:3])


def _luminance(rgb: Tuple[float, ...]) -> float:
    def channel(c: float) -> float:
        c /= 255
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (channel(c) for c in rgb)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def _contrast(a: str, b: str) -> float:
    la, lb = sorted((_luminance(_rgb(a)), _luminance(_rgb(b))), reverse=True)
    return (la + 0.05) / (lb + 0.05)


def _expected_grid(matrix_path: Path) -> List[List[str]]:
    """The state of every grid position, from the model (the page must agree)."""
    matrix = load(matrix_path).matrix
    shown = maintained(matrix, TODAY)  # the grid of every maintained release, as the page draws it
    by_position: Dict[Tuple[str, str], set] = {}
    for cell in cells(matrix, shown, TODAY):
        by_position.setdefault((str(cell.line.minor), str(cell.python)), set()).add(cell.status)
    claimed_ft = {p for (_l, p) in by_position if p.endswith("t")}
    pythons = sorted(
        {str(p) for line in matrix.torch for p in line.python if not p.free_threaded} | claimed_ft,
        key=lambda p: (tuple(int(x) for x in p.rstrip("t").split(".")), p.endswith("t")),
    )
    rows = []
    for line in sorted(matrix.torch, key=lambda t: t.minor, reverse=True):
        row = []
        for python in pythons:
            states = by_position.get((str(line.minor), python))
            if states and len(shown) > 1:  # several releases: the best status any of them gives it
                row.append(min(states, key=list(Status).index).value)
            elif states:  # one release: its dimension values agree, or the position is mixed
                row.append(states.pop().value if len(states) == 1 else "mixed")
            else:
                row.append("unclaimed" if python in {str(p) for p in line.python} else "nowheel")
        rows.append(row)
    return rows


@pytest.fixture(scope="module")
def page(tmp_path_factory) -> Path:
    """This repository's grid page (as `docs/compatibility.html`, for a fixed date)."""
    path = tmp_path_factory.mktemp("html") / "compatibility.html"
    path.write_text(tables.render(load(REPO / "compat.yaml").matrix, "grid", "html", today=TODAY), encoding="utf-8")
    return path


def _with_probe(page: Path) -> Path:
    probed = page.with_name(page.stem + ".probe.html")
    probed.write_text(page.read_text(encoding="utf-8").replace("</body>", PROBE + "</body>"), encoding="utf-8")
    return probed


def test_the_dom_has_one_cell_per_position_with_the_models_state(page):
    dom = _dom(page)
    rows = [r for r in dom.rows if r]
    assert rows == _expected_grid(REPO / "compat.yaml")
    counts = Counter(state for row in rows for state in row)
    positions = {(c.line.minor, c.python) for c in cells(load(REPO / "compat.yaml").matrix)}
    assert sum(counts.values()) == 15 * 8  # 15 torch lines x 8 Pythons
    assert sum(n for state, n in counts.items() if state not in ("unclaimed", "nowheel")) == len(positions)


def test_mixed_cells_of_extra_dimensions_reach_the_dom(tmp_path):
    path = tmp_path / "dims.html"
    matrix = FIXTURES / "tables" / "dimensions.yaml"
    path.write_text(tables.render(load(matrix).matrix, "grid", "html", "zh", today=TODAY), encoding="utf-8")
    rows = [r for r in _dom(path).rows if r]
    assert rows == _expected_grid(matrix)
    assert {"mixed", "broken", "unclaimed", "nowheel"} <= {s for r in rows for s in r}


def _companions_showing_every_state():
    """companions.yaml with a line no release pairs with and a line it does not state."""
    from adapter_matrix.matrix.loader import load_text

    text = (FIXTURES / "companions.yaml").read_text()
    text = text.replace('"2.3": {0.18.0: 2.3.0, 0.18.1: 2.3.1}', '"2.3": none')  # nocompanion
    text = text.replace('      "2.1": {2.1.0: 2.1.0, 2.1.2: 2.1.2}\n', "")  # unstated (torchaudio); built and open stay
    return load_text(text, "companions.yaml", check_modules=False).matrix


def _with_unfrozen_release():
    """This repository's matrix with a next release (9.9.9) that nothing has frozen."""
    from adapter_matrix.matrix.loader import load_text

    text = (REPO / "compat.yaml").read_text()
    ahead = (
        '  - version: 9.9.9\n    date: 2026-12-03\n    torch: ">=2.1,<2.16"\n    python: ">=3.8,<3.14"\n'
        "    status: experimental\n    reason: work in progress\n"
    )
    return load_text(text.replace("releases:\n", "releases:\n" + ahead, 1), "compat.yaml", check_modules=False).matrix


def _state_pages(folder: Path) -> List[Path]:
    """Pages that between them show every state: this repository's grid plus fixtures."""
    from adapter_matrix.ci.record import read_records
    from adapter_matrix.device.opsweep.record import read_records as read_sweeps

    minimal = load(FIXTURES / "minimal.yaml").matrix
    dims = load(FIXTURES / "tables" / "dimensions.yaml").matrix
    records = read_records(str(FIXTURES / "tables" / "results"))
    pages = {
        # supported: while this repository's newest release is experimental, its grid shows no other
        "minimal-grid.html": tables.render(minimal, "grid", "html", today=TODAY),
        "verified.html": tables.render(
            minimal, "verified", "html", today=TODAY, records=records
        ),  # verified, stale, failed
        "mixed.html": tables.render(dims, "grid", "html", today=TODAY),  # mixed, broken
        "deprecated.html": tables.render(minimal, "grid", "html", release=minimal.releases[0], today=TODAY),
        "eol.html": tables.render(dims, "grid", "html", release=dims.releases[0], today=TODAY),
        "capabilities.html": tables.render(
            load(REPO / "compat.yaml").matrix, "capabilities", "html"
        ),  # present, partial, absent
        # ops_ok, ops_known, ops_new
        "ops.html": tables.render(minimal, "ops", "html", records=read_sweeps(str(FIXTURES / "tables" / "op-sweeps"))),
        # ops_known, ops_unsupported, ops_new
        "op-failures.html": tables.render(
            minimal, "op-failures", "html", records=read_sweeps(str(FIXTURES / "tables" / "op-sweeps"))
        ),
        "companions.html": tables.render(_companions_showing_every_state(), "companions", "html"),
        # unreleased: this repository's evidence judged for a next release, not frozen yet
        "unreleased.html": tables.render(
            _with_unfrozen_release(), "verified", "html", records=read_records(str(REPO / "evidence"))
        ),
    }
    out = []
    for name, text in pages.items():
        (folder / name).write_text(text, encoding="utf-8")
        out.append(folder / name)
    return out


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_every_state_is_distinct_and_readable(page, scheme):
    args = ["--blink-settings=preferredColorScheme=0"] if scheme == "dark" else []
    seen = {}
    for source in [page] + _state_pages(page.parent):
        probe = json.loads(_dom(_with_probe(source), *args).probe)
        body_luminance = _luminance(_rgb(probe["body"]["bg"]))
        assert (body_luminance < 0.1) if scheme == "dark" else (body_luminance > 0.9), probe["body"]
        for state, colors in probe["states"].items():
            assert _contrast(colors["bg"], colors["fg"]) >= 4.5, (scheme, state, colors)
        backgrounds = [c["bg"] for c in probe["states"].values()]
        assert len(set(backgrounds)) == len(backgrounds), probe["states"]  # one color per state on a page
        seen.update(probe["states"])
    assert set(seen) == set(tables.STATES)


def test_a_narrow_window_scrolls_the_table_not_the_page(page):
    # headless Chromium lays out at least 500 px wide, whatever --window-size says
    probe = json.loads(_dom(_with_probe(page), f"--window-size={PHONE[0]},{PHONE[1]}").probe)
    assert probe["width"] <= 500
    assert probe["tableWidth"] > probe["boxWidth"], probe  # the grid is wider than a phone ...
    assert probe["scrollWidth"] <= probe["width"], probe  # ... and scrolls inside its box only


def test_screenshots_are_saved_for_ci(page):
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    shots = {
        "compatibility.png": (DESKTOP, []),
        "compatibility-phone-dark.png": (PHONE, ["--blink-settings=preferredColorScheme=0"]),
    }
    for name, ((width, height), extra) in shots.items():
        target = SCREENSHOTS / name
        if target.exists():
            target.unlink()
        _chromium(*extra, f"--screenshot={target}", f"--window-size={width},{height}", page.as_uri())
        data = target.read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n"
        assert (int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")) == (width, height)
    assert os.path.getsize(SCREENSHOTS / "compatibility.png") > 10_000  # a rendered grid, not a blank page
