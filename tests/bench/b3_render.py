"""B3 — browser render work for a streamed answer: ours vs re-rendering everything per delta.

Headless Chromium loads ``tests/bench/b3_page.html`` (served from the repo root): the built
``jupyter_turns/static/widget.js`` with js/dev's fake anywidget model, and a baseline that runs
the same ``marked`` + ``DOMPurify`` (js/node_modules, the widget's sanitizer config) over the
full text on every delta. Both get the same feed: the answer split into 20 deltas per KB, one
``delta`` custom message per delta at ``rate`` per second on an absolute schedule. Ours then
gets what the kernel sends at the end (``released``, the event, status complete).

Work = CDP ``Performance.getMetrics`` difference over the stream: ScriptDuration +
LayoutDuration + RecalcStyleDuration (TaskDuration reported too), one fresh page per run.
"""

from __future__ import annotations

import functools
import http.server
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from playwright.sync_api import Browser, sync_playwright

from .common import (
    CHROMIUM,
    CHROMIUM_ARGS,
    REPO,
    Dist,
    Figure,
    Settings,
    answer,
    deltas,
    judge_max,
    judge_min,
)

RATIO_GOAL = 10.0
LINEAR_GOAL = 2.0  # 2x the answer ≈ 2x the time; judged as ≤ 2.5x (see run)
METRICS = ("ScriptDuration", "LayoutDuration", "RecalcStyleDuration", "TaskDuration")


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


@contextmanager
def serve_repo() -> Iterator[str]:
    handler = functools.partial(_Quiet, directory=str(REPO))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def _metrics(cdp: Any) -> dict[str, float]:
    got = cdp.send("Performance.getMetrics")["metrics"]
    return {m["name"]: float(m["value"]) for m in got if m["name"] in METRICS}


def measure(
    browser: Browser, base: str, side: str, chunks: list[str], rate: float
) -> dict[str, Any]:
    """One stream on a fresh page; main-thread seconds by metric, plus the page's own report."""
    context = browser.new_context(viewport={"width": 900, "height": 1200}, device_scale_factor=1)
    try:
        page = context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(f"{base}/tests/bench/b3_page.html")
        page.wait_for_function("window.benchReady === true")
        page.evaluate("bench.prepare()")
        cdp = context.new_cdp_session(page)
        cdp.send("Performance.enable", {"timeDomain": "threadTicks"})
        before = _metrics(cdp)
        report = page.evaluate(f"([d, r]) => bench.{side}(d, r)", [chunks, rate])
        after = _metrics(cdp)
        if errors:
            raise RuntimeError(f"page errors in B3 ({side}): {errors[:3]}")
        work = {name: (after[name] - before[name]) * 1e3 for name in METRICS}
        work["render_ms"] = (
            work["ScriptDuration"] + work["LayoutDuration"] + work["RecalcStyleDuration"]
        )
        return {**work, **report}
    finally:
        context.close()


def run(settings: Settings) -> list[Figure]:
    sizes = settings.pick((25_000, 50_000, 100_000), (2_500, 5_000, 10_000))
    small, middle, large = sizes
    rate = settings.pick(100.0, 1000.0)
    ours_repeats = settings.pick(3, 1)
    base_repeats = settings.pick(1, 1)
    results: dict[tuple[str, int], list[dict[str, Any]]] = {}
    with serve_repo() as url, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            warm = deltas(answer(5_000), 100)
            measure(browser, url, "ours", warm, 1000.0)
            for size in sizes:
                text = answer(size)
                chunks = deltas(text, size // 50)
                for side, repeats in (("ours", ours_repeats), ("baseline", base_repeats)):
                    results[(side, size)] = [
                        measure(browser, url, side, chunks, rate) for _ in range(repeats)
                    ]
        finally:
            browser.close()

    def dist(side: str, size: int) -> Dist:
        return Dist.of([r["render_ms"] for r in results[(side, size)]])

    def _median(side: str, size: int, metric: str) -> float:
        return Dist.of([r[metric] for r in results[(side, size)]]).median

    feed = f"{rate:g} deltas/s, 20 deltas per KB, same feed both sides"
    figures: list[Figure] = []
    for size in sizes:
        ours, baseline = dist("ours", size), dist("baseline", size)
        last = results[("ours", size)][-1]
        figures.append(
            Figure(
                "B3",
                f"ours: main-thread script+layout+style, {size // 1000} KB ({feed})",
                ours.median,
                "ms",
                ours,
                kind="info",
                details={
                    "metrics_ms": {k: round(last[k], 1) for k in (*METRICS, "render_ms")},
                    "wall_ms": round(last["wall_ms"]),
                    "counters": last["counters"],
                    "baseline_ms": baseline.__dict__,
                    "baseline_metrics_ms": {
                        k: round(results[("baseline", size)][-1][k], 1)
                        for k in (*METRICS, "render_ms")
                    },
                    "baseline_wall_ms": round(results[("baseline", size)][-1]["wall_ms"]),
                },
            )
        )
    ours, baseline = dist("ours", large), dist("baseline", large)
    ratio = baseline.median / ours.median
    met, margin = judge_min(ratio, RATIO_GOAL)
    figures.append(
        Figure(
            "B3",
            f"baseline (full re-render per delta) / ours, {large // 1000} KB",
            ratio,
            "x less work",
            Dist(
                baseline.min / ours.max,
                ratio,
                baseline.max / ours.min,
                min(baseline.n, ours.n),
            ),
            f"≥ {RATIO_GOAL:g}x",
            met,
            margin,
            details={
                "ours_ms": ours.__dict__,
                "baseline_ms": baseline.__dict__,
                "task_duration_ratio": _median("baseline", large, "TaskDuration")
                / _median("ours", large, "TaskDuration"),
            },
        )
    )
    steps = {f"{b // 1000}/{a // 1000} KB": (a, b) for a, b in ((small, middle), (middle, large))}
    growth = {k: dist("ours", b).median / dist("ours", a).median for k, (a, b) in steps.items()}
    base_growth = {
        k: dist("baseline", b).median / dist("baseline", a).median for k, (a, b) in steps.items()
    }
    worst = max(growth.values())
    met, margin = judge_max(worst, LINEAR_GOAL * 1.25)
    figures.append(
        Figure(
            "B3",
            "ours: growth of work when the answer doubles (worst step)",
            worst,
            "x per 2x answer",
            None,
            "linear: ≈ 2x (judged ≤ 2.5x)",
            met,
            margin,
            details={"ours": growth, "baseline": base_growth},
        )
    )
    return figures
