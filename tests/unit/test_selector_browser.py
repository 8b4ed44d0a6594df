"""The selector page in a real browser: headless Chromium (Debian's `chromium` package).

A probe script is appended to a copy of the page: it records every error and console
error from the start, then drives the page as a user would (clicks on the choice
buttons, focus on a disabled one) and writes what it saw into the DOM, which
--dump-dom prints. The commands it reads are compared with check's code for the same
cell. Screenshots go to results/screenshots/ (CI's artifact folder).
"""

from __future__ import annotations

import datetime as _dt
import json
import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any, Dict, List, Tuple
from urllib.parse import urlencode

import pytest
from packaging.version import Version

from adapter_matrix.check.fixes import install_fix
from adapter_matrix.check.judgment import Environment
from adapter_matrix.check.verdict import verdict
from adapter_matrix.matrix.loader import load
from adapter_matrix.matrix.model import PythonVersion
from adapter_matrix.matrix.queries import cells
from adapter_matrix.tables import views as tables

from .helpers import FIXTURES, REPO
from .test_table_browser import BROWSER, DESKTOP, PHONE, SCREENSHOTS, _chromium
from .test_table_selector import decoded, page_data, picks

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(BROWSER is None, reason="no Chromium on PATH (Debian: apt-get install chromium)"),
]
TODAY = _dt.date(2026, 12, 1)

# Before the page's script: catch what goes wrong while it runs.
CATCH = """<script>
window.__errors = [];
window.addEventListener("error", function (e) { window.__errors.push(String(e.message)); });
(function () { var err = console.error; console.error = function () {
  window.__errors.push(Array.prototype.join.call(arguments, " ")); err.apply(console, arguments); }; })();
</script>"""

# After it: what the page shows, then the same after the clicks in window.__steps.
PROBE = """<script>
(function () {
  function seen() {
    var picked = {};
    document.querySelectorAll('button[aria-pressed="true"]').forEach(function (b) { picked[b.dataset.axis] = b.dataset.value; });
    var box = function (id) {
      var e = document.getElementById(id);
      return e ? {text: e.innerText, commands: Array.prototype.map.call(e.querySelectorAll("code.install"), function (c) { return c.textContent; })} : null;
    };
    return {picked: picked, picked_box: box("picked"), nearest: box("nearest"), held: box("held"), search: window.location.search};
  }
  var out = {before: seen(), steps: []};
  (window.__steps || []).forEach(function (step) {
    var b = document.querySelector('button[data-axis="' + step[0] + '"][data-value="' + step[1] + '"]');
    if (!b) { out.steps.push({missing: step}); return; }
    b.click();
    out.steps.push(seen());
  });
  var off = document.querySelector("button[data-off]");
  if (off) {
    off.focus();
    out.disabled = {value: off.dataset.value, why: off.dataset.why, shown: document.getElementById("why").textContent,
                    after: getComputedStyle(off, "::after").content, focused: document.activeElement === off};
  }
  var focusable = Array.prototype.every.call(document.querySelectorAll("#choices button"), function (b) {
    return b.tabIndex >= 0 && !b.disabled; });
  var clone = document.body.cloneNode(true);
  // the matrix's and check's own words (reasons) are English in every page
  clone.querySelectorAll("script, code, pre, .from-matrix, .from-check, #why, noscript").forEach(function (e) { e.remove(); });
  out.focusable = focusable;
  out.text = document.body.innerText;
  out.words = clone.textContent;
  out.width = window.innerWidth;
  out.scrollWidth = document.documentElement.scrollWidth;
  out.bg = getComputedStyle(document.body).backgroundColor;
  out.errors = window.__errors;
  var pre = document.createElement("pre");
  pre.id = "probe";
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
})();
</script>"""


class _Probe(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.text, self._in = "", False

    def handle_starttag(self, tag: str, attrs: List[Tuple[str, Any]]) -> None:
        self._in = tag == "pre" and dict(attrs).get("id") == "probe"

    def handle_data(self, data: str) -> None:
        if self._in:
            self.text += data


def _page(tmp: Path, matrix: Path = REPO / "compat.yaml", lang: str = "en", today: _dt.date = TODAY) -> Path:
    path = tmp / f"selector-{lang}.html"
    path.write_text(tables.render(load(matrix).matrix, "selector", "html", lang, today=today), encoding="utf-8")
    return path


def _probe(page: Path, query: str = "", steps: Tuple[Tuple[str, str], ...] = (), *args: str) -> Dict[str, Any]:
    probed = page.with_name(page.stem + ".probe.html")
    text = page.read_text(encoding="utf-8")
    steps_js = f"<script>window.__steps = {json.dumps([list(s) for s in steps])};</script>"
    text = text.replace("<head>", "<head>" + CATCH, 1).replace("</body>", steps_js + PROBE + "</body>")
    probed.write_text(text, encoding="utf-8")
    parser = _Probe()
    parser.feed(_chromium(*args, "--dump-dom", probed.as_uri() + query))
    assert parser.text, "the probe did not run"
    return json.loads(parser.text)


def _command_of(matrix_path: Path, torch_line: str, python: str, release: str, today: _dt.date = TODAY) -> List[str]:
    """check's commands for a newcomer reaching this cell."""
    matrix = load(matrix_path).matrix
    cell = next(
        c
        for c in cells(matrix, None, today)
        if str(c.line.minor) == torch_line and str(c.python) == python and str(c.release.version) == release
    )
    fix = install_fix(matrix, cell, today)
    assert fix is not None
    return list(fix.commands)


@pytest.fixture(scope="module")
def page(tmp_path_factory) -> Path:
    return _page(tmp_path_factory.mktemp("selector"))


@pytest.fixture(scope="module")
def torch_npu_page(tmp_path_factory) -> Path:
    """torch_npu's page, written once for the module's tests (they only read it; each probe is
    a copy beside it)."""
    return _page(tmp_path_factory.mktemp("selector-torch-npu"), FIXTURES / "matrices" / "torch_npu.yaml")


def test_a_url_with_choices_preselects_them_and_shows_checks_command(page):
    seen = _probe(page, "?torch=2.13&python=3.11")
    assert seen["errors"] == []
    # the newest release supported there: 0.3.0 on its era cells
    assert seen["before"]["picked"] == {"python": "3.11", "torch": "2.13", "release": "0.3.0"}
    commands = seen["before"]["picked_box"]["commands"]
    assert commands == _command_of(REPO / "compat.yaml", "2.13", "3.11", "0.3.0")
    assert "'adapter-matrix-npu==0.3.0'" in commands[0] and "'torch>=2.13,<2.14'" in commands[0]
    assert seen["before"]["nearest"] is None
    oldest = _probe(page, "?torch=2.1&python=3.8")["before"]
    assert oldest["picked"] == {"python": "3.8", "torch": "2.1", "release": "0.3.0"}
    assert oldest["picked_box"]["commands"] == _command_of(REPO / "compat.yaml", "2.1", "3.8", "0.3.0")
    older = _probe(page, "?torch=2.12&python=3.11")["before"]  # no era cell: 0.2.1, supported there
    assert older["picked"] == {"python": "3.11", "torch": "2.12", "release": "0.2.1"}


def test_it_opens_on_the_newest_supported_combination(page):
    seen = _probe(page)
    assert seen["errors"] == []
    # the newest release on its newest torch line where it is supported: 0.3.0's era cell
    assert seen["before"]["picked"] == {"python": "3.11", "torch": "2.15", "release": "0.3.0"}
    assert "supported" in seen["before"]["picked_box"]["text"]
    assert seen["before"]["search"] == "?python=3.11&torch=2.15&release=0.3.0"  # the link answers the question


def test_picking_values_updates_the_command_and_the_url(page):
    seen = _probe(page, "?torch=2.13&python=3.11", (("torch", "2.4"), ("python", "3.8"), ("release", "0.1.0")))
    assert seen["errors"] == []
    after_torch, after_python, after_release = seen["steps"]
    assert after_torch["picked"]["torch"] == "2.4"
    assert after_torch["picked_box"]["commands"] == _command_of(REPO / "compat.yaml", "2.4", "3.11", "0.2.1")
    # Python 3.8 keeps torch 2.4 (it has a wheel for it)
    assert after_python["picked"] == {"python": "3.8", "torch": "2.4", "release": "0.2.1"}
    assert after_python["search"] == "?python=3.8&torch=2.4&release=0.2.1"
    assert after_release["picked_box"]["commands"] == _command_of(REPO / "compat.yaml", "2.4", "3.8", "0.1.0")
    assert after_release["picked_box"]["commands"] != after_python["picked_box"]["commands"]


def test_picking_a_python_the_torch_lacks_moves_torch_to_one_that_has_it(page):
    seen = _probe(page, "?torch=2.15&python=3.13", (("python", "3.8"),))
    (after,) = seen["steps"]
    assert after["picked"]["python"] == "3.8" and after["picked"]["torch"] == "2.4"  # the newest torch for 3.8
    assert after["picked_box"]["commands"] == _command_of(REPO / "compat.yaml", "2.4", "3.8", "0.2.1")


def test_an_unsupported_pick_shows_checks_reason_and_first_fix(page):
    """Issue 61: the page's reason and nearest combination are check's, for the same pick."""
    seen = _probe(page, "?torch=2.15&python=3.10")
    assert seen["errors"] == []
    assert seen["before"]["picked"] == {"python": "3.10", "torch": "2.15"}  # no release: none was picked
    text = seen["before"]["picked_box"]["text"]
    assert "torch 2.15 has no wheel for Python 3.10 (it has 3.11\u20133.15)" in text and "does not describe" not in text
    assert seen["before"]["picked_box"]["commands"] == []
    nearest = seen["before"]["nearest"]
    assert nearest is not None and "supported" in nearest["text"]
    matrix = load(REPO / "compat.yaml").matrix
    for adapter in (Version("0.3.0"), None):  # check with the newest release installed, or none
        env = Environment(PythonVersion.parse("3.10"), torch=Version("2.15"), adapter=adapter)
        answer = verdict(matrix, env, TODAY)
        assert answer.reasons[0] in text or adapter is None
        assert nearest["commands"] == list(answer.fixes[0].commands) or adapter is None
        assert nearest["commands"] == _command_of(REPO / "compat.yaml", "2.14", "3.10", "0.2.1")
    assert nearest["commands"] == ["pip install 'adapter-matrix-npu==0.2.1' 'torch>=2.14,<2.15'"]


def test_torch_npu_on_cann_9_1_0_with_torch_2_4_goes_to_checks_first_fix(torch_npu_page):
    """Issue 61: the page jumped to torch 2.12 (a release the user never picked counted);
    check says torch 2.7.1 with torch-npu 2.7.1.post8. The link names no Python: the newest
    torch 2.4 has a wheel for, and no release; nor an arch: the first the page lists (aarch64,
    where torch-npu pairs with PyPI's torch)."""
    page = torch_npu_page
    seen = _probe(page, "?cann=9.1.0&torch=2.4")
    assert seen["errors"] == []
    assert seen["before"]["picked"] == {"cann": "9.1.0", "arch": "aarch64", "python": "3.12", "torch": "2.4"}
    assert (
        "torch-npu 2.7.1.post8 (release 26.1.0) supports torch 2.7.1, not 2.4" in seen["before"]["picked_box"]["text"]
    )
    matrix = load(FIXTURES / "matrices" / "torch_npu.yaml").matrix
    cann = next(v for v in matrix.dimension("cann").values if str(v) == "9.1.0")
    arch = next(v for v in matrix.dimension("arch").values if str(v) == "aarch64")
    env = Environment(PythonVersion.parse("3.12"), torch=Version("2.4"), dimensions=(("cann", cann), ("arch", arch)))
    first = verdict(matrix, env, TODAY).fixes[0]
    assert seen["before"]["nearest"]["commands"] == list(first.commands)
    assert list(first.commands) == ["pip install 'torch-npu==2.7.1.post8' 'torch==2.7.1'"]


def test_a_greyed_out_choice_moves_the_others_to_the_nearest_combination_that_has_it(page):
    seen = _probe(page, "?torch=2.15&python=3.13", (("torch", "2.1"),))
    assert seen["errors"] == []
    (after,) = seen["steps"]
    # torch 2.1 has no wheel for 3.13: check's ranked fixes from (3.13, torch 2.1, 0.3.0) that keep
    # torch 2.1; the first keeps the release too, supported on its era cell py3.8-torch2.1
    assert after["picked"] == {"python": "3.8", "torch": "2.1", "release": "0.3.0"}
    assert after["picked_box"]["commands"] == _command_of(REPO / "compat.yaml", "2.1", "3.8", "0.3.0")
    assert after["search"] == "?python=3.8&torch=2.1&release=0.3.0"


def test_a_greyed_out_release_keeps_the_held_values_and_shows_checks_answer(torch_npu_page):
    """torch_npu: each release is one torch on one CANN. From torch-npu 2.7.1.post8 (CANN 9.1.0,
    Python 3.12), 2.4.0.post4 (a build for CANN 8.1.RC1) is asked as `check --set cann=9.1.0
    --adapter 2.4.0.post4` asks (issue 67): CANN stays 9.1.0, the nearest combination changes
    pip packages only, and the move to CANN 8.1.RC1 comes after it as a system change."""
    page = torch_npu_page
    data = page_data(page.read_text(encoding="utf-8"))
    pick = {"cann": "9.1.0", "arch": "aarch64", "python": "3.12", "torch": "2.7"}
    number = next(n for n, p, _h in picks(data) if p == pick)
    seen = _probe(page, "?cann=9.1.0&python=3.12&torch=2.7", (("release", "2.4.0.post4"), ("release", "2.1.0.post4")))
    assert seen["errors"] == []
    assert seen["before"]["picked"]["release"] == "2.7.1.post8"
    moved, eol = seen["steps"]
    assert moved["picked"] == dict(pick, release="2.4.0.post4")
    assert moved["picked_box"]["commands"] == []
    tables = data["picks"]["by_release"]["2.4.0.post4"]
    first = decoded(tables["nearest"])[number]
    first = decoded(data["picks"]["nearest"])[number] if first == -2 else first
    nearest, held = data["combinations"][first], data["combinations"][decoded(tables["held"])[number]]
    assert nearest["dimensions"]["cann"] == "9.1.0" and moved["nearest"]["commands"] == nearest["commands"]
    assert (held["release"], held["dimensions"]["cann"]) == ("2.4.0.post4", "8.1.RC1")
    assert moved["held"]["commands"] == held["commands"] == ["pip install 'torch-npu==2.4.0.post4' 'torch==2.4.0'"]
    assert "downgrade cann from 9.1.0 to 8.1.RC1" in moved["held"]["text"]
    # an end-of-life release: the pick keeps CANN 9.1.0 too, with check's answer for it
    assert eol["picked"] == dict(pick, release="2.1.0.post4")
    assert eol["picked_box"]["commands"] == [] and eol["nearest"]["commands"]


@pytest.mark.parametrize(
    "matrix_path, today",
    [
        (REPO / "compat.yaml", TODAY),
        (FIXTURES / "matrices" / "torch_npu.yaml", TODAY),
        (FIXTURES / "matrices" / "ipex.yaml", _dt.date(2026, 1, 15)),
    ],
    ids=["this repository", "torch_npu", "ipex"],
)
def test_a_sample_of_unsupported_picks_shows_checks_answer(tmp_path, matrix_path, today):
    """Three picks no combination describes, spread over the matrix, as links: the page shows
    check's reason and the command that installs check's first fix."""
    page = _page(tmp_path, matrix_path, today=today)
    data = page_data(page.read_text(encoding="utf-8"))
    matrix = load(matrix_path).matrix
    unsupported = [(n, p) for n, p, here in picks(data) if not here]
    for _number, pick in unsupported[:: max(1, len(unsupported) // 3)][:3]:
        seen = _probe(page, "?" + urlencode(pick))
        assert seen["errors"] == [] and seen["before"]["picked"] == pick
        dims = tuple(
            (k, next(v for v in matrix.dimension(k).values if str(v) == text))
            for k, text in pick.items()
            if k not in ("python", "torch")
        )
        nearest = seen["before"]["nearest"]
        label = next(  # the build of the line the answer installs (IPEX: +cpu, +xpu)
            Version(e["torch"]).local
            for e in data["combinations"]
            if e["commands"] and e["commands"][0] == nearest["commands"][0]
        )
        env = Environment(
            PythonVersion.parse(pick["python"]),
            torch=Version(pick["torch"] + (f"+{label}" if label else "")),
            dimensions=dims,
        )
        first = verdict(matrix, env, today).fixes[0]
        assert nearest["commands"] == list(install_fix(matrix, first.cell, today).commands), pick
        said = verdict(matrix, env._replace(torch=Version(pick["torch"]), adapter=first.cell.release.version), today)
        assert "; ".join(said.reasons) in seen["before"]["picked_box"]["text"], pick


def test_an_end_of_life_cell_shows_its_status_and_the_nearest_supported_one(torch_npu_page):
    """torch_npu's 6.0.rc1 line is end of life: no command, the nearest supported one instead."""
    page = torch_npu_page
    seen = _probe(page, "?cann=8.0.RC1&python=3.8&torch=1.11")
    assert seen["errors"] == []
    assert seen["before"]["picked"]["torch"] == "1.11"
    assert "end of life" in seen["before"]["picked_box"]["text"]
    assert seen["before"]["picked_box"]["commands"] == []
    nearest = seen["before"]["nearest"]
    assert nearest is not None and nearest["commands"] and "torch-npu==" in nearest["commands"][0]


def test_cann_steps_and_commands_of_torch_npu(torch_npu_page):
    page = torch_npu_page
    seen = _probe(page, "?cann=8.2.RC1&python=3.10&torch=2.6")
    box = seen["before"]["picked_box"]
    assert "First install cann 8.2.RC1: it is not a pip package." in box["text"]
    assert box["commands"] == ["pip install 'torch-npu==2.6.0' 'torch==2.6.0'"]
    assert box["commands"] == _command_of(FIXTURES / "matrices" / "torch_npu.yaml", "2.6", "3.10", "2.6.0")


def test_a_disabled_choice_says_why_on_focus_and_stays_reachable_by_keyboard(page):
    seen = _probe(page, "?torch=2.15&python=3.13")
    disabled = seen["disabled"]
    assert disabled["focused"] and seen["focusable"]
    assert disabled["why"] and disabled["shown"] == disabled["why"]
    assert disabled["why"] in disabled["after"]  # the tooltip drawn on focus (and hover)
    # on Python 3.13 torch 2.1-2.4 have no wheel: check's reason
    assert re.fullmatch(
        r"torch 2\.[1-4] has no wheel for Python 3\.13 \(it has 3\.8\u20133\.1[12]\)", disabled["why"]
    ), disabled


def test_the_chinese_page_has_no_english_label(tmp_path):
    page = _page(tmp_path, lang="zh")
    seen = _probe(page, "?torch=2.15&python=3.10")  # the nearest block too
    assert seen["errors"] == []
    # names stay names (torch, Python, the distribution, versions); every other word is Chinese
    words = re.sub(r"adapter-matrix-npu|torch|Python|[\d.]+|compat\.yaml", " ", seen["words"])
    assert not re.findall(r"[A-Za-z]{2,}", words), re.findall(r"[A-Za-z]{2,}", words)
    assert "支持" in seen["text"] and "复制" in seen["text"]


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_it_reads_on_a_phone_in_light_and_dark(page, scheme):
    args = ["--blink-settings=preferredColorScheme=0"] if scheme == "dark" else []
    seen = _probe(page, "", (), *args, f"--window-size={PHONE[0]},{PHONE[1]}")
    assert seen["scrollWidth"] <= seen["width"], seen  # nothing scrolls sideways
    level = sum(float(x) for x in re.findall(r"[\d.]+", seen["bg"])[:3]) / 3
    assert (level < 40) if scheme == "dark" else (level > 215), seen["bg"]


def test_screenshots_are_saved_for_ci(page):
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    for name, (width, height), query in (
        ("selector-phone.png", PHONE, "?torch=2.13&python=3.11"),
        ("selector-desktop.png", DESKTOP, "?torch=2.15&python=3.10"),
    ):
        target = SCREENSHOTS / name
        _chromium(f"--screenshot={target}", f"--window-size={width},{height}", page.as_uri() + query)
        assert target.stat().st_size > 10_000


# The compact grid page: a click on a cell's status shows every release's answer there.
GRID_PROBE = """<script>
(function () {
  var details = document.querySelectorAll("td.cell details");
  var first = details[0], out = {count: details.length, cells: document.querySelectorAll("td.cell").length};
  out.closed = first.open;
  out.summary = first.querySelector("summary").textContent;
  first.querySelector("summary").click();
  out.open = first.open;
  out.text = first.innerText;
  out.note = (document.querySelector("p.note") || {}).textContent;
  var pre = document.createElement("pre");
  pre.id = "probe";
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
})();
</script>"""


def test_the_compact_grid_shows_older_releases_on_a_click(tmp_path):
    page = tmp_path / "grid.html"
    text = tables.render(load(REPO / "compat.yaml").matrix, "grid", "html", today=TODAY)
    page.write_text(text.replace("</body>", GRID_PROBE + "</body>"), encoding="utf-8")
    parser = _Probe()
    parser.feed(_chromium("--dump-dom", page.as_uri()))
    seen = json.loads(parser.text)
    assert seen["count"] > 0 and seen["closed"] is False
    # the first cell (torch 2.15, Python 3.11) shows the best status a release gives it, and which
    # release when it is not the one the note names: 0.3.0, supported on its era cells
    assert seen["summary"] == "supported (0.3.0)"
    assert seen["open"] is True
    assert "supported (0.3.0, 0.2.1, 0.1.0); experimental (0.2.0)" in seen["text"]
    assert "0.2.1 unless" in seen["note"] and "(0.3.0, 0.2.0, 0.1.0 too)" in seen["note"]
