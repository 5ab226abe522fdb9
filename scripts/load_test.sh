#!/usr/bin/env bash
# The browser checks under full CPU load: proof that they wait for what the page shows instead
# of racing it. Starts one busy process per core, then runs the whole browser suite
# (tests/browser, which includes the widget harness js/dev/check_harness.py) and the lab check
# (js/dev/check_lab.py) RUNS times in a row; stops the busy processes however it ends (also on a
# failure or Ctrl-C) and reports how many runs passed. No retries: a run passes only if
# everything in it passed the first time.
#
#   scripts/load_test.sh [RUNS] [pytest args]     RUNS defaults to 5; run ./dev.sh test first
set -uo pipefail
cd "$(dirname "$0")/.."

VENV=${VENV:-.venv}
PY=$VENV/bin/python
RUNS=${1:-5}
if [ ! -x "$PY" ]; then
    echo "scripts/load_test.sh needs $VENV with the test extras: run ./dev.sh test once first." >&2
    exit 2
fi
shift $(($# > 0 ? 1 : 0))

BUSY=()
stop_busy() {
    if [ ${#BUSY[@]} -gt 0 ]; then
        kill "${BUSY[@]}" 2>/dev/null
        wait "${BUSY[@]}" 2>/dev/null
        echo "stopped ${#BUSY[@]} busy processes"
        BUSY=()
    fi
}
trap stop_busy EXIT
trap 'exit 130' INT TERM

# The venv's python is the interpreter itself (no shim in between): $! is the busy process.
for _ in $(seq "$(nproc)"); do
    "$PY" -c 'while 1: pass' &
    BUSY+=($!)
done
echo "started ${#BUSY[@]} busy processes (one per core): ${BUSY[*]}"

passed=0
lines=()
for run in $(seq "$RUNS"); do
    start=$SECONDS
    echo
    echo "=== run $run/$RUNS: pytest tests/browser $*"
    browser=passed lab=passed
    "$PY" -m pytest tests/browser -q -p no:cacheprovider "$@" || browser=failed
    echo "=== run $run/$RUNS: js/dev/check_lab.py"
    if ! out=$("$PY" js/dev/check_lab.py 2>&1); then
        lab=failed
        tail -40 <<<"$out"
    fi
    grep -E '^(FAIL|all checks passed|[0-9]+ failed)' <<<"$out"
    if [ $browser = passed ] && [ $lab = passed ]; then passed=$((passed + 1)); fi
    lines+=("run $run: browser suite $browser, check_lab $lab, $((SECONDS - start)) s, load $(cut -d' ' -f1-3 /proc/loadavg)")
done

echo
printf '%s\n' "${lines[@]}"
echo "$passed/$RUNS passed under full CPU load ($(nproc) busy processes)"
[ "$passed" = "$RUNS" ]
