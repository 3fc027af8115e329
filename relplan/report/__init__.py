"""The HTML incident report (`relplan report`).

Modules, in the order data flows: `build` (an `AnalyzeResult` and the workspace's facts ->
`ReportData`, the model in `data`; one module per section in `sections/`, the verdict in
`verdict`), `charts` (Vega-Lite specs per section), `html` (one self-contained page),
`export` (the only writer: page, PNG/SVG, JSON) and `pipeline` (workspace or raw inputs ->
files).
"""
