"""The one progress helper: a rich bar on stderr when it is a terminal, silent when piped.

rich is imported here (and only when a bar is shown), never by the library; the library takes
a plain callback `(done, total)` or `(done, total, current)`.
"""

from __future__ import annotations

import sys
from pathlib import Path
from types import TracebackType
from typing import Any


class ProgressBar:
    """`with ProgressBar("sweep (runs)") as bar: run(progress=bar)`.

    `bytes_=True` shows sizes (ingest); `current` names the file being read.
    """

    def __init__(self, label: str, *, bytes_: bool = False) -> None:
        self.label = label
        self.bytes_ = bytes_
        self.bar: Any = None
        self.task: Any = None

    @property
    def active(self) -> bool:
        return self.bar is not None

    def __enter__(self) -> ProgressBar:
        if sys.stderr.isatty():
            from rich.console import Console
            from rich.progress import (
                BarColumn,
                DownloadColumn,
                Progress,
                TextColumn,
                TimeElapsedColumn,
            )

            console = Console(stderr=True)
            if self.bytes_:
                columns = (
                    TextColumn("{task.description}"),
                    BarColumn(),
                    DownloadColumn(),
                    TimeElapsedColumn(),
                )
                self.bar = Progress(*columns, console=console, transient=True)
            else:
                self.bar = Progress(console=console, transient=True)
            self.bar.__enter__()
        return self

    def __call__(self, done: int, total: int, current: str | None = None) -> None:
        if self.bar is None:
            return
        if self.task is None:
            self.task = self.bar.add_task(self.label, total=total)
        if current is None:
            self.bar.update(self.task, completed=done, total=total)
        else:
            name = Path(current).name or "storing"
            self.bar.update(self.task, completed=done, total=total, description=name)

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self.bar is not None:
            self.bar.__exit__(exc_type, exc, tb)
