"""The version is written once (jupyter_turns/__init__.py); every place that repeats it agrees."""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path

import jupyter_turns

REPO = Path(__file__).resolve().parents[2]


def test_the_version_has_one_source_and_the_lab_extension_repeats_it() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())
    assert "version" not in project["project"] and "version" in project["project"]["dynamic"]
    assert project["tool"]["hatch"]["version"]["path"] == "jupyter_turns/__init__.py"
    assert re.fullmatch(r"\d+\.\d+\.\d+", jupyter_turns.__version__)
    package = json.loads((REPO / "js" / "package.json").read_text())
    assert package["version"] == jupyter_turns.__version__


def test_the_changelog_has_a_section_for_the_current_version() -> None:
    changelog = (REPO / "CHANGELOG.md").read_text(encoding="utf-8")
    assert f"## [{jupyter_turns.__version__}]" in changelog
    assert "## [Unreleased]" in changelog
