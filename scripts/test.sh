#!/usr/bin/env bash
# The whole test suite: the Rust workspace, then the Python package (built with maturin
# into a virtual environment under target/, its tests run with pytest).
set -euo pipefail
cd "$(dirname "$0")/.."

cargo test --workspace

# The Python tests compare the package with the `csfq` command built from this tree.
cargo build --release -p csfq-cli
venv=target/py-venv
if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv"
fi
"$venv/bin/python" -m pip install -q --upgrade pip
"$venv/bin/python" -m pip install -q "maturin>=1.9,<2" "pandas>=1.5" "tomli-w>=1.0" "pytest>=7"
(cd python && VIRTUAL_ENV="$PWD/../$venv" PATH="$PWD/../$venv/bin:$PATH" \
    CARGO_TARGET_DIR="$PWD/../target" maturin develop --release -q)
CSFQ_BIN="$PWD/target/release/csfq" "$venv/bin/python" -m pytest -q python/tests
