"""B13 — a cold start: what ``%load_ext jupyter_turns`` and the first ``%%chat`` cost a kernel.

Every notebook pays the load, and "Ask chat" pays it on its first click. In a fresh real kernel
(``tests/kernel/kernel.py``'s KernelDriver), one cell times ``%load_ext jupyter_turns`` from
inside the kernel: CPU seconds (user + system, ``resource.getrusage``), wall seconds, and the
modules it added to ``sys.modules`` (with the heavy libraries among them named). Then the first
``%%chat`` (the scripted echo, no page) is timed the same way, between two cells. Baseline, in
the same run: a bare ``import IPython`` in a fresh Python process, timed the same way. A load
that imports a library of :data:`HEAVY` fails the benchmark (and so the smoke run of
``./dev.sh test``) instead of giving a figure.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
from typing import Any

from tests.kernel.kernel import KernelDriver

from .common import Dist, Figure, Settings, judge_max

GOAL_CPU_S = 0.15  # %load_ext jupyter_turns, in CPU seconds
# libraries a load must not import: each is imported when first used
HEAVY = (
    "anthropic",
    "openai",
    "mcp",
    "markdown_it",
    "nh3",
    "nbformat",
    "pydantic",
    "httpx",
    "anywidget",
    "ipywidgets",
)

_CLOCK = (
    "import json as _bj, resource as _br, sys as _bs, time as _bt\n"
    "def _b_cpu():\n"
    "    u = _br.getrusage(_br.RUSAGE_SELF)\n"
    "    return u.ru_utime + u.ru_stime\n"
)
_MARK = "_b_mods, _b_c, _b_t = set(_bs.modules), _b_cpu(), _bt.perf_counter()"
_READ = (
    "_b_new = sorted(set(_bs.modules) - _b_mods)\n"
    "print(_bj.dumps({'cpu': _b_cpu() - _b_c, 'wall': _bt.perf_counter() - _b_t,"
    " 'modules': len(_b_new), 'tops': sorted({m.split('.')[0] for m in _b_new})}))"
)
_IMPORT_IPYTHON = (
    "import json, resource, sys, time\n"
    "def cpu():\n"
    "    u = resource.getrusage(resource.RUSAGE_SELF)\n"
    "    return u.ru_utime + u.ru_stime\n"
    "mods, c, t = set(sys.modules), cpu(), time.perf_counter()\n"
    "import IPython\n"
    "print(json.dumps({'cpu': cpu() - c, 'wall': time.perf_counter() - t,"
    " 'modules': len(set(sys.modules) - mods)}))"
)


def _measured(text: str) -> dict[str, Any]:
    got: dict[str, Any] = json.loads(text.strip().splitlines()[-1])
    return got


def _kernel_start() -> tuple[dict[str, Any], dict[str, Any]]:
    """``%load_ext`` and the first ``%%chat`` in one fresh kernel."""
    driver = KernelDriver()
    try:
        driver.run(_CLOCK)
        load = driver.run(f"{_MARK}\nget_ipython().run_line_magic('load_ext', 'jupyter_turns')")
        loaded = _measured(driver.run(_READ).stdout())
        assert load.reply is not None and load.reply["status"] == "ok", load.outputs
        driver.run(_MARK)
        chat = driver.run("%%chat --provider scripted\nHello", timeout=120)
        assert chat.reply is not None and chat.reply["status"] == "ok", chat.outputs
        first = _measured(driver.run(_READ).stdout())
    finally:
        driver.close()
    return loaded, first


def _import_ipython() -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-c", _IMPORT_IPYTHON], capture_output=True, text=True, check=True
    )
    return _measured(done.stdout)


def run(settings: Settings) -> list[Figure]:
    repeats = settings.pick(5, 1)
    loads, firsts, bases = [], [], []
    for _ in range(repeats):
        bases.append(_import_ipython())
        loaded, first = _kernel_start()
        loads.append(loaded)
        firsts.append(first)
    cpu = Dist.of([m["cpu"] for m in loads])
    base = Dist.of([m["cpu"] for m in bases])
    met, margin = judge_max(cpu.median, GOAL_CPU_S)
    heavy = sorted({t for m in loads for t in m["tops"] if t in HEAVY})
    # not a figure to judge but a regression: the smoke run (./dev.sh test) fails on it
    assert not heavy, (
        f"%load_ext jupyter_turns imported {', '.join(heavy)}: each must be imported when "
        f'first used (docs/architecture.md, "Loading the extension"), not at load'
    )
    wall = statistics.median(m["wall"] for m in loads)
    modules = statistics.median(m["modules"] for m in loads)
    return [
        Figure(
            "B13",
            "%load_ext jupyter_turns in a fresh kernel, CPU",
            cpu.median,
            "CPU-s",
            cpu,
            f"≤ {GOAL_CPU_S:g} CPU-s",
            met,
            margin,
            details={
                "wall_s": wall,
                "modules": modules,
                "heavy_libraries_loaded": heavy,
                "import_ipython_cpu_s": base.median,
            },
        ),
        Figure(
            "B13",
            "%load_ext / a bare `import IPython` (fresh process), CPU",
            cpu.median / base.median if base.median else float("inf"),
            "x",
            kind="info",
            details={"import_ipython": bases[-1]},
        ),
        Figure(
            "B13",
            f"modules %load_ext adds (heavy libraries among them: {', '.join(heavy) or 'none'})",
            modules,
            "modules",
            Dist.of([m["modules"] for m in loads]),
            kind="info",
            details={"import_ipython_modules": bases[-1]["modules"]},
        ),
        Figure(
            "B13",
            "the first %%chat after it (scripted echo, headless), CPU",
            statistics.median(m["cpu"] for m in firsts),
            "CPU-s",
            Dist.of([m["cpu"] for m in firsts]),
            kind="info",
            details={"modules": [m["modules"] for m in firsts]},
        ),
    ]
