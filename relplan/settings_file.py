"""Reading a small settings file a user names (a mapping file, a scenario, an engine
profile): whole, as UTF-8 text, and bounded.

A FIFO, a device such as /dev/zero or a directory is refused before anything is read (reading
one would wait forever or never end), as is a file larger than `MAX_BYTES`; unreadable bytes
and OS errors are one InputError naming the file. Standard library only.
"""

from __future__ import annotations

import stat
from pathlib import Path

from relplan.errors import InputError, check_utf8_path
from relplan.values import num

MAX_BYTES = 16 * 1024 * 1024  # settings are a few KB; anything this large is not one


def read_settings(path: Path, what: str) -> str:
    """The text of the settings file `path` (`what` names it in errors: "mapping file")."""
    check_utf8_path(path)
    try:
        st = path.stat()
    except OSError as exc:
        raise InputError(f"cannot read the {what}: {exc.strerror or exc}", str(path)) from None
    if not stat.S_ISREG(st.st_mode):
        raise InputError(
            f"not a regular file (a FIFO, a device or a directory); expected a {what}", str(path)
        )
    if st.st_size > MAX_BYTES:
        raise InputError(
            f"{num(st.st_size)} bytes; a {what} is a few KB (at most {MAX_BYTES // 2**20} MiB)",
            str(path),
        )
    try:
        with path.open("rb") as fh:
            raw = fh.read(MAX_BYTES + 1)
    except OSError as exc:
        raise InputError(f"cannot read the {what}: {exc.strerror or exc}", str(path)) from None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise InputError(
            f"bytes that are not UTF-8; expected a {what} as text", str(path), line
        ) from None
