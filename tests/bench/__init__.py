"""Benchmarks B1-B10 (docs/architecture.md, "Benchmark definitions"): ratios measured in the
same run, never asserted.

Run everything from the repo root with the venv active:

    python -m tests.bench               # full suite (~9 min): a table, and the figures in
                                        # test-artifacts/bench/results.json
    python -m tests.bench --quick       # smoke mode: every benchmark end to end on tiny inputs,
                                        # no figure judged (about a minute; a stage of
                                        # ./dev.sh test, so none can rot unseen)
    python -m tests.bench --only B1,B5  # a subset
    python -m tests.bench --browser only  # only B3, B4, B11, B12, which drive Chromium (or none)

Not collected by pytest (``norecursedirs`` has ``bench``; no file here starts with ``test_``).
Each module measures one benchmark, with the package as installed and its default settings,
and returns :class:`tests.bench.common.Figure` rows.
"""
