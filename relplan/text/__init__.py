"""Every sentence and number shown to a person, in one room.

The analyses, planners, alerts and `whatif` compute and return typed results (pydantic models
or dataclasses); the modules here turn those into terminal tables, sentences and captions, and
nothing outside this package should need to word a figure. Numbers are formatted by the one
formatter, relplan/values.py (`num`, `pct`, `short`, `sig`, `fixed`, `percent`, `signed`, and
`human_duration` for spans); tests/test_text_room.py fails on a number format elsewhere that is
not a machine format listed with why, and on a sentence built elsewhere that is not an error
message beside its check.

- `analyze`: the text of `relplan analyze` and `relplan alerts eval` (one renderer per
  analysis, named by its registry row);
- `findings`: each analysis' one-sentence finding, from its model (named by its registry row,
  filled in by `analyze()`);
- `heavy`, `restarts`, `verdict`: the heavy-request, stuck, restart and verdict text;
- `assessment`, `bounds`, `capacity`, `context`, `counters`, `coverage`, `delivery`, `drain`,
  `heavy_requests`, `histograms`, `littles_law`, `metrics_figures`, `overload`, `stuck`: the
  sentences the analysis module of the same name says (the verdict's reasons and evidence,
  figures' notes, null and missing-input reasons), one function per code of its `Said`, in a
  `SENTENCES` table that relplan/analyses/wording.py reaches by name;
- `budget`, `pulse`: the text of `relplan budget` and `relplan pulse`, and the planners'
  verdicts and reasons (codes of relplan/planning's `Said`, reached by name through
  relplan/wording.py, as for the alerts, drill and lab below);
- `slo`: the SLO alert rules' annotations and header and the `relplan alerts slo` summary;
- `whatif`: the text of `relplan whatif` and the controls' docs table;
- `drill`: the text of `relplan drill` (plan, ramp and why it stopped, outcome, sweep,
  progress lines, why an attempt was not delivered);
- `alerts`: the health rules' annotations, the rule file's header, the dashboard's
  descriptions and the lines `relplan alerts` prints after its work;
- `record`, `lab`: the lines `relplan record` and `relplan lab` print (the lab's progress too);
- `compare`: the whole text of `relplan compare` (verdicts, the table of differences, noise
  bands, the figures not compared, the gate, `--list-figures`, the page's value words), how
  its noise bands were found and why a figure has no value (compare imports this module; this
  module never imports compare: it reads the comparison through protocols);
- `cli`: docs/cli.md's opening and exit codes, and the machine-fault line;
- `ingest`: the tables and closing lines of `relplan ingest` and `relplan inspect` (and
  `inspect --formats`), from ingest's report models, and the notes of an ingest (what each
  source dropped or assumed, why an input added nothing, the hints for an input relplan
  cannot tell), one function per code of `relplan.ingest.outcome.Said`, reached by name
  (`outcome.say`);
- `sim`: the text of `relplan simulate` (a run's summary, a calibration, an engine's step-cost
  fit, their notes) and `relplan simulate sweep`'s table, from the sweep's rows as plain dicts.

No module outside this package lays out a table (relplan/tables.py is the one layout) or pads
text into columns (tests/test_text_room.py).

This package imports the models it words and `relplan.values` / `relplan.tables`; it never
imports the report, the simulator or the CLI (pyproject's import-linter contracts).
"""
