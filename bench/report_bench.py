"""Benchmark `relplan report` on an incident: time per stage, page size, browser render time.

    python bench/report_bench.py [PATH] [--runs 3]

PATH is a directory of raw inputs (default sample_data/pulse-retry-cancel) or a workspace.
Prints one table: ingest (into a temporary workspace), analyses (A-G and J), building the data
model, chart specs, HTML rendering (the first render also assembles vl-convert's Vega
bundle; a second render in the same process shows the cached cost), the page size, and the
time headless Chromium takes from launch to a dumped DOM with every chart drawn
(`--virtual-time-budget` lets the page settle; the median of --runs launches). Targets
(issue 6): page < 1.5 MB for the sample incident.
"""

from __future__ import annotations

import argparse
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from relplan import __version__, workspace
from relplan.analyses import AnalyzeOptions, analyze
from relplan.ingest import IngestOptions
from relplan.ingest.driver import ingest_files
from relplan.report.build import build_report_data
from relplan.report.charts import chart_specs
from relplan.report.html import render_html
from relplan.report.pipeline import is_workspace_file
from relplan.tables import format_table
from relplan.workspace.facts import workspace_facts

CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
    "--virtual-time-budget=10000",
    "--dump-dom",
]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("path", nargs="?", default="sample_data/pulse-retry-cancel", type=Path)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    rows: list[list[str]] = []

    def lap(label: str, start: float, note: str = "") -> float:
        now = time.perf_counter()
        rows.append([label, f"{now - start:.2f} s", note])
        return now

    with tempfile.TemporaryDirectory(prefix="relplan-bench-") as tmp:
        t = time.perf_counter()
        if args.path.is_file() and is_workspace_file(args.path):
            ws = args.path
        else:
            ws = Path(tmp) / "ws.duckdb"
            with workspace.open_workspace(ws) as con:
                ingest_files(con, [args.path], IngestOptions())
            t = lap("ingest", t, str(args.path))
        with workspace.open_workspace(ws, read_only=True) as con:
            res = analyze(con, AnalyzeOptions())
            t = lap("analyses A-G and health signals J", t)
            facts = workspace_facts(con, args.path.name)
        data = build_report_data(res, facts, datetime.now(timezone.utc), __version__)
        t = lap("report data model", t)
        specs = chart_specs(data)
        t = lap("chart specs", t, f"{len(specs)} charts")
        page = render_html(data, specs)
        t = lap("HTML (first: assembles the Vega bundle)", t)
        page = render_html(data, specs)
        t = lap("HTML (bundle cached)", t)
        size = len(page.encode("utf-8"))
        rows.append(["page size", f"{size / 1e6:.2f} MB", f"{size:,} bytes (target < 1.5 MB)"])
        out = Path(tmp) / "report.html"
        out.write_text(page, encoding="utf-8")
        chromium = shutil.which("chromium")
        if chromium is None:
            rows.append(["browser render", "-", "chromium not installed"])
        else:
            times = []
            in_page = []
            marks = 0
            for i in range(args.runs):
                cmd = [chromium, *CHROMIUM_FLAGS, f"--user-data-dir={tmp}/profile{i}", out.as_uri()]
                start = time.perf_counter()
                proc = subprocess.run(cmd, capture_output=True, text=True, check=True)
                times.append(time.perf_counter() - start)
                body = re.search(r"<body[^>]*>", proc.stdout)
                marks = len(re.findall(r'data-rendered="yes"', proc.stdout))
                if body is None or f'data-charts-done="{len(specs)}"' not in body.group(0):
                    raise SystemExit("the page did not finish drawing its charts")
                ms = re.search(r'data-render-ms="(\d+)"', body.group(0))
                if ms:
                    in_page.append(int(ms.group(1)) / 1000)
            rows.append(
                [
                    "browser: launch to DOM dump",
                    f"{statistics.median(times):.2f} s",
                    f"median of {args.runs}; {marks}/{len(specs)} charts drawn",
                ]
            )
            if in_page:
                rows.append(
                    [
                        "browser: page start to all charts drawn",
                        f"{statistics.median(in_page):.2f} s",
                        "performance.now() when the last chart resolved",
                    ]
                )
    print(format_table(["stage", "time", "note"], rows, left=(0, 2)))


if __name__ == "__main__":
    main()
