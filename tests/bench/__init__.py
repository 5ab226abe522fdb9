"""Benchmarks B1-B9 (docs/architecture.md, "Benchmark definitions"): ratios measured in the same
run, never asserted.

Run everything from the repo root with the venv active:

    python -m tests.bench               # full suite (~9 min): a table, and the figures in
                                        # test-artifacts/bench/results.json
    python -m tests.bench --quick       # smoke mode: smaller inputs, fewer repeats (~4.5 min)
    python -m tests.bench --only B1,B5  # a subset

Not collected by pytest (``norecursedirs`` has ``bench``; no file here starts with ``test_``).
Each module measures one benchmark, with the package as installed and its default settings,
and returns :class:`tests.bench.common.Figure` rows.
"""
