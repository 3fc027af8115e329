"""How an analysis says what it found without wording it (issue 29: the words live in
relplan/text/).

An analysis module declares the sentences it can say as a Literal of codes and a `Words` for
its text module (`_say: Words[Said] = Words("relplan.text.assessment")`); where it has
something to say it calls `_say(code, **numbers_and_names)`. The text module defines one
function per code, listed in its `SENTENCES` table, and words it with relplan.values. The
text module is reached by name when first used, as the registry reaches the findings, so this
layer never imports relplan.text (tests/test_text_analyses.py checks that each table matches
its codes). The mechanism is relplan/wording.py's, shared with the alerts, planners, drill and
lab, which relplan.text imports too.
"""

from __future__ import annotations

from relplan.wording import Words, table

__all__ = ["Words", "table"]
