"""Plain aligned text tables for human output (stdout), shared by every command."""

from __future__ import annotations

from collections.abc import Sequence

from relplan.terminal import visible


def format_table(
    headers: Sequence[str], rows: Sequence[Sequence[str]], *, left: Sequence[int] = (0,)
) -> str:
    """Columns padded to their widest cell; columns in `left` left-aligned, others right.
    Cells come from the inputs (replica names, labels, ids): control characters are shown
    escaped (relplan/terminal.py), so a cell can neither move the cursor nor span lines."""
    heads = [visible(h) for h in headers]
    body = [[visible(c) for c in row] for row in rows]
    widths = [len(h) for h in heads]
    for row in body:
        for i, cell in enumerate(row):
            widths[i] = max(widths[i], len(cell))

    def line(cells: Sequence[str]) -> str:
        out = [
            c.ljust(w) if i in left else c.rjust(w)
            for i, (c, w) in enumerate(zip(cells, widths, strict=False))
        ]
        return "  ".join(out).rstrip()

    sep = "  ".join("-" * w for w in widths)
    return "\n".join([line(heads), sep, *(line(r) for r in body)])
