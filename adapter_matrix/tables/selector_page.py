"""The selector page: pick a combination, copy the command that installs it.

One standalone file: inline CSS and script, no request of any kind (no font, image,
stylesheet or script to fetch), so it works from ``file://`` and on any static host. Its
data is the selector view's JSON document (``table --view selector --format json``),
embedded once, compact; its words are the page language's entries of
:data:`adapter_matrix.tables.words.WORDS`. The script only reads them: every command
was computed by ``check``'s code when the page was generated.

Choices are ordered as the view's axes (extra dimensions, Python, torch, release). A
choice no described combination has, given the ones before it, stays visible but greyed out
(``data-off``; focusable, so its reason shows on focus as on hover); choosing it moves the
other choices to the nearest combination that has it. The choices live in the query string
(``?torch=2.13&python=3.11``); a pick the matrix does not make usable shows ``check``'s
reason and ``check``'s first fix for it. Those answers are the view's ``picks``
(:mod:`adapter_matrix.tables.picks`, docs/selector.md): the script looks them up and ranks
nothing itself.
"""

from __future__ import annotations

import html
import json
import os
from typing import Any, Dict, List

from .html import COLORS
from .table import Table
from .words import WORDS, word

__all__ = ["render_selector", "PAGE_WORDS"]

# The words the script shows; statuses and evidence states come with them.
PAGE_WORDS = tuple(k for k in WORDS if k.startswith("sel_")) + (
    "supported",
    "experimental",
    "deprecated",
    "eol",
    "broken",
    "verified",
    "stale",
    "failed",
    "generated",
)

_CSS = """\
:root {
  color-scheme: light dark;
  --bg: #ffffff; --fg: #1f2328; --muted: #59636e; --line: #d1d9e0; --head: #f6f8fa; --accent: #0969da;
  --off: #8c959f;
%(light)s
}
@media (prefers-color-scheme: dark) {
  :root {
    --bg: #0d1117; --fg: #e6edf3; --muted: #9198a1; --line: #3d444d; --head: #151b23; --accent: #4493f8;
    --off: #6e7681;
%(dark)s
  }
}
* { box-sizing: border-box; }
body {
  margin: 0; background: var(--bg); color: var(--fg);
  font: 15px/1.45 system-ui, -apple-system, "Segoe UI", "Noto Sans", "PingFang SC", "Microsoft YaHei", sans-serif;
}
main { max-width: 56rem; margin: 0 auto; padding: 1rem; }
h1 { font-size: 1.35rem; margin: 0 0 .75rem; overflow-wrap: anywhere; }
h2 { font-size: 1.05rem; margin: 1.25rem 0 .5rem; }
.axis { display: grid; grid-template-columns: 9rem 1fr; gap: .5rem; align-items: start; margin: 0 0 .6rem; }
.axis-label { font-weight: 600; padding-top: .3rem; overflow-wrap: anywhere; }
.choices { display: flex; flex-wrap: wrap; gap: .35rem; }
.choices button {
  position: relative; font: inherit; min-width: 3.2rem; padding: .3rem .6rem; border-radius: 6px;
  border: 1px solid var(--line); background: var(--head); color: var(--fg); cursor: pointer;
}
.choices button[aria-pressed="true"] { background: var(--accent); border-color: var(--accent); color: #ffffff; }
.choices button[data-off] { color: var(--off); border-style: dashed; background: transparent; }
.choices button[data-off][aria-pressed="true"] { color: #ffffff; background: var(--off); }
.choices button:focus-visible { outline: 3px solid var(--accent); outline-offset: 2px; }
.choices button[data-why]:hover::after, .choices button[data-why]:focus::after {
  content: attr(data-why); position: absolute; left: 0; top: calc(100%% + 4px); z-index: 2; width: max-content;
  max-width: 18rem; white-space: normal; padding: .3rem .5rem; border-radius: 4px; font-size: .85rem;
  background: var(--fg); color: var(--bg); text-align: left;
}
#why { min-height: 1.4em; color: var(--muted); font-size: .9rem; margin: .25rem 0 0; }
.result { border: 1px solid var(--line); border-radius: 8px; padding: .75rem 1rem; margin-top: .5rem; }
.result + .result { margin-top: 1rem; }
.facts { margin: 0 0 .5rem; font-weight: 600; overflow-wrap: anywhere; }
.status { display: inline-block; padding: .1rem .5rem; border-radius: 4px; border: 1px solid var(--line); margin-right: .5rem; }
%(states)s
.dates, .evidence, .note { color: var(--muted); margin: .25rem 0; }
.steps { margin: .5rem 0; padding-left: 1.25rem; }
.command { display: flex; gap: .5rem; align-items: flex-start; margin: .35rem 0; }
pre {
  flex: 1; margin: 0; padding: .5rem .75rem; border-radius: 6px; background: var(--head);
  border: 1px solid var(--line); white-space: pre-wrap; overflow-wrap: anywhere;
}
code, pre { font: .9em ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
.copy { font: inherit; padding: .3rem .6rem; border-radius: 6px; border: 1px solid var(--line); background: var(--bg); color: var(--fg); cursor: pointer; }
.copy:focus-visible { outline: 3px solid var(--accent); }
.link { font-size: .9rem; overflow-wrap: anywhere; }
.generated { color: var(--muted); font-size: .85rem; margin-top: 1.5rem; }
@media (max-width: 40rem) {
  body { font-size: 14px; }
  main { padding: .6rem; }
  .axis { grid-template-columns: 1fr; gap: .25rem; }
  .command { flex-direction: column; }
}
"""

# The script: reads the two JSON blocks, draws the choices and the answer. No network
# API is used (no fetch, XMLHttpRequest, import or src), which the browser test checks.
_JS = r"""
(function () {
  "use strict";
  var D = JSON.parse(document.getElementById("matrix-data").textContent);
  var W = JSON.parse(document.getElementById("page-words").textContent);
  var axes = D.axes, cells = D.combinations, sel = {};
  var chosenRelease = false;  // whether the user picked the release (a click or ?release=)
  var pickAxes = axes.filter(function (a) { return a.key !== "release"; });
  // check's answers, computed when the page was generated (tables/picks.py), run-length encoded
  function runs(text) {
    var r = text ? text.split(",").map(Number) : [], out = [];
    for (var i = 0; i < r.length; i += 2) for (var n = 0; n < r[i + 1]; n++) out.push(r[i]);
    return out;
  }
  function each(o) { var out = {}; Object.keys(o).forEach(function (k) { out[k] = runs(o[k]); }); return out; }
  var P = D.picks, T = P ? {reason: runs(P.reason), nearest: runs(P.nearest), held: runs(P.held), toward: each(P.toward), release: {}} : null;
  if (P) Object.keys(P.by_release).forEach(function (r) { T.release[r] = each(P.by_release[r]); });
  function fmt(t, f) { return t.replace(/\{(\w+)\}/g, function (m, k) { return k in f ? f[k] : m; }); }
  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }
  function copy(o) { var out = {}; Object.keys(o).forEach(function (k) { out[k] = o[k]; }); return out; }
  function val(c, key) {
    if (key === "python") return c.python;
    if (key === "torch") return c.torch_line;
    if (key === "release") return c.release;
    return c.dimensions[key];
  }
  // whether cell c agrees with the choices of the first `upto` axes (a cell without a
  // value of a dimension serves every value of it)
  function fits(c, choice, upto) {
    for (var i = 0; i < upto; i++) {
      var k = axes[i].key, v = val(c, k);
      if (choice[k] !== undefined && v !== undefined && v !== choice[k]) return false;
    }
    return true;
  }
  function has(c, key, v) { var x = val(c, key); return x === undefined || x === v; }
  function enabled(i, v) {
    return cells.some(function (c) { return fits(c, sel, i) && has(c, axes[i].key, v); });
  }
  // a pick's number: the places of its values on the axes but the release (mixed radix)
  function number(s) {
    var n = 0;
    for (var i = 0; i < pickAxes.length; i++) {
      var k = pickAxes[i].values.indexOf(s[pickAxes[i].key]);
      if (k < 0) return -1;
      n = n * pickAxes[i].values.length + k;
    }
    return n;
  }
  function checkReason(s) {
    var t = T ? number(s) : -1;
    return t >= 0 && T.reason[t] >= 0 ? P.reasons[T.reason[t]] : null;
  }
  function picked(i) {
    var parts = [];
    for (var j = 0; j < i; j++) if (sel[axes[j].key] !== undefined) parts.push(axes[j].label + " " + sel[axes[j].key]);
    return parts.join(", ");
  }
  function why(i, v) {
    var key = axes[i].key;
    if (key !== "release") {
      var s = copy(sel);
      s[key] = v;
      var said = checkReason(s);
      if (said) return said;
    }
    if (key === "torch" && sel.python !== undefined && D.torch_lines[v] && D.torch_lines[v].indexOf(sel.python) < 0)
      return fmt(W.sel_nowheel, {torch: v, python: sel.python});
    return fmt(W.sel_noclaim, {dist: D.adapter, value: axes[i].label + " " + v, picked: picked(i)});
  }
  // after a choice at axis i: keep each later choice that still fits, else take the best cell's;
  // a release nobody chose is not kept: the best cell's is check's answer for the new pick
  function settle(from) {
    for (var j = from; j < axes.length; j++) {
      var key = axes[j].key;
      var fitting = cells.filter(function (c) { return fits(c, sel, j); });
      var keep = key !== "release" || chosenRelease;
      if (!fitting.length || (keep && fitting.some(function (c) { return has(c, key, sel[key]) && sel[key] !== undefined; }))) continue;
      for (var n = 0; n < fitting.length; n++) {
        if (val(fitting[n], key) !== undefined) { sel[key] = val(fitting[n], key); break; }
      }
    }
  }
  // a greyed-out value chosen: the other choices move to the nearest combination that has it
  // and holds every value pip cannot change (the first such of check's ranked fixes for the
  // pick with it); where none has it, the pick stays as chosen and the page shows check's
  // answer for it. A release is asked as `check --adapter` asks: the pick stays, with it.
  function toward(i, v) {
    var key = axes[i].key, s = copy(sel), n = -1;
    s[key] = v;
    if (key === "release") {
      if (T && number(sel) >= 0) { sel.release = v; return; }
    } else {
      delete s.release;
      var u = T ? number(s) : -1;
      if (u >= 0) n = T.toward[key][u];
      if (n < 0 && u >= 0 && T.nearest[u] >= 0) { sel = s; return; }
    }
    var c = n >= 0 ? cells[n] : cells.filter(function (x) { return has(x, key, v); })[0];
    if (!c) return;
    axes.forEach(function (a) { var x = val(c, a.key); sel[a.key] = x !== undefined ? x : s[a.key]; });
  }
  function current() {
    if (sel.release === undefined) return undefined;
    return cells.filter(function (c) { return fits(c, sel, axes.length); })[0];
  }
  // check's answer for the pick (table "nearest": its first fix; "held": the fix that changes
  // a value pip cannot change, listed after it): for a combination that is not usable, with
  // its release installed; for a release that describes none of the pick, with it installed
  function nearest(c, table) {
    var t = T ? number(sel) : -1, n, r;
    if (t < 0) return null;
    if (c) n = (c[table] || {})[String(t)];
    else {
      r = sel.release !== undefined ? T.release[sel.release] : null;
      n = r ? r[table][t] : -2;
      if (n === -2) n = T[table][t];  // the pick's own answer
    }
    return n !== undefined && n >= 0 ? cells[n] : null;
  }
  // what a fix changes that pip cannot: "downgrade cann from 9.1.0 to 8.1.RC1" (values newest first)
  function system(c) {
    var steps = [];
    axes.forEach(function (a) {
      var v = c.dimensions[a.key], old = sel[a.key];
      if (v === undefined || old === undefined || v === old) return;
      var word = a.kind !== "version" ? W.sel_change : a.values.indexOf(v) < a.values.indexOf(old) ? W.sel_upgrade : W.sel_downgrade;
      steps.push(fmt(word, {name: a.key, old: old, "new": v}));
    });
    return steps.join(", ");
  }
  function query() {
    var parts = [];
    axes.forEach(function (a) { if (sel[a.key] !== undefined) parts.push(encodeURIComponent(a.key) + "=" + encodeURIComponent(sel[a.key])); });
    return "?" + parts.join("&");
  }
  function copyButton(text) {
    var b = el("button", "copy", W.sel_copy);
    b.type = "button";
    b.addEventListener("click", function () {
      var done = function () { b.textContent = W.sel_copied; };
      if (navigator.clipboard) navigator.clipboard.writeText(text).then(done, function () {});
    });
    return b;
  }
  function answer(c, box) {
    var facts = [D.adapter + " " + c.release, "torch " + c.torch, "Python " + c.python];
    Object.keys(c.dimensions).forEach(function (k) { facts.push(k + " " + c.dimensions[k]); });
    box.appendChild(el("p", "facts", facts.join(" \u00b7 ")));
    var line = el("p", "dates");
    line.appendChild(el("span", "status cell " + c.status, W[c.status] || c.status));
    var rel = D.release_facts[c.release] || {}, dates = [];
    if (rel.date) dates.push(fmt(W.sel_released, {date: rel.date}));
    if (rel.supported_until) dates.push(fmt(W.sel_until, {date: rel.supported_until}));
    line.appendChild(document.createTextNode(dates.join(" \u00b7 ")));
    box.appendChild(line);
    if (c.reason) box.appendChild(el("p", "note from-matrix", c.reason));
    if (c.series) Object.keys(c.series).forEach(function (k) {
      box.appendChild(el("p", "note from-matrix", k + " " + c.series[k]));
    });
    if (!c.commands.length) {
      box.appendChild(el("p", "note", fmt(W.sel_nocommand, {status: W[c.status] || c.status})));
      return;
    }
    var steps = el("ul", "steps");
    axes.forEach(function (a) {
      var v = c.dimensions[a.key];
      if (v === undefined) return;
      steps.appendChild(el("li", "", fmt(a.changeable ? W.sel_first : W.sel_machine, {name: a.key, value: v})));
    });
    steps.appendChild(el("li", "", fmt(W.sel_env, {python: c.python})));
    box.appendChild(steps);
    c.commands.forEach(function (command) {
      var row = el("div", "command");
      var pre = el("pre");
      pre.appendChild(el("code", "install", command));
      row.appendChild(pre);
      row.appendChild(copyButton(command));
      box.appendChild(row);
    });
    var v = c.verification;
    if (v) {
      var said = fmt(W.sel_evidence, {state: W[v.state] || v.state, date: v.date || "?", torch: v.torch || "?"});
      var ev = el("p", "evidence", said + (v.commit ? " (" : ""));
      if (v.commit) { ev.appendChild(el("code", "", v.commit)); ev.appendChild(document.createTextNode(")")); }
      box.appendChild(ev);
    }
    if (D.evidence_folder && v) {
      var where = el("p", "evidence", fmt(W.sel_evidence_folder, {folder: ""}));
      where.appendChild(el("code", "", D.evidence_folder + "/" + c.release + "/"));
      if (rel.frozen) where.appendChild(document.createTextNode(" \u00b7 " + fmt(W.sel_frozen, {release: c.release})));
      box.appendChild(where);
    }
  }
  function draw() {
    var form = document.getElementById("choices");
    form.textContent = "";
    axes.forEach(function (a, i) {
      var row = el("div", "axis");
      var label = el("div", "axis-label", a.label);
      label.id = "axis-" + i;
      var group = el("div", "choices");
      group.setAttribute("role", "group");
      group.setAttribute("aria-labelledby", label.id);
      a.values.forEach(function (v) {
        var b = el("button", "", v), off = !enabled(i, v);
        b.type = "button";
        b.dataset.axis = a.key;
        b.dataset.value = v;
        b.setAttribute("aria-pressed", sel[a.key] === v ? "true" : "false");
        if (off) {
          // greyed out, and still a choice: its reason on hover and focus, the nearest combination on a click
          var reason = why(i, v);
          b.dataset.off = "true";
          b.dataset.why = reason;
          b.setAttribute("aria-description", reason);
          b.addEventListener("focus", function () { document.getElementById("why").textContent = reason; });
        }
        b.addEventListener("click", function () {
          if (a.key === "release") chosenRelease = true;
          if (off) toward(i, v);
          else { sel[a.key] = v; settle(i + 1); }
          update();
          var again = document.querySelector('button[data-axis="' + a.key + '"][data-value="' + v + '"]');
          if (again) again.focus();
        });
        group.appendChild(b);
      });
      row.appendChild(label);
      row.appendChild(group);
      form.appendChild(row);
    });
  }
  function update() {
    draw();
    document.getElementById("why").textContent = "";
    var out = document.getElementById("answer");
    out.textContent = "";
    var c = current(), box = el("section", "result");
    box.id = "picked";
    out.appendChild(box);
    if (c) answer(c, box);
    else {
      // a pick no combination describes: check's reason for it
      box.className += " missing";
      var said = sel.release !== undefined && chosenRelease && T && T.release[sel.release] ? fmt(W.sel_release_off, {dist: D.adapter, release: sel.release, picked: picked(axes.length - 1)}) : checkReason(sel);
      if (said) box.appendChild(el("p", "note from-check", said));
      else box.appendChild(el("p", "note", W.sel_nocell.replace("{dist}", D.adapter)));
    }
    if (!c || !c.commands.length) {
      [["nearest", nearest(c, "nearest")], ["held", nearest(c, "held")]].forEach(function (pair) {
        var n = pair[1];
        if (!n) return;
        var near = el("section", "result"), steps = system(n);
        near.id = pair[0];
        near.appendChild(el("h2", "", steps ? fmt(W.sel_system, {steps: steps}) : W.sel_nearest));
        answer(n, near);
        out.appendChild(near);
      });
    }
    try { history.replaceState(null, "", query()); } catch (e) { /* a sandboxed frame: the page still answers */ }
    var link = document.getElementById("link");
    link.textContent = "";
    link.appendChild(document.createTextNode(W.sel_link));
    link.appendChild(el("code", "", query()));
  }
  // the choices in the URL (a value no axis has is left out), the rest from the best cell that
  // fits them; a pick no cell has keeps the given values, and no release unless one is given
  var params = new URLSearchParams(window.location.search), given = {};
  chosenRelease = params.has("release");
  axes.forEach(function (a) { if (params.has(a.key) && a.values.indexOf(params.get(a.key)) >= 0) given[a.key] = params.get(a.key); });
  var base = D["default"] !== null ? cells[D["default"]] : cells[0];
  var start = cells.filter(function (c) {
    return axes.every(function (a) { return given[a.key] === undefined || has(c, a.key, given[a.key]); });
  })[0];
  if (start || !Object.keys(given).length) {
    start = start || base;
    axes.forEach(function (a) {
      var v = given[a.key] !== undefined ? given[a.key] : start ? val(start, a.key) : undefined;
      sel[a.key] = v !== undefined ? v : a.values[0];  // a cell for every value of a dimension: show the first
    });
  } else {
    pickAxes.forEach(function (a) { sel[a.key] = given[a.key]; });
    var py = axes.filter(function (a) { return a.key === "python"; })[0], th = axes.filter(function (a) { return a.key === "torch"; })[0];
    // a Python the link leaves out: the newest its torch has a wheel for; a torch: the newest that has its Python
    if (sel.python === undefined && sel.torch !== undefined)
      sel.python = py.values.filter(function (p) { return (D.torch_lines[sel.torch] || []).indexOf(p) >= 0; })[0];
    if (sel.torch === undefined && sel.python !== undefined)
      sel.torch = th.values.filter(function (t) { return (D.torch_lines[t] || []).indexOf(sel.python) >= 0; })[0];
    pickAxes.forEach(function (a) {
      if (sel[a.key] === undefined) sel[a.key] = base && val(base, a.key) !== undefined ? val(base, a.key) : a.values[0];
    });
    if (given.release !== undefined) toward(axes.length - 1, given.release);  // that release's nearest combination
  }
  update();
})();
"""


def _css() -> str:
    light = "\n".join(f"  --{s}-bg: {c[0]}; --{s}-fg: {c[1]};" for s, c in COLORS.items())
    dark = "\n".join(f"    --{s}-bg: {c[2]}; --{s}-fg: {c[3]};" for s, c in COLORS.items())
    states = "\n".join(f".cell.{s} {{ background-color: var(--{s}-bg); color: var(--{s}-fg); }}" for s in COLORS)
    return _CSS % {"light": light, "dark": dark, "states": states}


def _script_json(data: Any) -> str:
    """JSON safe inside ``<script>``: compact, and no ``<`` that could close the element."""
    return json.dumps(data, ensure_ascii=False, separators=(",", ":")).replace("<", "\\u003c")


def _lag_section(entries: List[Dict[str, Any]], lang: str) -> List[str]:
    """How soon the adapter followed each torch release (``table --view lag``), as static HTML."""
    if not any(e["first_release"]["release"] for e in entries):
        return []
    esc = html.escape

    def said(side: Dict[str, Any]) -> str:
        if side["release"] is None:
            return esc(word("lag_not_yet", lang))
        return f"{esc(side['release'])} ({esc(side['date'])}): {side['days']}"

    head = ("torch_line", "torch_released", "lag_first_release", "lag_first_supported")
    out = [
        f"<h2>{esc(word('lag_heading', lang))}</h2>",
        f"<p>{esc(word('lag_note', lang))}</p>",
        "<table>",
        "<tr>" + "".join(f"<th>{esc(word(k, lang))}</th>" for k in head) + "</tr>",
    ]
    out += [
        f"<tr><td>{esc(e['torch_line'])}</td><td>{esc(e['torch_released'])}</td>"
        f"<td>{said(e['first_release'])}</td><td>{said(e['first_supported'])}</td></tr>"
        for e in entries
    ]
    return out + ["</table>"]


def render_selector(table: Table, document: Dict[str, Any]) -> str:
    """The selector page of a selector table (see the module's docstring)."""
    esc = html.escape
    words: Dict[str, str] = {key: word(key, table.lang) for key in PAGE_WORDS}
    footer = esc(word("generated", table.lang)).format(
        matrix=esc(os.path.basename(table.matrix) or "compat.yaml"),
        command="<code>adapter-matrix table --view selector</code>",
    )
    lines = [
        "<!DOCTYPE html>",
        f'<html lang="{esc(table.lang)}">',
        "<head>",
        '<meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        '<meta name="color-scheme" content="light dark">',
        '<meta name="generator" content="adapter-matrix">',
        f"<title>{esc(table.title)}</title>",
        "<style>",
        _css().rstrip("\n"),
        "</style>",
        "</head>",
        "<body>",
        "<main>",
        f"<h1>{esc(table.title)}</h1>",
        f"<noscript><p>{esc(word('sel_noscript', table.lang))}</p></noscript>",
        f"<h2>{esc(word('sel_choose', table.lang))}</h2>",
        '<div id="choices"></div>',
        '<p id="why" role="status" aria-live="polite"></p>',
        f"<h2>{esc(word('sel_result', table.lang))}</h2>",
        '<div id="answer" aria-live="polite"></div>',
        '<p id="link" class="link"></p>',
        *_lag_section(document.get("lag") or [], table.lang),
        f'<p class="generated">{footer}</p>',
        "</main>",
        f'<script type="application/json" id="matrix-data">{_script_json(document)}</script>',
        f'<script type="application/json" id="page-words">{_script_json(words)}</script>',
        f"<script>{_JS}</script>",
        "</body>",
        "</html>",
    ]
    return "\n".join(lines) + "\n"
