#!/usr/bin/env bash
# The project's two entry points (see README):
#   ./dev.sh demo   set up .venv and execute the quickstart notebook offline, printing its chats
#   ./dev.sh test   set up .venv with the test extras and run the whole test suite
#   ./dev.sh lab    open the example notebooks in JupyterLab
set -euo pipefail
cd "$(dirname "$0")"

PYTHON=${PYTHON:-$(command -v python3.11 || command -v python3)}
VENV=${VENV:-.venv}

setup() {
    if [ ! -x "$VENV/bin/python" ]; then
        "$PYTHON" -m venv "$VENV"
    fi
    "$VENV/bin/python" -m pip install --quiet --upgrade pip
    "$VENV/bin/python" -m pip install --quiet -e ".$1"
}

ensure_chromium() {
    if [ -x /usr/bin/chromium ]; then return; fi
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        echo "installing Debian chromium for the browser tests..."
        apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
    else
        echo "The browser tests need Debian's chromium at /usr/bin/chromium:" >&2
        echo "  sudo apt-get install chromium" >&2
        exit 1
    fi
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
        "$VENV/bin/ruff" check jupyter_turns tests scripts
        "$VENV/bin/mypy"
        (cd js && npm run --silent lint && npm test --silent)
        "$VENV/bin/python" -m pytest tests "${@:2}"
        "$VENV/bin/python" -m pytest --nbval examples -p no:cacheprovider
        ;;
    *)
        echo "usage: ./dev.sh demo | test [pytest args] | lab [jupyter lab args]" >&2
        exit 2
        ;;
esac
