"""The HTML incident report (`relplan report`).

Modules, in the order data flows: `build` (an `AnalyzeResult` -> `ReportData`, the model in
`data`), `charts` (Vega-Lite specs per section), `html` (one self-contained page), `export`
(the only writer: page, PNG/SVG, JSON) and `run` (workspace or raw inputs -> files).
"""
