"""Prerequisites: one minimum version of each, stated everywhere alike, and one clear sentence
(not a traceback) from `./dev.sh` and from the build hook when Node.js is missing or too old."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path
from types import ModuleType

import pytest

REPO = Path(__file__).resolve().parents[2]
NODE_MIN = "20.19"
PYTHON_MIN = "3.11"


def _hatch_build() -> ModuleType:
    spec = importlib.util.spec_from_file_location("hatch_build", REPO / "hatch_build.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _fake(bin_dir: Path, name: str, prints: str) -> None:
    script = bin_dir / name
    script.write_text(f"#!/bin/sh\necho {prints}\n")
    script.chmod(0o755)


def _bin_without_node(tmp_path: Path) -> Path:
    """A PATH directory with what dev.sh runs before its checks, and no node or npm."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("dirname", "sed"):
        found = shutil.which(tool)
        assert found is not None
        (bin_dir / tool).symlink_to(found)
    return bin_dir


def _one_sentence(text: str) -> str:
    lines = text.strip().splitlines()
    assert len(lines) == 1, text
    assert "Traceback" not in text
    assert lines[0].endswith(".") and not re.search(r"[.:;]\s+[A-Z]", lines[0]), lines[0]
    return lines[0]


def test_the_minimum_versions_are_the_same_everywhere() -> None:
    package = json.loads((REPO / "js" / "package.json").read_text())
    assert package["engines"]["node"] == f">={NODE_MIN}"
    assert _hatch_build().node_minimum(REPO / "js") == NODE_MIN
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    assert project["requires-python"] == f">={PYTHON_MIN}"
    readme = (REPO / "README.md").read_text() + (REPO / "js" / "README.md").read_text()
    assert set(re.findall(r"Node(?:\.js)? >= ([\d.]+)", readme, re.IGNORECASE)) == {NODE_MIN}
    assert set(re.findall(r"Python >= ([\d.]+)", readme)) == {PYTHON_MIN}
    dev_sh = (REPO / "dev.sh").read_text()
    assert set(re.findall(r"Python >= ([\d.]+)", dev_sh)) == {PYTHON_MIN}


def test_the_build_hook_without_node_says_what_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    hatch_build = _hatch_build()
    with pytest.raises(hatch_build.JsBuildError) as caught:
        hatch_build.require_node(REPO / "js")
    sentence = _one_sentence(str(caught.value))
    assert f"needs Node.js >= {NODE_MIN} with npm" in sentence
    assert "neither node nor npm is on PATH" in sentence


def test_the_build_hook_names_a_node_that_is_too_old(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _fake(tmp_path, "node", "v20.18.3")
    _fake(tmp_path, "npm", "10.8.2")
    monkeypatch.setenv("PATH", str(tmp_path))
    hatch_build = _hatch_build()
    with pytest.raises(hatch_build.JsBuildError) as caught:
        hatch_build.require_node(REPO / "js")
    sentence = _one_sentence(str(caught.value))
    assert f"needs Node.js >= {NODE_MIN}, but node on PATH is v20.18.3" in sentence
    _fake(tmp_path, "node", f"v{NODE_MIN}.0")
    assert hatch_build.require_node(REPO / "js") == str(tmp_path / "npm")


def test_pip_without_node_prints_the_sentence_and_no_traceback(tmp_path: Path) -> None:
    source = tmp_path / "src"  # the sources without a built front end, as in a fresh clone
    ignore = shutil.ignore_patterns("node_modules", "dev", "static", "labextension", "__pycache__")
    shutil.copytree(REPO / "jupyter_turns", source / "jupyter_turns", ignore=ignore)
    shutil.copytree(REPO / "js", source / "js", ignore=ignore)
    for name in ("pyproject.toml", "hatch_build.py", "README.md"):
        shutil.copy(REPO / name, source / name)
    empty = tmp_path / "bin"
    empty.mkdir()
    pip = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q"]
    run = subprocess.run(
        [*pip, "-w", str(tmp_path / "out"), str(source)],
        env={**os.environ, "PATH": str(empty), "PIP_NO_INPUT": "1"},
        capture_output=True,
        text=True,
        timeout=240,
    )
    output = run.stdout + run.stderr
    assert run.returncode != 0, output
    assert f"building the front end needs Node.js >= {NODE_MIN} with npm" in output, output
    assert "Traceback" not in output, output


def _dev_sh(bin_dir: Path, python: str = sys.executable) -> subprocess.CompletedProcess[str]:
    env = {"PATH": str(bin_dir), "PYTHON": python, "HOME": str(bin_dir.parent)}
    return subprocess.run(
        ["/bin/bash", str(REPO / "dev.sh"), "test"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_dev_sh_without_node_says_what_to_install(tmp_path: Path) -> None:
    run = _dev_sh(_bin_without_node(tmp_path))
    assert run.returncode == 1 and run.stdout == ""
    sentence = _one_sentence(run.stderr)
    assert f"needs Node.js >= {NODE_MIN} with npm" in sentence
    assert "neither node nor npm is on PATH" in sentence


def test_dev_sh_names_a_node_that_is_too_old(tmp_path: Path) -> None:
    bin_dir = _bin_without_node(tmp_path)
    _fake(bin_dir, "node", "v18.20.4")
    _fake(bin_dir, "npm", "10.8.2")
    run = _dev_sh(bin_dir)
    assert run.returncode == 1 and run.stdout == ""
    assert f"needs Node.js >= {NODE_MIN} to build its front end, but node on PATH is v18.20.4" in (
        _one_sentence(run.stderr)
    )


def test_dev_sh_names_a_python_that_is_too_old(tmp_path: Path) -> None:
    bin_dir = _bin_without_node(tmp_path)
    _fake(bin_dir, "python3.10", "3.10.12")
    run = _dev_sh(bin_dir, python=str(bin_dir / "python3.10"))
    assert run.returncode == 1 and run.stdout == ""
    assert f"needs Python >= {PYTHON_MIN}, but {bin_dir}/python3.10 is Python 3.10.12" in (
        _one_sentence(run.stderr)
    )
