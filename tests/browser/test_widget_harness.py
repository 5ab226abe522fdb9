"""The widget alone, in a plain page with a fake model: every button's message, the five
reasoning modes, timers, the draft protocol, block-once streaming and 18 hostile payloads.

The checks live in ``js/dev/check_harness.py`` (a colleague's tool for iterating on the front
end); this runs it in its own process (it has its own Playwright) and fails on any FAIL line.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from .server import REPO

pytestmark = pytest.mark.browser


def test_widget_harness_checks_all_pass() -> None:
    run = subprocess.run(
        [sys.executable, str(REPO / "js" / "dev" / "check_harness.py")],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=240,
    )
    failures = [line for line in run.stdout.splitlines() if line.startswith("FAIL")]
    assert failures == [], "\n".join(failures)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    assert run.stdout.count("PASS ") >= 60  # the checks really ran
