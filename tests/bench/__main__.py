"""``python -m tests.bench [--quick] [--only B1,B2] [--out PATH]``: run, print, write JSON."""

from __future__ import annotations

import argparse
import importlib
import json
import math
import os
import sys
import time
import traceback
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from .browsers import close_shared
from .common import ARTIFACTS, Figure, Settings, machine

BENCHES = {
    "B1": "b1_kernel_path",
    "B2": "b2_bytes",
    "B3": "b3_render",
    "B4": "b4_first_token",
    "B5": "b5_tools",
    "B6": "b6_persistence",
    "B7": "b7_cache",
    "B9": "b9_tool_output",
    "B10": "b10_long_thread",
    "B11": "b11_open",
    "B12": "b12_long_session",
    "B13": "b13_cold_start",
    "B14": "b14_serve",
}
# the benchmarks that drive Chromium (./dev.sh test runs them beside the others: --browser)
IN_BROWSER = {"B3", "B4", "B11", "B12"}


def _fmt(value: float) -> str:
    if math.isinf(value) or math.isnan(value):
        return str(value)
    magnitude = abs(value)
    if magnitude >= 100:
        return f"{value:,.0f}"
    if magnitude >= 10:
        return f"{value:.1f}"
    if magnitude >= 0.1:
        return f"{value:.2f}"
    return f"{value:.3g}"


def _row(f: Figure) -> list[str]:
    spread = ""
    if f.dist is not None and f.dist.n > 1:
        spread = f"{_fmt(f.dist.min)}-{_fmt(f.dist.max)} (n={f.dist.n})"
    elif f.dist is not None:
        spread = "n=1"
    met = {True: "MET", False: "MISSED", None: ""}[f.met]
    return [f.bench, f.name, f"{_fmt(f.value)} {f.unit}", spread, f.goal, met, f.margin]


def table(figures: list[Figure]) -> str:
    head = ["bench", "figure", "value (median)", "min-max", "goal", "result", "by"]
    rows = [head, *(_row(f) for f in figures)]
    widths = [min(max(len(r[i]) for r in rows), 90) for i in range(len(head))]
    lines = []
    for k, r in enumerate(rows):
        lines.append("  ".join(c[:90].ljust(w) for c, w in zip(r, widths, strict=True)).rstrip())
        if k == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


def breakdowns(figures: list[Figure]) -> str:
    """The per-kind byte tables some figures carry (B2), as text."""
    out = []
    for f in figures:
        rows = f.details.get("breakdown")
        if not isinstance(rows, dict):
            continue
        total = sum(r["bytes"] for r in rows.values()) or 1
        out.append(f"{f.bench} bytes by message kind - {f.name}")
        out.append(f"  {'kind':<58} {'msgs':>5} {'bytes':>10} {'share':>6} {'framing':>8}")
        for kind, r in rows.items():
            framing = r["bytes"] - r["content"] if r["content"] else 0
            out.append(
                f"  {kind[:58]:<58} {r['count']:>5} {r['bytes']:>10,} "
                f"{r['bytes'] / total:>6.1%} {framing:>8,}"
            )
        out.append(f"  {'total':<58} {'':>5} {total:>10,}")
    return "\n".join(out)


def tables(figures: list[Figure]) -> str:
    """The step-by-step tables some figures carry (B11: ``details["table"]``), as text; a
    table shared by several figures is printed once."""
    out: list[str] = []
    for f in figures:
        got = f.details.get("table")
        if not isinstance(got, dict) or got["title"] in out:
            continue
        rows = [got["head"], *got["rows"]]
        widths = [max(len(str(r[i])) for r in rows) for i in range(len(got["head"]))]
        out.append(got["title"])
        for r in rows:
            first, *rest = (str(c) for c in r)
            cells = [
                first.ljust(widths[0]),
                *(c.rjust(w) for c, w in zip(rest, widths[1:], strict=True)),
            ]
            out.append("  " + "  ".join(cells))
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.bench", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="smoke mode: smaller, fewer repeats")
    parser.add_argument("--only", help="comma-separated benchmark ids, e.g. B1,B5")
    parser.add_argument(
        "--browser",
        choices=("only", "none"),
        help="only the benchmarks that drive Chromium (B3, B4, B11, B12), or none of them",
    )
    parser.add_argument("--out", type=Path, default=ARTIFACTS / "results.json")
    args = parser.parse_args(argv)
    wanted = [b.strip().upper() for b in args.only.split(",")] if args.only else list(BENCHES)
    if args.browser:
        wanted = [b for b in wanted if (b in IN_BROWSER) == (args.browser == "only")]
    unknown = [b for b in wanted if b not in BENCHES]
    if unknown:
        parser.error(f"unknown benchmark(s): {', '.join(unknown)} (known: {', '.join(BENCHES)})")
    settings = Settings(quick=args.quick)
    started = datetime.now(UTC)
    results: dict[str, Any] = {
        "command": " ".join(
            ["python -m tests.bench", *(argv if argv is not None else sys.argv[1:])]
        ),
        "started": started.isoformat(timespec="seconds"),
        "mode": "quick" if args.quick else "full",
        "machine": machine(),
        "benchmarks": {},
    }
    figures: list[Figure] = []
    failed = []
    for bench in wanted:
        print(f"--- {bench} ({BENCHES[bench]}) ...", flush=True)
        load_before = os.getloadavg()
        t0 = time.monotonic()
        entry: dict[str, Any] = {"load_average_before": [round(x, 2) for x in load_before]}
        try:
            module = importlib.import_module(f".{BENCHES[bench]}", __package__)
            got: list[Figure] = module.run(settings)
            figures += got
            entry["figures"] = [f.as_json() for f in got]
            print(table(got), flush=True)
            if breakdowns(got):
                print(breakdowns(got), flush=True)
            if tables(got):
                print(tables(got), flush=True)
        except Exception as exc:  # one broken benchmark must not hide the others' figures
            failed.append(bench)
            entry["error"] = "".join(traceback.format_exception(exc))
            print(f"{bench} failed: {exc!r}", flush=True)
        entry["seconds"] = round(time.monotonic() - t0, 1)
        entry["load_average_after"] = [round(x, 2) for x in os.getloadavg()]
        results["benchmarks"][bench] = entry
    close_shared()  # the smoke run's one Lab server and browser (browsers.py)
    results["seconds"] = round((datetime.now(UTC) - started).total_seconds(), 1)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=1, ensure_ascii=False, default=str) + "\n")
    m = results["machine"]
    print()
    print(
        f"machine: {m['cpu']}, {m['cores']} cores, {m['memory']}, Python {m['python']}, {m['os']}"
    )
    print(table(figures))
    if breakdowns(figures):
        print()
        print(breakdowns(figures))
    if failed:
        print(f"\nfailed to run: {', '.join(failed)} (tracebacks in {args.out})")
    print(f"\nresults: {args.out}  ({results['seconds']:.0f} s)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
