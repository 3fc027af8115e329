"""`relplan compare`: two or more incidents, runs or builds side by side, and a gate for CI.

Modules, one job each:
- `sides`: a side spec (workspace, input folder, drill/simulate output, `A1,A2` group, a
  folder of seeds) into runs, each analysed by relplan.analyses;
- `figures`: the figures of the analyses' models that compare shows, and their resamplers;
- `noise`: the noise band of each side's value (spread of runs, or a bootstrap);
- `gate`: the `--fail-if` expression language;
- `model`: the pydantic result (`--format json`), `build`: the comparison itself;
- `render`: the text table, `page`: the HTML page.

Compare computes differences and bands only; every figure comes from an analysis.
See docs/compare.md.
"""

from __future__ import annotations

from relplan.compare.build import compare
from relplan.compare.gate import parse_gate

__all__ = ["compare", "parse_gate"]
