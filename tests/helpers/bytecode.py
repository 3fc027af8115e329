"""Bytecode caches kept out of the tree when the environment says not to write them.

With PYTHONDONTWRITEBYTECODE set (as on the project's shared machine), Python writes no .pyc
files and pytest keeps no rewritten test modules: every pytest-xdist worker rewrote and
compiled all ~300 test modules at each collection (about 8 s of CPU per worker), and every
relplan process a test starts compiled relplan's modules from source (0.15-0.2 s each).
`keep_out_of_tree()` (called by tests/conftest.py as it loads: before collection and before the
workers start) honours the wish for a clean tree and still caches: the .pyc files go under
the temporary folder (`relplan-pycache-UID`, kept from run to run, not in the user's home)
through Python's `sys.pycache_prefix`, which pytest's rewriter follows too, and
PYTHONPYCACHEPREFIX carries it to the processes the suite starts. Nothing changes when
bytecode may be written, or when a prefix is already set.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path


def keep_out_of_tree() -> None:
    if not sys.dont_write_bytecode or sys.pycache_prefix:
        return
    prefix = Path(tempfile.gettempdir()) / f"relplan-pycache-{os.getuid()}"
    try:
        prefix.mkdir(parents=True, exist_ok=True)
    except OSError:
        return
    sys.pycache_prefix = str(prefix)
    sys.dont_write_bytecode = False
    os.environ["PYTHONPYCACHEPREFIX"] = str(prefix)
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
