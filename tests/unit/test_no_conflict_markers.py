"""No merge left its conflict markers behind: in a docstring they still import and pass."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

_REPO = Path(__file__).resolve().parents[2]
_MARKER = re.compile(r"^(<{7} |>{7} |={7}$)", re.M)


def test_no_tracked_file_holds_a_conflict_marker() -> None:
    listed = subprocess.run(
        ["git", "ls-files", "*.py", "*.js", "*.md", "*.toml", "*.json", "*.sh"],
        cwd=_REPO,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    found = [
        name
        for name in listed
        if (_REPO / name).is_file()
        and _MARKER.search((_REPO / name).read_text(encoding="utf-8", errors="replace"))
    ]
    assert found == [], f"conflict markers in {found}"
