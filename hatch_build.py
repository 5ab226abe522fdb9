"""Hatch build hook: build the front end (js/) before the wheel or sdist is assembled.

Produces `jupyter_turns/static/widget.js` (esbuild) and `jupyter_turns/labextension/`
(the prebuilt JupyterLab extension, built by @jupyter/builder) with `npm ci` + `npm run build`.

The build is skipped when the outputs exist and were built from exactly the current sources:
a stamp next to the outputs records a hash of every source file, so an edited, pulled or
checked-out source always triggers a rebuild (mtimes are not trusted). `npm ci` is skipped
when node_modules was installed from the same package-lock.json.

Building needs Node.js (at least the version in js/package.json "engines", the one place it
is written) and npm on PATH; without them the build stops with one sentence saying so.

Environment:
  JUPYTER_TURNS_JS=force   always rebuild
  JUPYTER_TURNS_JS=skip    never run npm; fail if the outputs are missing or stale
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

# Inputs of the JS build, relative to js/. Anything else under js/ (dev harness, node_modules)
# does not change the outputs.
SOURCE_GLOBS = ("src/**/*", "labextension/**/*", "package.json", "package-lock.json")
OUTPUTS = (
    "jupyter_turns/static/widget.js",
    "jupyter_turns/labextension/package.json",
    # the same bundle, served by JupyterLab, so widgets need not carry it (see widget.py)
    "jupyter_turns/labextension/static/jupyter-turns-widget.js",
)
STAMP = "jupyter_turns/static/.js-build-stamp"
LOCK_STAMP = "node_modules/.jupyter-turns-lock-hash"


class JsBuildError(RuntimeError):
    """The front end is missing or stale and cannot be built here."""


class JsBuildHook(BuildHookInterface):  # type: ignore[type-arg]
    PLUGIN_NAME = "jupyter-turns-js"

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        try:
            self._build(Path(self.root))
        except JsBuildError as exc:
            # The sentence is the whole story: a traceback of this hook would only bury it.
            raise SystemExit(str(exc)) from None

    def _build(self, root: Path) -> None:
        js = root / "js"
        mode = os.environ.get("JUPYTER_TURNS_JS", "").strip().lower()
        if not js.is_dir():
            # Building from an sdist without js/ sources: it must carry fresh outputs.
            _require_outputs(root)
            return
        digest = _source_digest(js)
        if mode != "force" and _is_fresh(root, digest):
            self.app.display_info("jupyter_turns: front end is up to date, skipping the JS build")
            return
        if mode == "skip":
            raise JsBuildError(
                "jupyter_turns: the built front end is missing or older than js/ sources and "
                "JUPYTER_TURNS_JS=skip forbids building it"
            )
        npm = require_node(js)
        self.app.display_info("jupyter_turns: building the front end (npm)")
        lock_hash = _file_hash(js / "package-lock.json")
        lock_stamp = js / LOCK_STAMP
        if not lock_stamp.exists() or lock_stamp.read_text() != lock_hash:
            _run([npm, "ci", "--no-audit", "--no-fund"], js)
            lock_stamp.write_text(lock_hash)
        _run([npm, "run", "build"], js)
        _require_outputs(root)
        (root / STAMP).write_text(json.dumps({"sources": digest}) + "\n")


def node_minimum(js: Path) -> str:
    """The minimum Node.js version, from js/package.json: `"engines": {"node": ">=20.19"}`."""
    spec = json.loads((js / "package.json").read_text())["engines"]["node"]
    match = re.fullmatch(r">=\s*(\d+(?:\.\d+)*)", spec.strip())
    if match is None:
        raise JsBuildError(
            f'jupyter_turns: js/package.json has "engines.node": {spec!r}, not ">=X.Y"'
        )
    return match.group(1)


def require_node(js: Path) -> str:
    """The path of npm, once node (new enough) and npm are on PATH; else JsBuildError with one
    sentence that says what to install."""
    minimum = node_minimum(js)
    wheel = "or install jupyter_turns from a wheel, which ships the built front end"
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        missing = "neither node nor npm is" if node is npm else f"{'node' if npm else 'npm'} is not"
        raise JsBuildError(
            f"jupyter_turns: building the front end needs Node.js >= {minimum} with npm, and "
            f"{missing} on PATH: install Node.js (https://nodejs.org), {wheel}."
        )
    try:
        found = subprocess.run(
            [node, "--version"], capture_output=True, text=True, check=True, timeout=60
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError) as exc:
        raise JsBuildError(
            f"jupyter_turns: building the front end needs Node.js >= {minimum}, and "
            f"`{node} --version` failed ({exc}): install Node.js (https://nodejs.org), {wheel}."
        ) from None
    if _version(found) < _version(minimum):
        raise JsBuildError(
            f"jupyter_turns: building the front end needs Node.js >= {minimum}, but node on PATH "
            f"is {found or 'of unknown version'}: install a newer Node.js (https://nodejs.org), "
            f"{wheel}."
        )
    return npm


def _version(text: str) -> tuple[int, ...]:
    """(20, 19, 0) from "v20.19.0" or "20.19"; () when there is no version in `text`."""
    match = re.search(r"\d+(?:\.\d+)*", text)
    return tuple(int(part) for part in match.group(0).split(".")) if match else ()


def _source_digest(js: Path) -> str:
    files = sorted({p for pattern in SOURCE_GLOBS for p in js.glob(pattern) if p.is_file()})
    h = hashlib.sha256()
    for path in files:
        h.update(path.relative_to(js).as_posix().encode())
        h.update(b"\0")
        h.update(_file_hash(path).encode())
    return h.hexdigest()


def _file_hash(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _is_fresh(root: Path, digest: str) -> bool:
    stamp = root / STAMP
    if not stamp.exists() or not all((root / out).exists() for out in OUTPUTS):
        return False
    try:
        recorded = json.loads(stamp.read_text()).get("sources")
    except ValueError:
        return False
    return bool(recorded == digest)


def _require_outputs(root: Path) -> None:
    missing = [out for out in OUTPUTS if not (root / out).exists()]
    if missing:
        raise JsBuildError(f"jupyter_turns: front-end build outputs missing: {', '.join(missing)}")


def _run(cmd: list[str], cwd: Path) -> None:
    try:
        subprocess.run(cmd, cwd=cwd, check=True)
    except subprocess.CalledProcessError as exc:
        raise JsBuildError(f"jupyter_turns: `{' '.join(cmd[1:])}` failed in {cwd}") from exc
