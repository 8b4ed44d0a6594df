"""The stack table's HTML page in headless Chromium (Debian's `chromium`, as the selector's test).

At 1280 px the page must not scroll sideways, neither the page nor the table's box, and every
install command must lie inside the window, whole (wrapped, not cut); each command has the
selector's copy button, which copies exactly that command (the clipboard is read back).
"""

from __future__ import annotations

import datetime as _dt
import json
import shutil
import subprocess
import tempfile
from html.parser import HTMLParser
from pathlib import Path
from typing import List, Tuple

import pytest

from adapter_matrix.matrix.cache import load_any
from adapter_matrix.tables.formats import render_table
from adapter_matrix.tables.views.stack import stack

from .helpers import FIXTURES

BROWSER = next((shutil.which(name) for name in ("chromium", "chromium-browser") if shutil.which(name)), None)
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(BROWSER is None, reason="no Chromium on PATH (Debian: apt-get install chromium)"),
]
TODAY = _dt.date(2026, 12, 6)

# Appended to a copy of the page: measures the layout, clicks each copy button with a stand-in
# clipboard (headless Chromium grants none), and writes what it found into the DOM.
PROBE = """
<script>
(function () {
  var copied = [];
  Object.defineProperty(navigator, "clipboard", {value: {writeText: function (t) { copied.push(t); return Promise.resolve(); }}});
  var box = document.querySelector(".scroll");
  var out = {width: window.innerWidth, scrollWidth: document.documentElement.scrollWidth,
             boxScroll: box.scrollWidth, boxWidth: box.clientWidth, outside: [], commands: [], buttons: 0};
  document.querySelectorAll("tr.install pre").forEach(function (pre) {
    var r = pre.getBoundingClientRect();
    if (r.left < 0 || r.right > window.innerWidth || pre.scrollWidth > pre.clientWidth) out.outside.push(pre.textContent);
    out.commands.push(pre.textContent);
  });
  var buttons = document.querySelectorAll("tr.install button.copy");
  out.buttons = buttons.length;
  buttons.forEach(function (b) { b.click(); });
  setTimeout(function () {
    out.copied = copied;
    out.label = buttons.length ? buttons[0].textContent : "";
    var pre = document.createElement("pre");
    pre.id = "probe";
    pre.textContent = JSON.stringify(out);
    document.body.appendChild(pre);
  }, 50);
})();
</script>
"""


class _Probe(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.text = ""
        self._in = False

    def handle_starttag(self, tag: str, attrs: List[Tuple[str, str]]) -> None:
        self._in = tag == "pre" and dict(attrs).get("id") == "probe"

    def handle_data(self, data: str) -> None:
        if self._in:
            self.text += data


def _measure(page: Path, width: int) -> dict:
    with tempfile.TemporaryDirectory() as profile:
        proc = subprocess.run(
            [
                BROWSER, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--hide-scrollbars",
                "--disable-background-networking", f"--user-data-dir={profile}", f"--window-size={width},900",
                "--virtual-time-budget=2000", "--dump-dom", page.as_uri(),
            ],
            capture_output=True, text=True, timeout=120,
        )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    parser = _Probe()
    parser.feed(proc.stdout)
    return json.loads(parser.text)


@pytest.mark.parametrize("layer", ["vllm-ascend", "mindspeed-llm"])
def test_the_stack_page_shows_every_command_whole_at_1280_px_with_a_copy_button(layer, tmp_path):
    table = stack(
        load_any(FIXTURES / "stacks" / f"{layer}.yaml").layer,
        "en",
        load_any(FIXTURES / "matrices" / "torch_npu.yaml").matrix,
        TODAY,
    )
    data = json.loads(render_table(table, "json"))
    expected = [" && ".join(i["commands"]) for r in data["releases"] for i in r["install"]]
    page = tmp_path / "stack.html"
    page.write_text(render_table(table, "html").replace("</body>", PROBE + "</body>"), encoding="utf-8")
    found = _measure(page, 1280)
    assert found["scrollWidth"] <= found["width"], found  # the page does not scroll sideways
    assert found["boxScroll"] <= found["boxWidth"], found  # nor does the table inside its box
    assert found["outside"] == []  # every command inside the window, wrapped, none cut
    assert found["commands"] == expected and found["buttons"] == len(expected)
    assert found["copied"] == expected and found["label"] == "Copied"  # each button copies its command
