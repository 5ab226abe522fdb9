"""Start an isolated JupyterLab server and Debian's Chromium for the browser tests.

The server is isolated from the user's Jupyter setup (config, data, runtime, settings,
workspaces and IPython dirs are temporary; the providers' ANTHROPIC_*, OPENAI_* and OLLAMA_*
variables are removed), has no token, XSRF check, news, update check or extension manager, and
kernels are the `python3` kernelspec of this virtualenv. The jupyter_turns lab extension comes
from the package's build output (`jupyter_turns/labextension`, what `npm run build` / the hatch
hook wrote) when it exists — so an editable checkout tests its current build, not the copy
`pip install -e` made — and otherwise from the installed
`share/jupyter/labextensions/jupyter_turns`. In the browser no
host name resolves, so nothing on a page can reach past 127.0.0.1.

Real-time collaboration: where `jupyter-collaboration` is installed (the `test` extra installs
it), the server runs with it on, as JupyterHub deployments do: each notebook is a shared Y.js
document that the server loads and saves (`LabServer.collaborative`). Its store of document
updates lives in the server's temporary directory, not beside the notebooks, and with the pages'
autosave off the server saves a document only when a page saves it (Ctrl+S). `start_lab_server(...,
collaboration=False)` starts a server with it off (`YDocExtension.disable_rtc`), as a user without
the package has it: the `[solo]` runs of tests marked `both_collaboration_modes` (conftest.py).

`start_lab_server(..., python=VENV_PYTHON, path=PATH)` starts JupyterLab from another
environment (tests/packaging: a fresh venv where the wheel is installed): its kernels, its
installed lab extension (the checkout's build is not linked) and the PATH given, without
PYTHONPATH, so nothing of the checkout is imported (nor is collaboration turned on there).

`start_lab_server(..., lean=True)` (the browser tests' servers) also leaves out the JupyterLab
extensions in `UNUSED_EXTENSIONS`: a third of a page load's CPU goes to them. The benchmarks and
the screenshots keep every extension a user has.
"""

from __future__ import annotations

import contextlib
import ctypes
import importlib.util
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from playwright.sync_api import Browser, BrowserContext

from tests.support.chromium import CHROMIUM, CHROMIUM_ARGS
from tests.support.kernels import server_kernel_config

__all__ = [
    "ARTIFACTS",
    "CHROMIUM",
    "CHROMIUM_ARGS",
    "LAB_SETTINGS",
    "NO_NETWORK_ARGS",
    "VIEWPORT",
    "LabError",
    "LabServer",
    "collaboration_installed",
    "launch_chromium",
    "launch_profile",
    "safe_name",
    "start_lab_server",
]

REPO = Path(__file__).resolve().parents[2]
VIEWPORT = {"width": 1280, "height": 960}
ARTIFACTS = REPO / "test-artifacts" / "browser"

# User settings of the test server (JUPYTERLAB_SETTINGS_DIR): nothing that reaches the network,
# no toasts over the notebook, no autosave behind the test's back, every cell in the DOM.
LAB_SETTINGS: dict[str, dict[str, Any]] = {
    "@jupyterlab/apputils-extension:notification": {
        "fetchNews": "false",
        "checkForUpdates": False,
        "doNotDisturbMode": True,
    },
    "@jupyterlab/extensionmanager-extension:plugin": {"enabled": False},
    "@jupyterlab/docmanager-extension:plugin": {"autosave": False},
    "@jupyterlab/notebook-extension:tracker": {"windowingMode": "none"},
}


def collaboration_installed() -> bool:
    """Whether `jupyter-collaboration` (its server extension, jupyter_server_ydoc) is here."""
    return importlib.util.find_spec("jupyter_server_ydoc") is not None


class LabError(AssertionError):
    """JupyterLab did not reach the state a helper waits for; the message says what it saw."""


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _labextension_source() -> Path | None:
    """The package's own build of the lab extension, if this is a checkout that has one."""
    spec = importlib.util.find_spec("jupyter_turns")
    if spec is None or spec.origin is None:
        return None
    built = Path(spec.origin).parent / "labextension"
    return built if (built / "package.json").is_file() else None


@dataclass
class LabServer:
    """A running `jupyter lab` process and the directories that isolate it."""

    process: subprocess.Popen[bytes]
    url: str
    workdir: Path
    root: Path
    env: dict[str, str]
    labextension: Path | None
    collaborative: bool = False  # real-time collaboration is on (jupyter-collaboration)

    @property
    def data_dir(self) -> Path:
        return Path(self.env["JUPYTER_DATA_DIR"])

    @property
    def log_path(self) -> Path:
        return self.workdir / "server.log"

    def log_tail(self, lines: int = 40) -> str:
        try:
            text = self.log_path.read_text(errors="replace")
        except OSError:
            return ""
        return "\n".join(text.splitlines()[-lines:])

    def api(self, method: str, path: str, body: object = None, timeout: float = 10) -> Any:
        """Call the server's REST API (no token, no XSRF on this server); returns parsed JSON."""
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(
            self.url + path, data=data, method=method, headers={"Content-Type": "application/json"}
        )
        with urllib.request.urlopen(request, timeout=timeout) as response:
            payload = response.read()
        return json.loads(payload) if payload else None

    def shutdown_sessions(self, under: str = "") -> None:
        """Shut down the kernels of every session whose notebook path starts with `under`."""
        for session in self.sessions(under):
            with contextlib.suppress(urllib.error.HTTPError):
                self.api("DELETE", f"/api/sessions/{session['id']}", timeout=30)

    def sessions(self, under: str = "") -> list[dict[str, Any]]:
        """The sessions whose notebook path starts with `under`."""
        return [s for s in self.api("GET", "/api/sessions") if s["path"].startswith(under)]

    def wait_kernel_idle(self, under: str, name: str, timeout: float = 60) -> None:
        """Wait until a session of notebook `name` under `under` has an idle kernel: a page
        that starts one (Notebook 7 does on open) has then finished starting it, so shutting
        this folder's sessions down afterwards leaves none behind."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for session in self.sessions(under):
                if session["name"] == name and session["kernel"]["execution_state"] == "idle":
                    return
            time.sleep(0.1)
        raise TimeoutError(f"no idle kernel for {under}{name} after {timeout} s")

    def stop(self) -> None:
        """Shut down all kernels, then the server; kill its process group if it lingers."""
        if self.process.poll() is None:
            with contextlib.suppress(OSError, urllib.error.URLError, TimeoutError):
                self.shutdown_sessions()
                for kernel in self.api("GET", "/api/kernels"):
                    self.api("DELETE", f"/api/kernels/{kernel['id']}", timeout=30)
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGTERM)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(timeout=15)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=15)
        shutil.rmtree(self.env["JUPYTER_RUNTIME_DIR"], ignore_errors=True)


def _server_environment(workdir: Path, python: Path, path: str | None) -> dict[str, str]:
    dirs = {
        "JUPYTER_CONFIG_DIR": workdir / "config",
        "JUPYTER_DATA_DIR": workdir / "data",
        # short: the kernels' sockets are named after their connection files there (IPC,
        # tests/support/kernels.py), and a Unix socket's path holds at most 107 bytes
        "JUPYTER_RUNTIME_DIR": Path(tempfile.mkdtemp(prefix="jt-run-")),
        "JUPYTERLAB_SETTINGS_DIR": workdir / "settings",
        "JUPYTERLAB_WORKSPACES_DIR": workdir / "workspaces",
        "IPYTHONDIR": workdir / "ipython",
    }
    for path in dirs.values():
        path.mkdir(parents=True, exist_ok=True)
    dropped = ("JUPYTER", "JPY_", "IPYTHON", "ANTHROPIC_", "OPENAI_", "OLLAMA_")
    env = {k: v for k, v in os.environ.items() if not k.startswith(dropped)}
    env.update({k: str(v) for k, v in dirs.items()})
    # jupyter_core puts the virtualenv's paths before the user's inside a venv; the temporary
    # data dir must come first so that the package's own lab extension build wins.
    env["JUPYTER_PREFER_ENV_PATH"] = "0"
    env["PYDEVD_DISABLE_FILE_VALIDATION"] = "1"
    # The venv's bin first: kernels and `jupyter` subcommands resolve to this environment.
    env["PATH"] = path or os.pathsep.join([str(python.parent), env.get("PATH", "")])
    if python != Path(sys.executable):
        env.pop("PYTHONPATH", None)  # another environment imports its own jupyter_turns
    return env


# JupyterLab extensions that no test uses and that jupyter_turns never touches (it adds no table
# of contents entry, cell tag, metadata form, inspector or log console entry, and draws no CSV,
# PDF or Vega file). Left out of the tests' servers, they save about 1 of the 3 CPU-seconds a
# JupyterLab page load costs on the 2-core machine (docs/development.md), and the table of
# contents' and cell tags' work on every change of a notebook.
UNUSED_EXTENSIONS = (
    "@jupyterlab/toc-extension",
    "@jupyterlab/celltags-extension",
    "@jupyterlab/metadataform-extension",
    "@jupyterlab/inspector-extension",
    "@jupyterlab/logconsole-extension",
    "@jupyterlab/csvviewer-extension",
    "@jupyterlab/pdf-extension",
    "@jupyterlab/vega5-extension",
    # the notebook's plugins that need the table of contents or a metadata form
    "@jupyterlab/notebook-extension:toc",
    "@jupyterlab/notebook-extension:update-raw-mimetype",
)


def _write_server_config(
    env: Mapping[str, str], root: Path, collaborative: bool, lean: bool
) -> None:
    config: dict[str, Any] = {
        "ServerApp": {
            "ip": "127.0.0.1",
            "port_retries": 0,
            "open_browser": False,
            "root_dir": str(root),
            "disable_check_xsrf": True,
            "terminals_enabled": False,
            "allow_root": os.getuid() == 0,
        },
        "IdentityProvider": {"token": ""},
        "LabApp": {
            "news_url": None,
            "check_for_updates_class": "jupyterlab.NeverCheckForUpdate",
            "expose_app_in_browser": True,
            "extension_manager": "readonly",
        },
        # Notebook 7's page exposes its app too, so the tests drive it like JupyterLab's
        "JupyterNotebookApp": {"expose_app_in_browser": True},
        "MappingKernelManager": {"default_kernel_name": "python3"},
        **server_kernel_config(),
    }
    if collaboration_installed():
        runtime = Path(env["JUPYTER_RUNTIME_DIR"])
        config["YDocExtension"] = {
            "disable_rtc": not collaborative,
            # the server's own files go to its temporary dirs, not beside the notebooks
            "session_store_path": str(runtime / "collaboration_sessions.json"),
        }
        config["SQLiteYStore"] = {"db_path": str(runtime / "ystore.db")}
    Path(env["JUPYTER_CONFIG_DIR"], "jupyter_server_config.json").write_text(json.dumps(config))
    # "Save and Export Notebook As…" asks /api/nbconvert on every JupyterLab load, which costs
    # the server 0.2-0.4 s of CPU (nbconvert instantiates every exporter); no test exports
    labconfig = Path(env["JUPYTER_CONFIG_DIR"], "labconfig")
    labconfig.mkdir(parents=True, exist_ok=True)
    disabled = {"@jupyterlab/notebook-extension:export": True}
    if lean:
        disabled.update(dict.fromkeys(UNUSED_EXTENSIONS, True))
    (labconfig / "page_config.json").write_text(json.dumps({"disabledExtensions": disabled}))
    for plugin, values in LAB_SETTINGS.items():
        package, name = plugin.split(":")
        target = Path(env["JUPYTERLAB_SETTINGS_DIR"], package, f"{name}.jupyterlab-settings")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps(values))


def _die_with_parent() -> None:  # pragma: no cover - runs in the child before exec
    """If pytest is killed outright, the server gets SIGTERM instead of living on (Linux)."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


def start_lab_server(
    workdir: Path,
    timeout: float = 90,
    *,
    python: Path | None = None,
    path: str | None = None,
    collaboration: bool = True,
    lean: bool = False,
) -> LabServer:
    """Start `jupyter lab` on a free 127.0.0.1 port; return once it answers. It runs from this
    Python, or from `python` (another environment, with its installed extension) with PATH
    `path` when given. With `collaboration` (this Python, jupyter-collaboration installed)
    notebooks are shared documents; `collaboration=False` turns it off where it is installed.
    `lean` leaves `UNUSED_EXTENSIONS` out of the page."""
    workdir.mkdir(parents=True, exist_ok=True)
    root = workdir / "root"
    root.mkdir(exist_ok=True)
    python = python or Path(sys.executable)
    env = _server_environment(workdir, python, path)
    own = python == Path(sys.executable)
    collaborative = collaboration and own and collaboration_installed()
    _write_server_config(env, root, collaborative, lean)
    labextension = _labextension_source() if own else None
    if labextension is not None:
        link = Path(env["JUPYTER_DATA_DIR"], "labextensions", "jupyter_turns")
        link.parent.mkdir(parents=True, exist_ok=True)
        if not link.exists():
            link.symlink_to(labextension, target_is_directory=True)
    last_error = ""
    for _attempt in range(3):  # a free port can be taken between probing and binding
        port = _free_port()
        with open(workdir / "server.log", "ab") as log:
            process = subprocess.Popen(
                [str(python), "-m", "jupyterlab", f"--ServerApp.port={port}"],
                cwd=root,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                preexec_fn=_die_with_parent if sys.platform == "linux" else None,
            )
        server = LabServer(
            process, f"http://127.0.0.1:{port}", workdir, root, env, labextension, collaborative
        )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and process.poll() is None:
            try:
                with urllib.request.urlopen(f"{server.url}/lab", timeout=2) as response:
                    if response.status == 200:
                        return server
            except (OSError, urllib.error.URLError):
                time.sleep(0.1)  # poll until the server listens
        last_error = server.log_tail()
        server.stop()
    raise RuntimeError(f"JupyterLab did not start; server log:\n{last_error}")


# No host name resolves in the test browser: a page that reaches for the network (a CDN import
# in a widget, a news feed) fails visibly (net::ERR_NAME_NOT_RESOLVED in the console) instead
# of depending on the machine's connectivity. The server is addressed as 127.0.0.1.
NO_NETWORK_ARGS = ("--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",)


def _launch_options() -> dict[str, Any]:
    """How every Chromium of the tests starts: Debian's, headless, with the project's flags."""
    return {
        "executable_path": str(CHROMIUM),
        "args": [*CHROMIUM_ARGS, *NO_NETWORK_ARGS],
        "headless": True,
    }


def launch_chromium(playwright: Any) -> Browser:
    """Debian's chromium, headless, with the project's flags (never a downloaded browser)."""
    browser: Browser = playwright.chromium.launch(**_launch_options())
    return browser


def launch_profile(playwright: Any, user_data_dir: Path) -> BrowserContext:
    """Debian's chromium as `launch_chromium` starts it, with one profile on disk: its pages
    share cookies and storage, and Chromium's code cache, which a fresh context lacks, makes
    loading JupyterLab again about a third cheaper (1.5 s of the page's CPU instead of 2.4)."""
    context: BrowserContext = playwright.chromium.launch_persistent_context(
        str(user_data_dir), viewport=VIEWPORT, **_launch_options()
    )
    context.set_default_timeout(30_000)
    return context


def safe_name(text: str) -> str:
    """A file-name-safe version of a test id."""
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text).strip("_")[:120]
