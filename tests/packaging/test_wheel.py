"""The package as a user installs it: the built wheel, in a fresh virtual environment with no
Node.js on PATH, enables its lab extension, streams a turn and renders a reopened record.

Slow (marked `slow`; about 30 s): it builds the sdist and the wheel from it (`python -m build
--no-isolation`, with this environment's hatchling; the front end is the checkout's build, which
the sdist carries), makes a venv, installs the wheel with its `lab` extra, and starts JupyterLab
from that venv. uv installs it where ./dev.sh set the suite up with uv (its cache already holds
the dependencies); otherwise pip does, from a wheelhouse kept in test-artifacts/wheelhouse: the
first run fills it from the package index (`pip download`), later runs install from it without
the index.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, expect, sync_playwright

from tests.browser.chat import LOAD, start_chat, wait_turn_end
from tests.browser.lab import Lab, browser_context
from tests.browser.server import CHROMIUM, LabServer, launch_chromium, start_lab_server

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

REPO = Path(__file__).resolve().parents[2]
WHEELHOUSE = REPO / "test-artifacts" / "wheelhouse"
RECORD_MIME = "application/vnd.jupyter-turns+json"
LABEXTENSION = "share/jupyter/labextensions/jupyter_turns"


def _run(cmd: list[str], env: dict[str, str] | None = None, timeout: float = 600) -> str:
    """Run a command outside the checkout (whose folder would shadow the installed package);
    fail with its output when it fails; return stdout and stderr."""
    done = subprocess.run(cmd, env=env, cwd="/", capture_output=True, text=True, timeout=timeout)
    output = done.stdout + done.stderr
    assert done.returncode == 0, f"{' '.join(cmd)} failed:\n{output[-4000:]}"
    return output


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`python -m build`: the sdist, then the wheel built from it."""
    out = tmp_path_factory.mktemp("dist")
    _run([sys.executable, "-m", "build", "--no-isolation", "-o", str(out), str(REPO)])
    (built,) = out.glob("jupyter_turns-*.whl")
    assert len(list(out.glob("jupyter_turns-*.tar.gz"))) == 1
    names = zipfile.ZipFile(built).namelist()
    data = next(
        n.split("/", 1)[0]
        for n in names
        if n.endswith(".data/data/" + LABEXTENSION + "/package.json")
    )
    assert "jupyter_turns/static/widget.js" in names
    assert f"{data}/data/{LABEXTENSION}/install.json" in names
    assert f"{data}/data/{LABEXTENSION}/static/jupyter-turns-widget.js" in names
    return built


def _no_node_path(venv: Path) -> str:
    """PATH for the venv: its own bin and the system's basic tools, never node or npm."""
    tools = venv.parent / "tools"
    tools.mkdir(exist_ok=True)
    for name in ("sh", "env", "uname"):
        found = shutil.which(name)
        if found and not (tools / name).exists():
            (tools / name).symlink_to(found)
    path = os.pathsep.join([str(venv / "bin"), str(tools)])
    assert shutil.which("node", path=path) is None and shutil.which("npm", path=path) is None
    return path


def _environment(path: str, home: Path) -> dict[str, str]:
    """The user's environment without Jupyter's, the checkout's or the providers' settings."""
    dropped = ("JUPYTER", "JPY_", "IPYTHON", "PYTHONPATH", "ANTHROPIC_", "OPENAI_", "VIRTUAL_ENV")
    env = {k: v for k, v in os.environ.items() if not k.startswith(dropped)}
    env.update(PATH=path, JUPYTER_CONFIG_DIR=str(home / "config"))
    env.update(JUPYTER_DATA_DIR=str(home / "data"), PIP_DISABLE_PIP_VERSION_CHECK="1")
    return env


@pytest.fixture(scope="module")
def venv(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh venv with the wheel and its `lab` extra installed; returns its python."""
    root = tmp_path_factory.mktemp("fresh")
    python = root / "venv" / "bin" / "python"
    wanted = f"{wheel}[lab]"
    if importlib.util.find_spec("uv") is not None:  # ./dev.sh sets the suite up with uv
        uv = [sys.executable, "-m", "uv"]
        _run([*uv, "venv", "-q", "--python", sys.executable, str(root / "venv")])
        env = _environment(_no_node_path(root / "venv"), root)
        _run([*uv, "pip", "install", "-q", "--python", str(python), wanted], env)
        return python
    _run([sys.executable, "-m", "venv", str(root / "venv")])
    env = _environment(_no_node_path(root / "venv"), root)
    offline = [str(python), "-m", "pip", "install", "-q", "--no-compile", "--no-index"]
    offline += ["--find-links", str(WHEELHOUSE), wanted]
    if subprocess.run(offline, env=env, capture_output=True, timeout=600).returncode != 0:
        WHEELHOUSE.mkdir(parents=True, exist_ok=True)
        _run([str(python), "-m", "pip", "download", "-q", "-d", str(WHEELHOUSE), wanted], env)
        _run(offline, env)
    return python


def test_the_wheel_enables_the_lab_extension_without_node(venv: Path, tmp_path: Path) -> None:
    env = _environment(_no_node_path(venv.parent.parent), tmp_path)
    listed = re.sub(
        r"\x1b\[[0-9;]*m", "", _run([str(venv.parent / "jupyter"), "labextension", "list"], env)
    )
    prefix = venv.parent.parent
    # the extension is listed from the venv's share/ (where the wheel put it) and enabled
    assert f"{prefix}/share/jupyter/labextensions\n" in listed, listed
    version = _run([str(venv), "-c", "import jupyter_turns; print(jupyter_turns.__version__)"], env)
    expected = f"jupyter_turns v{version.strip()} enabled OK (python, jupyter_turns)"
    assert expected in listed, listed
    assert (prefix / LABEXTENSION / "static" / "jupyter-turns-widget.js").is_file()
    where = _run([str(venv), "-c", "import jupyter_turns; print(jupyter_turns.__file__)"], env)
    assert where.startswith(str(venv.parent.parent)), where  # the wheel's copy, not the checkout


@pytest.fixture(scope="module")
def lab_from_wheel(venv: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LabServer]:
    """JupyterLab started from the fresh venv, its PATH without node."""
    server = start_lab_server(
        tmp_path_factory.mktemp("lab"), python=venv, path=_no_node_path(venv.parent.parent)
    )
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    if not CHROMIUM.exists():
        pytest.skip(f"the smoke test needs Debian's Chromium at {CHROMIUM}")
    with sync_playwright() as playwright:
        launched = launch_chromium(playwright)
        try:
            yield launched
        finally:
            launched.close()


def test_a_turn_streams_and_its_record_reopens_in_lab_from_the_wheel(
    venv: Path, lab_from_wheel: LabServer, browser: Browser
) -> None:
    with browser_context(browser) as page:
        lab = Lab(lab_from_wheel, page, "wheel")
        lab.write_notebook(
            "wheel.ipynb",
            [
                "import jupyter_turns, sys; print(sys.prefix)",
                LOAD,
                "%%chat --provider scripted\nHello from the wheel",
            ],
        )
        lab.open("wheel.ipynb")
        # the fresh venv's kernel (its stdout; ipykernel may add a stderr warning of its own)
        printed = lab.run_cell(0).locator("[data-mime-type='application/vnd.jupyter.stdout']")
        expect(printed).to_have_text(str(venv.parent.parent))
        lab.run_cell(1)
        root = start_chat(lab, 2)  # the live widget, its bundle served by the installed extension
        wait_turn_end(root)
        expect(root.locator(".jt-message")).to_contain_text("Scripted echo")
        lab.wait_cell_idle(2)
        lab.save()
        lab.close_and_reopen("wheel.ipynb")
        # drawn by the extension's record renderer (not the HTML fallback), without a kernel
        record = lab.cell_output(2).locator(f'[data-mime-type="{RECORD_MIME}"]')
        expect(record.locator(".jt-request")).to_contain_text("Hello from the wheel")
        expect(record.locator(".jt-message")).to_contain_text("Scripted echo")
        assert lab.unexpected_page_errors() == []
        lab.close()
