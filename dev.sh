#!/usr/bin/env bash
# The project's entry points (see README):
#   ./dev.sh demo                set up .venv and execute the quickstart notebook offline
#   ./dev.sh test [pytest args]  set up .venv with the test extras and run every stage of the
#                                suite (ruff, mypy, import contract, JS lint, JS tests, docs,
#                                pytest, nbval, a smoke run of the benchmarks), even after a
#                                failing one; one summary line per stage; non-zero if any failed
#   ./dev.sh lab                 open the example notebooks in JupyterLab
#   ./dev.sh docs [PORT]         build the docs site (docs/, strict) and serve it on 127.0.0.1
# Needs Python >= 3.11 and Node.js (the version in js/package.json "engines") with npm.
set -euo pipefail
cd "$(dirname "$0")"

VENV=${VENV:-.venv}
# The minimum Node.js version is written once, in js/package.json ("engines"); hatch_build.py
# reads it from there too.
NODE_MIN=$(sed -n 's/.*"node": *">= *\([0-9][0-9.]*\)".*/\1/p' js/package.json)

fail() {
    echo "$*" >&2
    exit 1
}

# at_least HAVE NEED: dotted version HAVE >= NEED
at_least() {
    local IFS=. i
    local -a have=($1) need=($2)
    for i in 0 1 2; do
        if ((10#${have[i]:-0} > 10#${need[i]:-0})); then return 0; fi
        if ((10#${have[i]:-0} < 10#${need[i]:-0})); then return 1; fi
    done
}

require_python() {
    PYTHON=${PYTHON:-$(command -v python3.11 || command -v python3 || true)}
    [ -n "$PYTHON" ] || fail "jupyter_turns needs Python >= 3.11, and no python3 is on PATH (or set PYTHON=/path/to/python3.11)."
    local version
    version=$("$PYTHON" -c 'import platform; print(platform.python_version())')
    at_least "$version" 3.11 || fail "jupyter_turns needs Python >= 3.11, but $PYTHON is Python $version (set PYTHON=/path/to/python3.11)."
}

require_node() {
    local node npm missing=""
    node=$(command -v node || true)
    npm=$(command -v npm || true)
    if [ -z "$node$npm" ]; then
        missing="neither node nor npm is"
    elif [ -z "$node" ] || [ -z "$npm" ]; then
        missing="$([ -z "$node" ] && echo node || echo npm) is not"
    fi
    [ -z "$missing" ] || fail "jupyter_turns needs Node.js >= $NODE_MIN with npm to build its front end, and $missing on PATH (https://nodejs.org)."
    local version
    version=$(node --version)
    at_least "${version#v}" "$NODE_MIN" || fail "jupyter_turns needs Node.js >= $NODE_MIN to build its front end, but node on PATH is $version (https://nodejs.org)."
}

setup() {
    require_python
    require_node
    if [ ! -x "$VENV/bin/python" ]; then
        "$PYTHON" -m venv "$VENV"
    fi
    # uv (from PyPI, into the venv) installs the project and its extras in about 25 s where pip
    # takes about 50; where uv cannot (no wheel for this machine, a registry only pip is set up
    # to reach), pip does it. Both compile what they install: where PYTHONDONTWRITEBYTECODE is
    # set (as on CI) Python never saves what it compiles, and every kernel would compile IPython
    # and the rest again (a kernel's start took 2.1 s instead of 1.1).
    if ! { "$VENV/bin/python" -m pip install --quiet uv &&
        "$VENV/bin/python" -m uv pip install --quiet --compile-bytecode \
            --python "$VENV/bin/python" -e ".$1"; }; then
        echo "uv could not set up $VENV; pip does (about a minute)" >&2
        "$VENV/bin/python" -m pip install --quiet --upgrade pip
        "$VENV/bin/python" -m pip install --quiet -e ".$1"
    fi
    # The package itself is installed as the checkout (editable), which neither compiles: each
    # kernel's %load_ext compiled its modules again where PYTHONDONTWRITEBYTECODE is set (0.52
    # CPU-s instead of 0.27). A module changed later is compiled again as it is imported.
    "$VENV/bin/python" -m compileall -q -j 0 jupyter_turns >/dev/null
}

ensure_chromium() {
    if [ -x /usr/bin/chromium ]; then return; fi
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        echo "installing Debian's chromium (about 350 MB) for the browser tests..."
        apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
    else
        fail "The browser tests need Debian's chromium at /usr/bin/chromium (about 350 MB): run \`sudo apt-get install chromium\`, then ./dev.sh test again."
    fi
}

# The real terminal agents the browser tests drive against %chat serve (tests/agents/package.json
# pins them; npm keeps what it downloaded in ~/.npm, and an install that is up to date takes a
# second or two). npm runs no install scripts here: the tests call the platform package's binary.
ensure_agents() {
    (cd tests/agents && npm install --no-audit --no-fund --silent --ignore-scripts) ||
        fail "could not install the terminal agents the tests drive (tests/agents: npm install)."
}

# --- test stages -------------------------------------------------------------------------------

SUMMARY=()
FAILED=0

# stage NAME COUNTER COMMAND...: run COMMAND with its output shown (and kept for COUNTER, a
# function that reads it on stdin and prints a count), then record one summary line.
stage() {
    local name=$1 counter=$2
    shift 2
    local log status=passed count start micros
    log=$(mktemp)
    echo
    echo "=== $name: $*"
    start=${EPOCHREALTIME//[!0-9]/}
    if ! "$@" 2>&1 | tee "$log"; then
        status=failed
        FAILED=1
    fi
    micros=$((${EPOCHREALTIME//[!0-9]/} - start))
    count=$(sed 's/\x1b\[[0-9;]*m//g' "$log" | "$counter" || true)
    rm -f "$log"
    SUMMARY+=("$(printf '%-11s %-7s %-40s %6d.%d s' "$name" "$status" "${count:--}" \
        $((micros / 1000000)) $((micros / 100000 % 10)))")
}

ruff_count() { sed -nE 's/^Found ([0-9]+ errors?).*/\1/p' | tail -1; }
mypy_count() {
    sed -nE -e 's/^Success: no issues found in ([0-9]+) source files?/\1 files, no issues/p' \
        -e 's/^Found ([0-9]+ errors?) in .*\(checked ([0-9]+) source files?\)/\1 in \2 files/p' | tail -1
}
no_count() { cat >/dev/null; }
# lint-imports' last line: "Contracts: 2 kept, 0 broken."
imports_count() { sed -nE 's/^Contracts: ([0-9]+ kept, [0-9]+ broken)\./\1/p' | tail -1; }
node_count() {
    local out tests fail
    out=$(cat)
    tests=$(sed -nE 's/^(# |ℹ )tests ([0-9]+)/\2/p' <<<"$out" | tail -1)
    fail=$(sed -nE 's/^(# |ℹ )fail ([0-9]+)/\2/p' <<<"$out" | tail -1)
    [ -n "$tests" ] && echo "$tests tests${fail:+, $fail failed}"
}
# pytest's last line: "==== 210 passed, 1 skipped in 301.20s (0:05:01) ====" (-q: no "=")
pytest_count() {
    sed -nE 's/^=* ?([0-9]+ (passed|failed|errors?|skipped|deselected|xfailed|xpassed|warnings?)([ ,].*)?) in [0-9.]+s.*/\1/p' |
        tail -1
}
# the benchmarks' smoke run: one "--- B1 (...) ..." line per benchmark started
bench_count() {
    local count
    count=$(grep -c '^--- B' || true)
    [ "${count:-0}" -gt 0 ] && echo "$count benchmarks run"
}
nbval_count() {
    local line
    line=$(pytest_count)
    [ -n "$line" ] && echo "cells: $line"
}

js_lint() { (cd js && npm run --silent lint); }

# The docs site, strict: a warning (a broken link or reference, a missing page) fails the build.
DOCS_OUT=docs/_build/html
build_docs() { "$VENV/bin/sphinx-build" -W --keep-going -n -q -b html docs "$DOCS_OUT"; }
# sphinx-build -q prints only problems; the count is the pages written
docs_count() {
    cat >/dev/null
    [ -d "$DOCS_OUT" ] && echo "$(find "$DOCS_OUT" -name '*.html' -not -path "$DOCS_OUT/_*" | wc -l) pages"
}
js_tests() { (cd js && npm test --silent); }

# static_checks OUT: the stages that need no kernel (about a minute on one core), as a
# background stage (in_background; its summary lines go to OUT.summary, see written).
static_checks() {
    stage ruff ruff_count "$VENV/bin/ruff" check jupyter_turns tests scripts hatch_build.py docs/conf.py
    stage mypy mypy_count "$VENV/bin/mypy"
    # the layers and the Jupyter-free core ([tool.importlinter] in pyproject.toml)
    stage imports imports_count "$VENV/bin/lint-imports"
    stage "js lint" no_count js_lint
    stage "js tests" node_count js_tests
    stage docs docs_count build_docs
    written "$1"
}

# BENCH_QUICK: every benchmark end to end with tiny inputs, no figure judged (they cannot rot
# unseen); the stages add --browser none or only and --out
BENCH_QUICK=("$VENV/bin/python" -m tests.bench --quick)

# kernel_stages OUT NBVAL_DATA BENCH_DATA: as a background stage (see static_checks for OUT),
# the example notebooks under nbval, then the benchmarks that need no browser. The notebooks
# examples/replay.ipynb and providers.ipynb were recorded against the APIs: with no key they
# replay offline. Each stage's kernels get a Jupyter data directory of their own (the settings
# secret is made there), so the suite never writes the real one.
kernel_stages() {
    SUMMARY=() FAILED=0 # this subshell's own
    stage nbval nbval_count env -u ANTHROPIC_API_KEY -u OPENAI_API_KEY JUPYTER_TURNS_REPLAY=auto \
        JUPYTER_DATA_DIR="$2" "$VENV/bin/python" -m pytest --nbval examples \
        --nbval-sanitize-with examples/nbval-sanitize.cfg -p no:cacheprovider
    stage bench bench_count env JUPYTER_DATA_DIR="$3" "${BENCH_QUICK[@]}" --browser none \
        --out test-artifacts/bench/quick.json
    written "$1"
}

# page_stage OUT DATA_DIR: the benchmarks that drive Chromium, as a background stage
page_stage() {
    SUMMARY=() FAILED=0 # this subshell's own
    stage "bench page" bench_count env JUPYTER_DATA_DIR="$2" "${BENCH_QUICK[@]}" --browser only \
        --out test-artifacts/bench/quick-pages.json
    written "$1"
}

# in_background OUT FUNCTION ARGS...: FUNCTION OUT ARGS... in the background, its output to
# OUT.log
in_background() {
    local out=$1 function=$2
    shift 2
    "$function" "$out" "$@" >"$out.log" 2>&1 &
}

# written OUT: a background stage's summary lines to OUT.summary, 1 to OUT.failed if one failed
written() {
    printf '%s\n' "${SUMMARY[@]}" >"$1.summary"
    echo "$FAILED" >"$1.failed"
}

# collect OUT AT: a background stage's summary lines into SUMMARY at index AT, its failure
# into FAILED; then its files go
collect() {
    local -a lines=()
    mapfile -t lines <"$1.summary" || true
    SUMMARY=("${SUMMARY[@]:0:$2}" "${lines[@]}" "${SUMMARY[@]:$2}")
    [ "$(cat "$1.failed" 2>/dev/null)" = 0 ] || FAILED=1
    rm -f "$1" "$1.log" "$1.summary" "$1.failed"
}

# How many pytest workers (pytest-xdist; each test file stays in one worker, with its server
# and browser): most of a browser or kernel test waits on a page, a kernel or a server, so two
# share two cores well (about 1.6x faster than one process); PYTEST_WORKERS=0 runs in one.
# The files are handed out in the order collected (--no-loadscope-reorder), so each worker
# runs the browser tests (tests/browser comes first) one after another and starts their Lab
# servers and Chromium once; xdist's default order, most tests first, put unit files between
# them, and each worker started JupyterLab 7 times. The long tests come first and the short
# unit tests last, which also ends both workers near the same time.
PYTEST_WORKERS=${PYTEST_WORKERS:-2}

run_tests() {
    if [ -t 1 ]; then export FORCE_COLOR=1 PY_COLORS=1; fi
    # The static checks run beside pytest; after it, nbval then the kernel benchmarks run beside
    # the browser benchmarks (each mostly one process, much of it waiting on a page or a
    # kernel; none judges a time). pytest's tests keep both cores busy: run beside it at a
    # lower priority, these slowed it by as much as they saved (626 s in all against 592).
    # Their output follows pytest's; the summary lists the static checks, pytest, then the
    # others. Each stage's kernels get a Jupyter data directory of their own (the settings
    # secret is made there), so the suite never writes the real one.
    local static kernels pages nbval_data bench_data pages_data
    static=$(mktemp) kernels=$(mktemp) pages=$(mktemp)
    nbval_data=$(mktemp -d) bench_data=$(mktemp -d) pages_data=$(mktemp -d)
    in_background "$static" static_checks
    local static_pid=$!
    local -a workers=()
    if [ "$PYTEST_WORKERS" != 0 ]; then workers=(-n "$PYTEST_WORKERS" --dist loadfile --no-loadscope-reorder); fi
    # --durations: the slowest tests of this run, for the README's table
    stage pytest pytest_count "$VENV/bin/python" -m pytest tests "${workers[@]}" --durations=12 "$@"
    in_background "$kernels" kernel_stages "$nbval_data" "$bench_data"
    local kernels_pid=$!
    in_background "$pages" page_stage "$pages_data"
    wait "$static_pid" "$kernels_pid" "$!" || true
    local out
    for out in "$static" "$kernels" "$pages"; do cat "$out.log"; done
    collect "$static" 0
    collect "$kernels" "${#SUMMARY[@]}"
    collect "$pages" "${#SUMMARY[@]}"
    rm -rf "$nbval_data" "$bench_data" "$pages_data"
    echo
    echo "=== summary"
    printf '%s\n' "${SUMMARY[@]}"
    if [ "$FAILED" = 0 ]; then echo "all stages passed"; else echo "some stages FAILED"; fi
    return "$FAILED"
}

case "${1:-}" in
    demo)
        setup "[lab]"
        "$VENV/bin/python" -m jupyter_turns.demo
        ;;
    lab)
        setup "[lab]"
        exec "$VENV/bin/jupyter" lab examples/quickstart.ipynb "${@:2}"
        ;;
    test)
        setup "[test]"
        ensure_chromium
        ensure_agents
        run_tests "${@:2}"
        ;;
    docs)
        setup "[docs]"
        build_docs
        echo "serving $DOCS_OUT on http://127.0.0.1:${2:-8000}/ (Ctrl+C stops)"
        exec "$VENV/bin/python" -m http.server "${2:-8000}" --bind 127.0.0.1 --directory "$DOCS_OUT"
        ;;
    *)
        echo "usage: ./dev.sh demo | test [pytest args] | lab [jupyter lab args] | docs [port]" >&2
        exit 2
        ;;
esac
