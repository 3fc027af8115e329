"""Headless Chromium for the report's browser tests, and a small pure-Python PNG reader.

Chromium runs with networking features off and a throw-away profile; console messages land
on stderr as `...:INFO:CONSOLE:<line>] "message", source: ...` lines, whatever their level,
so any such line counts as console output.
"""

from __future__ import annotations

import html as html_lib
import json
import re
import struct
import subprocess
import time
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
    "--hide-scrollbars",
    "--enable-logging=stderr",
    "--v=0",
    "--virtual-time-budget=10000",
)
CONSOLE_LINE = re.compile(r":CONSOLE(?:\(\d+\)|:\d+)\] (.*)$", re.MULTILINE)


@dataclass
class BrowserRun:
    stdout: str
    stderr: str
    seconds: float

    @property
    def console(self) -> list[str]:
        return CONSOLE_LINE.findall(self.stderr)


@dataclass(frozen=True)
class Browser:
    """Headless Chromium with a throw-away profile (the `browser` fixture of conftest.py)."""

    chromium: str
    profile: Path

    def __call__(self, page: Path, *extra: str, timeout: float = 120) -> BrowserRun:
        """Load `page` from its file; `extra` flags such as --dump-dom or --screenshot=PATH."""
        return run_chromium(self.chromium, page, self.profile, *extra, timeout=timeout)


def run_chromium(
    chromium: str, page: Path, profile: Path, *extra: str, timeout: float = 120
) -> BrowserRun:
    cmd = [chromium, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", *extra, page.resolve().as_uri()]
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False)
    seconds = time.perf_counter() - start
    assert proc.returncode == 0, proc.stderr[-2000:]
    return BrowserRun(proc.stdout, proc.stderr, seconds)


def png_pixels(path: Path) -> tuple[int, int, list[bytes], int]:
    """(width, height, rows of raw pixel bytes, bytes per pixel) of an 8-bit RGB/RGBA PNG."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat = 8, []
    width = height = ctype = depth = interlace = 0
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos : pos + 8])
        chunk = data[pos + 8 : pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            width, height, depth, ctype, _, _, interlace = struct.unpack(">IIBBBBB", chunk)
        elif kind == b"IDAT":
            idat.append(chunk)
    if depth != 8 or ctype not in (2, 6) or interlace != 0:
        raise ValueError(
            f"unsupported PNG: depth {depth}, colour type {ctype}, interlace {interlace}"
        )
    bpp = 3 if ctype == 2 else 4
    raw = zlib.decompress(b"".join(idat))
    stride = width * bpp
    prev = bytearray(stride)
    rows: list[bytes] = []
    pos = 0
    for _ in range(height):
        ftype = raw[pos]
        line = bytearray(raw[pos + 1 : pos + 1 + stride])
        pos += 1 + stride
        if ftype == 1:  # Sub
            for i in range(bpp, stride):
                line[i] = (line[i] + line[i - bpp]) & 0xFF
        elif ftype == 2:  # Up
            line = bytearray((a + b) & 0xFF for a, b in zip(line, prev, strict=True))
        elif ftype == 3:  # Average
            for i in range(stride):
                left = line[i - bpp] if i >= bpp else 0
                line[i] = (line[i] + ((left + prev[i]) >> 1)) & 0xFF
        elif ftype == 4:  # Paeth
            for i in range(stride):
                a = line[i - bpp] if i >= bpp else 0
                b = prev[i]
                c = prev[i - bpp] if i >= bpp else 0
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pred = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
                line[i] = (line[i] + pred) & 0xFF
        rows.append(bytes(line))
        prev = line
    return width, height, rows, bpp


def pixel_variety(path: Path) -> tuple[int, float]:
    """(distinct colours, share of non-white pixels) over a sample of the image's pixels."""
    _, _, rows, bpp = png_pixels(path)
    colours: set[bytes] = set()
    total = inked = 0
    for row in rows[::4]:
        for i in range(0, len(row), bpp * 4):
            px = row[i : i + 3]
            colours.add(px)
            total += 1
            inked += px != b"\xff\xff\xff"
    return len(colours), inked / max(total, 1)


# A script added (by the tests only) at the end of a report page: once every chart is drawn
# it measures the layout and writes the result as JSON into <body data-probe="...">, which
# --dump-dom then shows. It reports elements whose right edge passes the window's (not counting
# what scrolls inside a table's .table-wrap, itself checked), sections
# with nothing in them but their heading, the verdict's heading, and text marks of a chart
# (mark, axis and legend labels) whose boxes overlap another's.
PROBE = """
<script>
(function () {
  function boxes(svg) {
    var out = [];
    svg.querySelectorAll("text").forEach(function (t) {
      if (!t.textContent.trim()) { return; }
      var r = t.getBoundingClientRect();
      if (r.width > 0 && r.height > 0) { out.push({text: t.textContent, r: r}); }
    });
    return out;
  }
  function overlap(a, b) {
    var w = Math.min(a.right, b.right) - Math.max(a.left, b.left);
    var h = Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top);
    return w > 1 && h > 1;
  }
  function probe() {
    var width = document.documentElement.clientWidth;
    var wide = [];
    document.querySelectorAll("main *").forEach(function (el) {
      var r = el.getBoundingClientRect();
      // Inside a table's scrolling wrapper the content may pass the edge: it scrolls there.
      var wrap = el.closest(".table-wrap");
      if (wrap && wrap !== el) { return; }
      if (r.width > 0 && r.right > width + 0.5) {
        var owner = el.closest("[id]");
        wide.push((owner ? owner.id : "?") + " " + el.tagName + ":" + Math.round(r.right));
      }
    });
    var empty = [];
    document.querySelectorAll("section.section").forEach(function (s) {
      var rest = Array.prototype.filter.call(s.children, function (c) {
        return c.tagName !== "H2" && !c.classList.contains("question") && c.textContent.trim() + (c.querySelector("svg") ? "svg" : "");
      });
      if (!rest.length) { empty.push(s.id); }
    });
    var overlaps = [];
    document.querySelectorAll(".chart svg").forEach(function (svg) {
      var b = boxes(svg);
      for (var i = 0; i < b.length; i++) {
        for (var j = i + 1; j < b.length; j++) {
          if (overlap(b[i].r, b[j].r)) { overlaps.push(b[i].text + " / " + b[j].text); }
        }
      }
    });
    var verdict = document.querySelector("#verdict h2");
    document.body.setAttribute("data-probe", JSON.stringify({
      page_width: document.documentElement.scrollWidth, window_width: width, wide: wide,
      empty: empty, overlaps: overlaps, verdict: verdict ? verdict.textContent.trim() : null,
      sections: Array.prototype.map.call(document.querySelectorAll("section.section"), function (s) { return s.id; })
    }));
  }
  var tries = 0;
  var timer = setInterval(function () {
    tries += 1;
    if (document.body.hasAttribute("data-charts-done") || tries > 200) { clearInterval(timer); probe(); }
  }, 25);
})();
</script>
"""


def with_probe(page: Path, out: Path) -> Path:
    """A copy of the report at `out` with the layout probe (PROBE) before `</body>`."""
    html = page.read_text(encoding="utf-8")
    head, tail = html.rsplit("</body>", 1)  # the last one: the bundle's JS holds the string too
    out.write_text(head + PROBE + "</body>" + tail, encoding="utf-8")
    return out


def probe_result(dom: str) -> dict[str, Any]:
    """The probe's JSON from a dumped DOM."""
    m = re.search(r'data-probe="([^"]*)"', dom)
    assert m is not None, "the probe did not run"
    result: dict[str, Any] = json.loads(html_lib.unescape(m.group(1)))
    return result


# A script added (by the tests only) at the end of a report page: once every chart is drawn it
# lays out each table cell's text and writes, into <body data-cells="...">, the cells with a
# token (a run of non-space characters: a word, a number, a date) broken across lines: a Range
# over the token has client rects (one per line box fragment) on more than one line. It also
# gives each chart's width over the width of the page's column (main's content box), whether
# it passes the column's right edge, and its smallest text as drawn (font size times the SVG's
# scale), and whether the page itself is wider than the window.
CELLS_PROBE = """
<script>
(function () {
  function lines(range) {
    var tops = [];
    Array.prototype.forEach.call(range.getClientRects(), function (r) {
      if (r.width < 0.5) { return; }
      var top = Math.round(r.top);
      if (tops.every(function (t) { return Math.abs(t - top) > 2; })) { tops.push(top); }
    });
    return tops.length;
  }
  function brokenTokens(cell) {
    var out = [], node, m;
    var walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
    while ((node = walker.nextNode())) {
      var re = /\\S+/g;
      while ((m = re.exec(node.data))) {
        var range = document.createRange();
        range.setStart(node, m.index);
        range.setEnd(node, m.index + m[0].length);
        if (lines(range) > 1) { out.push(m[0]); }
      }
    }
    return out;
  }
  function probe() {
    var broken = [], cells = 0;
    document.querySelectorAll("main td, main th").forEach(function (cell) {
      var text = cell.textContent.trim();
      if (!text) { return; }
      cells += 1;
      var split = brokenTokens(cell);
      if (split.length) { broken.push(split.join(" ") + " in: " + text); }
    });
    var main = document.querySelector("main"), style = getComputedStyle(main);
    var left = main.getBoundingClientRect().left + parseFloat(style.paddingLeft);
    var column = main.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
    var charts = [];
    document.querySelectorAll(".chart").forEach(function (el) {
      var svg = el.querySelector("svg");
      if (!svg) { return; }
      var r = svg.getBoundingClientRect();
      var scale = r.width / svg.viewBox.baseVal.width;
      var smallest = Infinity;
      svg.querySelectorAll("text").forEach(function (t) {
        if (!t.textContent.trim()) { return; }
        smallest = Math.min(smallest, parseFloat(getComputedStyle(t).fontSize) * scale);
      });
      charts.push({id: el.id, share: r.width / column, width: Math.round(r.width),
                   overflows: r.right > left + column + 0.5,
                   smallest_text_px: smallest === Infinity ? null : smallest});
    });
    document.body.setAttribute("data-cells", JSON.stringify({
      cells: cells, broken: broken, charts: charts, column: Math.round(column),
      window_width: document.documentElement.clientWidth,
      page_width: document.documentElement.scrollWidth
    }));
  }
  var tries = 0;
  var timer = setInterval(function () {
    tries += 1;
    if (document.body.hasAttribute("data-charts-done") || tries > 200) { clearInterval(timer); probe(); }
  }, 25);
})();
</script>
"""


def with_cells_probe(page: Path, out: Path) -> Path:
    """A copy of the report at `out` with the table-cell probe (CELLS_PROBE) before `</body>`."""
    html = page.read_text(encoding="utf-8")
    head, tail = html.rsplit("</body>", 1)
    out.write_text(head + CELLS_PROBE + "</body>" + tail, encoding="utf-8")
    return out


def with_probes(page: Path, out: Path) -> Path:
    """A copy of the report at `out` with both probes (PROBE, then CELLS_PROBE) before
    `</body>`: each only reads the laid-out page and writes its own attribute of <body>, so
    one load answers what `with_probe` and `with_cells_probe` each would."""
    html = page.read_text(encoding="utf-8")
    head, tail = html.rsplit("</body>", 1)
    out.write_text(head + PROBE + CELLS_PROBE + "</body>" + tail, encoding="utf-8")
    return out


def cells_result(dom: str) -> dict[str, Any]:
    """The JSON CELLS_PROBE left in <body data-cells="...">."""
    body = re.search(r'<body[^>]*data-cells="([^"]*)"', dom)
    assert body is not None, "the cell probe did not run"
    got: dict[str, Any] = json.loads(html_lib.unescape(body.group(1)))
    return got
