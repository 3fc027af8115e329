"""Outside tools (Debian's chromium, prometheus, promtool) that some tests need."""

from __future__ import annotations

import os
import shutil

import pytest


def require_tool(name: str) -> str:
    """Path of an outside tool; skip without it on a user's machine, fail under CI=true."""
    path = shutil.which(name)
    if path is None:
        message = f"{name} is not installed (Debian package needed for this test)"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"{message}; CI must install it (.ci/run)")
        pytest.skip(message)
    return path
